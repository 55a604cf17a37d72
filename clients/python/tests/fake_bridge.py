"""An in-process stand-in for Tandem's worker bridge (no JVM): a loopback socket server speaking the
framing, answering the join, collecting heartbeats apart from everything else the worker sends."""

from __future__ import annotations

import json
import logging
import os
import queue
import socket
import struct
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Union

from tandem_client import frames

# The worker logs what a test provokes on purpose (refusals, bad frames); TANDEM_WORKER_LOG=1 shows it.
if not os.environ.get("TANDEM_WORKER_LOG"):
    logging.getLogger("tandem_worker").setLevel(logging.CRITICAL)

JOIN = "tandem.bridge.worker.join"
HEARTBEAT = "tandem.bridge.worker.heartbeat"
MODEL = {"name": "tandem-builtin", "vocab_size": 258, "seq_len": 512, "bos": 256, "eos": 257}


def join_reply(worker_id: str = "py-test-1", heartbeat_ms: int = 50, model: Optional[Dict[str, Any]] = None,
               role: str = "decode") -> Dict[str, Any]:
    addresses = ([f"tandem.decode.{worker_id}.kv", f"tandem.decode.{worker_id}.start",
                  f"tandem.decode.{worker_id}.cancel"] if role == "decode"
                 else [f"tandem.prefill.{worker_id}", f"tandem.prefill.{worker_id}.cancel"])
    return {"worker_id": worker_id, "node_id": "node-1", "heartbeat_ms": heartbeat_ms, "idle_timeout_ms": 3000,
            "model": dict(MODEL if model is None else model),
            "addresses": addresses + [f"tandem.worker.{worker_id}.status", f"tandem.worker.{worker_id}.drain"]}


class _Closed:
    """Put in ``frames`` when a connection ends; ``next()`` skips the markers of replaced connections."""

    def __init__(self, conn: socket.socket):
        self.conn = conn


class FakeWorkerBridge:
    """Accepts connections one after another (a worker that rejoins comes back to it); ``conn`` is the
    latest. ``join`` answers each join frame: a reply body (dict), an err frame (a dict with "type":
    "err"), None for no answer, or a callable(frame) -> one of those. ``joins`` gets every join frame."""

    def __init__(self, join: Union[None, Dict[str, Any], Callable[[Dict[str, Any]], Any]] = None):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.join = join if join is not None else join_reply()
        self.join_frames: List[Dict[str, Any]] = []
        self.joins: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        self.accepted = 0
        self.heartbeats: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        self.frames: "queue.Queue[Union[Dict[str, Any], _Closed]]" = queue.Queue()
        self._stash: List[Dict[str, Any]] = []  # frames reply_to passed over, for next() to return
        self.conn: Optional[socket.socket] = None
        self.connected = threading.Event()
        self.disconnected = threading.Event()
        self._write = threading.Lock()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self._write:
                self.conn = conn
                self.accepted += 1
                self.disconnected.clear()
            self.connected.set()
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        try:
            while True:
                frame = frames.read_frame(conn)
                if frame is None:
                    break
                self._on_frame(frame)
        except (OSError, ValueError):
            pass
        conn.close()
        with self._write:
            if conn is self.conn:
                self.disconnected.set()
        self.frames.put(_Closed(conn))

    def _on_frame(self, frame: Dict[str, Any]) -> None:
        address = frame.get("address")
        if address == JOIN:
            self.join_frames.append(frame)
            self.joins.put(frame)
            answer = self.join(frame) if callable(self.join) else self.join
            if isinstance(answer, dict) and answer.get("type") == "err":
                self.send(dict(answer, address=frame.get("replyAddress")))
            elif answer is not None:
                self.send({"type": "message", "address": frame.get("replyAddress"), "body": answer, "send": True})
        elif address == HEARTBEAT:
            self.heartbeats.put(frame)
        else:
            self.frames.put(frame)

    # ---- talking to the worker ----

    def send(self, frame: Dict[str, Any]) -> None:
        self.raw(frames.encode(frame))

    def raw(self, data: bytes) -> None:
        assert self.connected.wait(5), "the worker never connected"
        assert self.conn is not None
        with self._write:
            self.conn.sendall(data)

    def raw_frame(self, payload: bytes) -> None:
        self.raw(struct.pack(">I", len(payload)) + payload)

    def message(self, address: str, body: Any, headers: Optional[Dict[str, str]] = None,
                reply: Optional[str] = None) -> None:
        frame: Dict[str, Any] = {"type": "message", "address": address, "body": body, "send": True}
        if headers:
            frame["headers"] = headers
        if reply:
            frame["replyAddress"] = reply
        self.send(frame)

    def next(self, timeout: float = 5.0) -> Dict[str, Any]:
        """The next frame the worker sent (not join, not heartbeat)."""
        if self._stash:
            return self._stash.pop(0)
        while True:
            try:
                frame = self.frames.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"the worker sent nothing within {timeout} s") from None
            if not isinstance(frame, _Closed):
                return frame
            if frame.conn is self.conn:
                self.frames.put(frame)
                raise AssertionError("the worker closed the connection")

    def reply_to(self, reply: str, timeout: float = 5.0) -> Dict[str, Any]:
        """The worker's answer to a message sent with replyAddress ``reply``; other frames stay for next()."""
        for i, frame in enumerate(self._stash):
            if frame.get("address") == reply:
                return self._stash.pop(i)
        passed = []
        try:
            while True:
                frame = self.next(timeout)
                if frame.get("address") == reply:
                    return frame
                passed.append(frame)
        finally:
            self._stash.extend(passed)

    def request(self, address: str, body: Any, headers: Optional[Dict[str, str]] = None,
                reply: str = "tandem.bridge.reply.1", timeout: float = 5.0) -> Dict[str, Any]:
        self.message(address, body, headers, reply)
        return self.reply_to(reply, timeout)

    def drain_frames(self) -> List[Dict[str, Any]]:
        out, self._stash = self._stash, []
        while True:
            try:
                frame = self.frames.get_nowait()
            except queue.Empty:
                return out
            if isinstance(frame, _Closed):
                if frame.conn is self.conn:
                    self.frames.put(frame)
                    return out
                continue
            out.append(frame)

    def discard_frames_of(self, conn: Optional[socket.socket], timeout: float = 3.0) -> None:
        """Drops what an earlier connection sent, up to its close: frames carry no connection, so a test that
        looks for what a new connection sends must first take the old one's out of the way."""
        self._stash = []  # filled by request()/next() while the old connection was the one in use
        deadline = time.monotonic() + timeout
        while True:
            try:
                frame = self.frames.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"the old connection's reader did not end within {timeout} s") from None
            if isinstance(frame, _Closed) and frame.conn is conn:
                return

    def drop(self) -> None:
        """Closes the worker's (latest) connection, as a bridge that went away; the listener stays."""
        if self.conn is not None:
            try:
                self.conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.conn.close()

    def close(self) -> None:
        self.drop()
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept(); close() alone does not on Linux
        except OSError:
            pass
        self.listener.close()
        self._thread.join(5)


def json_bytes(value: Any) -> bytes:
    return json.dumps(value).encode()
