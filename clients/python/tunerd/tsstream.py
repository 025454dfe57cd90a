# SPDX-License-Identifier: MIT
"""A tuner's MPEG transport stream as a file-like object.

``GET /api/v1/tuners/{id}/stream`` answers 188-byte packets for as long as
the connection lasts (``Connection: close``, or chunked with
``--stream-delivery mhd``).  http.client reads both; requests would
buffer behind its own chunk size, which a live stream does not want.
"""
from __future__ import annotations

import http.client
import json
import urllib.parse
from typing import Dict, Iterator, Optional

from . import errors

PACKET_SIZE = 188
SYNC_BYTE = 0x47
CHUNK = 65536


class TsStream:
    """Readable TS bytes: ``read(n)``, iteration (chunks of bytes as they
    come), ``close()``; a context manager.  The box ending the stream is
    the end of file (``read`` answers b"").  A tuner without lock sends
    nothing: a read that waits longer than timeout (the Box's, unless
    ``Tuner.stream`` got one) raises :class:`errors.ConnectionFailed`."""

    def __init__(self, url: str, headers: Dict[str, str],
                 timeout: float) -> None:
        parts = urllib.parse.urlsplit(url)
        cls = (http.client.HTTPSConnection if parts.scheme == "https"
               else http.client.HTTPConnection)
        self.url = url
        self._conn = cls(parts.netloc, timeout=timeout)
        path = parts.path + ("?" + parts.query if parts.query else "")
        try:
            self._conn.request("GET", path, headers=headers)
            self._resp = self._conn.getresponse()
        except OSError as e:
            self._conn.close()
            raise errors.ConnectionFailed(message="%s: %s" % (url, e)) from e
        if self._resp.status != 200:
            body = self._resp.read()
            self._conn.close()
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = None
            raise errors.from_answer(self._resp.status, parsed,
                                     self._resp.headers)
        self.closed = False

    def read(self, n: int = -1) -> bytes:
        """Up to n bytes (blocking until n came or the stream ended); n < 0
        reads to the end, which a live stream never reaches."""
        if self.closed:
            raise ValueError("read of a closed TsStream")
        try:
            if n < 0:
                return self._resp.read()
            parts, left = [], n
            while left > 0:  # a chunked answer may hand out less
                part = self._resp.read(left)
                if not part:
                    break
                parts.append(part)
                left -= len(part)
            return b"".join(parts)
        except (OSError, http.client.HTTPException) as e:
            raise errors.ConnectionFailed(message=str(e)) from e

    def read1(self, n: int = CHUNK) -> bytes:
        """What has arrived, at most n bytes, waiting only for the first."""
        try:
            return self._resp.read1(n)
        except (OSError, http.client.HTTPException) as e:
            raise errors.ConnectionFailed(message=str(e)) from e

    def packets(self) -> Iterator[bytes]:
        """Whole 188-byte packets as they come."""
        while True:
            pkt = self.read(PACKET_SIZE)
            if len(pkt) < PACKET_SIZE:
                return
            yield pkt

    def __iter__(self) -> Iterator[bytes]:
        while not self.closed:
            chunk = self.read1(CHUNK)
            if not chunk:
                return
            yield chunk

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._resp.close()
            self._conn.close()

    def __enter__(self) -> "TsStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def query(pids: Optional[object] = None, service: Optional[int] = None,
              lease_id: Optional[str] = None) -> str:
        """The stream URL's query string for these arguments."""
        q: Dict[str, str] = {}
        if pids is not None:
            q["pids"] = (pids if isinstance(pids, str) else
                         ",".join(str(int(p)) for p in pids))  # type: ignore
        if service is not None:
            q["service"] = str(int(service))
        if lease_id:
            q["lease_id"] = lease_id
        return urllib.parse.urlencode(q, safe=",")
