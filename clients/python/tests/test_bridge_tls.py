"""The Python client and the Python worker over TLS: two router-only Tandem JVMs,
one whose TCP event-bus bridge and worker bridge speak TLS with the test PKI's server certificate, one
that also requires client certificates of the test CA on both (bridge.tls-client-ca,
worker-bridge.tls-client-ca). Each is served by a Python prefill and decode worker (the toy model) that
joined over its TLS worker bridge, so a generation goes client -TLS- router -TLS- workers. Every failure
case is bounded: a refused handshake or a closed connection, never a wait for a timeout."""

from __future__ import annotations

import socket
import ssl
import time
import unittest
from typing import Dict, List, Optional

from tandem_client import TandemClient, TandemConnectionError
from tandem_client.tls import TlsSocket
from tandem_worker import ConnectionLost, DecodeWorker, PrefillWorker, ToyModel, Worker
from tandem_worker.__main__ import parse_args, ssl_context_of

from .tandem_server import TLS_DIR, TandemServer

TIMEOUT = 20.0
#: A failure must show well before TIMEOUT: it is the handshake or the server closing, not a wait.
FAILS_WITHIN_S = 10.0
CA = str(TLS_DIR / "ca.pem")
CLIENT_CERT, CLIENT_KEY = str(TLS_DIR / "client.pem"), str(TLS_DIR / "client-key.pem")
# A certificate for client authentication from another CA (the cluster tests' rogue node).
ROGUE_CERT, ROGUE_KEY = str(TLS_DIR / "rogue-node.pem"), str(TLS_DIR / "rogue-node-key.pem")
PROMPT = "Once upon a time"

tls: TandemServer   # TLS on both bridges
mtls: TandemServer  # TLS with client certificates required on both bridges
workers: List[Worker] = []


def trusting_ca(cert: Optional[str] = None, key: Optional[str] = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=CA)
    if cert is not None:
        context.load_cert_chain(cert, key)
    return context


def server_env(client_ca: bool) -> Dict[str, str]:
    env = {}
    for section in ("BRIDGE", "WORKER_BRIDGE"):
        env[f"TANDEM_{section}_TLS_CERT"] = str(TLS_DIR / "server.pem")
        env[f"TANDEM_{section}_TLS_KEY"] = str(TLS_DIR / "server-key.pem")
        if client_ca:
            env[f"TANDEM_{section}_TLS_CLIENT_CA"] = CA
    return env


def setUpModule() -> None:
    global tls, mtls
    # One after the other: two JVMs starting at once on a small machine take longer than in turn.
    try:
        tls = TandemServer(server_env(client_ca=False), command=["router"], worker_bridge=True)
        mtls = TandemServer(server_env(client_ca=True), command=["router"], worker_bridge=True)
        model = ToyModel(258, 512)
        for server, name, context in ((tls, "tls", trusting_ca()),
                                      (mtls, "mtls", trusting_ca(CLIENT_CERT, CLIENT_KEY))):
            assert server.worker_bridge_port is not None
            for cls, role in ((PrefillWorker, "pre"), (DecodeWorker, "dec")):
                workers.append(cls(model, "127.0.0.1", server.worker_bridge_port, worker_id=f"py-{name}-{role}",
                                   token=server.worker_bridge_token, ssl_context=context).start())
    except BaseException:
        tearDownModule()
        raise


def tearDownModule() -> None:
    for worker in workers:
        worker.close()
    workers.clear()
    for server in (globals().get("tls"), globals().get("mtls")):
        if server is not None:
            server.stop()


def generate_over(client: TandemClient, name: str) -> None:
    """A generation read whole and one streamed chunk by chunk, served by the Python workers that joined
    over TLS; asserts both completed alike."""
    whole = client.generate(prompt=PROMPT, max_tokens=8, temperature=0, seed=1).wait()
    assert (whole.prefill_worker, whole.decode_worker) == (f"py-{name}-pre", f"py-{name}-dec"), \
        (whole.prefill_worker, whole.decode_worker)
    assert whole.finish_reason == "length", whole.finish_reason
    assert len(whole.token_ids) == 8 and whole.text, (whole.token_ids, whole.text)
    streamed = client.generate(prompt=PROMPT, max_tokens=8, temperature=0, seed=1)
    chunks = list(streamed)
    assert chunks, "no chunk"
    assert [t for c in chunks for t in c.token_ids] == whole.token_ids, "greedy: the stream is the same text"
    assert "".join(c.text for c in chunks) == whole.text
    assert streamed.finish_reason == "length"


class BridgeTlsTest(unittest.TestCase):
    """bridge.tls-cert without client certificates."""

    def test_the_node_says_both_bridges_speak_tls(self) -> None:
        self.assertTrue(tls.bridge_tls, tls.log())
        self.assertTrue(tls.worker_bridge_tls, tls.log())

    def test_generate_and_stream_over_tls_trusting_the_test_ca(self) -> None:
        with TandemClient("127.0.0.1", tls.bridge_port, timeout=TIMEOUT, ssl_context=trusting_ca()) as client:
            self.assertIsInstance(client._sock, TlsSocket)
            self.assertIn(client._sock.version(), ("TLSv1.2", "TLSv1.3"))
            generate_over(client, "tls")
            self.assertGreaterEqual(client.ping(), 0)

    def test_the_certificate_names_localhost_too(self) -> None:
        with TandemClient("localhost", tls.bridge_port, timeout=TIMEOUT, ssl_context=trusting_ca()) as client:
            self.assertEqual("length", client.generate(prompt=PROMPT, max_tokens=2).wait().finish_reason)

    def test_a_client_that_does_not_trust_the_ca_is_refused_by_its_own_check(self) -> None:
        started = time.monotonic()
        with self.assertRaises(TandemConnectionError) as raised:
            TandemClient("127.0.0.1", tls.bridge_port, timeout=TIMEOUT, ssl_context=ssl.create_default_context())
        self.assertIn("CERTIFICATE_VERIFY_FAILED", str(raised.exception))
        self.assertLess(time.monotonic() - started, FAILS_WITHIN_S)

    def test_a_name_the_certificate_does_not_have_is_refused(self) -> None:
        with self.assertRaises(TandemConnectionError) as raised:
            TandemClient("127.0.0.1", tls.bridge_port, timeout=TIMEOUT, ssl_context=trusting_ca(),
                         server_hostname="tandem.example")
        self.assertIn("CERTIFICATE_VERIFY_FAILED", str(raised.exception))

    def test_a_plain_tcp_client_gets_no_answer_but_a_closed_connection(self) -> None:
        started = time.monotonic()
        with self.assertRaises(TandemConnectionError):
            # Connecting works (TCP); the clear-text register frame is no TLS record, so the bridge hangs up.
            with TandemClient("127.0.0.1", tls.bridge_port, timeout=TIMEOUT) as client:
                client.generate(prompt=PROMPT, max_tokens=2).wait()
        self.assertLess(time.monotonic() - started, FAILS_WITHIN_S)

    def test_raw_clear_text_bytes_are_never_answered_with_a_frame(self) -> None:
        with socket.create_connection(("127.0.0.1", tls.bridge_port), timeout=FAILS_WITHIN_S) as sock:
            sock.sendall(b'\x00\x00\x00\x0f{"type":"ping"}')
            received = b""
            try:
                while True:
                    data = sock.recv(4096)
                    if not data:
                        break
                    received += data
            except ConnectionResetError:
                pass
        # A TLS server may answer a bad ClientHello with an alert record (0x15), never a frame (a pong).
        self.assertNotIn(b"pong", received)
        self.assertTrue(received == b"" or received[:1] == b"\x15", received[:32])

    def test_the_python_workers_joined_over_tls(self) -> None:
        for worker in workers:
            self.assertIsInstance(worker.connection._sock, TlsSocket)
            self.assertIsNone(worker.closed_reason)

    def test_the_worker_cli_options_make_the_context(self) -> None:
        self.assertIsNone(ssl_context_of(parse_args(["--role", "decode", "--bridge", "127.0.0.1:1"])))
        context = ssl_context_of(parse_args(["--role", "decode", "--bridge", "127.0.0.1:1", "--tls-ca", CA,
                                             "--tls-cert", CLIENT_CERT, "--tls-key", CLIENT_KEY]))
        self.assertIsInstance(context, ssl.SSLContext)
        assert context is not None
        self.assertTrue(context.check_hostname)
        self.assertEqual(ssl.CERT_REQUIRED, context.verify_mode)

    def test_a_plain_tcp_worker_cannot_join_the_tls_worker_bridge(self) -> None:
        assert tls.worker_bridge_port is not None
        worker = DecodeWorker(ToyModel(258, 512), "127.0.0.1", tls.worker_bridge_port,
                              token=tls.worker_bridge_token)
        started = time.monotonic()
        try:
            # The join frame gets no reply: the bridge closes the connection (ConnectionLost).
            with self.assertRaises(ConnectionLost):
                worker.start()
        finally:
            worker.close()
        self.assertLess(time.monotonic() - started, FAILS_WITHIN_S)


class BridgeMutualTlsTest(unittest.TestCase):
    """bridge.tls-client-ca (and worker-bridge.tls-client-ca): a client certificate from the test CA."""

    def test_a_client_with_a_certificate_of_the_ca_generates_and_streams(self) -> None:
        self.assertTrue(mtls.bridge_tls, mtls.log())
        with TandemClient("127.0.0.1", mtls.bridge_port, timeout=TIMEOUT,
                          ssl_context=trusting_ca(CLIENT_CERT, CLIENT_KEY)) as client:
            generate_over(client, "mtls")

    def assert_refused(self, context: ssl.SSLContext) -> None:
        started = time.monotonic()
        with self.assertRaises(TandemConnectionError) as raised:
            # TLS 1.3: the client's handshake completes before the server checked its certificate; the
            # server then sends an alert and closes, so the refusal shows at the latest on the first call.
            with TandemClient("127.0.0.1", mtls.bridge_port, timeout=TIMEOUT, ssl_context=context) as client:
                client.generate(prompt=PROMPT, max_tokens=2).wait()
        self.assertLess(time.monotonic() - started, FAILS_WITHIN_S, str(raised.exception))

    def test_a_client_without_a_certificate_is_refused(self) -> None:
        self.assert_refused(trusting_ca())

    def test_a_certificate_of_another_ca_is_refused(self) -> None:
        self.assert_refused(trusting_ca(ROGUE_CERT, ROGUE_KEY))

    def test_a_python_worker_without_a_certificate_cannot_join(self) -> None:
        assert mtls.worker_bridge_port is not None
        anonymous = DecodeWorker(ToyModel(258, 512), "127.0.0.1", mtls.worker_bridge_port,
                                 token=mtls.worker_bridge_token, ssl_context=trusting_ca())
        started = time.monotonic()
        try:
            with self.assertRaises(ConnectionLost):
                anonymous.start()
        finally:
            anonymous.close()
        self.assertLess(time.monotonic() - started, FAILS_WITHIN_S)


if __name__ == "__main__":
    unittest.main()
