"""The toy model and the stop rule (offline): deterministic, sensitive to every KV value, batching-
invariant, and ``generate`` equal to a prefill + TKV1 transfer + decode run."""

from __future__ import annotations

import unittest

from tandem_worker import kv_codec
from tandem_worker.engine import DecodeInput, Sampling, StopCondition
from tandem_worker.toy_model import ToyModel, coin

PROMPT = [1, 72, 105, 33, 7, 200]


def pipeline(model: ToyModel, prompt, max_tokens, stop_tokens=(), sampling=Sampling()):
    """What the cluster does: prefill, ship the KV through TKV1, decode on a fresh cache."""
    info = model.info
    cache, first = model.prefill(prompt, sampling)
    stream = kv_codec.encode_stream(info.layout, info.fingerprint, *model.export_kv(cache))
    model.free(cache)
    cache = model.import_kv(*kv_codec.decode(stream, info.layout, info.fingerprint))
    stop = StopCondition([info.eos], stop_tokens, max_tokens, len(prompt), info.seq_len)
    out, token, generated = [], first, 1
    while True:
        finish = stop.check(token, generated)
        if finish == "stop":
            return out, "stop"
        out.append(token)
        if finish == "length":
            return out, "length"
        token = model.decode_step([DecodeInput(cache, token, sampling)])[0]
        generated += 1


class ToyModelTest(unittest.TestCase):

    def setUp(self) -> None:
        self.model = ToyModel(258, 512)

    def test_the_fingerprint_is_stable_and_names_the_shape(self) -> None:
        self.assertEqual(self.model.info.fingerprint, ToyModel(258, 512).info.fingerprint)
        self.assertNotEqual(self.model.info.fingerprint, ToyModel(258, 256).info.fingerprint)
        self.assertNotEqual(self.model.info.fingerprint, ToyModel(300, 512).info.fingerprint)
        self.assertTrue(-(1 << 63) <= self.model.info.fingerprint < (1 << 63))
        self.assertEqual((256, 257, "tandem-builtin"), (self.model.info.bos, self.model.info.eos, self.model.info.name))

    def test_kv_values_are_exact_in_float32(self) -> None:
        cache, _ = self.model.prefill(list(range(0, 258, 3)), Sampling())
        for block in cache.blocks:
            for value in block:
                self.assertEqual(value, int(value))
                self.assertLess(abs(value), 1 << 24)

    def test_it_is_deterministic(self) -> None:
        first = self.model.generate(PROMPT, 50)
        self.assertEqual(first, ToyModel(258, 512).generate(PROMPT, 50))
        self.assertEqual(50, len(first[0]))
        self.assertGreater(len(set(first[0])), 10, "the tokens vary")

    def test_the_next_token_depends_on_every_kv_value(self) -> None:
        cache, first = self.model.prefill(PROMPT, Sampling())
        changed = 0
        for b, block in enumerate(cache.blocks):
            for i in range(len(block)):
                slot = (i // cache.layout.kv_dim) % cache.layout.block_size
                if b * cache.layout.block_size + slot >= cache.length:
                    continue  # past the tokens: never read
                original = block[i]
                block[i] = original + 1
                changed += self.model._next(cache, Sampling()) != first
                block[i] = original
        self.assertEqual(len(PROMPT) * 8, changed, "every stored K/V value changes the next token")

    def test_generate_equals_prefill_transfer_and_decode(self) -> None:
        for max_tokens in (1, 2, 7, 64):
            with self.subTest(max_tokens=max_tokens):
                self.assertEqual(pipeline(self.model, PROMPT, max_tokens), self.model.generate(PROMPT, max_tokens))
        sampling = Sampling(temperature=0.8, top_k=5, seed=42)
        self.assertEqual(pipeline(self.model, PROMPT, 30, sampling=sampling),
                         self.model.generate(PROMPT, 30, sampling=sampling))
        self.assertNotEqual(self.model.generate(PROMPT, 30), self.model.generate(PROMPT, 30, sampling=sampling))

    def test_a_stop_token_ends_without_being_returned(self) -> None:
        tokens, _ = self.model.generate(PROMPT, 40)
        stop = tokens[5]
        expected = tokens[:tokens.index(stop)]
        self.assertEqual((expected, "stop"), self.model.generate(PROMPT, 40, stop_tokens=[stop]))
        self.assertEqual(([], "stop"), self.model.generate(PROMPT, 40, stop_tokens=[tokens[0]]),
                         "a first token that stops gives nothing")
        self.assertEqual((expected, "stop"), self.model.generate(PROMPT, 40, end_tokens=[stop]),
                         "end tokens (eos) stop like stop tokens")

    def test_the_context_limits_generation(self) -> None:
        small = ToyModel(258, 16)
        tokens, finish = small.generate(PROMPT, 100, end_tokens=[])
        self.assertEqual(("length", 16 - len(PROMPT)), (finish, len(tokens)), "prompt + generated reach seq_len")

    def test_batching_never_changes_a_sequence(self) -> None:
        prompts = [PROMPT, [5, 6, 7], list(range(30))]
        alone = [self.model.generate(p, 12, end_tokens=[])[0] for p in prompts]
        caches, lasts = [], []
        for p in prompts:
            cache, first = self.model.prefill(p, Sampling())
            caches.append(cache)
            lasts.append(first)
        together = [[t] for t in lasts]
        for _ in range(11):
            lasts = self.model.decode_step([DecodeInput(c, t, Sampling()) for c, t in zip(caches, lasts)])
            for out, t in zip(together, lasts):
                out.append(t)
        self.assertEqual(alone, together)

    def test_bad_input_is_refused(self) -> None:
        with self.assertRaises(ValueError):
            self.model.prefill([], Sampling())
        with self.assertRaises(ValueError):
            self.model.prefill([258], Sampling())
        cache, first = self.model.prefill(PROMPT, Sampling())
        with self.assertRaises(ValueError):
            self.model.decode_step([DecodeInput(cache, first, Sampling()), DecodeInput(cache, first, Sampling())])

    def test_the_coin_is_javas_splitmix64(self) -> None:
        # SplitMix64.at(0, 0) = mix(GAMMA) = 0xe220a8397b1dcdaf (the first output of the reference generator).
        self.assertEqual((0xE220A8397B1DCDAF >> 11) * 2.0 ** -53, coin(0, 0))


class StopConditionTest(unittest.TestCase):

    def test_it_mirrors_javas(self) -> None:
        stop = StopCondition([257], [10], max_new_tokens=3, prompt_tokens=5, context_length=100)
        self.assertEqual("stop", stop.check(257, 1))
        self.assertEqual("stop", stop.check(10, 3), "a stop token wins over the length")
        self.assertIsNone(stop.check(11, 2))
        self.assertEqual("length", stop.check(11, 3))
        self.assertEqual("length", StopCondition([], [], 50, 98, 100).check(1, 2), "prompt + generated = context")


if __name__ == "__main__":
    unittest.main()
