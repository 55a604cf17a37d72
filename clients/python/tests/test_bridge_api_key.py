"""With http.api-keys set, the TCP bridge wants the key in every frame's headers: a client given
``api_key`` is served, one without is refused ``unauthorized`` at once; and the router closes idle
bridge connections, which the client's keepalive pings prevent (issue 17)."""

from __future__ import annotations

import time
import unittest

from tandem_client import TandemBridgeError, TandemClient

from .tandem_server import TandemServer

KEY = "sk-python-bridge-test"
TIMEOUT = 20.0
IDLE_MS = 1500

server: TandemServer


def setUpModule() -> None:
    global server
    server = TandemServer({"TANDEM_HTTP_API_KEYS": KEY, "TANDEM_BRIDGE_IDLE_TIMEOUT_MS": str(IDLE_MS)})


def tearDownModule() -> None:
    server.stop()


class ApiKeyTest(unittest.TestCase):

    def test_a_client_with_the_key_is_served(self) -> None:
        with TandemClient("127.0.0.1", server.bridge_port, timeout=TIMEOUT, api_key=KEY) as client:
            generation = client.generate(prompt="Once upon a time", max_tokens=4, seed=1).wait()
            self.assertEqual("length", generation.finish_reason)
            self.assertEqual(4, len(generation.token_ids))

    def test_a_client_without_the_key_is_refused(self) -> None:
        for key in (None, "sk-wrong"):
            with self.subTest(key=key):
                with TandemClient("127.0.0.1", server.bridge_port, timeout=TIMEOUT, api_key=key) as client:
                    with self.assertRaises(TandemBridgeError) as raised:
                        client.generate(prompt="Once upon a time", max_tokens=4)
                    self.assertEqual("unauthorized", raised.exception.code)


class KeepaliveTest(unittest.TestCase):

    def test_an_idle_client_that_pings_stays_connected_and_one_that_does_not_is_closed(self) -> None:
        with TandemClient("127.0.0.1", server.bridge_port, timeout=TIMEOUT, api_key=KEY,
                          keepalive=IDLE_MS / 1000 / 4) as pinging, \
                TandemClient("127.0.0.1", server.bridge_port, timeout=TIMEOUT, api_key=KEY,
                             keepalive=None) as silent:
            deadline = time.monotonic() + TIMEOUT  # a hang guard: the silent one is closed after IDLE_MS
            while not silent.closed and time.monotonic() < deadline:
                time.sleep(0.1)
            self.assertTrue(silent.closed, "a client that never pings is closed after the idle timeout")
            self.assertFalse(pinging.closed)
            self.assertGreaterEqual(pinging.ping(), 0.0)  # ping() still gets its own pong
            # seeded: unseeded sampling met the end token within two tokens once in a while ("stop")
            generation = pinging.generate(prompt="Once upon a time", max_tokens=2, seed=1).wait()
            self.assertEqual("length", generation.finish_reason)


if __name__ == "__main__":
    unittest.main()
