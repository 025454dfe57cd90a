# SPDX-License-Identifier: MIT
"""The REST transport of a Box: one requests.Session, the token, the
error mapping and the retry policy.

Retry policy (protocol/API.md): a request is sent again only when the box
says it was not carried out, or when doing it twice is harmless:
- 429 too_many_requests: the tuner's queue was full, the request never
  queued;
- 503 with ``Retry-After`` (a connection cap: refused before the request
  was read);
- a GET (reads only) after 503 or a failed connection.
A tune, lease or scan that met a 503 without Retry-After (a worker that
crashed mid-request: it may or may not have taken effect) is raised as
:class:`errors.Unavailable` for the caller to decide.
"""
from __future__ import annotations

import time
from typing import Any, Dict, Mapping, Optional

import requests

from . import errors

RETRIES = 3
BACKOFF_S = 0.2
MAX_WAIT_S = 5.0


class HttpApi:
    """Requests to one box's ``/api/v1``."""

    def __init__(self, url: str, token: Optional[str], timeout: float,
                 retries: int = RETRIES) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.session = requests.Session()
        if token:
            self.session.headers["Authorization"] = "Bearer " + token

    def headers(self, lease_id: Optional[str] = None) -> Dict[str, str]:
        """Headers for a request made outside the session (streams)."""
        h: Dict[str, str] = {}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        if lease_id:
            h["X-Tunerd-Lease"] = lease_id
        return h

    def request(self, method: str, path: str, json: Any = None,
                params: Optional[Mapping[str, Any]] = None,
                lease_id: Optional[str] = None,
                timeout: Optional[float] = None,
                raw: bool = False) -> Any:
        """The answer's JSON (None for 204; the text when raw), or the
        typed error.  path is below the box's URL (``/api/v1/box``)."""
        headers = {"X-Tunerd-Lease": lease_id} if lease_id else {}
        attempt = 0
        while True:
            attempt += 1
            try:
                r = self.session.request(
                    method, self.url + path, json=json, params=params,
                    headers=headers, timeout=timeout or self.timeout)
            except requests.RequestException as e:
                if method == "GET" and attempt <= self.retries:
                    time.sleep(BACKOFF_S * attempt)
                    continue
                raise errors.ConnectionFailed(
                    message="%s %s: %s" % (method, self.url + path, e)
                ) from e
            if r.status_code < 300:
                if r.status_code == 204 or not r.content:
                    return None
                return r.text if raw else r.json()
            err = errors.from_answer(r.status_code, _json_or_none(r),
                                     r.headers)
            wait = self._retry_wait(method, err, attempt)
            if wait is None:
                raise err
            time.sleep(wait)

    def _retry_wait(self, method: str, err: errors.TunerdError,
                    attempt: int) -> Optional[float]:
        """Seconds to wait before sending again, or None: raise."""
        if attempt > self.retries:
            return None
        hint = getattr(err, "retry_after", None)
        if isinstance(err, errors.TooManyRequests):
            return BACKOFF_S * attempt
        if isinstance(err, errors.Unavailable) and (
                hint is not None or method == "GET"):
            return min(hint if hint is not None else BACKOFF_S * attempt,
                       MAX_WAIT_S)
        return None

    def close(self) -> None:
        self.session.close()


def _json_or_none(r: requests.Response) -> Any:
    try:
        return r.json()
    except ValueError:
        return None
