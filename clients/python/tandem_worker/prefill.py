"""The prefill role, as Java's PrefillWorkerVerticle: compute a prompt's KV and first token on a compute
thread, ship the KV to the chosen decode worker in chunks, answer PREFILL_DONE once it acknowledged."""

from __future__ import annotations

import base64
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Optional

from . import kv_codec
from .base import (BAD_REQUEST, BUSY, CANCELLED, FAILURE_CODES, INTERNAL, KV_TOO_LARGE, KV_TRANSFER_FAILED, Worker,
                   int_list, optional_str, parse_request_id)
from .bridge import BridgeConnection, ConnectionLost, Message, ReplyFailed
from .engine import PrefillCancelled, Sampling
from .prefix_cache import PrefixCache

KV_EVENTS = "tandem.bridge.worker.kv-events"


class _Job:
    """A prompt accepted by this worker; ``cancelled`` is read by the compute thread between positions."""

    def __init__(self, request_id: int, tokens: List[int], decode_worker: str, sampling: Sampling,
                 router_node: Optional[str], message: Message):
        # The job belongs to the connection it came on: its KV and answer never go out on a later one.
        self.connection: BridgeConnection = message.connection
        self.request_id = request_id
        self.tokens = tokens
        self.decode_worker = decode_worker
        self.sampling = sampling
        self.router_node = router_node
        self.message = message
        self.cancelled = False


class PrefillWorker(Worker):
    """Serves ``tandem.prefill.<id>`` (PREFILL_REQUEST) and ``tandem.prefill.<id>.cancel``. Up to
    ``settings.max_batch`` prompts compute at once; prompts wait while fewer than
    ``max_queued_prefill_tokens`` tokens are queued, beyond that the answer is 429 busy."""

    role = "prefill"

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._jobs: Dict[int, _Job] = {}
        self._compute: Optional[ThreadPoolExecutor] = None
        self._running = 0  # compute threads inside _run, waited for before a rejoin
        self._idle = threading.Condition(self.lock)
        self.prefills_done = 0
        layout = self.engine.info.layout
        #: the KV of prompts' full blocks, reused by later prompts; told to the routers as cache events.
        self.prefix: Optional[PrefixCache] = (
            PrefixCache(layout.block_size, self.settings.prefix_cache_blocks)
            if self.settings.prefix_cache_blocks > 0 and self.engine.supports_prefill_from() else None)

    def _join_extras(self) -> Dict[str, Any]:
        return {} if self.prefix is None else {"kv_cache": {"block_size": self.prefix.block_size}}

    def _role_handlers(self) -> Dict[str, Callable[[Message], None]]:
        return {f"tandem.prefill.{self.worker_id}": self._on_prefill,
                f"tandem.prefill.{self.worker_id}.cancel": self._on_cancel}

    def _on_start(self) -> None:
        self._compute = ThreadPoolExecutor(max_workers=max(1, self.settings.max_batch),
                                           thread_name_prefix=f"tandem-prefill-{self.worker_id}")

    def _on_stop(self) -> None:
        with self.lock:
            for job in self._jobs.values():
                job.cancelled = True  # nobody can take the answer any more
            # Forgotten at once (status says 0): the cluster already moved them to other workers.
            self._jobs.clear()
        if self.prefix is not None:
            # The bridge forgot this worker's blocks with its connection: a rejoin starts empty on both sides.
            self.prefix.clear()
        if self._compute is not None:
            self._compute.shutdown(wait=False)

    def _before_rejoin(self) -> None:
        # Cancelled jobs stop between positions; waiting keeps the engine's concurrency at max_batch.
        deadline = time.monotonic() + self.settings.rejoin_quiesce_s
        with self._idle:
            while self._running and time.monotonic() < deadline:
                self._idle.wait(max(0.0, deadline - time.monotonic()))
            if self._running:
                self.log.warning("%d prefills of the lost connection are still computing", self._running)

    # ---- reports ----

    def _queued_tokens(self) -> int:
        return sum(len(job.tokens) for job in self._jobs.values())

    def load(self) -> Dict[str, Any]:
        with self.lock:
            queued = self._queued_tokens()
            prefilling = len(self._jobs)
        return {"queued_prefill_tokens": queued, "active_sequences": 0, "kv_bytes_used": 0,
                "kv_bytes_capacity": 0, "decode_steps": 0, "prefilling": prefilling, "parked_kv": 0, "incoming_kv": 0}

    def on_router_left(self, node: str) -> None:
        # A router on a member that left will never take the KV: stop computing it.
        with self.lock:
            for job in self._jobs.values():
                if job.router_node == node:
                    job.cancelled = True

    # ---- requests ----

    def _on_prefill(self, message: Message) -> None:
        body = message.body
        try:
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
            request_id = parse_request_id(body)
            tokens = int_list(body, "prompt_tokens")
            decode_worker = body.get("decode_worker")
            if not isinstance(decode_worker, str) or not decode_worker:
                raise ValueError("field 'decode_worker' must be a worker id")
            sampling = Sampling.from_json(body.get("sampling"))
            router_node = optional_str(body, "router_node")
        except ValueError as e:
            message.fail(BAD_REQUEST, str(e))
            return
        invalid = self._validate(tokens)
        if invalid is not None:
            message.fail(BAD_REQUEST, invalid)
            return
        kv_bytes = kv_codec.encoded_size(self.engine.info.layout, len(tokens))
        if kv_bytes > self.settings.max_kv_transfer_bytes:
            message.fail(KV_TOO_LARGE, f"the prompt's KV cache is {kv_bytes} bytes, over the limit of "
                                       f"{self.settings.max_kv_transfer_bytes} bytes (max_kv_transfer_bytes)")
            return
        with self.lock:
            if request_id in self._jobs:
                message.fail(BAD_REQUEST, f"request {request_id} is already prefilling")
                return
            queued = self._queued_tokens()
            if queued > 0 and queued + len(tokens) > self.settings.max_queued_prefill_tokens:
                # A bounded queue keeps the wait of what was accepted bounded; the router tries another worker.
                message.fail(BUSY, f"prefill queue is full ({queued} tokens queued, limit "
                                   f"{self.settings.max_queued_prefill_tokens})")
                return
            job = _Job(request_id, tokens, decode_worker, sampling, router_node, message)
            self._jobs[request_id] = job
        self.log.debug("prefill %d: %d tokens for decode worker %s", request_id, len(tokens), decode_worker)
        assert self._compute is not None
        try:
            self._compute.submit(self._run, job)
        except RuntimeError:  # the executor shut down: the connection is gone
            self._finish(job)

    def _validate(self, tokens: List[int]) -> Optional[str]:
        info = self.engine.info
        if not tokens or len(tokens) >= info.seq_len:
            return f"prompt has {len(tokens)} tokens; it must have 1 to {info.seq_len - 1}"
        for t in tokens:
            if not 0 <= t < info.vocab_size:
                return f"token id {t} is outside the vocabulary [0, {info.vocab_size})"
        return None

    def _on_cancel(self, message: Message) -> None:
        request_id = self._cancelled_id(message)
        if request_id is None:
            return
        with self.lock:
            job = self._jobs.get(request_id)
            if job is not None:
                job.cancelled = True

    # ---- compute and ship (a compute thread) ----

    def _run(self, job: _Job) -> None:
        with self.lock:
            self._running += 1
        try:
            self._compute_and_ship(job)
        finally:
            with self._idle:
                self._running -= 1
                self._idle.notify_all()

    def _compute_and_ship(self, job: _Job) -> None:
        try:
            if job.cancelled:
                raise PrefillCancelled()
            start = time.perf_counter()
            reused = self.prefix.longest(job.tokens) if self.prefix is not None else []
            if reused:
                # The cached blocks are only read: new positions go to blocks appended after them.
                cache = self.engine.import_kv(len(reused) * self.prefix.block_size, list(reused))
                cache, first = self.engine.prefill_from(cache, job.tokens, job.sampling, lambda: job.cancelled)
            else:
                cache, first = self.engine.prefill(job.tokens, job.sampling, lambda: job.cancelled)
            try:
                tokens, blocks = self.engine.export_kv(cache)
                info = self.engine.info
                chunks = kv_codec.encode(info.layout, info.fingerprint, tokens, blocks, self.settings.kv_chunk_bytes)
                kept = blocks
            finally:
                self.engine.free(cache)
            micros = int((time.perf_counter() - start) * 1e6)
            if job.cancelled:
                raise PrefillCancelled()
            self._ship(job, chunks, first, micros)
            if self.prefix is not None:
                self._remember(job, kept)
        except PrefillCancelled:
            self._finish(job)
        except ConnectionLost:
            self._finish(job)
        except ValueError as e:
            self._finish(job, BAD_REQUEST, str(e))
        except Exception as e:  # noqa: BLE001
            self.log.exception("prefill of request %d failed", job.request_id)
            self._finish(job, INTERNAL, f"prefill failed: {e}")

    def _remember(self, job: _Job, blocks: List[Any]) -> None:
        """Keeps the prompt's full blocks and tells the cluster what changed: the prompt's blocks (the
        bridge hashes them and answers with the hashes) and those evicted for them."""
        assert self.prefix is not None
        size = self.prefix.block_size
        full = len(job.tokens) // size
        added, evicted = self.prefix.add(job.tokens, blocks[:full])
        events: List[Dict[str, Any]] = []
        if added:
            events.append({"type": "stored",
                           "blocks": [job.tokens[b * size:(b + 1) * size] for b in range(full)]})
        if evicted:
            events.append({"type": "removed", "block_hashes": evicted})
        if not events:
            return
        tokens = job.tokens

        def answered(future: "Future[Any]") -> None:
            reply = None if future.exception() is not None else future.result()
            if not isinstance(reply, dict) or not isinstance(reply.get("stored"), list):
                self.log.warning("cache events refused: %s", future.exception() or reply)
                return
            gone = self.prefix.named(tokens, reply["stored"]) if added and self.prefix is not None else []
            if gone:
                self._send_events(job, [{"type": "removed", "block_hashes": gone}], None)

        self._send_events(job, events, answered)

    def _send_events(self, job: _Job, events: List[Dict[str, Any]],
                     callback: Optional[Callable[["Future[Any]"], None]]) -> None:
        try:
            job.connection.request(KV_EVENTS, {"events": events}, timeout=10.0,
                                   callback=callback or (lambda f: None))
        except ConnectionLost:
            pass

    def _ship(self, job: _Job, chunks: List[bytes], first: int, micros: int) -> None:
        """Sends the chunks in order; the last one is a request whose reply is the decode worker's ack."""
        address = f"tandem.decode.{job.decode_worker}.kv"
        total = sum(len(c) for c in chunks)
        for index, chunk in enumerate(chunks):
            headers = {"tandem-request-id": str(job.request_id), "tandem-chunk": str(index),
                       "tandem-last": "true" if index == len(chunks) - 1 else "false"}
            body = base64.b64encode(chunk).decode("ascii")
            if index < len(chunks) - 1:
                job.connection.send(address, body, headers)
            else:
                job.connection.request(address, body, headers, timeout=self.settings.kv_park_timeout_ms / 1000.0,
                                        callback=lambda f: self._on_ack(job, f, total, first, micros))

    def _on_ack(self, job: _Job, future: "Future[Any]", total: int, first: int, micros: int) -> None:
        error = future.exception()
        if error is None:
            ack = future.result()
            acked = ack.get("bytes") if isinstance(ack, dict) else None
            if job.cancelled:
                # Cancelled while the KV travelled: the router's cancel may have overtaken the chunks, so
                # this worker — their sender, hence ordered after them — frees them on the decode worker.
                self._send_quietly(job, f"tandem.decode.{job.decode_worker}.cancel",
                                   {"request_id": job.request_id, "reason": "cancelled"})
                self._finish(job)
            elif acked != total:
                self._finish(job, INTERNAL, f"decode worker acknowledged {acked} of {total} bytes")
            else:
                self._finish(job, done={"request_id": job.request_id, "first_token": first,
                                        "prompt_tokens": len(job.tokens), "kv_bytes": total, "prefill_us": micros})
        elif not job.cancelled:
            # The decode worker refused or never answered the KV: pass its reason on to the router.
            code = KV_TRANSFER_FAILED
            if isinstance(error, ReplyFailed) and error.failure_type == "RECIPIENT_FAILURE":
                code = error.failure_code if error.failure_code in FAILURE_CODES else INTERNAL
            self._finish(job, code, f"KV transfer to {job.decode_worker} failed: {error}")
        else:
            self._finish(job)

    def _finish(self, job: _Job, code: int = CANCELLED, text: str = "",
                done: Optional[Dict[str, Any]] = None) -> None:
        """Removes the job and answers it: PREFILL_DONE, or the failure (499 cancelled by default)."""
        with self.lock:
            if self._jobs.get(job.request_id) is job:  # not a namesake that came on a later connection
                del self._jobs[job.request_id]
        try:
            if done is not None:
                self.prefills_done += 1
                job.message.reply(done)
                self.log.info("prefill %d done: %d tokens, first token %d, %d KV bytes to %s", job.request_id,
                              done["prompt_tokens"], done["first_token"], done["kv_bytes"], job.decode_worker)
            elif code == CANCELLED:
                job.message.fail(CANCELLED, f"request {job.request_id} was cancelled")
            else:
                self.log.info("prefill %d failed (%d): %s", job.request_id, code, text)
                job.message.fail(code, text)
        except ConnectionLost:
            pass

    def _send_quietly(self, job: _Job, address: str, body: Dict[str, Any]) -> None:
        try:
            job.connection.send(address, body)
        except ConnectionLost:
            pass
