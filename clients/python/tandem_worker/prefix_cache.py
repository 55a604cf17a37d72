"""A prefill worker's prefix cache, as Java's BlockCache: the KV of prompts' full blocks, keyed by the
chain of tokens before them, kept least recently used within a bound. A prompt that starts with cached
blocks computes only its rest. The routers learn what it holds from event frames the worker sends on
``tandem.bridge.worker.kv-events`` (the bridge turns them into Tandem's cache events)."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import List, Optional, Sequence, Tuple

ROOT = b""


class _Entry:
    __slots__ = ("kv", "tandem_hash")

    def __init__(self, kv: "object") -> None:
        self.kv = kv
        #: the block's hash in the cluster (the bridge's answer to the stored event); None until it came.
        self.tandem_hash: Optional[int] = None


class PrefixCache:
    """``block_size`` tokens per block (the KV layout's); at most ``capacity`` blocks. Thread-safe."""

    def __init__(self, block_size: int, capacity: int):
        if block_size <= 0 or capacity <= 0:
            raise ValueError("a prefix cache needs a positive block size and capacity")
        self.block_size = block_size
        self.capacity = capacity
        self._entries: "OrderedDict[bytes, _Entry]" = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0  # blocks reused

    def keys(self, tokens: Sequence[int]) -> List[bytes]:
        """The chained keys of the prompt's full blocks (a SHA-256 over the parent key and the tokens)."""
        out, key = [], ROOT
        for b in range(len(tokens) // self.block_size):
            block = tokens[b * self.block_size:(b + 1) * self.block_size]
            key = hashlib.sha256(key + b"".join(t.to_bytes(4, "little") for t in block)).digest()
            out.append(key)
        return out

    def longest(self, tokens: Sequence[int]) -> List["object"]:
        """The KV blocks of the prompt's longest cached prefix, leaving at least one token to compute."""
        usable = (len(tokens) - 1) // self.block_size
        found = []
        with self._lock:
            for key in self.keys(tokens)[:usable]:
                entry = self._entries.get(key)
                if entry is None:
                    break
                self._entries.move_to_end(key)
                found.append(entry.kv)
            self.hits += len(found)
        return found

    def add(self, tokens: Sequence[int], blocks: Sequence["object"]) -> Tuple[int, List[int]]:
        """Keeps the prompt's full blocks (``blocks[i]`` the KV of block i). Returns how many were new and
        the cluster hashes of the blocks evicted to make room (those whose hash is known)."""
        added, evicted = 0, []
        with self._lock:
            for key, kv in zip(self.keys(tokens), blocks):
                if key in self._entries:
                    self._entries.move_to_end(key)
                    continue
                self._entries[key] = _Entry(kv)
                added += 1
            while len(self._entries) > self.capacity:
                _, entry = self._entries.popitem(last=False)
                if entry.tandem_hash is not None:
                    evicted.append(entry.tandem_hash)
        return added, evicted

    def named(self, tokens: Sequence[int], hashes: Sequence[int]) -> List[int]:
        """The bridge's hashes of the prompt's full blocks, in order (its answer to a stored event).
        Returns those of blocks evicted before their hash came: the cluster must hear they are gone."""
        gone = []
        with self._lock:
            for key, h in zip(self.keys(tokens), hashes):
                entry = self._entries.get(key)
                if entry is None:
                    gone.append(h)
                else:
                    entry.tandem_hash = h
        return gone

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
