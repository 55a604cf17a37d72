"""The prefill role against a fake bridge (offline): KV shipped as TKV1 chunks, PREFILL_DONE after the
ack, and each failure code of Java's PrefillWorkerVerticle."""

from __future__ import annotations

import base64
import time
import unittest
from typing import Any, Dict, List, Tuple

from tandem_worker import PrefillWorker, ToyModel, WorkerSettings, kv_codec
from tandem_worker.engine import Sampling

from .fake_bridge import FakeWorkerBridge, join_reply

GREEDY = {"temperature": 0.0, "top_p": 1.0, "top_k": 0, "seed": 0}
KV = "tandem.decode.dec-9.kv"


def prefill_body(request_id: int, tokens: List[int], **extra: Any) -> Dict[str, Any]:
    body = {"request_id": request_id, "prompt_tokens": tokens, "decode_worker": "dec-9", "sampling": GREEDY,
            "router_node": "node-r"}
    body.update(extra)
    return body


class PrefillTest(unittest.TestCase):
    settings = WorkerSettings(kv_chunk_bytes=4096, kv_park_timeout_ms=2000)

    def setUp(self) -> None:
        self.model = ToyModel(258, 512)
        self.bridge = FakeWorkerBridge(join_reply("pre-1", role="prefill"))
        self.worker = PrefillWorker(self.model, "127.0.0.1", self.bridge.port, settings=self.settings).start()

    def tearDown(self) -> None:
        self.worker.close()
        self.bridge.close()

    def chunks(self, request_id: int) -> Tuple[List[Dict[str, Any]], bytes]:
        """The KV chunks the worker sends for a request, up to the last one, and their bytes."""
        sent = []
        while True:
            frame = self.bridge.next()
            self.assertEqual(KV, frame["address"])
            self.assertEqual(str(request_id), frame["headers"]["tandem-request-id"])
            self.assertEqual(str(len(sent)), frame["headers"]["tandem-chunk"])
            sent.append(frame)
            if frame["headers"]["tandem-last"] == "true":
                self.assertIn("replyAddress", frame)
                return sent, b"".join(base64.b64decode(f["body"]) for f in sent)
            self.assertEqual("false", frame["headers"]["tandem-last"])
            self.assertNotIn("replyAddress", frame)

    def ack(self, last: Dict[str, Any], request_id: int, nbytes: int, tokens: int) -> None:
        self.bridge.message(last["replyAddress"], {"request_id": request_id, "bytes": nbytes, "tokens": tokens})

    def test_the_kv_travels_in_chunks_and_prefill_done_follows_the_ack(self) -> None:
        prompt = [(i * 7) % 250 for i in range(1, 300)]
        self.bridge.message("tandem.prefill.pre-1", prefill_body(7, prompt), reply="tandem.bridge.reply.5")
        sent, stream = self.chunks(7)
        self.assertEqual(3, len(sent), "9.6 KB of KV in chunks of 4 KiB")
        self.assertTrue(all(len(base64.b64decode(f["body"])) == 4096 for f in sent[:-1]))
        info = self.model.info
        cache, first = self.model.prefill(prompt, Sampling())
        self.assertEqual(kv_codec.encode_stream(info.layout, info.fingerprint, *self.model.export_kv(cache)), stream)
        # The prefix cache's stored event may come before or after the chunks; it is not an answer.
        answers = [f for f in self.bridge.drain_frames() if f.get("address") != "tandem.bridge.worker.kv-events"]
        self.assertEqual([], answers, "no answer before the ack")
        self.ack(sent[-1], 7, len(stream), len(prompt))
        done = self.bridge.reply_to("tandem.bridge.reply.5")
        body = done["body"]
        self.assertGreaterEqual(body.pop("prefill_us"), 0)
        self.assertEqual({"request_id": 7, "first_token": first, "prompt_tokens": 299, "kv_bytes": len(stream)}, body)
        self.assertEqual(0, self.bridge.request("tandem.worker.pre-1.status", {})["body"]["load"]["prefilling"])

    def test_the_decode_workers_refusal_is_passed_on(self) -> None:
        cases = [("RECIPIENT_FAILURE", 503, 503), ("RECIPIENT_FAILURE", 409, 409), ("RECIPIENT_FAILURE", 777, 500),
                 ("TIMEOUT", -1, 502), ("NO_HANDLERS", -1, 502)]
        for i, (kind, code, expected) in enumerate(cases):
            with self.subTest(kind=kind, code=code):
                self.bridge.message("tandem.prefill.pre-1", prefill_body(i, [1, 2, 3]), reply=f"r{i}")
                sent, _ = self.chunks(i)
                self.bridge.send({"type": "err", "address": sent[-1]["replyAddress"], "failureCode": code,
                                  "failureType": kind, "message": "no room"})
                failed = self.bridge.reply_to(f"r{i}")
                self.assertEqual(expected, failed["failureCode"])
                self.assertIn("KV transfer to dec-9 failed", failed["message"])
        self.bridge.message("tandem.prefill.pre-1", prefill_body(20, [1, 2, 3]), reply="r20")
        sent, _ = self.chunks(20)
        self.bridge.send({"type": "err", "address": sent[-1]["replyAddress"], "message": "access_denied"})
        self.assertEqual(502, self.bridge.reply_to("r20")["failureCode"], "a refused send is a failed transfer")

    def test_an_ack_for_other_bytes_is_an_internal_error(self) -> None:
        self.bridge.message("tandem.prefill.pre-1", prefill_body(1, [5, 6]), reply="r1")
        sent, stream = self.chunks(1)
        self.ack(sent[-1], 1, len(stream) - 1, 2)
        failed = self.bridge.reply_to("r1")
        self.assertEqual(500, failed["failureCode"])
        self.assertIn(f"acknowledged {len(stream) - 1} of {len(stream)} bytes", failed["message"])

    def test_a_cancel_while_the_kv_travels_frees_it_on_the_decode_worker(self) -> None:
        self.bridge.message("tandem.prefill.pre-1", prefill_body(3, [5, 6, 7]), reply="r3")
        sent, stream = self.chunks(3)
        self.bridge.message("tandem.prefill.pre-1.cancel", {"request_id": 3, "reason": "client"})
        time.sleep(0.05)
        self.ack(sent[-1], 3, len(stream), 3)
        frames = [self.bridge.next(), self.bridge.next()]
        cancel = next(f for f in frames if f["address"] == "tandem.decode.dec-9.cancel")
        self.assertEqual({"request_id": 3, "reason": "cancelled"}, cancel["body"])
        failed = next(f for f in frames if f["address"] == "r3")
        self.assertEqual(499, failed["failureCode"])

    def test_a_departed_router_cancels_its_prefills(self) -> None:
        self.bridge.message("tandem.prefill.pre-1", prefill_body(4, [5, 6, 7]), reply="r4")
        self.bridge.message("tandem.prefill.pre-1", prefill_body(5, [5, 6, 7], router_node="other"), reply="r5")
        sent4, stream = self.chunks(4)
        sent5, _ = self.chunks(5)
        self.bridge.message("tandem.bridge.worker.router-left", {"node": "node-r"})
        time.sleep(0.05)
        self.ack(sent4[-1], 4, len(stream), 3)
        self.ack(sent5[-1], 5, len(stream), 3)
        answers = {f["address"]: f for f in (self.bridge.next(), self.bridge.next(), self.bridge.next())}
        self.assertEqual(499, answers["r4"]["failureCode"])
        self.assertEqual(5, answers["r5"]["body"]["request_id"], "another router's request goes on")

    def test_invalid_requests_are_400(self) -> None:
        cases = {"no tokens": prefill_body(1, []), "too long": prefill_body(1, [1] * 512),
                 "outside the vocabulary": prefill_body(1, [1, 258]), "negative": prefill_body(1, [-1]),
                 "not an object": [1], "no id": {"prompt_tokens": [1]}, "bad sampling": prefill_body(1, [1], sampling={}),
                 "bad temperature": prefill_body(1, [1], sampling=dict(GREEDY, temperature=-1)),
                 "no decode worker": prefill_body(1, [1], decode_worker=None)}
        for name, body in cases.items():
            with self.subTest(case=name):
                failed = self.bridge.request("tandem.prefill.pre-1", body, reply="r-" + name)
                self.assertEqual(400, failed["failureCode"], failed)
        self.assertIn("1 to 511", self.bridge.request("tandem.prefill.pre-1", prefill_body(1, []), reply="x")["message"])

    def test_no_ack_in_time_is_502(self) -> None:
        self.worker.settings.kv_park_timeout_ms = 200
        self.bridge.message("tandem.prefill.pre-1", prefill_body(9, [5]), reply="r9")
        self.chunks(9)
        failed = self.bridge.reply_to("r9", timeout=3)
        self.assertEqual(502, failed["failureCode"])
        self.assertIn("within", failed["message"])


class PrefillLimitsTest(unittest.TestCase):

    def test_a_full_queue_is_busy_and_big_kv_too_large(self) -> None:
        bridge = FakeWorkerBridge(join_reply("pre-2", role="prefill"))
        settings = WorkerSettings(max_queued_prefill_tokens=10, max_kv_transfer_bytes=2000)
        worker = PrefillWorker(ToyModel(), "127.0.0.1", bridge.port, settings=settings).start()
        try:
            bridge.message("tandem.prefill.pre-2", prefill_body(1, [1] * 8), reply="r1")
            bridge.next()  # its KV went out; it is queued until acknowledged
            busy = bridge.request("tandem.prefill.pre-2", prefill_body(2, [1] * 3), reply="r2")
            self.assertEqual(429, busy["failureCode"])
            self.assertIn("8 tokens queued", busy["message"])
            self.assertEqual(8, worker.load()["queued_prefill_tokens"])
            dup = bridge.request("tandem.prefill.pre-2", prefill_body(1, [1]), reply="r3")
            self.assertEqual((400, "request 1 is already prefilling"), (dup["failureCode"], dup["message"]))
            big = bridge.request("tandem.prefill.pre-2", prefill_body(4, [1] * 100), reply="r4")
            self.assertEqual(413, big["failureCode"])
            self.assertIn("max_kv_transfer_bytes", big["message"])
        finally:
            worker.close()
            bridge.close()


if __name__ == "__main__":
    unittest.main()
