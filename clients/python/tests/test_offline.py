"""The client's own behaviour against fake servers (no JVM): framing, timeouts, lost connections."""

from __future__ import annotations

import socket
import threading
import time
import unittest
from typing import Callable

from tandem_client import TandemClient, TandemConnectionError, TandemTimeout
from tandem_client import frames


class FakeBridge:
    """A one-connection TCP server on loopback that runs ``behaviour`` with the accepted socket."""

    def __init__(self, behaviour: Callable[[socket.socket], None]):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, args=(behaviour,), daemon=True)
        self.thread.start()

    def _serve(self, behaviour: Callable[[socket.socket], None]) -> None:
        conn, _ = self.listener.accept()
        with conn:
            behaviour(conn)

    def close(self) -> None:
        self.listener.close()
        self.thread.join(5)


def read_until_closed(conn: socket.socket) -> None:
    conn.settimeout(10)
    try:
        while conn.recv(65536):
            pass
    except OSError:
        pass


class FramesTest(unittest.TestCase):

    def test_a_frame_is_a_big_endian_length_and_utf8_json(self) -> None:
        data = frames.encode({"type": "ping", "text": "é"})
        self.assertEqual(len(data) - 4, int.from_bytes(data[:4], "big"))
        self.assertEqual('{"type":"ping","text":"é"}'.encode("utf-8"), data[4:])

    def test_frames_round_trip_over_a_socket(self) -> None:
        a, b = socket.socketpair()
        with a, b:
            a.sendall(frames.encode({"n": 1}) + frames.encode({"n": 2}))
            self.assertEqual({"n": 1}, frames.read_frame(b))
            self.assertEqual({"n": 2}, frames.read_frame(b))
            a.close()
            self.assertIsNone(frames.read_frame(b))


class ConnectionTest(unittest.TestCase):

    def test_nothing_listening_is_a_connection_error(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]  # closed again before the client connects
        with self.assertRaises(TandemConnectionError):
            TandemClient("127.0.0.1", port, timeout=2)

    def test_a_silent_bridge_times_out(self) -> None:
        bridge = FakeBridge(read_until_closed)
        try:
            client = TandemClient("127.0.0.1", bridge.port, timeout=0.5)
            started = time.monotonic()
            with self.assertRaises(TandemTimeout):
                client.generate(prompt="anyone?")
            self.assertLess(time.monotonic() - started, 5)
            client.close()
        finally:
            bridge.close()

    def test_a_stream_that_stops_times_out(self) -> None:
        def one_token_then_silence(conn: socket.socket) -> None:
            conn.settimeout(10)
            register = frames.read_frame(conn)
            send = frames.read_frame(conn)
            conn.sendall(frames.encode({"type": "message", "address": send["replyAddress"], "send": True,
                                        "body": {"id": "1"}}))
            conn.sendall(frames.encode({"type": "message", "address": register["address"], "send": True,
                                        "body": {"id": "1", "text": "a", "token_ids": [97]}}))
            read_until_closed(conn)

        bridge = FakeBridge(one_token_then_silence)
        try:
            with TandemClient("127.0.0.1", bridge.port, timeout=0.5) as client:
                generation = client.generate(prompt="x")
                self.assertEqual("a", next(generation).text)
                with self.assertRaises(TandemTimeout):
                    next(generation)
        finally:
            bridge.close()

    def test_a_lost_connection_fails_waiting_calls(self) -> None:
        def close_after_the_request(conn: socket.socket) -> None:
            conn.settimeout(10)
            frames.read_frame(conn)  # register
            frames.read_frame(conn)  # send

        bridge = FakeBridge(close_after_the_request)
        try:
            client = TandemClient("127.0.0.1", bridge.port, timeout=10)
            started = time.monotonic()
            with self.assertRaises(TandemConnectionError):
                client.generate(prompt="x")
            self.assertLess(time.monotonic() - started, 5, "failed when the connection went, not at the timeout")
            self.assertTrue(client.closed)
            with self.assertRaises(TandemConnectionError):
                client.ping()
        finally:
            bridge.close()

    def test_tokens_that_overtake_the_reply_are_kept(self) -> None:
        def tokens_first(conn: socket.socket) -> None:
            conn.settimeout(10)
            register = frames.read_frame(conn)
            send = frames.read_frame(conn)
            me = register["address"]
            conn.sendall(frames.encode({"type": "message", "address": me, "body": {"id": "9", "text": "h",
                                                                                  "token_ids": [104]}}))
            conn.sendall(frames.encode({"type": "message", "address": send["replyAddress"], "body": {"id": "9"}}))
            conn.sendall(frames.encode({"type": "message", "address": me, "body": {
                "id": "9", "finish_reason": "length", "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                                                "total_tokens": 2}}}))
            read_until_closed(conn)

        bridge = FakeBridge(tokens_first)
        try:
            with TandemClient("127.0.0.1", bridge.port, timeout=5) as client:
                generation = client.generate(prompt="x").wait()
                self.assertEqual("h", generation.text)
                self.assertEqual("length", generation.finish_reason)
        finally:
            bridge.close()


if __name__ == "__main__":
    unittest.main()
