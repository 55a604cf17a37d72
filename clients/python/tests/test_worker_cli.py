"""``python3 -m tandem_worker`` against a fake bridge (offline): joins, leaves on SIGTERM, rejoins after a
lost connection, exit codes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import unittest
from pathlib import Path
from typing import List

from .fake_bridge import FakeWorkerBridge, join_reply
from .test_worker_reconnect import refusing_port

CLIENT_DIR = Path(__file__).resolve().parents[1]


def run(port: "int | str", *args: str) -> "subprocess.Popen[str]":
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    bridge = port if isinstance(port, str) else f"127.0.0.1:{port}"
    return subprocess.Popen([sys.executable, "-m", "tandem_worker", "--bridge", bridge, *args],
                            cwd=CLIENT_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


class CliTest(unittest.TestCase):

    def setUp(self) -> None:
        self.bridges: List[FakeWorkerBridge] = []

    def tearDown(self) -> None:
        for bridge in self.bridges:
            bridge.close()

    def bridge(self, join=None) -> FakeWorkerBridge:  # type: ignore[no-untyped-def]
        bridge = FakeWorkerBridge(join)
        self.bridges.append(bridge)
        return bridge

    def test_it_serves_until_sigterm_then_leaves(self) -> None:
        bridge = self.bridge(join_reply("cli-1", role="prefill"))
        process = run(bridge.port, "--role", "prefill", "--worker-id", "cli-1", "--max-batch", "2")
        try:
            bridge.heartbeats.get(timeout=10)
            body = bridge.join_frames[0]["body"]
            self.assertEqual(("prefill", "cli-1", 2), (body["role"], body["worker_id"], body["max_batch"]))
            process.send_signal(signal.SIGTERM)
            output, _ = process.communicate(timeout=10)
        finally:
            process.kill()
        self.assertEqual(0, process.returncode, output)
        self.assertTrue(bridge.disconnected.wait(2))
        self.assertIn("joined as prefill worker cli-1", output)

    def test_a_refused_join_exits_2_naming_the_code(self) -> None:
        bridge = self.bridge({"type": "err", "message": "unauthorized", "detail": "wrong token"})
        process = run(bridge.port, "--role", "decode", "--token", "nope")
        output, _ = process.communicate(timeout=10)
        self.assertEqual(2, process.returncode, output)
        self.assertIn("unauthorized: wrong token", output)
        self.assertEqual("nope", bridge.join_frames[0]["body"]["token"])

    def test_a_lost_connection_exits_1_without_a_reconnect_budget(self) -> None:
        bridge = self.bridge(join_reply("cli-2"))
        process = run(bridge.port, "--role", "decode", "--reconnect-timeout", "0")
        try:
            bridge.heartbeats.get(timeout=10)
            bridge.drop()
            output, _ = process.communicate(timeout=10)
        finally:
            process.kill()
        self.assertEqual(1, process.returncode, output)
        self.assertIn("lost", output)

    def test_it_rejoins_after_a_drop_through_the_next_address(self) -> None:
        bridge = self.bridge(join_reply("cli-3"))
        process = run(f"127.0.0.1:{refusing_port()},127.0.0.1:{bridge.port}", "--role", "decode",
                      "--worker-id", "cli-3")
        try:
            bridge.heartbeats.get(timeout=10)  # joined (through the second: the first address refuses)
            bridge.joins.get(timeout=1)
            bridge.drop()
            self.assertEqual("cli-3", bridge.joins.get(timeout=5)["body"]["worker_id"])
            self.assertEqual("cli-3", bridge.request("tandem.worker.cli-3.status", {})["body"]["worker_id"])
            process.send_signal(signal.SIGTERM)
            output, _ = process.communicate(timeout=10)
        finally:
            process.kill()
        self.assertEqual(0, process.returncode, output)
        for line in ("join via 127.0.0.1:", "lost its connection", "rejoined via", "leaving"):
            self.assertIn(line, output)

    def test_a_fatal_refusal_on_the_rejoin_exits_2(self) -> None:
        answers = [join_reply("cli-4"), {"type": "err", "message": "model_mismatch", "detail": "redeployed"}]
        bridge = self.bridge(lambda frame: answers.pop(0))
        process = run(bridge.port, "--role", "decode")
        try:
            bridge.heartbeats.get(timeout=10)  # joined, not just asked to
            bridge.drop()
            output, _ = process.communicate(timeout=10)
        finally:
            process.kill()
        self.assertEqual(2, process.returncode, output)
        self.assertIn("model_mismatch: redeployed", output)

    def test_the_reconnect_budget_runs_out_exits_1(self) -> None:
        bridge = self.bridge(join_reply("cli-5"))
        process = run(bridge.port, "--role", "prefill", "--reconnect-timeout", "1")
        try:
            bridge.heartbeats.get(timeout=10)  # joined, not just asked to
            bridge.close()
            lost = time.monotonic()
            output, _ = process.communicate(timeout=10)
        finally:
            process.kill()
        self.assertEqual(1, process.returncode, output)
        self.assertLess(time.monotonic() - lost, 4, output)
        self.assertIn("could not rejoin", output)

    def test_a_signal_during_the_backoff_exits_0_at_once(self) -> None:
        bridge = self.bridge(join_reply("cli-6"))
        process = run(bridge.port, "--role", "decode", "--reconnect-timeout", "60")
        try:
            bridge.heartbeats.get(timeout=10)  # joined, not just asked to
            bridge.close()
            time.sleep(1.0)  # rounds of refused attempts: it is waiting between them
            signalled = time.monotonic()
            process.send_signal(signal.SIGINT)
            output, _ = process.communicate(timeout=10)
        finally:
            process.kill()
        self.assertEqual(0, process.returncode, output)
        self.assertLess(time.monotonic() - signalled, 1.0, output)
        self.assertIn("next join attempt", output)

    def test_bad_arguments(self) -> None:
        for args, complaint in ((["--role", "router"], "invalid choice"),
                                (["--role", "decode", "--bridge", "h:1,nope"], "expected HOST:PORT"),
                                (["--role", "decode", "--reconnect-timeout", "-1"], "must be >= 0")):
            with self.subTest(args=args):
                process = run(1, *args)
                output, _ = process.communicate(timeout=10)
                self.assertEqual(2, process.returncode)
                self.assertIn(complaint, output)


if __name__ == "__main__":
    unittest.main()
