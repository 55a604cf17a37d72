"""The client against a real Tandem JVM: the same text as the HTTP API, cancel, and refusals that
arrive as exceptions at once rather than as hangs."""

from __future__ import annotations

import json
import socket
import struct
import time
import unittest
import urllib.request
import uuid

from tandem_client import (TandemAccessDenied, TandemBridgeError, TandemClient, TandemInvalidRequest)
from tandem_client import frames

from .tandem_server import TandemServer

# Paced like an accelerator (exact tokens, 5 ms a decode step): a long request is still running when
# it is cancelled.
SERVER_ENV = {"TANDEM_MODEL_EMULATED_DECODE_STEP_US": "5000"}
TIMEOUT = 20.0
LONG = 400

server: TandemServer


def setUpModule() -> None:
    global server
    server = TandemServer(SERVER_ENV)


def tearDownModule() -> None:
    server.stop()


def http_post(path: str, body: dict) -> dict:
    request = urllib.request.Request(f"http://127.0.0.1:{server.http_port}{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        return json.loads(response.read())


class RawConnection:
    """A bridge connection on a bare socket, for frames the client would never send."""

    def __init__(self) -> None:
        self.sock = socket.create_connection(("127.0.0.1", server.bridge_port), timeout=TIMEOUT)

    def write(self, data: bytes) -> None:
        self.sock.sendall(data)

    def frame(self, payload: bytes) -> None:
        self.write(struct.pack(">I", len(payload)) + payload)

    def read(self) -> dict:
        frame = frames.read_frame(self.sock)
        if frame is None:
            raise AssertionError("the server closed the connection")
        return frame

    def close(self) -> None:
        self.sock.close()


class GenerateTest(unittest.TestCase):

    def setUp(self) -> None:
        self.client = TandemClient("127.0.0.1", server.bridge_port, timeout=TIMEOUT)

    def tearDown(self) -> None:
        self.client.close()

    def test_a_completion_equals_the_http_apis_for_the_same_seed(self) -> None:
        params = {"max_tokens": 24, "temperature": 0.8, "seed": 7}
        expected = http_post("/v1/completions", {"prompt": "Once upon a time", **params})
        generation = self.client.generate(prompt="Once upon a time", **params)
        chunks = list(generation)
        choice = expected["choices"][0]
        self.assertTrue(chunks, "tokens arrived as chunks")
        self.assertEqual(choice["text"], "".join(c.text for c in chunks))
        self.assertEqual(choice["token_ids"], [t for c in chunks for t in c.token_ids])
        self.assertEqual(choice["text"], generation.text)
        self.assertEqual(choice["finish_reason"], generation.finish_reason)
        self.assert_same_usage(expected["usage"], generation.usage)
        self.assertTrue(generation.decode_worker.startswith("decode-"))

    def test_a_chat_request_equals_the_http_apis(self) -> None:
        messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}]
        expected = http_post("/v1/chat/completions", {"messages": messages, "max_tokens": 16, "seed": 3})
        generation = self.client.generate(messages=messages, max_tokens=16, seed=3).wait()
        self.assertEqual(expected["choices"][0]["message"]["content"], generation.text)
        self.assertEqual(expected["choices"][0]["token_ids"], generation.token_ids)
        self.assert_same_usage(expected["usage"], generation.usage)

    def assert_same_usage(self, http: dict, bridge: dict) -> None:
        """The same counts, but cached tokens: the bridge request reuses the KV the HTTP one left behind."""
        cached = bridge["prompt_tokens_details"]["cached_tokens"]
        self.assertIsInstance(cached, int)
        self.assertTrue(0 <= cached < bridge["prompt_tokens"], bridge)
        strip = lambda u: {k: v for k, v in u.items() if k != "prompt_tokens_details"}
        self.assertEqual(strip(http), strip(bridge))

    def test_stop_sequences_and_token_prompts_pass_through(self) -> None:
        full = http_post("/v1/completions", {"prompt": [1, 72, 105], "max_tokens": 32, "temperature": 0})
        text = full["choices"][0]["text"]
        stop = next((text[i:i + 2] for i in range(len(text) // 2, len(text) - 1)
                     if text[i:i + 2].isascii() and text[i:i + 2].isprintable() and text.find(text[i:i + 2]) > 0), None)
        self.assertIsNotNone(stop, f"greedy output with a printable 2-character stop string: {text!r}")
        generation = self.client.generate(prompt=[1, 72, 105], max_tokens=32, temperature=0, stop=[stop]).wait()
        self.assertEqual(text[:text.find(stop)], generation.text)
        self.assertEqual("stop", generation.finish_reason)

    def test_cancel_ends_the_stream_with_what_was_sent(self) -> None:
        # Seed 1 runs all 400 tokens (2 s paced): the built-in model samples its end token now and then.
        params = {"max_tokens": LONG, "temperature": 0.9, "seed": 1}
        with self.client.generate(prompt="a long story", **params) as generation:
            first = next(generation)
            self.assertTrue(generation.cancel())
            rest = list(generation)
        self.assertEqual("cancelled", generation.finish_reason)
        received = first.token_ids + [t for c in rest for t in c.token_ids]
        self.assertEqual(generation.usage["completion_tokens"], len(received), "usage counts the tokens sent")
        self.assertFalse(self.client.cancel(generation.id), "a request that ended cannot be cancelled again")
        # What was sent is the start of what the uncancelled request gives.
        whole = http_post("/v1/completions", {"prompt": "a long story", **params})["choices"][0]
        self.assertEqual(("length", LONG), (whole["finish_reason"], len(whole["token_ids"])), "the request runs long")
        self.assertEqual(whole["token_ids"][:len(received)], received)
        self.assertLess(len(received), LONG, "the request was stopped before its end")

    def test_many_requests_share_one_connection(self) -> None:
        generations = [self.client.generate(prompt=f"request {i}", max_tokens=8, seed=i) for i in range(5)]
        for i, generation in enumerate(generations):
            expected = http_post("/v1/completions", {"prompt": f"request {i}", "max_tokens": 8, "seed": i})
            self.assertEqual(expected["choices"][0]["token_ids"], generation.wait().token_ids)


class RefusalTest(unittest.TestCase):
    """Every refusal is an exception raised well within the timeout: nothing hangs."""

    def setUp(self) -> None:
        self.client = TandemClient("127.0.0.1", server.bridge_port, timeout=TIMEOUT)
        self.started = time.monotonic()

    def tearDown(self) -> None:
        self.client.close()

    def assert_prompt(self) -> None:
        self.assertLess(time.monotonic() - self.started, TIMEOUT / 2, "answered at once, not after a timeout")

    def assert_still_serving(self) -> None:
        # Seeded: unseeded, the built-in model ends within 3 tokens (EOS) about once in 150 runs.
        self.assertEqual("length",
                         self.client.generate(prompt="still here", max_tokens=3, seed=7).wait().finish_reason)

    def test_a_worker_address_is_denied(self) -> None:
        for address in ("tandem.prefill.prefill-1", "tandem.decode.decode-1.start", "tandem.worker.decode-1.drain"):
            with self.subTest(address=address):
                with self.assertRaises(TandemAccessDenied) as raised:
                    self.client.request(address, {"draining": True})
                self.assertEqual("access_denied", raised.exception.code)
        self.assert_prompt()
        self.assert_still_serving()

    def test_invalid_fields_are_refused_with_the_http_status(self) -> None:
        with self.assertRaises(TandemInvalidRequest) as raised:
            self.client.generate(prompt="x", temperature=5)
        self.assertEqual(400, raised.exception.status)
        self.assertIn("temperature", raised.exception.message)
        with self.assertRaises(TandemInvalidRequest) as raised:
            self.client.generate(prompt="x", model="gpt-9")
        self.assertEqual(404, raised.exception.status)
        self.assert_prompt()
        self.assert_still_serving()

    def test_a_request_without_stream_to_is_refused(self) -> None:
        with self.assertRaises(TandemInvalidRequest) as raised:
            self.client.request("tandem.generate", {"prompt": "x"})
        self.assertIn("stream_to", raised.exception.message)
        with self.assertRaises(TandemInvalidRequest):
            self.client.request("tandem.generate", {"prompt": "x", "stream_to": "tandem.client." + str(uuid.uuid4())})
        self.assert_prompt()

    def test_bad_frames_get_error_frames(self) -> None:
        self.client.send_frame({"type": "subscribe", "address": "tandem.generate"})
        error = self.client.next_error()
        self.assertIsInstance(error, TandemBridgeError)
        self.assertEqual("unknown_type", error.code)
        self.client.send_frame({"type": "send", "body": {}})
        self.assertEqual("missing_address", self.client.next_error().code)
        raw = RawConnection()
        try:
            raw.frame(b"{not json")
            self.assertEqual({"type": "err", "message": "invalid_json"},
                             {k: v for k, v in raw.read().items() if k in ("type", "message")})
            raw.frame(b"x" * (2 << 20))  # over bridge.max-frame-bytes (1 MiB)
            self.assertEqual("frame_too_large", raw.read()["message"])
            raw.frame(frames.encode({"type": "ping"})[4:])
            self.assertEqual({"type": "pong"}, raw.read(), "the connection still works after the refusals")
        finally:
            raw.close()
        self.assert_prompt()
        self.assert_still_serving()


if __name__ == "__main__":
    unittest.main()
