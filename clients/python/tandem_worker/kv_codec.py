"""TKV1, the KV transfer stream, byte for byte as Java's dev.tandem.worker.kv.KvTransferCodec and
KvTransferAssembler (little-endian):

    header  40 bytes  magic "TKV1" | version u16 (1) | dtype u8 (0 = float32) | reserved u8 (0) |
                      fingerprint i64 | layers i32 | kvHeads i32 | headDim i32 | blockSize i32 |
                      tokenCount i32 | blockCount i32
    blocks            blockCount x layout.block_floats float32, each [layer][K|V][slot][kvDim];
                      slots past tokenCount in the last block are zero
    trailer           CRC32C (Castagnoli) of everything before it, u32

:func:`encode` cuts the stream into chunks; :class:`KvAssembler` checks every field as soon as its bytes
are in and rebuilds the blocks. Failures are :class:`KvTransferError` with Java's reason names.
"""

from __future__ import annotations

import struct
import sys
from array import array
from typing import List, Optional, Sequence, Tuple, Union

from .engine import KvLayout

MAGIC = b"TKV1"
VERSION = 1
DTYPE_FLOAT32 = 0
HEADER = struct.Struct("<4sHBBqiiiiii")
HEADER_BYTES = HEADER.size  # 40
TRAILER_BYTES = 4
#: Smallest chunk :func:`encode` makes: the header always fits in the first chunk (as in Java).
MIN_CHUNK_BYTES = 64
#: The chunk size the protocol suggests (raw bytes; base64 makes a frame 4/3 of it).
DEFAULT_CHUNK_BYTES = 256 << 10
_LITTLE = sys.byteorder == "little"


def _crc32c_table() -> List[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1  # reflected Castagnoli polynomial
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data: Union[bytes, bytearray, memoryview], crc: int = 0) -> int:
    """CRC32C (Castagnoli) of ``data``; pass the previous result as ``crc`` to continue a running CRC
    (``crc32c(b, crc32c(a)) == crc32c(a + b)``), like java.util.zip.CRC32C. Pure Python, table driven:
    about 10 MB/s — fine for the toy; an engine shipping gigabytes would use a C implementation."""
    table = _TABLE
    c = crc ^ 0xFFFFFFFF
    for byte in bytes(data):
        c = table[(c ^ byte) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


class KvTransferError(Exception):
    """A KV stream that must not be used; ``reason`` is Java's KvTransferException.Reason name:
    BAD_MAGIC, BAD_VERSION, BAD_DTYPE, BAD_HEADER, MODEL_MISMATCH, LAYOUT_MISMATCH, TOO_LARGE,
    OVERSIZED, TRUNCATED, CORRUPTED."""

    def __init__(self, reason: str, message: str):
        super().__init__(f"{reason}: {message}")
        self.reason = reason

    @property
    def failure_code(self) -> int:
        """The worker failure code a decode worker answers with (as Java's KvInbox.failureOf)."""
        if self.reason == "TOO_LARGE":
            return 413
        if self.reason in ("MODEL_MISMATCH", "LAYOUT_MISMATCH"):
            return 409
        return 502


def encoded_size(layout: KvLayout, tokens: int) -> int:
    """Exact stream length for ``tokens`` tokens, so a sender can check a limit before encoding."""
    if tokens <= 0:
        raise ValueError(f"tokenCount must be positive, got {tokens}")
    return HEADER_BYTES + layout.blocks_for(tokens) * layout.block_bytes + TRAILER_BYTES


def encode_stream(layout: KvLayout, fingerprint: int, tokens: int, blocks: Sequence["array[float]"]) -> bytes:
    """The whole TKV1 stream of ``tokens`` tokens held in ``blocks`` (extra blocks are not sent)."""
    count = layout.blocks_for(tokens)
    if tokens <= 0:
        raise ValueError(f"tokenCount must be positive, got {tokens}")
    if len(blocks) < count:
        raise ValueError(f"{tokens} tokens need {count} blocks, the cache has {len(blocks)}")
    parts = [HEADER.pack(MAGIC, VERSION, DTYPE_FLOAT32, 0, fingerprint, layout.layers, layout.kv_heads,
                         layout.head_dim, layout.block_size, tokens, count)]
    for block in blocks[:count]:
        if len(block) != layout.block_floats:
            raise ValueError(f"a block has {len(block)} floats, the layout needs {layout.block_floats}")
        data = array("f", block)  # a float32 copy whatever the input was
        if not _LITTLE:
            data.byteswap()
        parts.append(data.tobytes())
    body = b"".join(parts)
    return body + struct.pack("<I", crc32c(body))


def split(stream: bytes, max_chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> List[bytes]:
    """Chunks of at most ``max_chunk_bytes``, all full except the last (Java's encode does the same)."""
    if max_chunk_bytes < MIN_CHUNK_BYTES:
        raise ValueError(f"max_chunk_bytes must be at least {MIN_CHUNK_BYTES}, got {max_chunk_bytes}")
    return [stream[i:i + max_chunk_bytes] for i in range(0, len(stream), max_chunk_bytes)]


def encode(layout: KvLayout, fingerprint: int, tokens: int, blocks: Sequence["array[float]"],
           max_chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> List[bytes]:
    """The stream of ``tokens`` tokens cut into chunks of at most ``max_chunk_bytes``."""
    return split(encode_stream(layout, fingerprint, tokens, blocks), max_chunk_bytes)


class KvAssembler:
    """Receives one stream chunk by chunk. Every check happens as early as the bytes allow (the header
    is checked once its 40 bytes are in, so a too-large or foreign stream is refused before its body
    is buffered); after the first failure it keeps raising that failure. Not thread-safe."""

    def __init__(self, layout: KvLayout, fingerprint: int, max_bytes: int):
        if max_bytes <= 0:
            raise ValueError(f"max_bytes must be positive, got {max_bytes}")
        self.layout = layout
        self.fingerprint = fingerprint
        self.max_bytes = max_bytes
        self.bytes_received = 0
        self.total: Optional[int] = None  # the declared stream length once the header is in
        self.tokens = 0
        self._buffer = bytearray()
        self._crc = 0
        self._crc_upto = 0  # stream bytes already folded into the running CRC
        self._failure: Optional[KvTransferError] = None
        self.complete = False

    def accept(self, chunk: bytes) -> None:
        """Takes the next chunk; raises KvTransferError as soon as the stream is known to be unusable."""
        if self._failure is not None:
            raise self._failure
        try:
            self._append(chunk)
        except KvTransferError as e:
            self._fail(e)
            raise

    def finish(self) -> Tuple[int, List["array[float]"]]:
        """(token count, blocks) of a complete stream whose CRC matched."""
        if self._failure is not None:
            raise self._failure
        if not self.complete:
            got = (f"received {self.bytes_received} bytes, the header alone needs {HEADER_BYTES}"
                   if self.total is None else f"received {self.bytes_received} of {self.total} declared bytes")
            error = KvTransferError("TRUNCATED", got)
            self._fail(error)
            raise error
        data, self._buffer = self._buffer, bytearray()
        step = self.layout.block_bytes
        blocks = []
        for start in range(HEADER_BYTES, len(data) - TRAILER_BYTES, step):
            block = array("f")
            block.frombytes(bytes(data[start:start + step]))
            if not _LITTLE:
                block.byteswap()
            blocks.append(block)
        return self.tokens, blocks

    def _fail(self, error: KvTransferError) -> None:
        self._failure = error
        self._buffer = bytearray()  # a refused stream holds no memory

    def _append(self, chunk: bytes) -> None:
        if self.total is not None and self.bytes_received + len(chunk) > self.total:
            raise KvTransferError("OVERSIZED", f"stream declared {self.total} bytes, received at least "
                                  f"{self.bytes_received + len(chunk)}")
        self._buffer += chunk
        self.bytes_received += len(chunk)
        if self.total is None:
            if len(self._buffer) < HEADER_BYTES:
                return
            self._parse_header()
            assert self.total is not None
            if self.bytes_received > self.total:
                raise KvTransferError("OVERSIZED", f"stream declared {self.total} bytes, received at least "
                                      f"{self.bytes_received}")
        # Fold what arrived into the running CRC now, so finishing costs nothing extra.
        crc_end = min(len(self._buffer), self.total - TRAILER_BYTES)
        if crc_end > self._crc_upto:
            self._crc = crc32c(self._buffer[self._crc_upto:crc_end], self._crc)
            self._crc_upto = crc_end
        if self.bytes_received == self.total:
            (sent,) = struct.unpack_from("<I", self._buffer, self.total - TRAILER_BYTES)
            if sent != self._crc:
                raise KvTransferError("CORRUPTED", f"CRC32C of the received stream is {self._crc:08x}, "
                                      f"trailer says {sent:08x}")
            self.complete = True

    def _parse_header(self) -> None:
        (magic, version, dtype, reserved, fingerprint, layers, kv_heads, head_dim, block_size, tokens,
         blocks) = HEADER.unpack_from(self._buffer)
        if magic != MAGIC:
            raise KvTransferError("BAD_MAGIC", f"expected magic {MAGIC!r} (0x{_le32(MAGIC):08x}), "
                                  f"got {magic!r} (0x{_le32(magic):08x})")
        if version != VERSION:
            raise KvTransferError("BAD_VERSION", f"unsupported version {version}, expected {VERSION}")
        if dtype != DTYPE_FLOAT32:
            raise KvTransferError("BAD_DTYPE", f"unsupported dtype {dtype}, expected {DTYPE_FLOAT32} (float32)")
        if reserved != 0:
            raise KvTransferError("BAD_HEADER", f"reserved byte must be 0, got {reserved}")
        if fingerprint != self.fingerprint:
            raise KvTransferError("MODEL_MISMATCH", f"KV is from model fingerprint {fingerprint & (2**64 - 1):016x}, "
                                  f"expected {self.fingerprint & (2**64 - 1):016x}")
        e = self.layout
        if (layers, kv_heads, head_dim, block_size) != (e.layers, e.kv_heads, e.head_dim, e.block_size):
            raise KvTransferError("LAYOUT_MISMATCH", f"got layers={layers} kvHeads={kv_heads} headDim={head_dim} "
                                  f"blockSize={block_size}, expected layers={e.layers} kvHeads={e.kv_heads} "
                                  f"headDim={e.head_dim} blockSize={e.block_size}")
        if tokens <= 0:
            raise KvTransferError("BAD_HEADER", f"tokenCount must be positive, got {tokens}")
        if blocks != e.blocks_for(tokens):
            raise KvTransferError("BAD_HEADER", f"blockCount {blocks} does not match tokenCount {tokens}: "
                                  f"expected {e.blocks_for(tokens)} blocks of {block_size}")
        size = encoded_size(e, tokens)
        if size > self.max_bytes:
            raise KvTransferError("TOO_LARGE", f"declared {size} bytes ({tokens} tokens) exceed the limit of "
                                  f"{self.max_bytes} bytes")
        self.total = size
        self.tokens = tokens


def _le32(four: bytes) -> int:
    return int.from_bytes(four, "little")


def decode(stream: bytes, layout: KvLayout, fingerprint: int, max_bytes: int = 1 << 40
           ) -> Tuple[int, List["array[float]"]]:
    """(token count, blocks) of a whole stream, with every check of :class:`KvAssembler`."""
    assembler = KvAssembler(layout, fingerprint, max_bytes)
    assembler.accept(stream)
    return assembler.finish()
