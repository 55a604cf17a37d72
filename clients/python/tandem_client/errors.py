"""Exceptions raised by the Tandem client. Every one is a TandemError."""

from __future__ import annotations

from typing import Any, Mapping, Optional


class TandemError(Exception):
    """Base class of everything the client raises."""


class TandemConnectionError(TandemError, ConnectionError):
    """The bridge could not be reached, or the connection was lost."""


class TandemTimeout(TandemError, TimeoutError):
    """Nothing arrived within the timeout (a reply, or the next frame of a stream)."""


class TandemBridgeError(TandemError):
    """The bridge refused a frame (an ``err`` frame: ``invalid_json``, ``unknown_type``, ...).

    ``code`` is the bridge's word for the problem, ``detail`` says what was wrong.
    """

    def __init__(self, code: str, detail: Optional[str] = None):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail


class TandemAccessDenied(TandemBridgeError):
    """The address is not open to bridge clients (worker and router-internal addresses never are)."""


class TandemRequestError(TandemError):
    """The router refused or failed a request.

    ``status`` is the HTTP status the same failure gets over HTTP (400, 404, 429, 503, 504, ...);
    ``type``, ``code`` and ``param`` are OpenAI's error fields when the router sent them (an error
    after the request started), None when only the status and message are known (a refusal).
    """

    def __init__(self, status: int, message: str, type: Optional[str] = None, code: Optional[str] = None,
                 param: Optional[str] = None):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param


class TandemInvalidRequest(TandemRequestError):
    """A 4xx other than 429: invalid fields, unknown model, prompt too long."""


class TandemOverloaded(TandemRequestError):
    """429: the router or every worker is at capacity, or this connection runs too many requests. Retry later."""


class TandemServerError(TandemRequestError):
    """5xx: no workers, a worker failure the router could not recover from, or a timeout."""


def request_error(status: int, message: str, error: Optional[Mapping[str, Any]] = None) -> TandemRequestError:
    """The TandemRequestError subclass for a status."""
    error = error or {}
    if status == 429:
        cls = TandemOverloaded
    elif 400 <= status < 500:
        cls = TandemInvalidRequest
    else:
        cls = TandemServerError
    return cls(status, message, error.get("type"), error.get("code"), error.get("param"))
