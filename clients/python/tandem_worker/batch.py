"""Continuous batching, as Java's DecodeBatch: every step advances each active sequence by one token;
sequences join and leave only between steps. ``begin``/``complete``/``cancel`` run under the worker's
lock; the step's compute runs without it, and nobody else touches a running step's sequences."""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Deque, Dict, List, NamedTuple, Optional

from .engine import Sampling, StopCondition


class DecodeSequence:
    """One request in the batch: its KV, the token to feed next and how many tokens it has generated
    (the prefill worker's first token included, so the first token this worker emits has seq 1)."""

    __slots__ = ("request_id", "router", "router_node", "cache", "sampling", "stop", "last_token", "generated",
                 "cancelled")

    def __init__(self, request_id: int, router: str, router_node: Optional[str], cache: Any, sampling: Sampling,
                 stop: StopCondition, first_token: int):
        self.request_id = request_id
        self.router = router
        self.router_node = router_node
        self.cache = cache
        self.sampling = sampling
        self.stop = stop
        self.last_token = first_token
        self.generated = 1
        self.cancelled = False


class Outcome(NamedTuple):
    """What a step did to one sequence: the tokens it emits (none for a stop token) and the finish."""

    sequence: DecodeSequence
    seq: int
    tokens: List[int]
    finish_reason: Optional[str]


class DecodeBatch:
    """Waiting sequences join the active set at the start of a step, up to ``max_batch``."""

    def __init__(self, max_batch: int, free: Callable[[Any], None], cache_bytes: Callable[[Any], int]):
        self.max_batch = max_batch
        self._free = free
        self._cache_bytes = cache_bytes
        self.waiting: Deque[DecodeSequence] = deque()
        self.active: Dict[int, DecodeSequence] = {}  # insertion-ordered: steps keep a stable order
        self.running: Optional[List[DecodeSequence]] = None

    def join(self, sequence: DecodeSequence) -> None:
        self.waiting.append(sequence)

    def contains(self, request_id: int) -> bool:
        return request_id in self.active or any(s.request_id == request_id for s in self.waiting)

    def count(self) -> int:
        return len(self.active) + len(self.waiting)

    def kv_bytes(self) -> int:
        return sum(self._cache_bytes(s.cache) for s in list(self.active.values()) + list(self.waiting))

    def cancel(self, request_id: int) -> Optional[DecodeSequence]:
        """Gone now if idle, or dropped when the step computing it completes."""
        for s in self.waiting:
            if s.request_id == request_id:
                self.waiting.remove(s)
                self._free(s.cache)
                return s
        active = self.active.get(request_id)
        if active is None:
            return None
        active.cancelled = True
        if self.running is None or active not in self.running:
            self._retire(active)
        return active

    def requests_of(self, router_node: str) -> List[int]:
        """The requests (active or waiting) of the router on a cluster member."""
        ids = [s.request_id for s in self.active.values() if s.router_node == router_node and not s.cancelled]
        return ids + [s.request_id for s in self.waiting if s.router_node == router_node]

    def begin(self) -> Optional[List[DecodeSequence]]:
        """Admits waiting sequences up to the batch limit and freezes the step; None when idle."""
        if self.running is not None:
            raise RuntimeError("a step is already running")
        while len(self.active) < self.max_batch and self.waiting:
            s = self.waiting.popleft()
            self.active[s.request_id] = s
        if not self.active:
            return None
        self.running = list(self.active.values())
        return self.running

    def complete(self, step: List[DecodeSequence], tokens: List[int]) -> List[Outcome]:
        """Applies each sequence's token, retires finished and cancelled sequences (freeing their KV).
        Cancelled sequences produce no outcome: nobody waits for them."""
        if step is not self.running:
            raise RuntimeError("completing a step that is not running")
        if len(tokens) != len(step):
            raise RuntimeError(f"the engine returned {len(tokens)} tokens for {len(step)} sequences")
        self.running = None
        outcomes = []
        for s, token in zip(step, tokens):
            if s.cancelled:
                self._retire(s)
                continue
            seq = s.generated
            s.generated += 1
            finish = s.stop.check(token, s.generated)
            s.last_token = token
            if finish is not None:
                self._retire(s)
            outcomes.append(Outcome(s, seq, [] if finish == "stop" else [token], finish))
        return outcomes

    def abort(self, step: List[DecodeSequence]) -> List[DecodeSequence]:
        """A step whose compute failed: its sequences cannot go on (their caches are in an unknown state)."""
        self.running = None
        for s in step:
            self._retire(s)
        return [s for s in step if not s.cancelled]

    def clear(self) -> None:
        """Frees everything not in a running step (the connection is gone)."""
        for s in list(self.waiting):
            self._free(s.cache)
        self.waiting.clear()
        for s in list(self.active.values()):
            s.cancelled = True
            if self.running is None or s not in self.running:
                self._retire(s)

    def _retire(self, s: DecodeSequence) -> None:
        if self.active.pop(s.request_id, None) is not None:
            self._free(s.cache)
