# SPDX-License-Identifier: MIT
"""Typed exceptions: one class per error code of the tunerd API.

Every non-2xx answer of a box is ``{"error":{"code","message","details"}}``
(protocol/API.md); :func:`from_answer` turns it into the class of its
code, so a script catches what it can handle (``LeaseConflict``,
``Unavailable``) and lets the rest through as :class:`TunerdError`.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Type


class TunerdError(Exception):
    """An error answered by a box, or met on the way to it.

    code: the API's error code (``"lease_conflict"``, ...); status: the
    HTTP status (None when there was no answer); details: the answer's
    ``details`` object ({} when none)."""

    code = "error"

    def __init__(self, code: Optional[str] = None, message: str = "",
                 status: Optional[int] = None,
                 details: Optional[Dict[str, Any]] = None) -> None:
        self.code = code or type(self).code
        self.message = message
        self.status = status
        self.details = dict(details or {})
        super().__init__("%s: %s" % (self.code, message) if message
                         else self.code)


class BadJson(TunerdError):
    """400: the body is not JSON, or nested too deep."""
    code = "bad_json"


class BadRequest(TunerdError):
    """400: a field is missing, of the wrong type or unknown."""
    code = "bad_request"

    @property
    def field(self) -> Optional[str]:
        """The field the box refused (``details.field``)."""
        return self.details.get("field")


class Unauthorized(TunerdError):
    """401: no token, or one the box does not know."""
    code = "unauthorized"


class Forbidden(TunerdError):
    """403: the token's role is too low, or the box has no tokens and
    this client is not on its loopback."""
    code = "forbidden"

    @property
    def required_role(self) -> Optional[str]:
        return self.details.get("required_role")


class NotFound(TunerdError):
    """404: unknown path, tuner, lease, scan or channel."""
    code = "not_found"


class MethodNotAllowed(TunerdError):
    """405."""
    code = "method_not_allowed"


class LeaseConflict(TunerdError):
    """409: someone else holds the tuner (or the lease id is wrong)."""
    code = "lease_conflict"

    @property
    def holder(self) -> Optional[str]:
        return self.details.get("holder")

    @property
    def priority(self) -> Optional[int]:
        return self.details.get("priority")

    @property
    def expires(self) -> Optional[str]:
        """When the holder's lease runs out (RFC 3339 UTC)."""
        return self.details.get("expires")


class Busy(TunerdError):
    """409: the tuner is scanning already (``details.scan``)."""
    code = "busy"

    @property
    def scan(self) -> Optional[str]:
        return self.details.get("scan")


class BodyTooLarge(TunerdError):
    """413: a body over 64 KiB."""
    code = "body_too_large"


class UriTooLong(TunerdError):
    """414: a request line over 2048 bytes."""
    code = "uri_too_long"


class UnsupportedMediaType(TunerdError):
    """415: a body that is not application/json."""
    code = "unsupported_media_type"


class UnsupportedParams(TunerdError):
    """422: the chip cannot do these params; ``limits`` says what it can
    (delivery_systems, frequency_min, frequency_max, frequency_step,
    bandwidths)."""
    code = "unsupported_params"

    @property
    def limits(self) -> Dict[str, Any]:
        return self.details


class TooManyRequests(TunerdError):
    """429: the tuner's queue (16) or the stream caps are full."""
    code = "too_many_requests"


class Unavailable(TunerdError):
    """503: the stub or tuner is gone or restarting, a worker crashed
    mid-request, a lease could not be saved, or a connection cap.
    ``retry_after``: the box's Retry-After hint in seconds, or None."""
    code = "unavailable"

    def __init__(self, code: Optional[str] = None, message: str = "",
                 status: Optional[int] = None,
                 details: Optional[Dict[str, Any]] = None,
                 retry_after: Optional[float] = None) -> None:
        super().__init__(code, message, status, details)
        self.retry_after = retry_after


class Deadline(TunerdError):
    """504: the chip did not answer within the box's deadline."""
    code = "deadline"


class Internal(TunerdError):
    """500: anything else the box could not do."""
    code = "internal"


class ConnectionFailed(TunerdError):
    """The box could not be reached, or the connection broke before an
    answer (no HTTP status)."""
    code = "connection_failed"


class LeaseLost(TunerdError):
    """Client side: a lease this process held was pre-empted, expired or
    could not be renewed (``Lease.check()`` raises it)."""
    code = "lease_lost"


class NoFreeTuner(TunerdError):
    """Client side: ``Fleet.lease_any`` found no tuner that can take the
    params and could be leased."""
    code = "no_free_tuner"


_BY_CODE: Dict[str, Type[TunerdError]] = {
    cls.code: cls for cls in (
        BadJson, BadRequest, Unauthorized, Forbidden, NotFound,
        MethodNotAllowed, LeaseConflict, Busy, BodyTooLarge, UriTooLong,
        UnsupportedMediaType, UnsupportedParams, TooManyRequests,
        Unavailable, Deadline, Internal)}

# An answer without the JSON error object (a proxy, libmicrohttpd's own
# HTML refusals) still gets the class its status stands for.
_BY_STATUS: Dict[int, Type[TunerdError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound,
    405: MethodNotAllowed, 409: LeaseConflict, 413: BodyTooLarge,
    414: UriTooLong, 415: UnsupportedMediaType, 422: UnsupportedParams,
    429: TooManyRequests, 503: Unavailable, 504: Deadline, 500: Internal}


def _retry_after(headers: Any) -> Optional[float]:
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def from_answer(status: int, body: Any, headers: Any = None
                ) -> TunerdError:
    """The exception for an error answer: status, its parsed JSON body
    (or None), its headers (a mapping; for Retry-After)."""
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict) and isinstance(err.get("code"), str):
        code = err["code"]
        cls = _BY_CODE.get(code, TunerdError)
        message = str(err.get("message", ""))
        details = err.get("details") if isinstance(err.get("details"),
                                                   dict) else {}
    else:
        cls = _BY_STATUS.get(status, TunerdError)
        code = cls.code if cls is not TunerdError else "http_%d" % status
        message = "HTTP %d without an error object" % status
        details = {}
    if cls is Unavailable:
        return Unavailable(code, message, status, details,
                           retry_after=_retry_after(headers))
    return cls(code, message, status, details)
