"""An OpenAI-compatible `/audio/transcriptions` test double: multipart in, `{"text"}` out."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from tests.fakes.telegram_server import parse_body


@dataclass
class Transcription:
    """One request as received."""

    path: str
    authorization: str
    model: str
    audio: bytes
    filename: str


class FakeWhisper:
    """Answers each audio with `transcripts[audio]` (and the fields of `extra` beside it:
    OpenAI's `usage`, a server's `duration`), or `status` with an error when set."""

    def __init__(self) -> None:
        self.transcripts: dict[bytes, str] = {}
        self.extra: dict[str, Any] = {}
        self.status = 200
        self.requests: list[Transcription] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                params, files = parse_body(
                    self.headers.get("Content-Type", ""), self.rfile.read(length)
                )
                audio = files.get("file", b"")
                fake.requests.append(
                    Transcription(
                        self.path,
                        self.headers.get("Authorization", ""),
                        str(params.get("model", "")),
                        audio,
                        str(params.get("_filename_file", "")),
                    )
                )
                if self.path != "/v1/audio/transcriptions":
                    self._send(404, {"error": {"message": "not found"}})
                elif fake.status != 200:
                    self._send(fake.status, {"error": {"message": "scripted failure"}})
                elif "file" not in files or not params.get("model"):
                    self._send(400, {"error": {"message": "file and model are required"}})
                else:
                    self._send(200, {"text": fake.transcripts.get(audio, ""), **fake.extra})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
