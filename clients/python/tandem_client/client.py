"""A client for Tandem's TCP event-bus bridge (standard library only)."""

from __future__ import annotations

import itertools
import queue
import socket
import ssl
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import frames, tls
from .errors import (TandemAccessDenied, TandemBridgeError, TandemConnectionError, TandemError,
                     TandemServerError, TandemTimeout, request_error)

GENERATE = "tandem.generate"
CANCEL = "tandem.cancel"
CLIENT_PREFIX = "tandem.client."

#: Put on every waiting queue when the connection ends.
_CLOSED = object()
#: Streams whose reply was not (yet) seen, kept for at most this many request ids.
_MAX_EARLY_STREAMS = 256
# The router closes a bridge connection that sends no frame for bridge.idle-timeout-ms (5 min by
# default); a client that sits idle pings well within that.
KEEPALIVE_S = 60.0


@dataclass(frozen=True)
class Chunk:
    """One batch of generated tokens and the text they completed (may be empty mid-character)."""

    text: str
    token_ids: List[int]


class Generation(Iterator[Chunk]):
    """A request running on the router. Iterate it for Chunks; when the iteration ends,
    ``finish_reason`` ("length", "stop", "cancelled") and ``usage`` are set. A request that fails
    after it started raises a TandemRequestError from the iteration.

    Use it as a context manager to cancel it if the block is left before the end.
    """

    def __init__(self, client: "TandemClient", reply: Dict[str, Any], frames_queue: "queue.Queue[Any]",
                 timeout: Optional[float]):
        self.id: str = reply["id"]
        self.prefill_worker: Optional[str] = reply.get("prefill_worker")
        self.decode_worker: Optional[str] = reply.get("decode_worker")
        self.finish_reason: Optional[str] = None
        self.usage: Optional[Dict[str, int]] = None
        self.token_ids: List[int] = []
        self._parts: List[str] = []
        self._client = client
        self._frames = frames_queue
        self._timeout = timeout
        self._done = False

    @property
    def text(self) -> str:
        """The text received so far."""
        return "".join(self._parts)

    @property
    def done(self) -> bool:
        return self._done

    def __iter__(self) -> "Generation":
        return self

    def __next__(self) -> Chunk:
        if self._done:
            raise StopIteration
        try:
            body = self._frames.get(timeout=self._timeout)
        except queue.Empty:
            self._end()
            # Nobody will read the rest: free the workers.
            self._client._cancel_quietly(self.id)
            raise TandemTimeout(f"no frame of request {self.id} within {self._timeout} s; it was cancelled") from None
        if body is _CLOSED:
            self._end()
            raise self._client._closed_error()
        if "error" in body:
            self._end()
            error = body.get("error") or {}
            raise request_error(int(body.get("status") or 500), error.get("message") or "the request failed", error)
        if "finish_reason" in body:
            self.finish_reason = body["finish_reason"]
            self.usage = body.get("usage")
            self._end()
            raise StopIteration
        chunk = Chunk(body.get("text", ""), list(body.get("token_ids") or []))
        self._parts.append(chunk.text)
        self.token_ids.extend(chunk.token_ids)
        return chunk

    def wait(self) -> "Generation":
        """Reads the rest of the stream; returns self with text, token_ids, finish_reason and usage set."""
        for _ in self:
            pass
        return self

    def cancel(self, timeout: Optional[float] = None) -> bool:
        """Asks the router to stop it; the iteration then ends with finish_reason "cancelled".
        False if it had already ended."""
        return self._client.cancel(self.id, timeout)

    def __enter__(self) -> "Generation":
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self._done:
            self._end()
            self._client._cancel_quietly(self.id)

    def _end(self) -> None:
        self._done = True
        self._client._forget(self.id)


class _Pending:
    """A send waiting for its reply."""

    def __init__(self, stream: bool):
        self.stream = stream
        self.result: "queue.Queue[Any]" = queue.Queue(maxsize=1)


class TandemClient:
    """A connection to one Tandem router's TCP event-bus bridge.

    It registers an address of its own (``tandem.client.<uuid>``) for its tokens, and any number of
    threads may run requests on it at once. Every wait is bounded by ``timeout`` seconds (per reply,
    and between two frames of a stream). Connection problems raise TandemConnectionError, refusals
    TandemBridgeError or TandemRequestError.

    ``ssl_context`` speaks TLS to a bridge with ``bridge.tls-cert``: the context says whom to trust and,
    for a bridge with ``bridge.tls-client-ca``, which certificate this client presents. The server's
    certificate must name ``host`` (or ``server_hostname`` when given) unless the context turns
    ``check_hostname`` off::

        context = ssl.create_default_context(cafile="ca.pem")    # the bridge's CA (default: the system's)
        context.load_cert_chain("client.pem", "client-key.pem")  # only for mutual TLS
        client = TandemClient("bridge.example", 7000, ssl_context=context)

    A failed handshake (untrusted server, wrong name) raises TandemConnectionError from the constructor;
    a bridge that wants a client certificate and got none closes the connection right after the
    handshake (TLS 1.3), so the first call raises it.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 7000, timeout: Optional[float] = 30.0,
                 api_key: Optional[str] = None, keepalive: Optional[float] = KEEPALIVE_S,
                 ssl_context: Optional[ssl.SSLContext] = None, server_hostname: Optional[str] = None):
        self.timeout = timeout
        self._keepalive_pongs = 0
        self._stopped = threading.Event()
        # With http.api-keys set on the router, every frame but a ping carries one in its headers.
        self._headers = {"authorization": "Bearer " + api_key} if api_key else None
        self.address = CLIENT_PREFIX + str(uuid.uuid4())
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
            # The handshake, bounded by timeout too. A TlsSocket, not an ssl.SSLSocket: the reader thread
            # and the senders share it (see tls.py).
            self._sock = tls.connect(sock, ssl_context, server_hostname or host)
        except OSError as e:  # ssl.SSLError too: an untrusted server, a wrong name, a reset mid-handshake
            raise TandemConnectionError(f"cannot connect to the Tandem bridge at {host}:{port}: {e}") from e
        # Reads block in the reader thread; waits are bounded by the queues' timeouts instead.
        self._sock.settimeout(None)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._pending: Dict[str, _Pending] = {}
        self._streams: Dict[str, "queue.Queue[Any]"] = {}
        self._early: "OrderedDict[str, List[Dict[str, Any]]]" = OrderedDict()
        self._errors: "queue.Queue[Any]" = queue.Queue()
        self._pongs: "queue.Queue[Any]" = queue.Queue()
        self._closed: Optional[TandemConnectionError] = None
        self._replies = itertools.count(1)
        self._reader = threading.Thread(target=self._read_loop, name="tandem-client-reader", daemon=True)
        self._reader.start()
        if keepalive:
            threading.Thread(target=self._keepalive, args=(keepalive,), name="tandem-client-keepalive",
                             daemon=True).start()
        self.send_frame({"type": "register", "address": self.address})

    # ---- requests ----

    def generate(self, prompt: Union[str, Sequence[int], None] = None, *,
                 messages: Optional[Sequence[Dict[str, Any]]] = None,
                 max_tokens: Optional[int] = None, temperature: Optional[float] = None,
                 top_p: Optional[float] = None, top_k: Optional[int] = None, seed: Optional[int] = None,
                 stop: Union[str, Sequence[str], None] = None, user: Optional[str] = None,
                 model: Optional[str] = None, timeout: Optional[float] = None, **fields: Any) -> Generation:
        """Starts a completion (``prompt``: text or token ids) or a chat request (``messages``).

        The fields are those of the OpenAI-compatible HTTP API; ``fields`` passes any other. Returns
        once the router has accepted the request; iterate the Generation for its chunks.
        """
        if (prompt is None) == (messages is None):
            raise ValueError("give exactly one of prompt or messages")
        body: Dict[str, Any] = dict(fields)
        if prompt is not None:
            body["prompt"] = prompt if isinstance(prompt, str) else list(prompt)
        else:
            body["messages"] = list(messages or [])
        for key, value in (("max_tokens", max_tokens), ("temperature", temperature), ("top_p", top_p),
                           ("top_k", top_k), ("seed", seed), ("stop", stop), ("user", user), ("model", model)):
            if value is not None:
                body[key] = value if not isinstance(value, tuple) else list(value)
        body["stream_to"] = self.address
        wait = self.timeout if timeout is None else timeout
        reply, stream = self._request(GENERATE, body, wait, stream=True)
        if not isinstance(reply, dict) or not isinstance(reply.get("id"), str) or stream is None:
            raise TandemError(f"unexpected reply to a generate request: {reply!r}")
        return Generation(self, reply, stream, wait)

    def cancel(self, request_id: str, timeout: Optional[float] = None) -> bool:
        """Cancels a request this connection started; False if it is unknown or already ended."""
        reply, _ = self._request(CANCEL, {"id": request_id}, self.timeout if timeout is None else timeout)
        return bool(isinstance(reply, dict) and reply.get("cancelled"))

    def request(self, address: str, body: Any = None, timeout: Optional[float] = None) -> Any:
        """Sends ``body`` to ``address`` and returns the reply's body (the low-level bridge call)."""
        reply, _ = self._request(address, body, self.timeout if timeout is None else timeout)
        return reply

    def ping(self, timeout: Optional[float] = None) -> float:
        """Round-trip time to the bridge in seconds."""
        start = time.monotonic()
        self.send_frame({"type": "ping"})
        try:
            pong = self._pongs.get(timeout=self.timeout if timeout is None else timeout)
        except queue.Empty:
            raise TandemTimeout("no pong from the bridge") from None
        if pong is _CLOSED:
            raise self._closed_error()
        return time.monotonic() - start

    def send_frame(self, frame: Dict[str, Any]) -> None:
        """Writes one raw bridge frame. An error the bridge answers with, when not addressed to a
        reply, is available from next_error()."""
        if self._headers is not None and frame.get("type") != "ping" and "headers" not in frame:
            frame = dict(frame, headers=self._headers)
        self._write(frames.encode(frame))

    def next_error(self, timeout: Optional[float] = None) -> TandemError:
        """The next error the bridge sent that no call was waiting for (e.g. about a frame written
        with send_frame), as an exception object; raises TandemTimeout when none comes."""
        try:
            frame = self._errors.get(timeout=self.timeout if timeout is None else timeout)
        except queue.Empty:
            raise TandemTimeout("no error frame from the bridge") from None
        if frame is _CLOSED:
            raise self._closed_error()
        return _error_from(frame)

    # ---- lifecycle ----

    @property
    def closed(self) -> bool:
        return self._closed is not None

    def close(self) -> None:
        """Closes the connection; the router cancels every request still running on it."""
        self._shut(TandemConnectionError("the client was closed"))

    def __enter__(self) -> "TandemClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- internals ----

    def _request(self, address: str, body: Any, timeout: Optional[float], stream: bool = False
                 ) -> Tuple[Any, Optional["queue.Queue[Any]"]]:
        reply_address = f"{self.address}.reply.{next(self._replies)}"
        pending = _Pending(stream)
        with self._lock:
            if self._closed is not None:
                raise self._closed_error()
            self._pending[reply_address] = pending
        try:
            frame: Dict[str, Any] = {"type": "send", "address": address, "replyAddress": reply_address}
            if body is not None:
                frame["body"] = body
            if self._headers is not None:
                frame["headers"] = self._headers
            self._write(frames.encode(frame))
            try:
                result = pending.result.get(timeout=timeout)
            except queue.Empty:
                raise TandemTimeout(f"no reply from {address} within {timeout} s") from None
        finally:
            with self._lock:
                self._pending.pop(reply_address, None)
        if result is _CLOSED:
            raise self._closed_error()
        reply, stream_queue = result
        if reply.get("type") == "err":
            raise _error_from(reply)
        return reply.get("body"), stream_queue

    def _cancel_quietly(self, request_id: str) -> None:
        try:
            self.send_frame({"type": "send", "address": CANCEL, "body": {"id": request_id}})
        except TandemError:
            pass  # the connection is gone, and with it the request

    def _forget(self, request_id: str) -> None:
        with self._lock:
            self._streams.pop(request_id, None)

    def _write(self, data: bytes) -> None:
        if self._closed is not None:
            raise self._closed_error()
        try:
            with self._write_lock:
                self._sock.sendall(data)
        except OSError as e:
            self._shut(TandemConnectionError(f"the connection to the Tandem bridge was lost: {e}"))
            raise self._closed_error() from e

    def _read_loop(self) -> None:
        reason = "closed by the server"
        try:
            while True:
                frame = frames.read_frame(self._sock)
                if frame is None:
                    break
                self._dispatch(frame)
        except (OSError, ValueError) as e:  # ValueError: JSON that does not parse
            reason = str(e)
        self._shut(TandemConnectionError(f"the connection to the Tandem bridge was lost ({reason})"))

    def _dispatch(self, frame: Dict[str, Any]) -> None:
        kind = frame.get("type")
        address = frame.get("address")
        with self._lock:
            pending = self._pending.pop(address, None) if kind in ("message", "err") and address else None
            if pending is not None:
                stream_queue = None
                body = frame.get("body")
                if pending.stream and kind == "message" and isinstance(body, dict) and isinstance(body.get("id"), str):
                    # The stream exists before the caller sees the id, so no frame can miss it.
                    stream_queue = queue.Queue()
                    for early in self._early.pop(body["id"], []):
                        stream_queue.put(early)
                    self._streams[body["id"]] = stream_queue
                pending.result.put((frame, stream_queue))
                return
            if kind == "message" and address == self.address:
                body = frame.get("body")
                request_id = body.get("id") if isinstance(body, dict) else None
                stream_queue = self._streams.get(request_id)
                if stream_queue is not None:
                    stream_queue.put(body)
                elif isinstance(request_id, str):
                    # Its reply has not been read yet (or timed out): keep a bounded few.
                    self._early.setdefault(request_id, []).append(body)
                    while len(self._early) > _MAX_EARLY_STREAMS:
                        self._early.popitem(last=False)
                return
        if kind == "err":
            self._errors.put(frame)
        elif kind == "pong":
            with self._lock:
                if self._keepalive_pongs > 0:
                    self._keepalive_pongs -= 1  # the answer to a keepalive ping, not to ping()
                    return
            self._pongs.put(frame)

    def _keepalive(self, period: float) -> None:
        while not self._stopped.wait(period):
            with self._lock:
                if self._closed is not None:
                    return
                self._keepalive_pongs += 1
            try:
                self._write(frames.encode({"type": "ping"}))
            except TandemError:
                return

    def _shut(self, reason: TandemConnectionError) -> None:
        with self._lock:
            if self._closed is not None:
                return
            self._closed = reason
            self._stopped.set()
            waiting = [p.result for p in self._pending.values()] + list(self._streams.values())
            self._pending.clear()
            self._streams.clear()
            self._early.clear()
        for q in waiting + [self._errors, self._pongs]:
            q.put(_CLOSED)
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()

    def _closed_error(self) -> TandemConnectionError:
        return TandemConnectionError(str(self._closed))


def _error_from(frame: Dict[str, Any]) -> TandemError:
    """The exception for an ``err`` frame: a failed reply (it has a failureCode) or a refused frame."""
    if "failureCode" in frame:
        message = frame.get("message") or "the request failed"
        failure = frame.get("failureType")
        if failure == "TIMEOUT":
            return TandemTimeout(message)
        if failure == "NO_HANDLERS":
            return TandemServerError(503, message)
        code = frame.get("failureCode")
        return request_error(code if isinstance(code, int) and code > 0 else 500, message)
    code = frame.get("message") or "error"
    return (TandemAccessDenied if code == "access_denied" else TandemBridgeError)(code, frame.get("detail"))
