"""What every bridge worker has besides its role (Java's WorkerControl): the join, heartbeats with its
load, the status and drain addresses, router-left, and a clean close."""

from __future__ import annotations

import abc
import logging
import ssl
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from .bridge import BridgeConnection, ConnectionLost, JoinRefused, Message, Refused
from .engine import Engine

JOIN = "tandem.bridge.worker.join"
HEARTBEAT = "tandem.bridge.worker.heartbeat"
ROUTER_LEFT = "tandem.bridge.worker.router-left"

# Failure codes (Java's WorkerFailure). 410 (gone) is the bridge's: the worker left while a message waited.
BAD_REQUEST, KV_MISSING, MODEL_MISMATCH, GONE, KV_TOO_LARGE, BUSY = 400, 404, 409, 410, 413, 429
CANCELLED, INTERNAL, KV_TRANSFER_FAILED, OVER_CAPACITY = 499, 500, 502, 503
FAILURE_CODES = frozenset((400, 404, 409, 410, 413, 429, 499, 500, 502, 503))


@dataclass
class WorkerSettings:
    """Limits and timings, with Java's WorkerSettings defaults."""

    #: decode: sequences one step advances; prefill: prompts computed at once (sent as max_batch).
    max_batch: int = 1
    kv_chunk_bytes: int = 256 << 10
    max_kv_transfer_bytes: int = 256 << 20
    #: decode: how long KV waits for its DECODE_REQUEST; prefill: how long to wait for the KV ack.
    kv_park_timeout_ms: int = 10_000
    kv_capacity_bytes: int = 4 << 30
    max_queued_prefill_tokens: int = 65_536
    max_waiting_sequences: int = 64
    join_timeout_s: float = 10.0
    #: how long a rejoin waits for the threads of the lost connection (a running engine step) to end.
    rejoin_quiesce_s: float = 30.0
    #: prefill: KV blocks of prompts kept for reuse (0: none; the engine must support prefill_from).
    prefix_cache_blocks: int = 1024


class IncompatibleModel(JoinRefused):
    """The bridge accepted the join but its model's shape is not the engine's."""


class Worker(abc.ABC):
    """A worker joined to a Tandem cluster over the worker bridge. ``start()`` connects and joins
    (raising JoinRefused or ConnectionLost), ``wait()`` blocks until the connection ends, ``close()``
    leaves the cluster (the bridge removes the worker at once).

    After the connection ended (but not after close()), ``start()`` may be called again — with
    ``host``/``port`` changed to another router node if need be — to rejoin: the engine is kept, every
    request held for the old connection was freed when it ended (the cluster failed them over), and the
    old connection's threads are waited for first. :mod:`tandem_worker.reconnect` does this in a loop."""

    role = ""

    def __init__(self, engine: Engine, host: str, port: int, *, worker_id: Optional[str] = None,
                 token: Optional[str] = None, settings: Optional[WorkerSettings] = None,
                 logger: Optional[logging.Logger] = None, ssl_context: Optional[ssl.SSLContext] = None):
        self.engine = engine
        self.host, self.port = host, port
        self.requested_id = worker_id
        self.token = token
        self.ssl_context = ssl_context  # TLS to the worker bridge (every address of a rejoin): see BridgeConnection
        self.settings = settings or WorkerSettings()
        self.log = logger or logging.getLogger(f"tandem_worker.{self.role}")
        self.lock = threading.Lock()  # guards the role's state; never held while waiting on the network
        self.worker_id = ""
        self.node_id = ""
        self.model: Dict[str, Any] = {}
        self.end_tokens: List[int] = [engine.info.eos]
        self.heartbeat_ms = 250
        self.draining = False
        self.connection: Optional[BridgeConnection] = None
        self._handlers: Dict[str, Callable[[Message], None]] = {}
        self._stop = threading.Event()  # per connection: a late heartbeat thread never outlives its own
        self._ticker: Optional[threading.Thread] = None
        self._closing = False
        self._session: Optional[BridgeConnection] = None  # the connection whose join succeeded

    # ---- the role's part ----

    @abc.abstractmethod
    def _role_handlers(self) -> Dict[str, Callable[[Message], None]]:
        """The role's addresses (built from self.worker_id) and their handlers."""

    @abc.abstractmethod
    def load(self) -> Dict[str, Any]:
        """The load object of heartbeats and status answers (queued_prefill_tokens, active_sequences, kv
        bytes, decode_steps, and the requests behind them: prefilling, parked_kv, incoming_kv)."""

    def status(self) -> Dict[str, Any]:
        """This worker as its registry entry describes it (Java's WorkerDescriptor): the answer to the
        status and drain addresses."""
        info = self.engine.info
        return {"worker_id": self.worker_id, "role": self.role, "model": info.name,
                "model_fingerprint": info.fingerprint, "node_id": self.node_id, "max_batch": self.settings.max_batch,
                "draining": self.draining, "load": self.load()}

    @abc.abstractmethod
    def on_router_left(self, node: str) -> None:
        """Drop work whose router_node is ``node``."""

    def idle(self) -> bool:
        """True when the worker holds no work (for a draining shutdown)."""
        load = self.load()
        return bool(load.get("prefilling", 0) == 0 and load.get("active_sequences", 0) == 0)

    def _tick(self) -> None:
        """Called on every heartbeat (e.g. to expire parked KV)."""

    def _cancelled_id(self, message: Message) -> Optional[int]:
        """The request a cancel names, or None for a malformed one (cancels are never answered with errors)."""
        try:
            return parse_request_id(message.body if isinstance(message.body, dict) else {})
        except ValueError as e:
            self.log.debug("ignoring a malformed cancel: %s", e)
            return None

    def _join_extras(self) -> Dict[str, Any]:
        """Fields the role adds to its join frame (a prefill worker's ``kv_cache``)."""
        return {}

    def _on_start(self) -> None:
        """Called once joined, before the first message is handled (start role threads)."""

    def _on_stop(self) -> None:
        """Called once the connection ended (stop role threads, free what is held). Idempotent: a rejoin
        calls it again once the old threads are gone, to free what they added meanwhile."""

    def _before_rejoin(self) -> None:
        """Called before a rejoin, after _on_stop: wait for the role's threads of the old connection
        (at most ``settings.rejoin_quiesce_s``) and make the role startable again."""

    # ---- lifecycle ----

    def start(self) -> "Worker":
        if self._closing:
            raise ConnectionLost("the worker was closed")
        if self.connection is not None:
            self._quiesce()
        info = self.engine.info
        body: Dict[str, Any] = {"role": self.role, "model": info.name, "model_fingerprint": info.fingerprint,
                                "max_batch": self.settings.max_batch}
        if self.requested_id is not None:
            body["worker_id"] = self.requested_id
        if self.token is not None:
            body["token"] = self.token
        body.update(self._join_extras())
        stop = self._stop = threading.Event()
        self.connection = BridgeConnection(self.host, self.port, self._dispatch, self._on_error,
                                           lambda reason: self._on_close(reason, stop), ssl_context=self.ssl_context)
        done = threading.Event()
        failure: List[BaseException] = []

        def joined(future: "Future[Any]") -> None:
            # Runs on the reader thread, so the handlers exist before the first message is dispatched.
            try:
                self._accept_join(future.result())
            except Refused as e:
                failure.append(e if isinstance(e, JoinRefused) else JoinRefused(e.code, e.detail))
            except TimeoutError:
                failure.append(JoinRefused("join_timeout",
                                           f"no join reply within {self.settings.join_timeout_s:g} s"))
            except BaseException as e:  # noqa: BLE001 — handed to the caller below
                failure.append(e)
            done.set()

        # A failed attempt closes its connection but not the worker (close() would forbid a retry).
        try:
            self.connection.request(JOIN, body, timeout=self.settings.join_timeout_s, reply_address="join",
                                    callback=joined)
        except ConnectionLost:
            self.connection.close()
            raise
        done.wait()
        if failure:
            self.connection.close()
            raise failure[0]
        self.log.info("joined as %s worker %s on node %s via %s:%d (model %s, fingerprint %016x, heartbeat %d ms)",
                      self.role, self.worker_id, self.node_id, self.host, self.port, info.name,
                      info.fingerprint & (2**64 - 1), self.heartbeat_ms)
        return self

    def _quiesce(self) -> None:
        """Before a rejoin: the old connection must be over, and none of its threads may still add work
        (a message being handled, a heartbeat, a running step) once the new one starts."""
        old = self.connection
        assert old is not None
        if old.closed is None:
            raise RuntimeError("start() again only after the connection ended")
        budget = self.settings.rejoin_quiesce_s
        old.closed_event.wait(budget)  # on_close (the first _on_stop) has returned
        if not old.join(budget):
            self.log.warning("the reader of the lost connection is still busy; rejoining anyway")
        if self._ticker is not None:
            self._ticker.join(budget)
        self._on_stop()  # again: frees what a handler of the old connection added after the first one
        self._before_rejoin()

    def _accept_join(self, reply: Any) -> None:
        if not isinstance(reply, dict) or not isinstance(reply.get("worker_id"), str):
            raise JoinRefused("invalid_join_reply", f"the join reply is malformed: {reply!r}")
        self.worker_id = reply["worker_id"]
        self.node_id = str(reply.get("node_id"))
        self.heartbeat_ms = int(reply.get("heartbeat_ms") or 250)
        model = reply.get("model")
        self.model = model if isinstance(model, dict) else {}
        info = self.engine.info
        # The router tokenizes prompts and applies the stop rule with the cluster's model: an engine of
        # another shape would produce tokens the router cannot read, or stop elsewhere.
        for field, mine in (("vocab_size", info.vocab_size), ("seq_len", info.seq_len), ("eos", info.eos)):
            theirs = self.model.get(field)
            if theirs is not None and theirs != mine:
                raise IncompatibleModel("model_mismatch", f"the cluster's model has {field}={theirs}, this engine "
                                        f"{mine}; build the engine with the cluster's shape ({self.model})")
        ends = self.model.get("end_tokens")
        self.end_tokens = list(ends) if isinstance(ends, list) else [info.eos]
        self._handlers = dict(self._role_handlers())
        self._handlers[f"tandem.worker.{self.worker_id}.status"] = lambda m: m.reply(self.status())
        self._handlers[f"tandem.worker.{self.worker_id}.drain"] = self._on_drain
        self._handlers[ROUTER_LEFT] = self._on_router_left
        addresses = reply.get("addresses")
        if isinstance(addresses, list) and set(addresses) - set(self._handlers):
            self.log.warning("the bridge will send to addresses this worker does not handle: %s",
                             sorted(set(addresses) - set(self._handlers)))
        self._on_start()
        self._session = self.connection
        self._ticker = threading.Thread(target=self._heartbeats, args=(self._stop,), name="tandem-worker-heartbeat",
                                        daemon=True)
        self._ticker.start()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Blocks until the connection ends (True) or the timeout passes (False)."""
        assert self.connection is not None, "start() first"
        return self.connection.closed_event.wait(timeout)

    def serve_forever(self) -> None:
        """Blocks while the worker serves: returns after close(), raises ConnectionLost when the
        connection was lost (the bridge closed it, the network failed)."""
        self.wait()
        if not self._closing and self.closed_reason is not None:
            raise self.closed_reason

    def close(self) -> None:
        """Leaves the cluster: closes the connection (the bridge removes the worker and fails what
        it routed here)."""
        self._closing = True
        if self.connection is not None:
            self.connection.close()

    @property
    def closed_reason(self) -> Optional[ConnectionLost]:
        return self.connection.closed if self.connection is not None else None

    @property
    def closing(self) -> bool:
        """True once close() was called: the worker is leaving and must not rejoin."""
        return self._closing

    def set_draining(self, draining: bool) -> None:
        """Says so in the registry at once: routers send a draining worker nothing new."""
        self.draining = draining
        self._send_heartbeat()

    def __enter__(self) -> "Worker":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- internals ----

    def _dispatch(self, message: Message) -> None:
        if message.connection is not self.connection:
            return  # a straggler of a connection this worker already left: the cluster failed it over
        handler = self._handlers.get(message.address)
        if handler is None:
            self.log.warning("no handler for a message to %s", message.address)
            message.fail(BAD_REQUEST, f"worker {self.worker_id} does not handle {message.address}")
            return
        try:
            handler(message)
        except ConnectionLost:
            raise
        except Exception as e:  # noqa: BLE001 — answer instead of leaving the sender to time out
            self.log.exception("handling a message to %s failed", message.address)
            message.fail(INTERNAL, f"worker {self.worker_id} failed: {e}")

    def _on_error(self, frame: Dict[str, Any]) -> None:
        code = frame.get("message")
        detail = frame.get("detail") or frame.get("failureType") or ""
        if code in ("idle_timeout", "shutting_down"):
            # The bridge says why it is about to close the connection; the close itself ends the worker.
            self.log.warning("the bridge is closing the connection: %s %s", code, detail)
            return
        # A refused send of ours (e.g. tokens to an address the bridge does not allow): log it loudly,
        # it means this worker and the bridge disagree about the protocol.
        self.log.error("the bridge refused a frame: %s %s", code, detail)

    def _on_close(self, reason: ConnectionLost, stop: threading.Event) -> None:
        stop.set()
        if self.connection is not self._session:
            # A join attempt that failed: start() raises why, nothing was served on it.
            self.log.debug("join attempt via %s:%d ended: %s", self.host, self.port, reason)
            return
        (self.log.info if self._closing else self.log.error)("worker %s: %s", self.worker_id or "-", reason)
        self._on_stop()

    def _on_drain(self, message: Message) -> None:
        flag = message.body.get("draining") if isinstance(message.body, dict) else None
        if not isinstance(flag, bool):
            message.fail(BAD_REQUEST, "field 'draining' must be a boolean")
            return
        self.set_draining(flag)
        message.reply(self.status())

    def _on_router_left(self, message: Message) -> None:
        node = message.body.get("node") if isinstance(message.body, dict) else None
        if isinstance(node, str):
            self.on_router_left(node)

    def _send_heartbeat(self) -> None:
        if self.connection is None or self.connection.closed is not None:
            return
        try:
            self.connection.send(HEARTBEAT, {"load": self.load(), "draining": self.draining})
        except ConnectionLost:
            pass

    def _heartbeats(self, stop: threading.Event) -> None:
        # The heartbeat doubles as the keep-alive: the bridge closes a connection silent for idle_timeout_ms.
        while not stop.wait(self.heartbeat_ms / 1000.0):
            try:
                self._tick()
            except Exception:  # noqa: BLE001
                self.log.exception("housekeeping failed")
            self._send_heartbeat()


def parse_request_id(body: Dict[str, Any]) -> int:
    value = body.get("request_id")
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("field 'request_id' must be an integer")
    return value


def int_list(body: Dict[str, Any], field: str) -> List[int]:
    value = body.get(field)
    if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
        raise ValueError(f"field '{field}' must be an array of integers")
    return value


def optional_str(body: Dict[str, Any], field: str) -> Optional[str]:
    value = body.get(field)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"field '{field}' must be a string")
    return value
