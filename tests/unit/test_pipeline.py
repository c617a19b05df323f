"""A failing memory or audit write never stops the reply; provider bugs become friendly text."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from omega.gateway.pipeline import handle_message
from omega.types import Context, IncomingMessage, Reply
from tests.conftest import MakeDeps
from tests.fakes.outbox import Recorder
from tests.fakes.providers import EchoProvider, ScriptedProvider


def test_memory_and_audit_failures_do_not_stop_the_reply(
    make_deps: MakeDeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    deps = make_deps(EchoProvider())

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    for name in ("facts", "set_fact", "audit", "store_exchange", "recent_messages"):
        monkeypatch.setattr(deps.store, name, broken)
    out = Recorder()
    asyncio.run(
        handle_message(deps, IncomingMessage("terminal", "u1", "hello", assurance="local"), out)
    )
    assert [m.text for m in out.sent if m.kind == "reply"] == ["echo: hello"]


def test_a_provider_bug_is_a_friendly_error(make_deps: MakeDeps) -> None:
    deps = make_deps(ScriptedProvider(default=KeyError("provider bug")))
    out = Recorder()
    asyncio.run(
        handle_message(deps, IncomingMessage("terminal", "u1", "hello", assurance="local"), out)
    )
    [error] = [m for m in out.sent if m.kind == "error"]
    assert error.text == "Something went wrong on my side. Please try again."
    [row] = deps.store.audit_entries()
    assert row["status"] == "error"
    assert "provider bug" in str(row["detail"])


class ImageProvider(EchoProvider):
    """Writes an image into the workspace, as a provider with file tools would."""

    def __init__(self, workspace: Path) -> None:
        super().__init__()
        self.workspace = workspace
        self.seen_attachment: bool | None = None

    async def answer(self, context: Context) -> Reply:
        paths = [
            line.split(": ", 1)[1].rstrip("]")
            for line in context.prompt.splitlines()
            if line.startswith("[Attached file: ")
        ]
        self.seen_attachment = bool(paths) and all(Path(p).exists() for p in paths)
        if not context.use_tools:  # a background call (facts, summaries) makes no files
            return Reply(text="{}", provider="echo")
        folder = Path(context.workspace) if context.workspace else self.workspace
        folder.mkdir(parents=True, exist_ok=True)  # the person's own folder
        (folder / "chart.png").write_bytes(b"\x89PNG\r\n\x1a\nchart")
        return Reply(text="Here is your chart.", provider="echo")


def test_typing_indicator_repeats_while_waiting(make_deps: MakeDeps) -> None:
    slow = ScriptedProvider(default="slow", name="echo", model="", delay=0.35)
    deps = make_deps(slow, OMEGA_OMEGA__TYPING_INTERVAL_SECS="0.1")

    class Typing(Recorder):
        typed = 0

        async def typing(self, channel: str, target: str) -> None:
            self.typed += 1

    out = Typing()
    asyncio.run(
        handle_message(deps, IncomingMessage("terminal", "u1", "hello", assurance="local"), out)
    )
    assert out.typed >= 3
    typed_before = out.typed
    asyncio.run(asyncio.sleep(0.25))
    assert out.typed == typed_before  # stopped with the reply


def test_attachments_live_during_the_call_and_images_come_back(
    isolated_env: Path, make_deps: MakeDeps
) -> None:
    from omega.types import Attachment

    runtime_home = isolated_env
    provider = ImageProvider(runtime_home / "workspace")
    deps = make_deps(provider)
    out = Recorder()
    message = IncomingMessage(
        "terminal",
        "u1",
        "plot this",
        attachments=[
            Attachment(kind="image", data=b"\x89PNG\r\n\x1a\nin", name="../../escape.png")
        ],
        assurance="local",
    )
    asyncio.run(handle_message(deps, message, out))
    assert provider.seen_attachment is True
    assert list((isolated_env / "workspace" / "inbox").iterdir()) == []
    photos = [m for m in out.sent if m.kind == "photo"]
    assert [(p.text, p.photo) for p in photos] == [("chart.png", b"\x89PNG\r\n\x1a\nchart")]
    assert not (isolated_env / "workspace" / "chart.png").exists()
    assert not (isolated_env.parent / "escape.png").exists()


def test_the_first_language_is_guessed_from_the_persons_words_not_the_saved_files_path(
    tmp_path: Path,
) -> None:
    """A first message with a photo is welcomed in the language of its words: the note naming
    where the photo was saved (a home path, a random file name whose hex splits into "de",
    "ce"...) is not read as the person's words (it once turned the reply's language French)."""
    from omega.app import bootstrap, pipeline_deps
    from omega.memory import Store
    from omega.types import Attachment

    runtime = bootstrap(tmp_path / "les-photos-de-la-maison-et-des-amis-du-village" / "home")
    store = Store(runtime.paths.db)
    try:
        deps = pipeline_deps(runtime, store)
        deps.provider = ScriptedProvider("A cat.", plan='{"kind": "direct"}')
        photo = Attachment(kind="image", data=b"\x89PNG\r\n\x1a\nxx", mime_type="image/png")
        message = IncomingMessage(
            "terminal", "ana", "What is in this photo?", attachments=[photo], assurance="local"
        )
        asyncio.run(handle_message(deps, message, Recorder()))
        assert store.get_fact("ana", "preferred_language") == "English"
    finally:
        store.close()
