"""Rejoining after a lost connection (tandem_worker.reconnect) against fake bridges (offline): the same
id through the next address, held work freed, worker_id_in_use retried, fatal refusals, the budget, stop."""

from __future__ import annotations

import base64
import socket
import threading
import time
import unittest
from typing import Any, Dict, List, Optional

from tandem_worker import (Backoff, ConnectionLost, DecodeWorker, JoinRefused, PrefillWorker, RejoinFailed,
                           Supervisor, ToyModel, Worker, WorkerSettings, kv_codec, parse_addresses)
from tandem_worker.engine import PrefillCancelled, Sampling

from .fake_bridge import FakeWorkerBridge, join_reply
from .test_worker_decode import GREEDY, PacedToy, long_prompts
from .test_worker_prefill import prefill_body

FAST = dict(initial=0.05, maximum=0.2)  # backoff for tests: same shape, shorter


def refusing_port() -> int:
    """A port where connections are refused (bound, never listening, then released)."""
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        return unused.getsockname()[1]


class CountingToy(PacedToy):
    """Counts live caches: what the worker holds must be freed, not just forgotten."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.live = 0

    def import_kv(self, tokens, blocks):  # type: ignore[no-untyped-def]
        self.live += 1
        return super().import_kv(tokens, blocks)

    def free(self, cache):  # type: ignore[no-untyped-def]
        self.live -= 1
        super().free(cache)


class SlowPrefillToy(ToyModel):
    """A prefill takes ~1 s unless cancelled, so prompts are still queued when the connection drops."""

    def prefill(self, tokens, sampling, cancelled=lambda: False):  # type: ignore[no-untyped-def]
        for _ in range(100):
            if cancelled():
                raise PrefillCancelled()
            time.sleep(0.01)
        return super().prefill(tokens, sampling, cancelled)


class ReconnectTest(unittest.TestCase):

    def setUp(self) -> None:
        self.bridges: List[FakeWorkerBridge] = []
        self.threads: List[threading.Thread] = []
        self.errors: List[BaseException] = []
        self.supervisor: Optional[Supervisor] = None

    def tearDown(self) -> None:
        if self.supervisor is not None:
            self.supervisor.stop()
            self.supervisor.worker.close()
        for thread in self.threads:
            thread.join(5)
        for bridge in self.bridges:
            bridge.close()

    def bridge(self, join: Any = None) -> FakeWorkerBridge:
        bridge = FakeWorkerBridge(join)
        self.bridges.append(bridge)
        return bridge

    def supervise(self, worker: Worker, *ports: int, timeout: float = 10.0) -> Supervisor:
        """Runs a supervisor on a thread (errors land in self.errors) and waits for the first join."""
        self.supervisor = Supervisor(worker, [("127.0.0.1", p) for p in ports], reconnect_timeout=timeout,
                                     backoff=Backoff(**FAST))

        def run() -> None:
            try:
                self.supervisor.run()  # type: ignore[union-attr]
            except BaseException as e:  # noqa: BLE001 — checked by the test
                self.errors.append(e)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        self.threads.append(thread)
        deadline = time.monotonic() + 5
        while self.supervisor.joins == 0:
            self.assertFalse(self.errors, self.errors)
            self.assertLess(time.monotonic(), deadline, "never joined")
            time.sleep(0.01)
        return self.supervisor

    def ended(self, timeout: float = 5.0) -> float:
        """Waits for the supervisor's thread; how long that took."""
        started = time.monotonic()
        self.threads[-1].join(timeout)
        self.assertFalse(self.threads[-1].is_alive(), "the supervisor is still running")
        return time.monotonic() - started

    def test_it_rejoins_under_the_same_id_after_the_bridge_closes_the_connection(self) -> None:
        bridge = self.bridge(join_reply("py-decode-4f2a"))  # the bridge picked the id
        worker = DecodeWorker(ToyModel(), "127.0.0.1", bridge.port)
        supervisor = self.supervise(worker, bridge.port)
        self.assertNotIn("worker_id", bridge.joins.get(timeout=1)["body"])
        first = worker.connection
        bridge.drop()
        rejoin = bridge.joins.get(timeout=3)
        self.assertEqual("py-decode-4f2a", rejoin["body"]["worker_id"], "the same id as before the loss")
        status = bridge.request("tandem.worker.py-decode-4f2a.status", {})
        self.assertEqual("py-decode-4f2a", status["body"]["worker_id"])
        self.assertIsNot(first, worker.connection)
        bridge.heartbeats.get(timeout=1)
        self.assertEqual(1, supervisor.rejoins)
        supervisor.stop()
        self.assertLess(self.ended(), 1.0)
        self.assertEqual([], self.errors)
        self.assertIsNone(worker.closed_reason, "stop() leaves the worker joined, for the caller to drain")

    def test_it_moves_to_the_next_address_when_one_refuses_connections(self) -> None:
        a, b = self.bridge(join_reply("dec-a")), self.bridge(join_reply("dec-a"))
        worker = DecodeWorker(ToyModel(), "127.0.0.1", 1)
        self.supervise(worker, refusing_port(), a.port, b.port)  # the first join skips the dead address
        self.assertEqual(a.port, worker.port)
        a.close()  # node A goes away: its port now refuses connections
        b.joins.get(timeout=3)
        self.assertEqual(b.port, worker.port)
        self.assertEqual("dec-a", b.request("tandem.worker.dec-a.status", {})["body"]["worker_id"])

    def test_the_work_held_for_the_lost_connection_is_freed(self) -> None:
        engine = CountingToy(258, 512)
        bridge = self.bridge(join_reply("dec-f"))
        worker = DecodeWorker(engine, "127.0.0.1", bridge.port, settings=WorkerSettings(max_batch=4))
        self.supervise(worker, bridge.port)
        bridge.joins.get(timeout=1)
        running = long_prompts(1, 400)[0]
        streams = {}
        for request_id, prompt in ((1, [5, 6, 7]), (2, running), (3, [9, 9])):
            cache, first = engine.prefill(prompt, Sampling())
            streams[request_id] = (kv_codec.encode_stream(engine.info.layout, engine.info.fingerprint,
                                                          *engine.export_kv(cache)), first)
            engine.free(cache)
        engine.live = 0
        self.ship(bridge, 1, streams[1][0])  # parked, never started
        self.ship(bridge, 2, streams[2][0])
        start = {"request_id": 2, "first_token": streams[2][1], "max_new_tokens": 400, "sampling": GREEDY,
                 "stop_tokens": [], "router": "r1", "router_node": "node-r"}
        self.assertTrue(bridge.request("tandem.decode.dec-f.start", start, reply="s2")["body"]["joined"])
        self.send_chunk(bridge, 3, 0, streams[3][0][:50], last=False)  # incoming, never finished
        bridge.next()  # a TOKEN_BATCH: request 2 is running
        held = bridge.request("tandem.worker.dec-f.status", {}, reply="st1")["body"]["load"]
        self.assertEqual((1, 1, 1), (held["active_sequences"], held["parked_kv"], held["incoming_kv"]))

        old = bridge.conn
        bridge.drop()
        bridge.joins.get(timeout=3)
        bridge.discard_frames_of(old)  # the steps that ran before the drop sent tokens on the old connection
        status = bridge.request("tandem.worker.dec-f.status", {}, reply="st2")["body"]
        self.assertEqual("dec-f", status["worker_id"])
        self.assertEqual((0, 0, 0, 0, 0), tuple(status["load"][k] for k in (
            "active_sequences", "parked_kv", "incoming_kv", "kv_bytes_used", "prefilling")))
        self.assertEqual(0, engine.live, "every cache was given back to the engine")
        while bridge.heartbeats.qsize():  # those of the old connection
            bridge.heartbeats.get()
        load = bridge.heartbeats.get(timeout=1)["body"]["load"]
        self.assertEqual((0, 0), (load["active_sequences"], load["kv_bytes_used"]))
        missing = bridge.request("tandem.decode.dec-f.start", dict(start, request_id=1), reply="s1")
        self.assertEqual(404, missing["failureCode"], "the parked KV is gone")
        time.sleep(0.1)
        stray = [f for f in bridge.drain_frames() if f.get("address") == "tandem.router.r1.tokens"]
        self.assertEqual([], stray, "no tokens of the failed-over request on the new connection")
        # And it serves: the same request id again, as a router that retried it here would send.
        self.assertEqual(2, self.ship(bridge, 2, streams[2][0], reply="k9")["body"]["request_id"])

    def test_queued_prompts_are_dropped_on_the_loss(self) -> None:
        bridge = self.bridge(join_reply("pre-q", role="prefill"))
        worker = PrefillWorker(SlowPrefillToy(), "127.0.0.1", bridge.port, settings=WorkerSettings(max_batch=1))
        self.supervise(worker, bridge.port)
        bridge.joins.get(timeout=1)
        for request_id in (1, 2, 3):
            bridge.message("tandem.prefill.pre-q", prefill_body(request_id, [1, 2, 3]), reply=f"p{request_id}")
        self.assertEqual(3, bridge.request("tandem.worker.pre-q.status", {}, reply="st1")["body"]["load"]["prefilling"])
        bridge.drop()
        bridge.joins.get(timeout=3)
        self.assertEqual(0, bridge.request("tandem.worker.pre-q.status", {}, reply="st2")["body"]["load"]["prefilling"])
        time.sleep(0.2)
        self.assertEqual([], [f for f in bridge.drain_frames() if f.get("address", "").startswith("tandem.decode.")],
                         "no KV of the dropped prompts on the new connection")

    def test_worker_id_in_use_after_a_drop_is_retried_until_the_old_entry_is_gone(self) -> None:
        answers = [join_reply("dec-u")] + [{"type": "err", "message": "worker_id_in_use", "detail": "dec-u"}] * 3
        bridge = self.bridge(lambda frame: answers.pop(0) if answers else join_reply("dec-u"))
        worker = DecodeWorker(ToyModel(), "127.0.0.1", bridge.port, worker_id="dec-u")
        supervisor = self.supervise(worker, bridge.port)
        bridge.joins.get(timeout=1)
        bridge.drop()
        for _ in range(4):
            bridge.joins.get(timeout=3)
        bridge.heartbeats.get(timeout=2)
        self.assertEqual("dec-u", bridge.request("tandem.worker.dec-u.status", {})["body"]["worker_id"])
        self.assertEqual(1, supervisor.rejoins)
        self.assertEqual([], self.errors)

    def test_worker_id_in_use_at_the_first_join_is_fatal(self) -> None:
        bridge = self.bridge({"type": "err", "message": "worker_id_in_use", "detail": "taken"})
        started = time.monotonic()
        with self.assertRaises(JoinRefused) as raised:
            Supervisor(DecodeWorker(ToyModel(), "127.0.0.1", bridge.port, worker_id="x"),
                       [("127.0.0.1", bridge.port)], backoff=Backoff(**FAST)).run()
        self.assertEqual("worker_id_in_use", raised.exception.code)
        self.assertLess(time.monotonic() - started, 1.0)

    def test_a_fatal_refusal_on_the_rejoin_ends_it(self) -> None:
        answers = [join_reply("dec-x"), {"type": "err", "message": "unauthorized", "detail": "token rotated"}]
        bridge = self.bridge(lambda frame: answers.pop(0))
        self.supervise(DecodeWorker(ToyModel(), "127.0.0.1", bridge.port), bridge.port)
        bridge.drop()
        self.ended()
        self.assertEqual(1, len(self.errors))
        self.assertIsInstance(self.errors[0], JoinRefused)
        self.assertEqual("unauthorized", self.errors[0].code)  # type: ignore[attr-defined]

    def test_the_budget_runs_out(self) -> None:
        bridge = self.bridge(join_reply("dec-b"))
        self.supervise(DecodeWorker(ToyModel(), "127.0.0.1", bridge.port), bridge.port, timeout=0.6)
        bridge.close()
        took = self.ended()
        self.assertTrue(0.5 < took < 2.0, took)
        self.assertIsInstance(self.errors[0], RejoinFailed)
        self.assertIsInstance(self.errors[0], ConnectionLost)
        self.assertIn("could not rejoin", str(self.errors[0]))
        self.assertIsInstance(self.errors[0].last, ConnectionLost)  # type: ignore[attr-defined]

    def test_no_budget_ends_at_the_loss(self) -> None:
        bridge = self.bridge(join_reply("dec-0"))
        self.supervise(DecodeWorker(ToyModel(), "127.0.0.1", bridge.port), bridge.port, timeout=0)
        bridge.drop()
        self.assertLess(self.ended(), 1.0)
        self.assertIsInstance(self.errors[0], ConnectionLost)
        self.assertEqual(1, bridge.accepted, "no rejoin attempted")

    def test_stop_during_the_backoff_returns_at_once(self) -> None:
        bridge = self.bridge(join_reply("dec-s"))
        supervisor = self.supervise(DecodeWorker(ToyModel(), "127.0.0.1", bridge.port), bridge.port, timeout=30)
        supervisor.backoff = Backoff(5.0, 5.0, jitter=0)  # long waits between attempts
        bridge.close()
        time.sleep(0.3)  # the first round failed, it waits
        supervisor.stop()
        self.assertLess(self.ended(), 0.5)
        self.assertEqual([], self.errors)

    # ---- helpers ----

    @staticmethod
    def send_chunk(bridge: FakeWorkerBridge, request_id: int, index: int, data: bytes, last: bool,
                   reply: Optional[str] = None) -> None:
        headers = {"tandem-request-id": str(request_id), "tandem-chunk": str(index), "tandem-last": str(last).lower()}
        bridge.message("tandem.decode.dec-f.kv", base64.b64encode(data).decode(), headers, reply)

    def ship(self, bridge: FakeWorkerBridge, request_id: int, data: bytes, reply: Optional[str] = None
             ) -> Dict[str, Any]:
        pieces = kv_codec.split(data, 100)
        reply = reply or f"kv{request_id}"
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            self.send_chunk(bridge, request_id, i, piece, last, reply if last else None)
        answer = bridge.reply_to(reply)
        self.assertNotIn("failureCode", answer, answer)
        return answer


class PiecesTest(unittest.TestCase):

    def test_backoff_doubles_to_the_cap_with_jitter_below(self) -> None:
        self.assertEqual([0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0],
                         [round(d, 6) for d in (lambda b: [b.next_delay() for _ in range(7)])(Backoff(rand=lambda: 0))])
        jittered = Backoff(rand=lambda: 1.0)
        self.assertEqual([0.1, 0.2], [round(jittered.next_delay(), 6) for _ in range(2)])
        jittered.reset()
        self.assertEqual(0.1, round(jittered.next_delay(), 6))
        with self.assertRaises(ValueError):
            Backoff(initial=0)

    def test_parse_addresses(self) -> None:
        self.assertEqual([("10.0.0.1", 7001), ("127.0.0.1", 7002), ("::1", 7003)],
                         parse_addresses("10.0.0.1:7001, :7002,[::1]:7003"))
        for bad in ("host", "host:", "host:x", "a:1,,b:2", "h:70000"):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                parse_addresses(bad)


if __name__ == "__main__":
    unittest.main()
