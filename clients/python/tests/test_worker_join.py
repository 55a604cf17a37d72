"""Join, heartbeats, status/drain, refusals and robustness of a worker against a fake bridge (offline)."""

from __future__ import annotations

import json
import socket
import threading
import time
import unittest

from tandem_worker import (ConnectionLost, DecodeWorker, IncompatibleModel, JoinRefused, PrefillWorker, ToyModel,
                           WorkerSettings, drain_and_close)

from .fake_bridge import MODEL, FakeWorkerBridge, join_reply


class JoinTest(unittest.TestCase):

    def setUp(self) -> None:
        self.model = ToyModel(258, 512)
        self.bridges = []

    def tearDown(self) -> None:
        for bridge in self.bridges:
            bridge.close()

    def bridge(self, join=None) -> FakeWorkerBridge:
        bridge = FakeWorkerBridge(join)
        self.bridges.append(bridge)
        return bridge

    def test_the_join_says_who_the_worker_is_and_heartbeats_follow(self) -> None:
        bridge = self.bridge(join_reply("dec-7", heartbeat_ms=40))
        with DecodeWorker(self.model, "127.0.0.1", bridge.port, worker_id="dec-7", token="s3cret",
                          settings=WorkerSettings(max_batch=8)) as worker:
            self.assertEqual("dec-7", worker.worker_id)
            self.assertEqual("node-1", worker.node_id)
            join = bridge.join_frames[0]
            self.assertEqual("send", join["type"])
            self.assertIsInstance(join["replyAddress"], str)
            self.assertEqual({"role": "decode", "model": "tandem-builtin", "model_fingerprint": self.model.info.fingerprint,
                              "max_batch": 8, "worker_id": "dec-7", "token": "s3cret"}, join["body"])
            started = time.monotonic()
            beats = [bridge.heartbeats.get(timeout=2) for _ in range(3)]
            self.assertLess(time.monotonic() - started, 1.0, "every heartbeat_ms, not every second")
            for beat in beats:
                self.assertNotIn("replyAddress", beat)
                self.assertEqual({"load", "draining"}, set(beat["body"]))
                self.assertFalse(beat["body"]["draining"])
                self.assertEqual({"queued_prefill_tokens": 0, "active_sequences": 0, "kv_bytes_used": 0,
                                  "kv_bytes_capacity": 4 << 30, "decode_steps": 0, "prefilling": 0, "parked_kv": 0,
                                  "incoming_kv": 0}, beat["body"]["load"])

    def test_the_bridge_picks_the_id_when_none_is_given(self) -> None:
        bridge = self.bridge(join_reply("py-prefill-x1", role="prefill"))
        with PrefillWorker(self.model, "127.0.0.1", bridge.port) as worker:
            self.assertNotIn("worker_id", bridge.join_frames[0]["body"])
            self.assertNotIn("token", bridge.join_frames[0]["body"])
            self.assertEqual("prefill", bridge.join_frames[0]["body"]["role"])
            self.assertEqual("py-prefill-x1", worker.worker_id)

    def test_a_refused_join_raises_the_bridges_code_and_detail(self) -> None:
        for code in ("invalid_join", "model_mismatch", "worker_id_in_use", "unauthorized"):
            with self.subTest(code=code):
                bridge = self.bridge({"type": "err", "message": code, "detail": "because " + code})
                started = time.monotonic()
                with self.assertRaises(JoinRefused) as raised:
                    DecodeWorker(self.model, "127.0.0.1", bridge.port).start()
                self.assertLess(time.monotonic() - started, 2)
                self.assertEqual((code, "because " + code), (raised.exception.code, raised.exception.detail))
                self.assertIn(code, str(raised.exception))
                self.assertTrue(bridge.disconnected.wait(2), "the refused worker hangs up")

    def test_a_cluster_of_another_shape_is_refused_by_the_worker(self) -> None:
        bridge = self.bridge(join_reply(model=dict(MODEL, vocab_size=32000)))
        with self.assertRaises(IncompatibleModel) as raised:
            DecodeWorker(self.model, "127.0.0.1", bridge.port).start()
        self.assertIn("vocab_size=32000", str(raised.exception))
        self.assertTrue(bridge.disconnected.wait(2))

    def test_no_join_reply_is_a_timeout_not_a_hang(self) -> None:
        bridge = self.bridge(lambda frame: None)
        with self.assertRaises(JoinRefused) as raised:
            DecodeWorker(self.model, "127.0.0.1", bridge.port, settings=WorkerSettings(join_timeout_s=0.3)).start()
        self.assertEqual("join_timeout", raised.exception.code)

    def test_a_bridge_that_hangs_up_during_the_join(self) -> None:
        bridge = self.bridge(lambda frame: bridge.drop())
        with self.assertRaises(ConnectionLost):
            DecodeWorker(self.model, "127.0.0.1", bridge.port).start()

    def test_nothing_listening(self) -> None:
        with socket.socket() as unused:
            unused.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
            port = unused.getsockname()[1]
        with self.assertRaises(ConnectionLost) as raised:
            DecodeWorker(self.model, "127.0.0.1", port).start()
        self.assertIn(f"127.0.0.1:{port}", str(raised.exception))


class ControlTest(unittest.TestCase):

    def setUp(self) -> None:
        self.bridge = FakeWorkerBridge(join_reply("dec-1"))
        self.worker = DecodeWorker(ToyModel(), "127.0.0.1", self.bridge.port).start()

    def tearDown(self) -> None:
        self.worker.close()
        self.bridge.close()

    def test_status_and_drain(self) -> None:
        status = self.bridge.request("tandem.worker.dec-1.status", {})
        body = status["body"]
        self.assertEqual(("dec-1", "decode", False), (body["worker_id"], body["role"], body["draining"]))
        self.assertEqual((self.worker.engine.info.name, self.worker.engine.info.fingerprint, self.worker.node_id),
                         (body["model"], body["model_fingerprint"], body["node_id"]))
        self.assertEqual({"queued_prefill_tokens": 0, "active_sequences": 0, "kv_bytes_used": 0,
                          "kv_bytes_capacity": self.worker.settings.kv_capacity_bytes, "decode_steps": 0,
                          "prefilling": 0, "parked_kv": 0, "incoming_kv": 0}, body["load"])
        drained = self.bridge.request("tandem.worker.dec-1.drain", {"draining": True}, reply="r2")
        self.assertEqual(dict(status["body"], draining=True), drained["body"])
        self.assertTrue(self.worker.draining)
        beat = self.bridge.heartbeats.get(timeout=1)
        while not beat["body"]["draining"]:
            beat = self.bridge.heartbeats.get(timeout=1)
        refused = self.bridge.request("tandem.worker.dec-1.drain", {"draining": "yes"}, reply="r3")
        self.assertEqual(400, refused["failureCode"])
        self.assertIn("boolean", refused["message"])

    def test_bad_frames_do_not_break_the_worker(self) -> None:
        self.bridge.raw_frame(b"{not json")
        self.bridge.raw_frame(b"[1, 2]")
        self.bridge.raw_frame(b"")
        self.bridge.send({"type": "mystery"})
        self.bridge.send({"type": "err", "message": "access_denied", "detail": "a refused send"})
        self.bridge.send({"type": "pong"})
        self.bridge.message("tandem.worker.dec-1.status", None)  # no reply address: nothing to answer
        unknown = self.bridge.request("tandem.somewhere.else", {}, reply="r1")
        self.assertEqual(400, unknown["failureCode"])
        for body in (None, [], "x", {"request_id": "one"}):
            with self.subTest(body=body):
                bad = self.bridge.request("tandem.decode.dec-1.start", body, reply="r-" + json.dumps(body))
                self.assertEqual(400, bad["failureCode"])
        self.assertEqual("dec-1", self.bridge.request("tandem.worker.dec-1.status", {}, reply="r9")["body"]["worker_id"])
        self.assertIsNone(self.worker.closed_reason)

    def test_a_lost_connection_ends_the_worker(self) -> None:
        threading.Timer(0.1, self.bridge.drop).start()
        with self.assertRaises(ConnectionLost):
            self.worker.serve_forever()
        self.assertTrue(self.worker.wait(2), "wait() returns when the connection ends")
        self.assertIsInstance(self.worker.closed_reason, ConnectionLost)
        self.assertIn("lost", str(self.worker.closed_reason))
        with self.assertRaises(ConnectionLost):
            self.worker.connection.send("x", {})

    def test_the_bridges_reason_for_closing_is_the_connections(self) -> None:
        self.bridge.send({"type": "err", "message": "idle_timeout", "detail": "no frame for 3000 ms"})
        time.sleep(0.05)
        self.bridge.drop()
        self.assertTrue(self.worker.wait(2))
        self.assertIn("after err idle_timeout: no frame for 3000 ms", str(self.worker.closed_reason))

    def test_serve_forever_returns_after_close(self) -> None:
        threading.Timer(0.1, self.worker.close).start()
        self.worker.serve_forever()
        self.assertTrue(self.bridge.disconnected.wait(2))

    def test_close_and_drain_and_close_leave(self) -> None:
        self.assertTrue(drain_and_close(self.worker, 1.0), "an idle worker leaves at once")
        self.assertTrue(self.bridge.disconnected.wait(2))
        self.assertTrue(self.worker.wait(0))


if __name__ == "__main__":
    unittest.main()
