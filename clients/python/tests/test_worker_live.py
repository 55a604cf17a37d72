"""Python workers in a real cluster: a router-only Tandem JVM with its worker bridge open, served by a
Python prefill and a Python decode worker running the toy model. Skipped when the jar has no worker
bridge yet."""

from __future__ import annotations

import json
import queue
import socket
import threading
import time
import unittest
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

from tandem_client import TandemClient, TandemRequestError
from tandem_worker import (Backoff, DecodeWorker, JoinRefused, PrefillWorker, Refused, Supervisor, ToyModel, Worker,
                           WorkerSettings)
from tandem_worker.bridge import BridgeConnection

from .tandem_server import TandemServer
from .test_worker_decode import PacedToy, long_prompts

TIMEOUT = 20.0
JOIN = "tandem.bridge.worker.join"

server: TandemServer
model: ToyModel
prefill: PrefillWorker
decode: DecodeWorker


def setUpModule() -> None:
    global server, model, prefill, decode
    try:
        server = TandemServer(command=["router"], worker_bridge=True)
    except RuntimeError as e:
        if "--worker-bridge-port" in str(e) and "Unknown option" in str(e):
            raise unittest.SkipTest("this jar has no worker bridge (--worker-bridge-port)") from None
        raise
    model = ToyModel(258, 512)
    try:
        prefill = start(PrefillWorker, "py-pre-1")
        decode = start(DecodeWorker, "py-dec-1", max_batch=8)
    except BaseException:
        server.stop()
        raise


def tearDownModule() -> None:
    for worker in (globals().get("prefill"), globals().get("decode")):
        if worker is not None:
            worker.close()
    server.stop()


def start(cls: Any, worker_id: Optional[str], engine: Optional[ToyModel] = None, **settings: Any) -> Worker:
    assert server.worker_bridge_port is not None
    return cls(engine or model, "127.0.0.1", server.worker_bridge_port, worker_id=worker_id,
               token=server.worker_bridge_token, settings=WorkerSettings(**settings)).start()


def http(method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Tuple[Dict[str, Any], Dict[str, str]]:
    request = urllib.request.Request(f"http://127.0.0.1:{server.http_port}{path}", method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        return json.loads(response.read()), dict(response.headers)


def workers() -> Dict[str, Dict[str, Any]]:
    return {w["worker_id"]: w for w in http("GET", "/admin/workers")[0]["workers"]}


def reference(prompt: List[int], max_tokens: int) -> Tuple[List[int], str]:
    return model.generate(prompt, max_tokens, end_tokens=decode.end_tokens)


class ServingTest(unittest.TestCase):

    def test_the_workers_are_registered_with_role_and_model(self) -> None:
        listed = workers()
        for worker, role in ((prefill, "prefill"), (decode, "decode")):
            entry = listed[worker.worker_id]
            self.assertEqual((role, "tandem-builtin", model.info.fingerprint),
                             (entry["role"], entry["model"], entry["model_fingerprint"]))
            self.assertFalse(entry["draining"])
        self.assertEqual(8, listed["py-dec-1"]["max_batch"])
        self.assertEqual({"name": "tandem-builtin", "vocab_size": 258, "seq_len": 512, "bos": 256, "eos": 257},
                         {k: decode.model.get(k) for k in ("name", "vocab_size", "seq_len", "bos", "eos")})

    def test_an_http_completion_is_served_by_the_python_workers(self) -> None:
        prompt = long_prompts(1, 48)[0] + [72, 105]
        body, headers = http("POST", "/v1/completions", {"prompt": prompt, "max_tokens": 48, "temperature": 0})
        self.assertEqual("py-pre-1", headers.get("X-Tandem-Prefill-Worker"))
        self.assertEqual("py-dec-1", headers.get("X-Tandem-Decode-Worker"))
        tokens, finish = reference(prompt, 48)
        choice = body["choices"][0]
        self.assertEqual(tokens, choice["token_ids"])
        self.assertEqual(finish, choice["finish_reason"])
        self.assertEqual(len(prompt), body["usage"]["prompt_tokens"])
        deadline = time.monotonic() + 2
        while workers()["py-dec-1"]["load"]["decode_steps"] < decode.steps:
            self.assertLess(time.monotonic(), deadline, "the next heartbeats carry the step count")
            time.sleep(0.05)

    def test_the_same_through_tandem_client_streaming(self) -> None:
        with TandemClient("127.0.0.1", server.bridge_port, timeout=TIMEOUT) as client:
            for prompt in ([1, 2, 3, 4], long_prompts(2, 30)[1]):
                with self.subTest(prompt=prompt):
                    generation = client.generate(prompt=prompt, max_tokens=30, temperature=0)
                    chunks = list(generation)
                    self.assertEqual(("py-pre-1", "py-dec-1"), (generation.prefill_worker, generation.decode_worker))
                    self.assertEqual(reference(prompt, 30), (generation.token_ids, generation.finish_reason))
                    self.assertEqual(generation.token_ids, [t for c in chunks for t in c.token_ids])

    def test_sampled_requests_are_deterministic(self) -> None:
        params = {"prompt": [5, 6, 7, 8], "max_tokens": 20, "temperature": 0.7, "seed": 11}
        first = http("POST", "/v1/completions", params)[0]["choices"][0]["token_ids"]
        self.assertEqual(first, http("POST", "/v1/completions", params)[0]["choices"][0]["token_ids"])


    def test_a_prompt_the_prefill_worker_holds_reuses_its_blocks_and_the_routers_know_them(self) -> None:
        assert prefill.prefix is not None
        block = prefill.prefix.block_size
        self.assertEqual(block, workers()["py-pre-1"]["kv_cache"]["block_size"])
        prompt = long_prompts(3, 24)[2] + [(7 * i) % 250 for i in range(5 * block)]
        expected = reference(prompt, 24)
        before = prefix_index_entries()
        first = http("POST", "/v1/completions", {"prompt": prompt, "max_tokens": 24, "temperature": 0})[0]
        self.assertEqual(expected, (first["choices"][0]["token_ids"], first["choices"][0]["finish_reason"]))
        deadline = time.monotonic() + 5
        while prefix_index_entries() < before + len(prompt) // block:
            self.assertLess(time.monotonic(), deadline, "the router's prefix index to learn the prompt's blocks")
            time.sleep(0.05)
        hits = prefill.prefix.hits
        again = http("POST", "/v1/completions", {"prompt": prompt, "max_tokens": 24, "temperature": 0})[0]
        self.assertEqual((len(prompt) - 1) // block, prefill.prefix.hits - hits, "every full block but the last token's")
        self.assertEqual(expected, (again["choices"][0]["token_ids"], again["choices"][0]["finish_reason"]),
                         "reused KV gives the same answer")


def prefix_index_entries() -> float:
    request = urllib.request.Request(f"http://127.0.0.1:{server.http_port}/metrics")
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        for line in response.read().decode().splitlines():
            if line.startswith("tandem_prefix_index_entries"):
                return float(line.rsplit(" ", 1)[1])
    raise AssertionError("no tandem_prefix_index_entries in /metrics")


class LeavingTest(unittest.TestCase):

    def test_a_closed_worker_leaves_the_registry_at_once(self) -> None:
        extra = start(PrefillWorker, "py-pre-leaving")
        self.assertIn("py-pre-leaving", workers())
        extra.close()
        closed = time.monotonic()
        while "py-pre-leaving" in workers():
            self.assertLess(time.monotonic() - closed, 1.0, "gone within a second of the close")
            time.sleep(0.05)

    def test_a_decode_worker_lost_mid_request_fails_over_or_errors_without_a_hang(self) -> None:
        slow = start(DecodeWorker, "py-dec-slow", engine=PacedToy(258, 512))
        decode.set_draining(True)  # the slow worker gets the request
        try:
            time.sleep(0.6)  # the drain reaches the registry with the next heartbeat
            prompt = long_prompts(1, 300)[0]
            with TandemClient("127.0.0.1", server.bridge_port, timeout=TIMEOUT) as client:
                generation = client.generate(prompt=prompt, max_tokens=300, temperature=0)
                self.assertEqual("py-dec-slow", generation.decode_worker)
                next(generation)
                decode.set_draining(False)  # somewhere to fail over to
                slow.close()
                lost = time.monotonic()
                try:
                    generation.wait()
                    outcome = "completed"
                except TandemRequestError as e:
                    outcome = f"failed {e.status}"
                self.assertLess(time.monotonic() - lost, TIMEOUT / 2, "settled, not timed out")
                if outcome == "completed":
                    self.assertEqual(reference(prompt, 300), (generation.token_ids, generation.finish_reason))
                print(f"\n  a request whose decode worker left: {outcome} after {time.monotonic() - lost:.2f} s",
                      end=" ")
        finally:
            decode.set_draining(False)
            slow.close()


class ReconnectTest(unittest.TestCase):

    def test_a_worker_whose_connection_drops_rejoins_and_serves_the_next_request(self) -> None:
        assert server.worker_bridge_port is not None
        worker = DecodeWorker(model, "127.0.0.1", server.worker_bridge_port, worker_id="py-dec-re",
                              token=server.worker_bridge_token, settings=WorkerSettings(join_timeout_s=3.0))
        supervisor = Supervisor(worker, [("127.0.0.1", server.worker_bridge_port)], reconnect_timeout=TIMEOUT,
                                backoff=Backoff(0.05, 0.5))
        errors: List[BaseException] = []
        thread = threading.Thread(target=lambda: _run(supervisor, errors), daemon=True)
        thread.start()
        try:
            wait_for(lambda: supervisor.joins == 1 or bool(errors), "joined")  # start() returned, not just listed
            first = worker.connection
            assert first is not None
            first._sock.shutdown(socket.SHUT_RDWR)  # an abrupt drop, from the worker's side: nothing is killed
            wait_for(lambda: supervisor.rejoins == 1 or bool(errors), "rejoined", timeout=TIMEOUT)
            self.assertEqual([], errors)
            self.assertIsNot(first, worker.connection)
            wait_for(lambda: "py-dec-re" in workers(), "registered again")
            decode.set_draining(True)  # so the request goes to the worker that rejoined
            wait_for(lambda: workers()["py-dec-1"]["draining"], "the drain reached the registry")
            prompt = [3, 1, 4, 1, 5]
            body, headers = http("POST", "/v1/completions", {"prompt": prompt, "max_tokens": 24, "temperature": 0})
            self.assertEqual("py-dec-re", headers.get("X-Tandem-Decode-Worker"))
            self.assertEqual(reference(prompt, 24), (body["choices"][0]["token_ids"], body["choices"][0]["finish_reason"]))
        finally:
            decode.set_draining(False)
            supervisor.stop()
            thread.join(5)
            worker.close()


def _run(supervisor: Supervisor, errors: List[BaseException]) -> None:
    try:
        supervisor.run()
    except BaseException as e:  # noqa: BLE001 — the test reports it
        errors.append(e)


def wait_for(condition: Any, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not {what} within {timeout} s")
        time.sleep(0.05)


class IdleTest(unittest.TestCase):

    def test_a_silent_worker_is_closed_and_withdrawn(self) -> None:
        assert server.worker_bridge_port is not None
        errors: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        connection = BridgeConnection("127.0.0.1", server.worker_bridge_port, lambda m: None, errors.put)
        try:
            welcome = connection.request(JOIN, {"role": "decode", "model": "tandem-builtin", "max_batch": 1,
                                                "model_fingerprint": model.info.fingerprint,
                                                "worker_id": "py-silent", "token": server.worker_bridge_token},
                                         timeout=5).result()
            self.assertIn("py-silent", workers())
            idle_s = welcome["idle_timeout_ms"] / 1000
            self.assertTrue(connection.closed_event.wait(idle_s + 3), "closed after idle_timeout_ms of silence")
            self.assertEqual("idle_timeout", errors.get(timeout=1)["message"])
            self.assertIn("idle_timeout", str(connection.closed))
            closed = time.monotonic()
            while "py-silent" in workers():
                self.assertLess(time.monotonic() - closed, 1.0, "withdrawn within a second of the close")
                time.sleep(0.05)
        finally:
            connection.close()


class RefusalTest(unittest.TestCase):

    def join_raw(self, body: Dict[str, Any]) -> Refused:
        assert server.worker_bridge_port is not None
        connection = BridgeConnection("127.0.0.1", server.worker_bridge_port, lambda m: None)
        try:
            started = time.monotonic()
            with self.assertRaises(Refused) as raised:
                connection.request(JOIN, body, timeout=5).result()
            self.assertLess(time.monotonic() - started, 2, "refused at once")
            return raised.exception
        finally:
            connection.close()

    def test_bad_joins_are_refused_not_hung(self) -> None:
        good = {"role": "decode", "model": "tandem-builtin", "model_fingerprint": model.info.fingerprint,
                "max_batch": 4, "token": server.worker_bridge_token}
        cases = {"invalid_join": [{k: v for k, v in good.items() if k != "role"}, dict(good, role="router"),
                                  dict(good, worker_id="bad id!"), dict(good, worker_id="x" * 65),
                                  dict(good, max_batch=0), {k: v for k, v in good.items() if k != "model_fingerprint"}],
                 "model_mismatch": [dict(good, model="gpt-9")],
                 "worker_id_in_use": [dict(good, worker_id="py-dec-1")],
                 "unauthorized": [{k: v for k, v in good.items() if k != "token"}, dict(good, token="nope")]}
        for code, bodies in cases.items():
            for body in bodies:
                with self.subTest(code=code, body=body):
                    refused = self.join_raw(body)
                    self.assertEqual(code, refused.code, refused)
        with self.assertRaises(JoinRefused) as raised:
            DecodeWorker(ToyModel(name="other-model"), "127.0.0.1", server.worker_bridge_port,
                         token=server.worker_bridge_token).start()
        self.assertEqual("model_mismatch", raised.exception.code)

    def test_sends_before_the_join_and_to_forbidden_addresses_are_refused(self) -> None:
        assert server.worker_bridge_port is not None
        errors: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        connection = BridgeConnection("127.0.0.1", server.worker_bridge_port, lambda m: None, errors.put)
        try:
            with self.assertRaises(Refused) as raised:
                connection.request("tandem.bridge.worker.heartbeat", {}, timeout=5).result()
            self.assertEqual("not_joined", raised.exception.code)
            connection.request(JOIN, {"role": "decode", "model": "tandem-builtin", "max_batch": 1,
                                      "model_fingerprint": model.info.fingerprint,
                                      "token": server.worker_bridge_token}, timeout=5).result()
            with self.assertRaises(Refused) as raised:
                connection.request(JOIN, {"role": "decode"}, timeout=5).result()
            self.assertEqual("already_joined", raised.exception.code)
            for address in ("tandem.generate", "tandem.prefill.py-pre-1", "tandem.worker.py-dec-1.drain",
                            "tandem.router.x.tokens.more"):
                with self.subTest(address=address):
                    with self.assertRaises(Refused) as raised:
                        connection.request(address, {}, timeout=5).result()
                    self.assertEqual("access_denied", raised.exception.code)
            connection.send("tandem.router.r.tokens", {"worker": "py-dec-1", "events": []})
            self.assertEqual("access_denied", errors.get(timeout=5)["message"], "tokens in another worker's name")
        finally:
            connection.close()


if __name__ == "__main__":
    unittest.main()
