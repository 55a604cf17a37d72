"""``python3 -m tandem_worker`` against a fake bridge (offline): joins, leaves on SIGTERM, exit codes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import unittest
from pathlib import Path
from typing import List

from .fake_bridge import FakeWorkerBridge, join_reply

CLIENT_DIR = Path(__file__).resolve().parents[1]


def run(port: int, *args: str) -> "subprocess.Popen[str]":
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.Popen([sys.executable, "-m", "tandem_worker", "--bridge", f"127.0.0.1:{port}", *args],
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

    def test_a_lost_connection_exits_1(self) -> None:
        bridge = self.bridge(join_reply("cli-2"))
        process = run(bridge.port, "--role", "decode")
        try:
            bridge.heartbeats.get(timeout=10)
            bridge.drop()
            output, _ = process.communicate(timeout=10)
        finally:
            process.kill()
        self.assertEqual(1, process.returncode, output)
        self.assertIn("lost", output)

    def test_bad_arguments(self) -> None:
        process = run(1, "--role", "router")
        output, _ = process.communicate(timeout=10)
        self.assertEqual(2, process.returncode)
        self.assertIn("invalid choice", output)


if __name__ == "__main__":
    unittest.main()
