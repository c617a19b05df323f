"""fetch_url's guarded HTTP GET: http(s) only, public addresses only (unless allowed), every
redirect checked again, the connection pinned to the address that was checked, size and time
capped. The size cap is on the decoded page: a compressed body is inflated here, never more
than the cap (a few KB of gzip can be gigabytes), and a body compressed twice, or in an encoding
asked for by no one, is refused."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import zlib
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from omega.tools.context import ToolError

MAX_REDIRECTS = 5
ACCEPTED_ENCODINGS = "gzip, deflate"  # the only ones Decoder inflates
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass
class Fetched:
    """What a fetch produced."""

    url: str
    status: int
    content_type: str
    encoding: str
    body: bytes
    truncated: bool


def is_public(address: IPAddress) -> bool:
    """Whether an address is on the public internet (not loopback, private, link-local and
    cloud metadata, shared, reserved or multicast), also when wrapped in IPv6."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is not None:
            return is_public(embedded)
        if address.teredo is not None:
            return all(is_public(a) for a in address.teredo)
    return address.is_global and not address.is_multicast


async def public_address(host: str, port: int) -> str:
    """The address to connect to for `host`; ToolError when any address it resolves to is not
    public (a name must not smuggle in a loopback or metadata address)."""
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM
            )
        except OSError as exc:
            raise ToolError(f"could not resolve {host}: {exc}") from None
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    if not addresses:
        raise ToolError(f"could not resolve {host}")
    for address in addresses:
        if not is_public(address):
            raise ToolError(
                f"refused: {host} is {address}, a private, loopback or link-local address "
                "(set [tools] allow_private_urls = true to allow)"
            )
    return str(addresses[0])


class Decoder:
    """A response body's Content-Encoding undone, never to more than `limit` bytes however
    much the compressed bytes would inflate to."""

    def __init__(self, encoding: str, limit: int) -> None:
        codings = [c.strip().lower() for c in encoding.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if len(codings) > 1:
            raise ToolError(f"refused: a page compressed more than once ({encoding})")
        if codings and codings[0] not in ("gzip", "x-gzip", "deflate"):
            raise ToolError(f"refused: a page in an encoding not asked for ({encoding})")
        self.limit = limit
        # gzip and zlib headers are told apart by zlib itself (32 + 15); raw deflate on failure.
        self._inflate = zlib.decompressobj(47) if codings else None
        self._raw_tried = codings == ["deflate"]

    def feed(self, chunk: bytes) -> bytes:
        """The decoded bytes of the next raw chunk, at most `limit` of them in all."""
        if self._inflate is None:
            return chunk[: self.limit]
        try:
            out = self._inflate.decompress(chunk, self.limit + 1)
        except zlib.error:
            if not self._raw_tried:
                raise ToolError("could not decode the page: bad compressed data") from None
            self._raw_tried = False  # a server sending deflate without its zlib header
            self._inflate = zlib.decompressobj(-15)
            return self.feed(chunk)
        self._raw_tried = False
        return out


def _checked(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ToolError(f"refused: only http:// and https:// URLs can be fetched, not {url!r}")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise ToolError(f"refused: bad port in {url!r}") from None
    return scheme, parts.hostname, port


async def fetch(url: str, *, allow_private: bool, timeout_secs: float, max_bytes: int) -> Fetched:
    """GET `url` following up to MAX_REDIRECTS redirects, each one checked like the first."""
    import httpx

    current = url.strip()
    async with (
        asyncio.timeout(timeout_secs),
        httpx.AsyncClient(timeout=timeout_secs, follow_redirects=False, trust_env=False) as client,
    ):
        for _ in range(MAX_REDIRECTS + 1):
            scheme, host, port = _checked(current)
            request = client.build_request(
                "GET",
                current,
                headers={"User-Agent": "Omega", "Accept-Encoding": ACCEPTED_ENCODINGS},
            )
            if not allow_private:
                address = await public_address(host, port)
                # Connect to the address that was checked (no second lookup to rebind),
                # with the name kept for the Host header and TLS.
                request.url = request.url.copy_with(host=address)
                request.headers["Host"] = urlsplit(current).netloc.rsplit("@", 1)[-1]
                if scheme == "https":
                    request.extensions["sni_hostname"] = host
            response = await client.send(request, stream=True)
            try:
                if response.is_redirect and "location" in response.headers:
                    current = urljoin(current, response.headers["location"])
                    continue
                decoder = Decoder(response.headers.get("content-encoding", ""), max_bytes)
                body = bytearray()
                truncated = False
                async for chunk in response.aiter_raw():  # inflated here, within the cap
                    body.extend(decoder.feed(chunk))
                    if len(body) > max_bytes:
                        truncated = True
                        break
                return Fetched(
                    url=current,
                    status=response.status_code,
                    content_type=response.headers.get("content-type", ""),
                    encoding=response.encoding or "utf-8",
                    body=bytes(body[:max_bytes]),
                    truncated=truncated,
                )
            finally:
                await response.aclose()
    raise ToolError(f"refused: more than {MAX_REDIRECTS} redirects from {url}")
