"""Build the provider context for one incoming message."""

from __future__ import annotations

from omega.config import Config
from omega.gateway.prompt import compose_system_prompt
from omega.memory.store import Store
from omega.prompts import Prompts
from omega.types import ChatMessage, Context, IncomingMessage


def build_context(
    store: Store | None, prompts: Prompts, config: Config, message: IncomingMessage
) -> Context:
    """System prompt plus the sender's recent history and the new message.

    With no store (one-shot `omega ask`) the context holds only the new message.
    """
    history: list[ChatMessage] = []
    if store is not None:
        history = store.recent_messages(
            message.channel, message.sender_id, config.memory.max_context_messages
        )
    return Context(
        system_prompt=compose_system_prompt(prompts, message.channel),
        messages=[*history, ChatMessage(role="user", content=message.text)],
        sender_id=message.sender_id,
        channel=message.channel,
    )
