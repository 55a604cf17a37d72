"""TKV1 as Java writes it: the CRC32C vector, lossless round trips, and every refusal (offline)."""

from __future__ import annotations

import struct
import unittest
import zlib
from array import array

from tandem_worker import kv_codec
from tandem_worker.engine import KvLayout, Sampling
from tandem_worker.kv_codec import HEADER, HEADER_BYTES, KvAssembler, KvTransferError, crc32c
from tandem_worker.toy_model import ToyModel

LAYOUT = KvLayout(layers=2, kv_heads=1, head_dim=4, block_size=4)
FP = -0x123456789ABCDEF


def blocks_for(tokens: int, layout: KvLayout = LAYOUT):
    out = []
    for b in range(layout.blocks_for(tokens)):
        # Exactly representable values, zero past the token count (as a real cache has them).
        block = array("f", bytes(layout.block_bytes))
        for layer in range(layout.layers):
            for kv in range(2):
                for slot in range(layout.block_size):
                    if b * layout.block_size + slot < tokens:
                        base = ((layer * 2 + kv) * layout.block_size + slot) * layout.kv_dim
                        for d in range(layout.kv_dim):
                            block[base + d] = (b * 1000 + layer * 100 + kv * 10 + slot) * 0.5 - d
        out.append(block)
    return out


def stream(tokens: int = 6, fingerprint: int = FP) -> bytes:
    return kv_codec.encode_stream(LAYOUT, fingerprint, tokens, blocks_for(tokens))


def patch_header(data: bytes, **fields: int) -> bytes:
    names = ["magic", "version", "dtype", "reserved", "fingerprint", "layers", "kv_heads", "head_dim",
             "block_size", "tokens", "blocks"]
    values = dict(zip(names, HEADER.unpack_from(data)))
    values.update(fields)
    body = HEADER.pack(*(values[n] for n in names)) + data[HEADER_BYTES:-4]
    return body + struct.pack("<I", crc32c(body))  # a valid CRC, so only the field is wrong


class Crc32cTest(unittest.TestCase):

    def test_the_check_value(self) -> None:
        self.assertEqual(0xE3069283, crc32c(b"123456789"))
        self.assertEqual(0, crc32c(b""))

    def test_it_continues_a_running_crc(self) -> None:
        data = bytes(range(256)) * 3
        self.assertEqual(crc32c(data), crc32c(data[100:], crc32c(data[:100])))
        self.assertNotEqual(zlib.crc32(data), crc32c(data), "Castagnoli, not the zip polynomial")


class RoundTripTest(unittest.TestCase):

    def test_the_header_is_javas(self) -> None:
        data = stream(6)
        self.assertEqual(b"TKV1", data[:4])
        self.assertEqual((b"TKV1", 1, 0, 0, FP, 2, 1, 4, 4, 6, 2), HEADER.unpack_from(data))
        self.assertEqual(kv_codec.encoded_size(LAYOUT, 6), len(data))
        self.assertEqual(40 + 2 * LAYOUT.block_bytes + 4, len(data))
        self.assertEqual(crc32c(data[:-4]), struct.unpack("<I", data[-4:])[0])

    def test_blocks_survive_bit_for_bit_in_any_chunking(self) -> None:
        for tokens in (1, 3, 4, 5, 16, 17):
            for chunk in (64, 65, 100, 4096):
                with self.subTest(tokens=tokens, chunk=chunk):
                    chunks = kv_codec.encode(LAYOUT, FP, tokens, blocks_for(tokens), chunk)
                    self.assertTrue(all(len(c) == chunk for c in chunks[:-1]))
                    assembler = KvAssembler(LAYOUT, FP, 1 << 20)
                    for c in chunks:
                        assembler.accept(c)
                    self.assertEqual((tokens, blocks_for(tokens)), assembler.finish())

    def test_only_the_blocks_covering_the_tokens_are_sent(self) -> None:
        self.assertEqual(stream(3), kv_codec.encode_stream(LAYOUT, FP, 3, blocks_for(3) + blocks_for(8)))

    def test_a_toy_cache_round_trips_losslessly(self) -> None:
        model = ToyModel(258, 512)
        cache, _ = model.prefill(list(range(40)), Sampling())
        tokens, blocks = kv_codec.decode(
            kv_codec.encode_stream(model.info.layout, model.info.fingerprint, *model.export_kv(cache)),
            model.info.layout, model.info.fingerprint)
        self.assertEqual(40, tokens)
        self.assertEqual([b.tobytes() for b in cache.blocks], [b.tobytes() for b in blocks])

    def test_encode_refuses_impossible_input(self) -> None:
        with self.assertRaises(ValueError):
            kv_codec.encode(LAYOUT, FP, 6, blocks_for(6), 63)
        with self.assertRaises(ValueError):
            kv_codec.encode_stream(LAYOUT, FP, 0, [])
        with self.assertRaises(ValueError):
            kv_codec.encode_stream(LAYOUT, FP, 9, blocks_for(6))


class ValidationTest(unittest.TestCase):

    def refused(self, data: bytes, reason: str, max_bytes: int = 1 << 20, fingerprint: int = FP,
                layout: KvLayout = LAYOUT) -> KvTransferError:
        assembler = KvAssembler(layout, fingerprint, max_bytes)
        with self.assertRaises(KvTransferError) as raised:
            assembler.accept(data)
            assembler.finish()
        self.assertEqual(reason, raised.exception.reason)
        self.assertTrue(str(raised.exception).startswith(reason + ": "))
        with self.assertRaises(KvTransferError, msg="a failed assembler keeps failing"):
            assembler.accept(b"")
        return raised.exception

    def test_each_header_field_is_checked(self) -> None:
        good = stream(6)
        self.assertIn("TKV1", str(self.refused(b"TKV2" + good[4:], "BAD_MAGIC")))
        self.assertIn("version 2", str(self.refused(patch_header(good, version=2), "BAD_VERSION")))
        self.assertIn("dtype 1", str(self.refused(patch_header(good, dtype=1), "BAD_DTYPE")))
        self.refused(patch_header(good, reserved=1), "BAD_HEADER")
        error = self.refused(good, "MODEL_MISMATCH", fingerprint=FP + 1)
        self.assertEqual(409, error.failure_code)
        self.assertIn("fingerprint", str(error))
        for field in ("layers", "kv_heads", "head_dim", "block_size"):
            with self.subTest(field=field):
                self.assertEqual(409, self.refused(patch_header(good, **{field: 8}), "LAYOUT_MISMATCH").failure_code)
        self.refused(patch_header(good, tokens=0), "BAD_HEADER")
        self.assertIn("blockCount 3", str(self.refused(patch_header(good, blocks=3), "BAD_HEADER")))

    def test_limits_and_lengths(self) -> None:
        good = stream(6)
        error = self.refused(good[:HEADER_BYTES], "TOO_LARGE", max_bytes=len(good) - 1)
        self.assertEqual(413, error.failure_code, "refused on the header alone, before any body arrives")
        self.assertEqual(502, self.refused(good + b"\0", "OVERSIZED").failure_code)
        self.assertIn(f"of {len(good)} declared", str(self.refused(good[:-1], "TRUNCATED")))
        self.assertIn("header alone", str(self.refused(good[:20], "TRUNCATED")))

    def test_a_flipped_bit_fails_the_crc(self) -> None:
        good = bytearray(stream(6))
        good[HEADER_BYTES + 5] ^= 0x10
        self.assertEqual(502, self.refused(bytes(good), "CORRUPTED").failure_code)
        trailer = bytearray(stream(6))
        trailer[-1] ^= 1
        self.refused(bytes(trailer), "CORRUPTED")


if __name__ == "__main__":
    unittest.main()
