"""The decode role, as Java's DecodeWorkerVerticle: receive KV from prefill workers, join requests to a
continuous batch, and stream each step's tokens to the routers that own them — one TOKEN_BATCH per
router per step. One stepping thread runs the engine; the reader thread only moves state."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, List, Optional

from .base import BAD_REQUEST, KV_MISSING, KV_TRANSFER_FAILED, Worker, int_list, optional_str, parse_request_id
from .batch import DecodeBatch, DecodeSequence, Outcome
from .bridge import ConnectionLost, Message
from .engine import DecodeInput, Sampling, StopCondition
from .kv_inbox import KvInbox


class DecodeWorker(Worker):
    """Serves ``tandem.decode.<id>.kv`` (KV chunks), ``.start`` (DECODE_REQUEST) and ``.cancel``.
    ``settings.max_batch`` sequences advance per step; up to ``max_waiting_sequences`` more wait, and
    KV beyond ``kv_capacity_bytes`` is refused with 503."""

    role = "decode"

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        s = self.settings
        self.inbox = KvInbox(self.engine, s.max_kv_transfer_bytes, s.kv_park_timeout_ms / 1000.0)
        self.batch = DecodeBatch(s.max_batch, self.engine.free, self.engine.cache_bytes)
        self.steps = 0
        self._wake = threading.Condition(self.lock)
        self._stepper: Optional[threading.Thread] = None
        self._stopped = False

    def _role_handlers(self) -> Dict[str, Callable[[Message], None]]:
        prefix = f"tandem.decode.{self.worker_id}"
        return {prefix + ".kv": self._on_kv_chunk, prefix + ".start": self._on_decode_request,
                prefix + ".cancel": self._on_cancel}

    def _on_start(self) -> None:
        self._stepper = threading.Thread(target=self._step_loop, name=f"tandem-decode-{self.worker_id}", daemon=True)
        self._stepper.start()

    def _on_stop(self) -> None:
        # The cluster failed over whatever this worker held for the lost connection: free it all (a step
        # that is computing drops its sequences when it completes).
        with self.lock:
            self._stopped = True
            self.batch.clear()
            self.inbox.clear()
            self._wake.notify_all()

    def _before_rejoin(self) -> None:
        # One stepper at a time: the old one ends after its running step (its sequences are cancelled).
        if self._stepper is not None:
            self._stepper.join(self.settings.rejoin_quiesce_s)
            if self._stepper.is_alive():
                raise RuntimeError(f"the decode step of the lost connection still runs after "
                                   f"{self.settings.rejoin_quiesce_s:g} s")
        with self.lock:
            self.batch.clear()
            self.inbox.clear()
            self._stopped = False

    # ---- reports ----

    def load(self) -> Dict[str, Any]:
        with self.lock:
            return {"queued_prefill_tokens": 0, "active_sequences": self.batch.count(),
                    "kv_bytes_used": self.batch.kv_bytes() + self.inbox.parked_bytes(),
                    "kv_bytes_capacity": self.settings.kv_capacity_bytes, "decode_steps": self.steps,
                    "prefilling": 0, "parked_kv": len(self.inbox.parked), "incoming_kv": len(self.inbox.incoming)}

    def idle(self) -> bool:
        with self.lock:
            return self.batch.count() + len(self.inbox.parked) + len(self.inbox.incoming) == 0

    def _tick(self) -> None:
        with self.lock:
            expired = self.inbox.expire(time.monotonic())
        if expired:
            self.log.info("freed the KV of %d requests whose DECODE_REQUEST never came", expired)

    def on_router_left(self, node: str) -> None:
        # That router will never read its tokens: drop its sequences and their KV.
        with self.lock:
            orphans = self.batch.requests_of(node)
            for request_id in orphans:
                self.batch.cancel(request_id)
        if orphans:
            self.log.info("dropped %d sequences of a router on departed member %s", len(orphans), node)

    def _no_room(self) -> Optional[str]:
        """Why this worker cannot take one more request's KV, or None (called under the lock)."""
        s = self.settings
        sequences = self.batch.count() + len(self.inbox.parked) + len(self.inbox.incoming)
        limit = s.max_batch + s.max_waiting_sequences
        if self.batch.kv_bytes() + self.inbox.parked_bytes() >= s.kv_capacity_bytes:
            return "decode worker is full (kv_capacity_bytes reached)"
        if sequences > limit:
            return f"decode worker is full ({limit} sequences: max_batch + max_waiting_sequences)"
        return None

    # ---- messages ----

    def _on_kv_chunk(self, message: Message) -> None:
        try:
            request_id, index, last, payload = KvInbox.parse(message)
        except ValueError as e:
            message.fail(BAD_REQUEST, str(e))
            return
        with self.lock:
            t = self.inbox.begin(request_id, index, self.batch.contains(request_id), self._no_room)
        if t is None:
            if last:
                message.fail(KV_TRANSFER_FAILED, f"unexpected KV chunk {index} for request {request_id}")
            return
        KvInbox.assemble(t, index, payload)  # this reader thread is the only one feeding transfers
        if not last:
            return
        with self.lock:
            ack, (code, why) = self.inbox.finish(request_id, t)
        if ack is None:
            self.log.info("refused the KV of request %d (%d): %s", request_id, code, why)
            message.fail(code, why)
        else:
            message.reply(ack)

    def _on_decode_request(self, message: Message) -> None:
        body = message.body
        try:
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
            request_id = parse_request_id(body)
            first, max_new = body.get("first_token"), body.get("max_new_tokens")
            if not isinstance(first, int) or not isinstance(max_new, int):
                raise ValueError("fields 'first_token' and 'max_new_tokens' must be integers")
            sampling = Sampling.from_json(body.get("sampling"))
            stop_tokens = int_list(body, "stop_tokens")
            router = body.get("router")
            if not isinstance(router, str) or not router:
                raise ValueError("field 'router' must be a router id")
            router_node = optional_str(body, "router_node")
        except ValueError as e:
            message.fail(BAD_REQUEST, str(e))
            return
        info = self.engine.info
        with self.lock:
            if self.batch.contains(request_id):
                message.fail(BAD_REQUEST, f"request {request_id} is already decoding")
                return
            cache = self.inbox.claim(request_id)
            if cache is None:
                message.fail(KV_MISSING, f"no KV for request {request_id} (never arrived, or freed after "
                                         f"{self.settings.kv_park_timeout_ms} ms)")
                return
            length = self.engine.cache_tokens(cache)
            if max_new < 2 or length + 1 >= info.seq_len or not 0 <= first < info.vocab_size:
                self.engine.free(cache)
                message.fail(BAD_REQUEST, f"nothing to decode for request {request_id}")
                return
            stop = StopCondition(self.end_tokens, stop_tokens, max_new, length, info.seq_len)
            self.batch.join(DecodeSequence(request_id, router, router_node, cache, sampling, stop, first))
            self._wake.notify_all()
        message.reply({"request_id": request_id, "joined": True})
        self.log.info("decode %d joined: %d prompt tokens, up to %d new, router %s", request_id, length, max_new,
                      router)

    def _on_cancel(self, message: Message) -> None:
        request_id = self._cancelled_id(message)
        if request_id is None:
            return
        with self.lock:
            self.inbox.drop(request_id)
            self.batch.cancel(request_id)
        # A router that moves a request may wait for this before it dispatches again, maybe to this worker.
        message.reply({"request_id": request_id, "cancelled": True})

    # ---- the stepping loop (its own thread) ----

    def _step_loop(self) -> None:
        while True:
            with self.lock:
                while not self._stopped and self.batch.count() == 0:
                    self._wake.wait()
                if self._stopped:
                    return
                step = self.batch.begin()
            if step is None:
                continue
            try:
                tokens = self.engine.decode_step([DecodeInput(s.cache, s.last_token, s.sampling) for s in step])
            except Exception as e:  # noqa: BLE001
                self.log.exception("decode step failed on %s", self.worker_id)
                with self.lock:
                    failed = self.batch.abort(step)
                self._publish([Outcome(s, s.generated, [], None) for s in failed], f"decode step failed: {e}")
                continue
            with self.lock:
                try:
                    outcomes = self.batch.complete(step, tokens)
                except RuntimeError as e:  # the engine broke its contract: fail the step's sequences
                    self._publish([Outcome(s, s.generated, [], None) for s in self.batch.abort(step)], str(e))
                    continue
                self.steps += 1
            self._publish(outcomes)

    def _publish(self, outcomes: List[Outcome], error: Optional[str] = None) -> None:
        by_router: Dict[str, List[Dict[str, Any]]] = {}
        for o in outcomes:
            event: Dict[str, Any] = {"request_id": o.sequence.request_id, "seq": o.seq, "tokens": o.tokens}
            if o.finish_reason is not None:
                event["finish_reason"] = o.finish_reason
            if error is not None:
                event["error"] = error
            by_router.setdefault(o.sequence.router, []).append(event)
        for router, events in by_router.items():
            try:
                assert self.connection is not None
                self.connection.send(f"tandem.router.{router}.tokens", {"worker": self.worker_id, "events": events})
            except ConnectionLost:
                return
