"""A threaded connection to a Tandem worker bridge (the Vert.x TCP event-bus bridge framing of
``tandem_client.frames``): one reader thread dispatching frames, a send lock so any thread may write,
and futures for the replies of our own requests, keyed by the replyAddress we picked.

Handlers of incoming messages run on the reader thread: they must be quick (hand heavy work to
another thread), and while one runs no other frame is read.
"""

from __future__ import annotations

import itertools
import json
import logging
import secrets
import socket
import ssl
import threading
import time
from concurrent.futures import Future
from typing import Any, Callable, Dict, Optional, Tuple

from tandem_client import frames, tls

LOG = logging.getLogger("tandem_worker.bridge")
_READ_BYTES = 256 << 10


class BridgeError(Exception):
    """Base class of what the worker bridge connection raises."""


class ConnectionLost(BridgeError, ConnectionError):
    """The connection ended (closed by the bridge, a network error, or close())."""


class Refused(BridgeError):
    """The bridge refused a frame (an ``err`` frame without failureCode): ``code`` is its word for the
    problem (not_joined, access_denied, invalid_join, model_mismatch, ...), ``detail`` the text."""

    def __init__(self, code: str, detail: Optional[str] = None):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail


class JoinRefused(Refused):
    """The join was answered with an err frame (invalid_join, model_mismatch, worker_id_in_use,
    unauthorized, already_joined) or the joined cluster cannot be served by this engine."""


class ReplyFailed(BridgeError):
    """A request's reply failed: the recipient answered a failure code (``failure_type``
    RECIPIENT_FAILURE), nobody answered in time (TIMEOUT) or nobody listens (NO_HANDLERS)."""

    def __init__(self, failure_code: int, failure_type: str, message: str):
        super().__init__(f"{failure_type} {failure_code}: {message}")
        self.failure_code = failure_code
        self.failure_type = failure_type
        self.message = message


class Message:
    """A message the bridge delivered; ``reply``/``fail`` answer it when it carries a replyAddress
    (and do nothing otherwise), at most once."""

    def __init__(self, connection: "BridgeConnection", frame: Dict[str, Any]):
        self.address: str = frame.get("address") or ""
        self.body: Any = frame.get("body")
        headers = frame.get("headers")
        self.headers: Dict[str, str] = headers if isinstance(headers, dict) else {}
        reply = frame.get("replyAddress")
        self.reply_address: Optional[str] = reply if isinstance(reply, str) else None
        self._connection = connection
        self._answered = False
        self._lock = threading.Lock()

    @property
    def connection(self) -> "BridgeConnection":
        """The connection it arrived on (a worker that rejoined ignores messages of an old one)."""
        return self._connection

    def _claim(self) -> bool:
        with self._lock:
            if self._answered or self.reply_address is None:
                return False
            self._answered = True
            return True

    def reply(self, body: Any) -> None:
        if self._claim():
            assert self.reply_address is not None
            self._connection.send_frame({"type": "send", "address": self.reply_address, "body": body})

    def fail(self, code: int, message: str) -> None:
        if self._claim():
            self._connection.send_frame({"type": "send", "address": self.reply_address, "failureCode": code,
                                         "message": message})


class BridgeConnection:
    """One TCP connection to the bridge. ``on_message(Message)`` gets every message that is not the
    reply to one of our requests; ``on_error(frame)`` every err frame nobody waits for;
    ``on_close(ConnectionLost)`` runs once when the connection ends, for whatever reason.

    ``ssl_context`` speaks TLS to a bridge with ``worker-bridge.tls-cert`` (whom to trust and, for
    ``worker-bridge.tls-client-ca``, the certificate to present: ``context.load_cert_chain(...)``); the
    server's certificate must name ``host`` (or ``server_hostname``). A failed handshake raises
    ConnectionLost."""

    def __init__(self, host: str, port: int, on_message: Callable[[Message], None],
                 on_error: Optional[Callable[[Dict[str, Any]], None]] = None,
                 on_close: Optional[Callable[[ConnectionLost], None]] = None, connect_timeout: float = 10.0,
                 ssl_context: Optional[ssl.SSLContext] = None, server_hostname: Optional[str] = None):
        self._on_message = on_message
        self._on_error = on_error
        self._on_close = on_close
        try:
            sock = socket.create_connection((host, port), timeout=connect_timeout)
        except OSError as e:
            raise ConnectionLost(f"cannot connect to the worker bridge at {host}:{port}: {e}") from e
        try:
            # A TlsSocket with ssl_context (not an SSLSocket: the reader and the senders share it).
            self._sock = tls.connect(sock, ssl_context, server_hostname or host)
        except OSError as e:  # ssl.SSLError (untrusted, wrong name, refused), a reset, a timeout
            raise ConnectionLost(f"no TLS connection to the worker bridge at {host}:{port}: {e}") from e
        self._sock.settimeout(None)  # the reader blocks; waits are bounded by futures' timeouts
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._pending: Dict[str, Tuple["Future[Any]", Optional[threading.Timer]]] = {}
        # Our reply addresses: unguessable, so no other client's reply can land in our futures.
        self._reply_prefix = "tandem.bridge.py." + secrets.token_hex(6) + "."
        self._counter = itertools.count(1)
        self._closed: Optional[ConnectionLost] = None
        # The last err frame nobody waited for: the bridge says why just before it closes a connection
        # (idle_timeout, shutting_down), and that belongs in the ConnectionLost.
        self._notice: Optional[Tuple[float, str]] = None
        # Set once the connection ended AND on_close returned: whoever waits on it (a worker about to
        # rejoin) sees the state on_close cleaned up, never a half-cleaned one.
        self.closed_event = threading.Event()
        self._reader = threading.Thread(target=self._read_loop, name="tandem-worker-reader", daemon=True)
        self._reader.start()

    # ---- sending ----

    def send(self, address: str, body: Any = None, headers: Optional[Dict[str, str]] = None) -> None:
        """A one-way message (no reply expected)."""
        frame: Dict[str, Any] = {"type": "send", "address": address}
        if body is not None:
            frame["body"] = body
        if headers:
            frame["headers"] = headers
        self.send_frame(frame)

    def request(self, address: str, body: Any = None, headers: Optional[Dict[str, str]] = None,
                timeout: Optional[float] = 30.0, reply_address: Optional[str] = None,
                callback: Optional[Callable[["Future[Any]"], None]] = None) -> "Future[Any]":
        """Sends with a replyAddress; the future gets the reply's body, or fails with ReplyFailed, Refused,
        TimeoutError (no reply within ``timeout`` seconds) or ConnectionLost. ``callback(future)``, when
        given, runs as soon as the future is done — on the reader thread for a reply, so it runs before
        any later frame is dispatched."""
        address_of_reply = reply_address or self._reply_prefix + str(next(self._counter))
        future: "Future[Any]" = Future()
        future.set_running_or_notify_cancel()
        if callback is not None:
            future.add_done_callback(callback)
        timer = None
        if timeout is not None:
            timer = threading.Timer(timeout, self._expire, (address_of_reply, address, timeout))
            timer.daemon = True
        with self._lock:
            if self._closed is not None:
                raise ConnectionLost(str(self._closed))
            self._pending[address_of_reply] = (future, timer)
        if timer is not None:
            timer.start()
        frame: Dict[str, Any] = {"type": "send", "address": address, "replyAddress": address_of_reply}
        if body is not None:
            frame["body"] = body
        if headers:
            frame["headers"] = headers
        self.send_frame(frame)
        return future

    def ping(self) -> None:
        self.send_frame({"type": "ping"})

    def send_frame(self, frame: Dict[str, Any]) -> None:
        """Writes one frame; raises ConnectionLost when the connection is gone."""
        data = frames.encode(frame)
        if self._closed is not None:
            raise ConnectionLost(str(self._closed))
        try:
            with self._send_lock:
                self._sock.sendall(data)
        except OSError as e:
            lost = ConnectionLost(f"the connection to the worker bridge was lost: {e}")
            self._shut(lost)
            raise lost from e

    # ---- lifecycle ----

    @property
    def closed(self) -> Optional[ConnectionLost]:
        """Why the connection ended, or None while it is open."""
        return self._closed

    def close(self) -> None:
        self._shut(ConnectionLost("the connection was closed by this worker"))

    def join(self, timeout: Optional[float] = None) -> bool:
        """Waits for the reader thread to end (after the connection closed); True if it did. A worker
        rejoining calls it so that no handler of the old connection still runs beside the new one."""
        if threading.current_thread() is not self._reader:
            self._reader.join(timeout)
        return not self._reader.is_alive() or threading.current_thread() is self._reader

    # ---- internals ----

    def _expire(self, reply_address: str, address: str, timeout: float) -> None:
        with self._lock:
            entry = self._pending.pop(reply_address, None)
        if entry is not None and not entry[0].done():
            entry[0].set_exception(TimeoutError(f"no reply from {address} within {timeout:g} s"))

    def _settle(self, frame: Dict[str, Any]) -> bool:
        address = frame.get("address")
        if not isinstance(address, str):
            return False
        with self._lock:
            entry = self._pending.pop(address, None)
        if entry is None:
            return False
        future, timer = entry
        if timer is not None:
            timer.cancel()
        if frame.get("type") == "message":
            future.set_result(frame.get("body"))
        elif "failureCode" in frame:
            code = frame.get("failureCode")
            future.set_exception(ReplyFailed(code if isinstance(code, int) else 500,
                                             str(frame.get("failureType") or "RECIPIENT_FAILURE"),
                                             str(frame.get("message") or "the request failed")))
        else:
            future.set_exception(Refused(str(frame.get("message") or "error"), frame.get("detail")))
        return True

    def _read_loop(self) -> None:
        reason = "closed by the bridge"
        buffer = bytearray()
        try:
            while True:
                data = self._sock.recv(_READ_BYTES)
                if not data:
                    if buffer:
                        reason = "closed by the bridge in the middle of a frame"
                    elif self._notice is not None and time.monotonic() - self._notice[0] < 2.0:
                        reason = f"closed by the bridge after err {self._notice[1]}"
                    break
                buffer += data
                consumed = 0
                while len(buffer) - consumed >= frames.HEADER.size:
                    (length,) = frames.HEADER.unpack_from(buffer, consumed)
                    if length > frames.MAX_INCOMING_FRAME:
                        raise ConnectionError(f"the bridge announced a frame of {length} bytes")
                    end = consumed + frames.HEADER.size + length
                    if len(buffer) < end:
                        break
                    payload = bytes(buffer[consumed + frames.HEADER.size:end])
                    consumed = end
                    self._dispatch(payload)
                del buffer[:consumed]  # once per read, not per frame: no quadratic copying
        except OSError as e:
            reason = str(e)
        self._shut(ConnectionLost(f"the connection to the worker bridge was lost ({reason})"))

    def _dispatch(self, payload: bytes) -> None:
        try:
            frame = json.loads(payload.decode("utf-8"))
        except ValueError as e:
            # Framing is intact (the length told us where the frame ends): skip it, keep the connection.
            LOG.warning("ignoring a frame that is not JSON: %s", e)
            return
        if not isinstance(frame, dict):
            LOG.warning("ignoring a frame that is not a JSON object")
            return
        kind = frame.get("type")
        if kind in ("message", "err") and self._settle(frame):
            return
        try:
            if kind == "message":
                self._on_message(Message(self, frame))
            elif kind == "err":
                self._notice = (time.monotonic(), f"{frame.get('message')}: {frame.get('detail')}")
                if self._on_error is not None:
                    self._on_error(frame)
                else:
                    LOG.warning("the bridge reported an error: %s", frame)
            elif kind != "pong":
                LOG.debug("ignoring a frame of type %r", kind)
        except ConnectionLost:
            pass  # the handler's reply found the connection gone; _shut reports it
        except Exception:  # noqa: BLE001 — a handler bug must not kill the reader (and the worker)
            LOG.exception("handling a %s frame for %s failed", kind, frame.get("address"))

    def _shut(self, reason: ConnectionLost) -> None:
        with self._lock:
            if self._closed is not None:
                return
            self._closed = reason
            pending = list(self._pending.values())
            self._pending.clear()
        for future, timer in pending:
            if timer is not None:
                timer.cancel()
            if not future.done():
                future.set_exception(reason)
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        try:
            if self._on_close is not None:
                self._on_close(reason)
        except Exception:  # noqa: BLE001
            LOG.exception("on_close failed")
        finally:
            self.closed_event.set()
