"""The Vert.x TCP event-bus bridge framing: a 4-byte big-endian length, then that many bytes of UTF-8 JSON."""

from __future__ import annotations

import json
import socket
import struct
from typing import Any, Dict, Optional

HEADER = struct.Struct(">I")
#: Frames larger than this from the server are treated as a broken connection, not buffered.
MAX_INCOMING_FRAME = 64 * 1024 * 1024


def encode(frame: Dict[str, Any]) -> bytes:
    """One frame: the length prefix and the compact UTF-8 JSON."""
    payload = json.dumps(frame, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return HEADER.pack(len(payload)) + payload


def _read_exactly(sock: socket.socket, n: int) -> Optional[bytes]:
    """n bytes, or None if the connection ended cleanly before the first of them."""
    chunks = []
    remaining = n
    while remaining > 0:
        chunk = sock.recv(min(remaining, 1 << 16))
        if not chunk:
            if remaining == n:
                return None
            raise ConnectionError("the connection closed in the middle of a frame")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(sock: socket.socket) -> Optional[Dict[str, Any]]:
    """The next frame from the socket, or None when the server closed the connection."""
    header = _read_exactly(sock, HEADER.size)
    if header is None:
        return None
    (length,) = HEADER.unpack(header)
    if length > MAX_INCOMING_FRAME:
        raise ConnectionError(f"the server announced a frame of {length} bytes")
    payload = _read_exactly(sock, length) if length else b""
    if payload is None:
        raise ConnectionError("the connection closed in the middle of a frame")
    frame = json.loads(payload.decode("utf-8"))
    if not isinstance(frame, dict):
        raise ConnectionError("the server sent a frame that is not a JSON object")
    return frame
