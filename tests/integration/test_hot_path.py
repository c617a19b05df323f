"""Issue 40: what one classified request costs on the gateway's hot path beyond its two
provider calls: the skill catalog is listed once (the planner and the reply's context share
the listing)."""

from __future__ import annotations

import asyncio

import pytest

from omega.gateway.gateway import Gateway
from omega.skills.guarded import GuardedSkills
from omega.types import IncomingMessage
from tests.conftest import MakeDeps
from tests.fakes.channel import RecordingTerminal
from tests.fakes.providers import DIRECT, ScriptedProvider


def typed(number: int) -> IncomingMessage:
    return IncomingMessage(
        "terminal", "me", f"note the garden budget {number}", id=f"h-{number}", assurance="local"
    )


def test_a_classified_request_lists_the_skills_once(
    make_deps: MakeDeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = ScriptedProvider(default="noted", plan=DIRECT)
    deps = make_deps(provider, OMEGA_PROVIDER__CLASSIFY="true")
    deps.store.set_fact("me", "welcomed", "true")
    terminal = RecordingTerminal()
    listings: list[int] = []
    real = GuardedSkills.skills

    def counted(self: GuardedSkills) -> list[object]:
        listings.append(1)
        return list(real(self))

    async def run() -> None:
        gateway = Gateway(deps, [terminal])
        await (await gateway.submit(typed(0)))
        monkeypatch.setattr(GuardedSkills, "skills", counted)
        for number in range(1, 4):
            await (await gateway.submit(typed(number)))

    asyncio.run(run())
    assert [m.text for m in terminal.sent if m.kind == "reply"] == ["noted"] * 4
    assert len(provider.contexts) == 8  # each request: the planning call and the answer
    assert len(listings) == 3
