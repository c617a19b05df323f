"""omega.ops.stacks: what SIGUSR1 writes for a hung Omega (every asyncio task with its chain of
awaits, innermost last), and that nothing is installed unless OMEGA_DUMP_STACKS asks."""

from __future__ import annotations

import asyncio
import io

import pytest

from omega.ops.stacks import END_LINE, dump_tasks, install_stack_dump


async def _innermost(gate: asyncio.Event) -> None:
    await gate.wait()


async def _outer(gate: asyncio.Event) -> None:
    await _innermost(gate)


@pytest.mark.no_store
def test_each_task_is_written_with_its_chain_of_awaits() -> None:
    async def scenario() -> str:
        gate = asyncio.Event()
        task = asyncio.create_task(_outer(gate), name="stuck-one")
        await asyncio.sleep(0)
        out = io.StringIO()
        dump_tasks(out)
        gate.set()
        await task
        return out.getvalue()

    text = asyncio.run(scenario())
    stuck = text[text.index("task 'stuck-one':") :]
    assert stuck.index("in _outer") < stuck.index("in _innermost") < stuck.index("in wait")
    assert "await _innermost(gate)" in stuck  # the source line of each frame
    assert text.rstrip().endswith(END_LINE)


@pytest.mark.no_store
def test_without_the_variable_nothing_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMEGA_DUMP_STACKS", raising=False)
    assert install_stack_dump() is False
    out = io.StringIO()
    dump_tasks(out)  # outside a loop it says so
    assert out.getvalue().startswith("omega: no event loop is running")
