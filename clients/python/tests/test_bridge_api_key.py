"""With http.api-keys set, the TCP bridge wants the key in every frame's headers: a client given
``api_key`` is served, one without is refused ``unauthorized`` at once (issue 17)."""

from __future__ import annotations

import unittest

from tandem_client import TandemBridgeError, TandemClient

from .tandem_server import TandemServer

KEY = "sk-python-bridge-test"
TIMEOUT = 20.0

server: TandemServer


def setUpModule() -> None:
    global server
    server = TandemServer({"TANDEM_HTTP_API_KEYS": KEY})


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


if __name__ == "__main__":
    unittest.main()
