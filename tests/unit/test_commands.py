"""Chat commands: parsing (incl. /cmd@bot) and what each one does to memory."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from omega.app import bootstrap
from omega.gateway.commands import CommandContext, parse_command, run_command
from omega.memory import Store
from omega.skills import ProjectCatalog, SkillCatalog
from omega.types import IncomingMessage


@pytest.mark.no_store
@pytest.mark.parametrize(
    "text, expected",
    [
        ("/help", ("help", "")),
        ("/TASKS", ("tasks", "")),
        ("/cancel@omega_bot abc123", ("cancel", "abc123")),
        ("/lang Spanish", ("language", "Spanish")),
        ("  /personality  be terse  ", ("personality", "be terse")),
    ],
)
def test_known_commands_parse(text: str, expected: tuple[str, str]) -> None:
    command = parse_command(text)
    assert command is not None
    assert (command.name, command.args) == expected


@pytest.mark.no_store
@pytest.mark.parametrize("text", ["/nope", "help", "please /help", "/", "//help", ""])
def test_other_text_is_not_a_command(text: str) -> None:
    assert parse_command(text) is None


@pytest.fixture
def ctx(isolated_env: Path) -> CommandContext:
    runtime = bootstrap(isolated_env)
    (runtime.paths.projects / "garden").mkdir()
    (runtime.paths.projects / "garden" / "ROLE.md").write_text("You plan the garden.")
    return CommandContext(
        store=Store(runtime.paths.db),
        config=runtime.config,
        paths=runtime.paths,
        message=IncomingMessage("terminal", "ana", "x", assurance="local"),
        provider_name="openai",
        started_at=time.monotonic(),
        skills=SkillCatalog(runtime.paths.skills),
        projects=ProjectCatalog(runtime.paths.projects),
        timezone=UTC,
        role="person",
    )


def run(ctx: CommandContext, text: str) -> str:
    command = parse_command(text)
    assert command is not None
    return asyncio.run(run_command(command, ctx))


def test_facts_purge_keeps_only_bookkeeping(ctx: CommandContext) -> None:
    for key, value in (
        ("name", "Ana"),
        ("welcomed", "true"),
        ("preferred_language", "French"),
        ("city", "Porto"),
    ):
        ctx.store.set_fact("ana", key, value)
    assert "name: Ana" in run(ctx, "/facts")
    assert run(ctx, "/purge") == "Forgot 2 facts about you."
    assert ctx.store.facts("ana") == {"welcomed": "true", "preferred_language": "French"}


def test_personality_and_language(ctx: CommandContext) -> None:
    assert "No personality" in run(ctx, "/personality")
    run(ctx, "/personality short and dry")
    assert ctx.store.get_fact("ana", "personality") == "short and dry"
    run(ctx, "/personality reset")
    assert ctx.store.get_fact("ana", "personality") is None
    assert run(ctx, "/lang german") == "From now on I'll speak German with you."
    assert "not a language" in run(ctx, "/language 123")


def test_forget_and_history(ctx: CommandContext) -> None:
    conversation = ctx.store.store_exchange("terminal", "ana", "hi", "hello")
    assert "closed" in run(ctx, "/forget")
    assert ctx.store.active_conversation_id("terminal", "ana") is None
    ctx.store.close_conversation(conversation, "We said hello.")
    assert "We said hello." in run(ctx, "/history")
    assert "1 conversations, 2 messages" in run(ctx, "/memory")


def test_cancel_requires_an_unambiguous_exact_prefix(ctx: CommandContext) -> None:
    due = datetime(2030, 1, 1, 9, tzinfo=UTC)
    first, _ = ctx.store.create_task(
        channel="terminal", sender_id="ana", reply_target="ana", description="one", due_at=due
    )
    ctx.store.create_task(
        channel="terminal", sender_id="ana", reply_target="ana", description="two", due_at=due
    )
    assert "Usage" in run(ctx, "/cancel")
    assert "Nothing cancelled" in run(ctx, "/cancel %")
    assert "Nothing cancelled" in run(ctx, "/cancel ffffffffff")
    assert run(ctx, f"/cancel {first}") == f"Cancelled [{first[:8]}] one"
    assert len(ctx.store.pending_tasks("ana")) == 1


def test_projects_and_project_switching(ctx: CommandContext) -> None:
    assert "garden" in run(ctx, "/projects")
    ctx.store.store_exchange("terminal", "ana", "hi", "hello")
    assert run(ctx, "/project GARDEN") == "Project garden is active."
    assert ctx.store.active_conversation_id("terminal", "ana") is None  # fresh conversation
    assert "(active)" in run(ctx, "/projects")
    assert "No project named" in run(ctx, "/project moon")
    assert run(ctx, "/project off") == "Project garden deactivated."
    assert run(ctx, "/project") == "No active project."


def test_status_and_skills(ctx: CommandContext) -> None:
    status = run(ctx, "/status")
    assert "Provider: openai" in status and "Sandbox: sandbox" in status
    assert "No skills" in run(ctx, "/skills")
