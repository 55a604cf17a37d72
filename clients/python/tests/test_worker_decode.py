"""The decode role against a fake bridge (offline): KV reassembled and acknowledged, continuous batching
with one TOKEN_BATCH per router per step, and each refusal of Java's KvInbox and DecodeWorkerVerticle."""

from __future__ import annotations

import base64
import time
import unittest
from typing import Any, Dict, List, Optional, Tuple

from tandem_worker import DecodeWorker, ToyModel, WorkerSettings, kv_codec
from tandem_worker.engine import Sampling

from .fake_bridge import FakeWorkerBridge, join_reply

GREEDY = {"temperature": 0.0, "top_p": 1.0, "top_k": 0, "seed": 0}
PROMPT = [1, 72, 105, 33, 7, 200, 12, 9]


def long_prompts(count: int, tokens: int) -> List[List[int]]:
    """Prompts whose greedy continuation runs ``tokens`` tokens without meeting eos."""
    model, found = ToyModel(), []
    for k in range(250):
        if model.generate([k, 2, 3], tokens)[1] == "length":
            found.append([k, 2, 3])
            if len(found) == count:
                return found
    raise AssertionError("no such prompts")


class PacedToy(ToyModel):
    """2 ms a step, like an accelerator: long requests are still running when a test acts on them."""

    def decode_step(self, batch):  # type: ignore[no-untyped-def]
        time.sleep(0.002)
        return super().decode_step(batch)


class DecodeTest(unittest.TestCase):
    settings: Dict[str, Any] = {}

    def setUp(self) -> None:
        self.model = PacedToy(258, 512)
        self.bridge = FakeWorkerBridge(join_reply("dec-1"))
        self.worker = DecodeWorker(self.model, "127.0.0.1", self.bridge.port,
                                   settings=WorkerSettings(**dict({"max_batch": 4}, **self.settings))).start()
        self.replies = 0

    def tearDown(self) -> None:
        self.worker.close()
        self.bridge.close()

    def stream(self, prompt: List[int] = PROMPT, model: Optional[ToyModel] = None) -> Tuple[bytes, int]:
        model = model or self.model
        cache, first = model.prefill(prompt, Sampling())
        return kv_codec.encode_stream(model.info.layout, model.info.fingerprint, *model.export_kv(cache)), first

    def send_chunk(self, request_id: int, index: int, data: bytes, last: bool) -> Optional[str]:
        headers = {"tandem-request-id": str(request_id), "tandem-chunk": str(index), "tandem-last": str(last).lower()}
        self.replies += 1
        reply = f"tandem.bridge.reply.{self.replies}" if last else None
        self.bridge.message("tandem.decode.dec-1.kv", base64.b64encode(data).decode(), headers, reply)
        return reply

    def ship(self, request_id: int, data: bytes, chunk: int = 100) -> Dict[str, Any]:
        """Sends a stream in chunks; the answer to the last one."""
        pieces = kv_codec.split(data, chunk)
        reply = None
        for i, piece in enumerate(pieces):
            reply = self.send_chunk(request_id, i, piece, i == len(pieces) - 1)
        assert reply is not None
        return self.bridge.reply_to(reply)

    def start(self, request_id: int, first: int, max_new: int, router: str = "r1", stop_tokens: List[int] = (),
              router_node: Optional[str] = "node-r") -> Dict[str, Any]:
        self.replies += 1
        body = {"request_id": request_id, "first_token": first, "max_new_tokens": max_new, "sampling": GREEDY,
                "stop_tokens": list(stop_tokens), "router": router, "router_node": router_node}
        return self.bridge.request("tandem.decode.dec-1.start", body, reply=f"start.{self.replies}")

    def tokens_until_done(self, request_id: int, timeout: float = 5.0) -> Tuple[List[Dict[str, Any]], List[Dict]]:
        """(events of the request, every token batch seen) until its finishing event."""
        events, batches = [], []
        while True:
            frame = self.bridge.next(timeout)
            if not frame["address"].startswith("tandem.router."):
                continue
            batches.append(frame)
            self.assertEqual("dec-1", frame["body"]["worker"])
            mine = [e for e in frame["body"]["events"] if e["request_id"] == request_id]
            events += mine
            if any("finish_reason" in e or "error" in e for e in mine):
                return events, batches

    def test_kv_is_acknowledged_and_tokens_stream_as_the_reference_says(self) -> None:
        data, first = self.stream()
        ack = self.ship(11, data)
        self.assertEqual({"request_id": 11, "bytes": len(data), "tokens": len(PROMPT)}, ack["body"])
        load = self.bridge.request("tandem.worker.dec-1.status", {}, reply="s1")["body"]["load"]
        self.assertEqual((1, 0, 512), (load["parked_kv"], load["active_sequences"], load["kv_bytes_used"]))
        self.assertEqual({"request_id": 11, "joined": True}, self.start(11, first, 40)["body"])
        events, batches = self.tokens_until_done(11)
        self.assertTrue(all(b["address"] == "tandem.router.r1.tokens" for b in batches))
        self.assertEqual(list(range(1, len(events) + 1)), [e["seq"] for e in events], "seq 1 is the first decoded")
        expected, finish = self.model.generate(PROMPT, 40)
        self.assertEqual(expected[1:], [t for e in events for t in e["tokens"]])
        self.assertEqual(finish, events[-1]["finish_reason"])
        time.sleep(0.1)
        load = self.bridge.request("tandem.worker.dec-1.status", {}, reply="s2")["body"]["load"]
        self.assertEqual((0, 0, 0), (load["parked_kv"], load["active_sequences"], load["kv_bytes_used"]), "freed")
        self.assertEqual(len(events), self.worker.load()["decode_steps"], "one event per step")

    def test_a_stop_token_ends_the_stream_without_itself(self) -> None:
        expected, _ = self.model.generate(PROMPT, 40)
        data, first = self.stream()
        self.ship(12, data)
        self.start(12, first, 40, stop_tokens=[expected[6]])
        events, _ = self.tokens_until_done(12)
        self.assertEqual(expected[1:expected.index(expected[6])], [t for e in events for t in e["tokens"]])
        self.assertEqual(("stop", []), (events[-1]["finish_reason"], events[-1]["tokens"]))

    def test_sequences_share_steps_and_each_router_gets_one_message_per_step(self) -> None:
        runs = {}
        prompts = long_prompts(3, 60)
        for request_id, prompt, router in ((21, prompts[0], "r1"), (22, prompts[1], "r1"), (23, prompts[2], "r2")):
            data, first = self.stream(prompt)
            self.ship(request_id, data)
            runs[request_id] = (prompt, router, first)
        for request_id, (prompt, router, first) in runs.items():
            self.start(request_id, first, 60, router=router)
        seen: Dict[int, List[int]] = {r: [] for r in runs}
        finished = set()
        shared = False
        while finished != set(runs):
            frame = self.bridge.next()
            if not frame["address"].startswith("tandem.router."):
                continue
            ids = [e["request_id"] for e in frame["body"]["events"]]
            self.assertEqual(len(ids), len(set(ids)), "one event per request per message")
            for e in frame["body"]["events"]:
                self.assertEqual(f"tandem.router.{runs[e['request_id']][1]}.tokens", frame["address"])
                seen[e["request_id"]] += e["tokens"]
                if "finish_reason" in e:
                    finished.add(e["request_id"])
            shared = shared or {21, 22} <= set(ids)
        self.assertTrue(shared, "requests of one router were batched into one message")
        for request_id, (prompt, _, _) in runs.items():
            self.assertEqual(self.model.generate(prompt, 60)[0][1:], seen[request_id])

    def test_cancel_and_a_departed_router_free_their_sequences(self) -> None:
        for request_id, prompt in zip((31, 32, 33), long_prompts(3, 400)):
            data, first = self.stream(prompt)
            self.ship(request_id, data)
            self.start(request_id, first, 400, router_node="gone" if request_id == 32 else "node-r")
        cancelled = self.bridge.request("tandem.decode.dec-1.cancel", {"request_id": 31, "reason": "moved"}, reply="c1")
        self.assertEqual({"request_id": 31, "cancelled": True}, cancelled["body"], "answered when asked to")
        self.bridge.message("tandem.bridge.worker.router-left", {"node": "gone"})
        time.sleep(0.2)
        self.bridge.drain_frames()
        time.sleep(0.1)
        ids = {e["request_id"] for f in self.bridge.drain_frames() for e in f["body"].get("events", [])}
        self.assertEqual({33}, ids, "only the survivor still streams")
        self.assertEqual(1, self.worker.load()["active_sequences"])

    def test_decode_requests_that_cannot_run(self) -> None:
        missing = self.start(40, 5, 10)
        self.assertEqual(404, missing["failureCode"])
        self.assertIn("no KV for request 40", missing["message"])
        data, first = self.stream()
        self.ship(41, data)
        self.assertEqual(400, self.start(41, first, 1)["failureCode"], "max_new_tokens < 2: nothing to decode")
        self.assertEqual(404, self.start(41, first, 10)["failureCode"], "the refused request's KV was freed")
        self.ship(42, data)
        self.assertTrue(self.start(42, first, 400)["body"]["joined"])
        self.assertEqual(400, self.start(42, first, 400)["failureCode"], "already decoding")
        again = self.ship(42, data)
        self.assertEqual(502, again["failureCode"], "KV for a request that decodes here is unexpected")

    def test_chunks_out_of_order_unknown_or_malformed(self) -> None:
        data, _ = self.stream()
        pieces = kv_codec.split(data, 100)
        self.send_chunk(50, 0, pieces[0], False)
        out_of_order = self.bridge.reply_to(self.send_chunk(50, 2, pieces[2], True))
        self.assertEqual((502, "KV chunk 2 arrived, expected 1"), (out_of_order["failureCode"], out_of_order["message"]))
        unknown = self.bridge.reply_to(self.send_chunk(51, 3, pieces[3], True))
        self.assertEqual((502, "unexpected KV chunk 3 for request 51"), (unknown["failureCode"], unknown["message"]))
        malformed = self.bridge.request("tandem.decode.dec-1.kv", "AAAA", {"tandem-request-id": "x", "tandem-chunk": "0",
                                                                            "tandem-last": "true"}, reply="m1")
        self.assertEqual(400, malformed["failureCode"])
        no_header = self.bridge.request("tandem.decode.dec-1.kv", "AAAA", {"tandem-chunk": "0"}, reply="m2")
        self.assertIn("tandem-request-id", no_header["message"])
        not_base64 = self.bridge.request("tandem.decode.dec-1.kv", "%%%", {"tandem-request-id": "52", "tandem-chunk": "0",
                                                                          "tandem-last": "true"}, reply="m3")
        self.assertEqual(400, not_base64["failureCode"])
        self.assertEqual(0, self.worker.load()["incoming_kv"], "nothing left half-assembled")

    def test_streams_that_must_not_be_used(self) -> None:
        data, _ = self.stream()
        foreign, _ = self.stream(model=ToyModel(258, 256))
        self.assertEqual(409, self.ship(60, foreign)["failureCode"])
        corrupt = bytearray(data)
        corrupt[50] ^= 1
        failed = self.ship(61, bytes(corrupt))
        self.assertEqual(502, failed["failureCode"])
        self.assertIn("CORRUPTED", failed["message"])
        self.assertIn("TRUNCATED", self.ship(62, data[:-8])["message"])
        self.assertEqual(0, self.worker.load()["parked_kv"])


class DecodeLimitsTest(DecodeTest):
    settings = {"max_batch": 1, "max_waiting_sequences": 0, "kv_park_timeout_ms": 300, "max_kv_transfer_bytes": 1000}

    def test_limits(self) -> None:
        data, first = self.stream()
        self.assertIn("TOO_LARGE", self.ship(70, self.stream(list(range(40)))[0])["message"])
        self.assertEqual(len(PROMPT), self.ship(71, data)["body"]["tokens"])
        full = self.ship(72, data)
        self.assertEqual(503, full["failureCode"], "max_batch + max_waiting_sequences reached")
        self.assertIn("decode worker is full", full["message"])
        time.sleep(0.7)  # the park timeout passes: the parked KV is freed
        self.assertEqual(404, self.start(71, first, 10)["failureCode"])
        self.assertEqual(0, self.worker.load()["kv_bytes_used"])
        self.worker.settings.kv_capacity_bytes = 1
        self.assertTrue("body" in self.ship(73, data), "an empty worker takes one request whatever its size")
        self.assertIn("kv_capacity_bytes", self.ship(74, data)["message"])

    # The inherited tests need the default limits.
    test_kv_is_acknowledged_and_tokens_stream_as_the_reference_says = None  # type: ignore
    test_a_stop_token_ends_the_stream_without_itself = None  # type: ignore
    test_sequences_share_steps_and_each_router_gets_one_message_per_step = None  # type: ignore
    test_cancel_and_a_departed_router_free_their_sequences = None  # type: ignore
    test_decode_requests_that_cannot_run = None  # type: ignore
    test_chunks_out_of_order_unknown_or_malformed = None  # type: ignore
    test_streams_that_must_not_be_used = None  # type: ignore


if __name__ == "__main__":
    unittest.main()
