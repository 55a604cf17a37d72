"""The seam between the worker bridge and the math: what a real engine (vLLM, your GPU code) replaces.

A worker never looks inside a KV cache except through this interface. To wrap a real engine,
implement :class:`Engine`:

* :attr:`Engine.info` — name (must equal the cluster's model), a fingerprint of the weights (prefill and
  decode workers pair only on equal fingerprints), the vocabulary/context shape and the KV layout the
  TKV1 wire format describes.
* :meth:`Engine.prefill` — the prompt's KV and the first generated token.
* :meth:`Engine.decode_step` — one token for every sequence of a batch (continuous batching: the batch
  changes between calls), appending each fed token's K/V to its cache.
* :meth:`Engine.export_kv` / :meth:`Engine.import_kv` — the cache as float32 blocks laid out
  ``[layer][K|V][slot][kvDim]`` (the TKV1 layout) and back; a paged GPU cache copies its pages here.
* :meth:`Engine.cache_tokens`, :meth:`Engine.cache_bytes`, :meth:`Engine.free` — bookkeeping.

:class:`HostKvEngine` implements the KV half for engines that keep the cache in host memory as
:class:`KvCache` blocks (the toy model does); a GPU engine implements those five methods itself.
"""

from __future__ import annotations

import abc
from array import array
from dataclasses import dataclass
from typing import Any, Callable, List, NamedTuple, Optional, Sequence, Tuple


class PrefillCancelled(Exception):
    """Raised by :meth:`Engine.prefill` when its ``cancelled`` callback turned true."""


@dataclass(frozen=True)
class KvLayout:
    """Shape of a KV cache as TKV1 ships it: per layer, K and V rows of ``kv_heads * head_dim`` floats,
    grouped in blocks of ``block_size`` token slots."""

    layers: int
    kv_heads: int
    head_dim: int
    block_size: int

    def __post_init__(self) -> None:
        if min(self.layers, self.kv_heads, self.head_dim, self.block_size) <= 0:
            raise ValueError(f"KV layout dimensions must be positive: {self}")

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    @property
    def block_floats(self) -> int:
        """Floats in one block: layers x {K, V} x block_size x kv_dim."""
        return self.layers * 2 * self.block_size * self.kv_dim

    @property
    def block_bytes(self) -> int:
        return self.block_floats * 4

    def blocks_for(self, tokens: int) -> int:
        return (tokens + self.block_size - 1) // self.block_size


@dataclass(frozen=True)
class EngineInfo:
    """What an engine serves. ``fingerprint`` is a signed int64 naming the weights: KV computed by one
    fingerprint is never decoded by another. ``eos`` ends a sequence like a stop token."""

    name: str
    fingerprint: int
    vocab_size: int
    seq_len: int
    bos: int
    eos: int
    layout: KvLayout

    def __post_init__(self) -> None:
        if not -(1 << 63) <= self.fingerprint < (1 << 63):
            raise ValueError(f"fingerprint {self.fingerprint} is not a signed int64")


@dataclass(frozen=True)
class Sampling:
    """How the next token is chosen (the wire's ``sampling`` object). Temperature 0 is greedy."""

    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int = 0

    @staticmethod
    def from_json(value: Any) -> "Sampling":
        """Parses and checks the wire form, as Java's SamplingParams does; ValueError says what is wrong."""
        if not isinstance(value, dict):
            raise ValueError("field 'sampling' must be an object")
        try:
            s = Sampling(float(value["temperature"]), float(value["top_p"]), int(value["top_k"]), int(value["seed"]))
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"field 'sampling' is malformed: {e}") from None
        if not (s.temperature >= 0) or s.temperature == float("inf"):
            raise ValueError("temperature must be a finite number >= 0")
        if not 0 < s.top_p <= 1:
            raise ValueError("top_p must be in (0, 1]")
        if s.top_k < 0:
            raise ValueError("top_k must be >= 0")
        return s


class KvCache:
    """A host-memory KV cache: blocks of ``layout.block_floats`` float32 (``array('f')``, so values are
    rounded to float32 where they are stored, exactly as they travel), ``length`` positions filled."""

    __slots__ = ("layout", "blocks", "length")

    def __init__(self, layout: KvLayout, blocks: Optional[List["array[float]"]] = None, length: int = 0):
        self.layout = layout
        self.blocks: List["array[float]"] = blocks if blocks is not None else []
        self.length = length

    def ensure_capacity(self, tokens: int) -> None:
        while len(self.blocks) < self.layout.blocks_for(tokens):
            self.blocks.append(array("f", bytes(self.layout.block_bytes)))

    def offset(self, layer: int, kv: int, pos: int) -> int:
        """Index of the K (kv=0) or V (kv=1) row of ``layer`` at ``pos`` inside ``block_for(pos)``."""
        slot = pos % self.layout.block_size
        return ((layer * 2 + kv) * self.layout.block_size + slot) * self.layout.kv_dim

    def block_for(self, pos: int) -> "array[float]":
        return self.blocks[pos // self.layout.block_size]

    @property
    def nbytes(self) -> int:
        """KV memory held (whole blocks), as Java's KvCache.bytes()."""
        return len(self.blocks) * self.layout.block_bytes

    def free(self) -> None:
        self.blocks = []
        self.length = 0


class DecodeInput(NamedTuple):
    """One sequence of a decode step: feed ``token`` at position ``engine.cache_tokens(cache)``."""

    cache: Any
    token: int
    sampling: Sampling


class Engine(abc.ABC):
    """The interface a worker drives. Calls block for as long as the compute takes; the worker calls them
    from its compute threads, never from the connection's reader thread. ``prefill`` may run on several
    threads at once (different caches); ``decode_step`` is called by one thread at a time."""

    @property
    @abc.abstractmethod
    def info(self) -> EngineInfo:
        """Name, fingerprint, vocabulary, context length and KV layout."""

    @abc.abstractmethod
    def prefill(self, tokens: Sequence[int], sampling: Sampling,
                cancelled: Callable[[], bool] = lambda: False) -> Tuple[Any, int]:
        """Computes the KV of ``tokens`` (positions 0..len-1) and samples the first generated token at
        position ``len(tokens)``. Returns (cache, first_token). Checks ``cancelled`` now and then and
        raises :class:`PrefillCancelled` when it turns true (freeing what it allocated)."""

    def prefill_from(self, cache: Any, tokens: Sequence[int], sampling: Sampling,
                     cancelled: Callable[[], bool] = lambda: False) -> Tuple[Any, int]:
        """Like :meth:`prefill`, from a cache that already holds the first ``cache_tokens(cache)``
        positions of ``tokens`` (a reused prefix): computes the rest. An engine that cannot raises
        NotImplementedError, and its prefill worker keeps no prefix cache."""
        raise NotImplementedError

    def supports_prefill_from(self) -> bool:
        return type(self).prefill_from is not Engine.prefill_from

    @abc.abstractmethod
    def decode_step(self, batch: Sequence[DecodeInput]) -> List[int]:
        """One step: for each input, appends the K/V of its token to its cache and returns the sampled
        next token (in order). Batching must not change any sequence's result."""

    @abc.abstractmethod
    def export_kv(self, cache: Any) -> Tuple[int, List["array[float]"]]:
        """(token count, blocks) in the TKV1 layout: ``layout.blocks_for(tokens)`` arrays of
        ``layout.block_floats`` float32 each; slots past the token count are zero."""

    @abc.abstractmethod
    def import_kv(self, tokens: int, blocks: List["array[float]"]) -> Any:
        """A cache holding ``tokens`` positions from received blocks (the inverse of export_kv)."""

    @abc.abstractmethod
    def cache_tokens(self, cache: Any) -> int:
        """Positions stored in the cache."""

    @abc.abstractmethod
    def cache_bytes(self, cache: Any) -> int:
        """KV memory the cache holds, for load reports and capacity limits."""

    @abc.abstractmethod
    def free(self, cache: Any) -> None:
        """Releases the cache's memory; the worker calls it exactly once per cache it no longer needs."""


class HostKvEngine(Engine, abc.ABC):
    """An Engine whose caches are host-memory :class:`KvCache` objects: implements the KV bookkeeping,
    leaving ``info``, ``prefill`` and ``decode_step`` to the model."""

    def new_cache(self) -> KvCache:
        return KvCache(self.info.layout)

    def export_kv(self, cache: KvCache) -> Tuple[int, List["array[float]"]]:
        return cache.length, cache.blocks[:cache.layout.blocks_for(cache.length)]

    def import_kv(self, tokens: int, blocks: List["array[float]"]) -> KvCache:
        layout = self.info.layout
        if len(blocks) != layout.blocks_for(tokens) or any(len(b) != layout.block_floats for b in blocks):
            raise ValueError(f"{len(blocks)} blocks do not hold {tokens} tokens of layout {layout}")
        return KvCache(layout, list(blocks), tokens)

    def cache_tokens(self, cache: KvCache) -> int:
        return cache.length

    def cache_bytes(self, cache: KvCache) -> int:
        return cache.nbytes

    def free(self, cache: KvCache) -> None:
        cache.free()


class StopCondition:
    """When a generated sequence ends, exactly as Java's dev.tandem.engine.StopCondition (the router
    applies the same rule to the first token, so a worker must agree with it to the token).

    ``end_tokens`` is the tokenizer's end-of-sequence set (Java's Tokenizer.isEndOfSequence: {eos} for
    the byte tokenizer, {bos, eos} for llama2.c's). ``check(token, generated)``: ``generated`` counts
    tokens including this one (the first token is 1). Returns None to go on, "stop" (drop the token: an
    end or stop token) or "length" (keep it: max tokens or the context is full).
    """

    def __init__(self, end_tokens: Sequence[int], stop_tokens: Sequence[int], max_new_tokens: int,
                 prompt_tokens: int, context_length: int):
        self.stop_tokens = frozenset(end_tokens) | frozenset(stop_tokens)
        self.max_new_tokens = max_new_tokens
        self.prompt_tokens = prompt_tokens
        self.context_length = context_length

    def check(self, token: int, generated: int) -> Optional[str]:
        if token in self.stop_tokens:
            return "stop"
        if generated >= self.max_new_tokens or self.prompt_tokens + generated >= self.context_length:
            return "length"
        return None
