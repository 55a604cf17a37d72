"""A deterministic toy model implementing :class:`~tandem_worker.engine.Engine` — the part a real engine
replaces. It exists to make the worker bridge testable end to end:

* K/V values are non-negative integers below max(vocab_size, seq_len, 1021) < 2**24, exactly
  representable in float32, so a TKV1 round trip is lossless and a decode worker continues with
  bit-identical state.
* The next token is a hash of every stored K/V row (a stand-in for attention, which also reads the
  whole cache): a KV cache that did not arrive intact gives different tokens.
* Batching never changes a sequence's tokens; :meth:`ToyModel.generate` is the single-process
  reference of what a prefill + decode pair (and the router's stop rule) produce.
"""

from __future__ import annotations

import hashlib
import struct
import sys
from array import array
from typing import Callable, List, Optional, Sequence, Tuple

from .engine import (DecodeInput, EngineInfo, HostKvEngine, KvCache, KvLayout, PrefillCancelled, Sampling,
                     StopCondition)

TOY_NAME = "tandem-builtin"
#: Bumped whenever the toy's math changes, so old KV never pairs with new weights.
TOY_DEFINITION = b"tandem-toy-model/v1: K=[t,p,t*p%251,(t+3p)%257] V=[(t*t+p)%1021,(7t+11)%509,p*p%127,t%17]"
_MASK64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15


def _mix(z: int) -> int:
    """SplitMix64's finalizer (as Java's dev.tandem.engine.SplitMix64.mix), on unsigned 64-bit ints."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def coin(seed: int, position: int) -> float:
    """The position-th draw of SplitMix64 seeded with ``seed``, uniform in [0, 1) (Java's Sampler coin)."""
    return (_mix((seed + (position + 1) * _GAMMA) & _MASK64) >> 11) * 2.0 ** -53


class ToyModel(HostKvEngine):
    """``ToyModel(vocab_size, seq_len)``: one layer, one KV head of 4 dims, blocks of 16 tokens.

    ``bos``/``eos`` default to the built-in model's convention (vocab-2, vocab-1); ``name`` must equal
    the cluster's model name for a join to succeed.
    """

    def __init__(self, vocab_size: int = 258, seq_len: int = 512, *, bos: Optional[int] = None,
                 eos: Optional[int] = None, name: str = TOY_NAME, block_size: int = 16):
        if not (4 <= vocab_size < 1 << 24 and 2 <= seq_len < 1 << 24):
            # Below 2**24 every K/V value (a token id or position at most) is exact in float32.
            raise ValueError("the toy model needs 4 <= vocab_size < 2**24 and 2 <= seq_len < 2**24")
        layout = KvLayout(layers=1, kv_heads=1, head_dim=4, block_size=block_size)
        bos = vocab_size - 2 if bos is None else bos
        eos = vocab_size - 1 if eos is None else eos
        digest = hashlib.sha256(TOY_DEFINITION + struct.pack(
            "<8i", layout.layers, layout.kv_heads, layout.head_dim, layout.block_size, vocab_size, seq_len,
            bos, eos)).digest()
        # Java's fingerprints are the first 8 bytes of a SHA-256, big-endian, signed: the same here.
        fingerprint = int.from_bytes(digest[:8], "big", signed=True)
        self._info = EngineInfo(name, fingerprint, vocab_size, seq_len, bos, eos, layout)

    @property
    def info(self) -> EngineInfo:
        return self._info

    # ---- the math ----

    def _store(self, cache: KvCache, token: int, pos: int) -> None:
        """Writes the K and V rows of ``token`` at ``pos`` (the toy's 'projection')."""
        if not 0 <= token < self._info.vocab_size:
            raise ValueError(f"token id {token} is outside the vocabulary [0, {self._info.vocab_size})")
        if pos >= self._info.seq_len:
            raise ValueError(f"position {pos} is past the context of {self._info.seq_len} tokens")
        cache.ensure_capacity(pos + 1)
        block = cache.block_for(pos)
        k = cache.offset(0, 0, pos)
        v = cache.offset(0, 1, pos)
        t, p = token, pos
        block[k:k + 4] = array("f", [t, p, (t * p) % 251, (t + 3 * p) % 257])
        block[v:v + 4] = array("f", [(t * t + p) % 1021, (7 * t + 11) % 509, (p * p) % 127, t % 17])
        cache.length = pos + 1

    def _next(self, cache: KvCache, sampling: Sampling) -> int:
        """The next token from the whole cache: a hash of every stored row (only positions < length are
        read, like attention), then — for temperature > 0 — a seeded offset drawn at this position."""
        h = hashlib.blake2b(digest_size=8)
        layout = cache.layout
        for b, block in enumerate(cache.blocks[:layout.blocks_for(cache.length)]):
            filled = min(layout.block_size, cache.length - b * layout.block_size)
            raw = memoryview(block if sys.byteorder == "little" else _swapped(block))
            for row in range(layout.layers * 2):  # [layer][K|V] row groups of the block
                start = row * layout.block_size * layout.kv_dim
                h.update(raw[start:start + filled * layout.kv_dim].cast("B"))
        token = int.from_bytes(h.digest(), "little") % self._info.vocab_size
        if sampling.temperature > 0:
            # A toy sampler: temperature widens the window of candidates, top_k caps it, and the coin
            # depends only on (seed, position), as in Java's Sampler.
            spread = max(1, min(int(sampling.temperature * 8) + 1, sampling.top_k or self._info.vocab_size))
            token = (token + int(coin(sampling.seed, cache.length) * spread)) % self._info.vocab_size
        return token

    def prefill(self, tokens: Sequence[int], sampling: Sampling,
                cancelled: Callable[[], bool] = lambda: False) -> Tuple[KvCache, int]:
        if not tokens:
            raise ValueError("prefill needs at least one token")
        cache = self.new_cache()
        for pos, token in enumerate(tokens):
            if pos % 64 == 0 and cancelled():
                cache.free()
                raise PrefillCancelled()
            self._store(cache, token, pos)
        return cache, self._next(cache, sampling)

    def prefill_from(self, cache: KvCache, tokens: Sequence[int], sampling: Sampling,
                     cancelled: Callable[[], bool] = lambda: False) -> Tuple[KvCache, int]:
        if not cache.length < len(tokens):
            raise ValueError("prefill_from needs at least one token past the cached prefix")
        for pos in range(cache.length, len(tokens)):
            if pos % 64 == 0 and cancelled():
                cache.free()
                raise PrefillCancelled()
            self._store(cache, tokens[pos], pos)
        return cache, self._next(cache, sampling)

    def decode_step(self, batch: Sequence[DecodeInput]) -> List[int]:
        if len({id(item.cache) for item in batch}) != len(batch):
            raise ValueError("one cache twice in a decode step")
        out = []
        for item in batch:
            self._store(item.cache, item.token, item.cache.length)
            out.append(self._next(item.cache, item.sampling))
        return out

    # ---- the reference ----

    def generate(self, prompt_tokens: Sequence[int], max_tokens: int, stop_tokens: Sequence[int] = (),
                 sampling: Sampling = Sampling(), end_tokens: Optional[Sequence[int]] = None
                 ) -> Tuple[List[int], str]:
        """What a prefill + decode pair stream for this request: (generated tokens, finish_reason).

        Mirrors the pipeline: the prefill's first token is checked by the router's stop rule; the decode
        worker then feeds the last token and checks each new one. A stop/end token ends with "stop"
        and is not returned; max_tokens or a full context ends with "length".
        """
        ends = [self._info.eos] if end_tokens is None else list(end_tokens)
        stop = StopCondition(ends, stop_tokens, max_tokens, len(prompt_tokens), self._info.seq_len)
        cache, token = self.prefill(prompt_tokens, sampling)
        tokens: List[int] = []
        generated = 1
        try:
            while True:
                outcome = stop.check(token, generated)
                if outcome == "stop":
                    return tokens, "stop"
                tokens.append(token)
                if outcome == "length":
                    return tokens, "length"
                token = self.decode_step([DecodeInput(cache, token, sampling)])[0]
                generated += 1
        finally:
            self.free(cache)


def _swapped(block: "array[float]") -> "array[float]":
    copy = array("f", block)
    copy.byteswap()
    return copy
