"""Tandem's Python client: generate over the router's TCP event-bus bridge (standard library only).

    from tandem_client import TandemClient

    with TandemClient("127.0.0.1", 7000) as client:
        for chunk in client.generate(prompt="Once upon a time", max_tokens=32, seed=7):
            print(chunk.text, end="", flush=True)
"""

from .client import CANCEL, CLIENT_PREFIX, GENERATE, Chunk, Generation, TandemClient
from .errors import (TandemAccessDenied, TandemBridgeError, TandemConnectionError, TandemError,
                     TandemInvalidRequest, TandemOverloaded, TandemRequestError, TandemServerError, TandemTimeout)

__all__ = [
    "TandemClient", "Generation", "Chunk", "GENERATE", "CANCEL", "CLIENT_PREFIX",
    "TandemError", "TandemConnectionError", "TandemTimeout", "TandemBridgeError", "TandemAccessDenied",
    "TandemRequestError", "TandemInvalidRequest", "TandemOverloaded", "TandemServerError",
]
