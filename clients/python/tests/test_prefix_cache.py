"""The prefill worker's prefix cache: what it reuses, what it evicts, and that reuse is exact."""

from __future__ import annotations

import unittest

from tandem_worker import ToyModel
from tandem_worker.engine import Sampling
from tandem_worker.prefix_cache import PrefixCache


class PrefixCacheTest(unittest.TestCase):

    def test_the_longest_cached_prefix_leaves_a_token_to_compute(self) -> None:
        cache = PrefixCache(4, 10)
        prompt = list(range(12))
        cache.add(prompt, ["b0", "b1", "b2"])
        self.assertEqual(["b0", "b1"], cache.longest(prompt), "12 tokens: the third block holds the last")
        self.assertEqual(["b0", "b1", "b2"], cache.longest(prompt + [99]))
        self.assertEqual(["b0"], cache.longest(prompt[:4] + [50, 51, 52, 53, 54]))
        self.assertEqual([], cache.longest([9] + prompt))

    def test_past_its_capacity_the_least_recently_used_blocks_go_and_named_ones_are_reported(self) -> None:
        cache = PrefixCache(2, 3)
        a, b = [1, 2, 3, 4], [5, 6, 7, 8]
        self.assertEqual((2, []), cache.add(a, ["a0", "a1"]))
        self.assertEqual([], cache.named(a, [101, 102]))
        cache.longest(a + [0])  # a is the most recently used now
        added, evicted = cache.add(b, ["b0", "b1"])
        self.assertEqual((2, [101]), (added, evicted), "a0 was used before a1, and both before b")
        self.assertEqual(3, len(cache))
        # b's hashes arrive after b0 was evicted in turn: the cluster must hear it is gone.
        self.assertEqual((2, [102]), cache.add([9, 9, 8, 8], ["c0", "c1"]), "a1, then b0 (no hash yet) go")
        self.assertEqual([201], cache.named(b, [201, 202]))

    def test_a_prefill_from_a_reused_prefix_equals_a_full_prefill(self) -> None:
        model = ToyModel(258, 512)
        prompt = [(i * 37) % 250 for i in range(70)]
        sampling = Sampling(temperature=0.8, seed=5)
        full, first = model.prefill(prompt, sampling)
        size = model.info.layout.block_size
        tokens, blocks = model.export_kv(full)
        reused = model.import_kv(2 * size, list(blocks[:2]))
        rest, first_again = model.prefill_from(reused, prompt, sampling)
        self.assertEqual(first, first_again)
        self.assertEqual([b.tobytes() for b in blocks], [b.tobytes() for b in model.export_kv(rest)[1]])


if __name__ == "__main__":
    unittest.main()
