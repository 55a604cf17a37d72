"""The decode side of KV transfer, as Java's KvInbox: assemble each request's chunks in order, answer the
last chunk with KV_CACHE_ACK (or why it was refused), and park the cache until its DECODE_REQUEST claims
it. Anything unclaimed after the park timeout is freed: a router that vanished between prefill and
decode leaves no KV behind.

Failure codes, as Java: malformed chunk headers 400; a chunk of no transfer, or out of order, 502
(KV transfer failed); a foreign fingerprint or layout 409; over max_kv_transfer_bytes 413; a broken
stream (magic, version, dtype, counts, length, CRC) 502; no room on this worker 503.
"""

from __future__ import annotations

import base64
import binascii
import time
from typing import Any, Callable, Dict, Optional, Tuple

from .base import BAD_REQUEST, KV_TRANSFER_FAILED, OVER_CAPACITY
from .bridge import Message
from .engine import Engine
from .kv_codec import KvAssembler, KvTransferError


class _Transfer:
    def __init__(self, assembler: KvAssembler, deadline: float):
        self.assembler = assembler
        self.deadline = deadline
        self.next_index = 0
        # Set once a chunk was refused; later chunks are dropped and the last one gets this answer.
        self.failure: Optional[Tuple[int, str]] = None


class KvInbox:
    """Used by the decode worker under its lock, except ``assemble`` (the reader thread only)."""

    def __init__(self, engine: Engine, max_bytes: int, park_timeout_s: float):
        self.engine = engine
        self.max_bytes = max_bytes
        self.park_timeout_s = park_timeout_s
        self.incoming: Dict[int, _Transfer] = {}
        self.parked: Dict[int, Tuple[Any, float]] = {}  # request id -> (cache, deadline)
        self.expired = 0

    @staticmethod
    def parse(message: Message) -> Tuple[int, int, bool, bytes]:
        """(request id, chunk index, last, payload); ValueError for a malformed chunk."""
        h = message.headers
        try:
            request_id = int(h["tandem-request-id"])
            index = int(h["tandem-chunk"])
            last = h["tandem-last"]
        except KeyError as e:
            raise ValueError(f"KV chunk header {e} is missing") from None
        except (TypeError, ValueError) as e:
            raise ValueError(f"KV chunk headers are malformed: {e}") from None
        if index < 0 or last not in ("true", "false"):
            raise ValueError("KV chunk headers are malformed")
        if not isinstance(message.body, str):
            raise ValueError("KV chunk body must be a base64 string")
        try:
            payload = base64.b64decode(message.body, validate=True)
        except (binascii.Error, ValueError) as e:
            raise ValueError(f"KV chunk body is not base64: {e}") from None
        return request_id, index, last == "true", payload

    def begin(self, request_id: int, index: int, known: bool, no_room: Callable[[], Optional[str]]
              ) -> Optional[_Transfer]:
        """The transfer a chunk belongs to, starting one for chunk 0; None for a chunk of no transfer
        (refused). ``known``: the request already decodes here. ``no_room`` is asked only when a
        transfer starts (it already counts as incoming)."""
        t = self.incoming.get(request_id)
        if t is not None:
            return t
        if index != 0 or request_id in self.parked or known:
            return None
        t = _Transfer(KvAssembler(self.engine.info.layout, self.engine.info.fingerprint, self.max_bytes),
                      time.monotonic() + self.park_timeout_s)
        self.incoming[request_id] = t
        full = no_room()
        if full is not None:
            # No room: take nothing, and answer the last chunk so the router tries another worker.
            t.failure = (OVER_CAPACITY, full)
        return t

    @staticmethod
    def assemble(t: _Transfer, index: int, payload: bytes) -> None:
        """Feeds one chunk (CRC and all: slow-ish, so outside the worker's lock)."""
        if t.failure is not None:
            return
        if index != t.next_index:
            t.failure = (KV_TRANSFER_FAILED, f"KV chunk {index} arrived, expected {t.next_index}")
            return
        t.next_index += 1
        try:
            t.assembler.accept(payload)
        except KvTransferError as e:
            t.failure = (e.failure_code, str(e))

    def finish(self, request_id: int, t: _Transfer) -> Tuple[Optional[Dict[str, Any]], Tuple[int, str]]:
        """After the last chunk: (ack body, _) when the KV is parked, or (None, (code, why))."""
        if self.incoming.get(request_id) is not t:
            return None, (KV_TRANSFER_FAILED, f"the KV of request {request_id} expired or was cancelled meanwhile")
        del self.incoming[request_id]
        if t.failure is not None:
            return None, t.failure
        try:
            tokens, blocks = t.assembler.finish()
            cache = self.engine.import_kv(tokens, blocks)
        except KvTransferError as e:
            return None, (e.failure_code, str(e))
        except ValueError as e:
            return None, (BAD_REQUEST, str(e))
        self.parked[request_id] = (cache, time.monotonic() + self.park_timeout_s)
        return {"request_id": request_id, "bytes": t.assembler.bytes_received, "tokens": tokens}, (0, "")

    def claim(self, request_id: int) -> Optional[Any]:
        """Hands the parked KV of a request to its DECODE_REQUEST; None when there is none."""
        entry = self.parked.pop(request_id, None)
        return entry[0] if entry is not None else None

    def drop(self, request_id: int) -> bool:
        """Frees whatever the request holds here; True if it held anything."""
        t = self.incoming.pop(request_id, None)
        entry = self.parked.pop(request_id, None)
        if entry is not None:
            self.engine.free(entry[0])
        return t is not None or entry is not None

    def expire(self, now: float) -> int:
        """Frees transfers and parked KV past their deadline; returns how many."""
        stale = [r for r, t in self.incoming.items() if t.deadline <= now]
        stale += [r for r, (_, deadline) in self.parked.items() if deadline <= now]
        for request_id in stale:
            self.drop(request_id)
        self.expired += len(stale)
        return len(stale)

    def clear(self) -> None:
        for request_id in list(self.incoming) + list(self.parked):
            self.drop(request_id)

    def parked_bytes(self) -> int:
        """Parked KV plus what incoming transfers received so far."""
        return (sum(self.engine.cache_bytes(c) for c, _ in self.parked.values())
                + sum(t.assembler.bytes_received for t in self.incoming.values()))
