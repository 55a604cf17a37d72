"""Test harness: starts a real Tandem JVM (router + 2 prefill + 2 decode workers, built-in model) on
127.0.0.1 and hands back its HTTP and bridge ports. ``command`` picks another CLI subcommand (e.g.
``["router"]``: no workers of its own) and ``worker_bridge=True`` opens the worker bridge on a free port
(``--worker-bridge-port``) with a fresh join token (``worker_bridge_token``; a listening worker bridge
requires one), waiting for its "worker bridge listening" line.

TLS is configured through ``env`` (TANDEM_BRIDGE_TLS_CERT, TANDEM_HTTP_TLS_CERT, ... see ``TLS_DIR`` for
the test PKI); the node's ready lines tell what it turned on: ``http_scheme`` ("https" with
http.tls-cert), ``http_client_auth`` (http.tls-client-ca), ``plain_http_port`` (http.plain-port, or
None), ``bridge_tls`` and ``worker_bridge_tls`` (their " (TLS)" suffix).

The jar is target/tandem.jar of this project (mvn package builds it before the integration-test
phase that runs these tests); TANDEM_JAR overrides it. Every server gets its own random cluster name,
a free bridge port passed as TANDEM_BRIDGE_TCP_PORT, and HTTP on any free port, read from its output.
TANDEM_SERVER_LOG=1 echoes the server's output.
"""

from __future__ import annotations

import os
import random
import re
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Dict, Optional, Sequence

PROJECT_DIR = Path(__file__).resolve().parents[3]
JAR = Path(os.environ.get("TANDEM_JAR") or PROJECT_DIR / "target" / "tandem.jar").resolve()
START_TIMEOUT_S = 60.0
STOP_GRACE_S = 5.0
#: "router <id> listening on http://127.0.0.1:PORT", or https://… " (TLS[, client certificates required])".
HTTP_READY = re.compile(r"listening on (https?)://127\.0\.0\.1:(\d+)( \(TLS(, client certificates required)?\))?")
#: With http.plain-port: "clear-text HTTP on http://127.0.0.1:PORT[ refuses requests (http.tls-required)]".
PLAIN_HTTP_READY = re.compile(r"clear-text HTTP on http://127\.0\.0\.1:(\d+)")
BRIDGE_READY = re.compile(r"event-bus bridge listening on tcp://127\.0\.0\.1:(\d+)")
WORKER_BRIDGE_READY = re.compile(r"worker bridge listening on tcp://127\.0\.0\.1:(\d+)")
TLS_SUFFIX = " (TLS)"
#: The committed test PKI: ca.pem, server.pem/server-key.pem (localhost, 127.0.0.1), client.pem/client-key.pem.
TLS_DIR = PROJECT_DIR / "src" / "test" / "resources" / "tls"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java") or "java"


class TandemServer:
    """A running Tandem node; stop() ends it (SIGTERM, then SIGKILL after a grace period)."""

    def __init__(self, env: Optional[Dict[str, str]] = None, *, command: Sequence[str] = (),
                 worker_bridge: bool = False, args: Sequence[str] = ()):
        if not JAR.is_file():
            raise RuntimeError(f"{JAR} does not exist: build it first (mvn -DskipTests package)")
        self.bridge_port = free_port()
        self.worker_bridge_port: Optional[int] = free_port() if worker_bridge else None
        self.worker_bridge_token: Optional[str] = secrets.token_hex(16) if worker_bridge else None
        self.http_port: Optional[int] = None
        self.http_scheme = "http"
        self.http_client_auth = False
        self.plain_http_port: Optional[int] = None
        self.bridge_tls = False
        self.worker_bridge_tls = False
        self._lines: deque = deque(maxlen=300)
        self._ready = threading.Condition()
        self._args = [_java(), "-Xmx1g", "-jar", str(JAR), *command,
                      "--http-port", "0",
                      "--cluster-name", "tandem-py-test-" + secrets.token_hex(6),
                      "--cluster-port", str(5900 + random.randrange(1000))]
        if self.worker_bridge_port is not None:
            self._args += ["--worker-bridge-port", str(self.worker_bridge_port)]
        self._args += list(args)
        full_env = dict(os.environ)
        # The tests' own switch, not a setting: the JVM would read it as the unknown key worker.log.
        full_env.pop("TANDEM_WORKER_LOG", None)
        full_env["TANDEM_BRIDGE_TCP_PORT"] = str(self.bridge_port)
        if self.worker_bridge_token is not None:
            full_env["TANDEM_WORKER_BRIDGE_TOKEN"] = self.worker_bridge_token
        full_env.update(env or {})
        self._process = subprocess.Popen(self._args, cwd=PROJECT_DIR, env=full_env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                         encoding="utf-8", errors="replace")
        # Always drain the pipe: a JVM whose pipe is full blocks.
        self._pump = threading.Thread(target=self._read_output, name="tandem-server-output", daemon=True)
        self._pump.start()
        try:
            self._await_ready()
        except BaseException:
            self.stop()
            raise

    def _read_output(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            line = line.rstrip("\n")
            if os.environ.get("TANDEM_SERVER_LOG"):
                print(f"[tandem] {line}", file=sys.stderr)
            with self._ready:
                self._lines.append(line)
                self._ready.notify_all()
        with self._ready:
            self._ready.notify_all()

    def _await_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        with self._ready:
            while True:
                http = next((m for m in map(HTTP_READY.search, self._lines) if m), None)
                bridge = next((m for m in map(BRIDGE_READY.search, self._lines) if m), None)
                workers = next((m for m in map(WORKER_BRIDGE_READY.search, self._lines) if m), None)
                if http and bridge and (workers or self.worker_bridge_port is None):
                    self.http_scheme, self.http_port = http.group(1), int(http.group(2))
                    self.http_client_auth = http.group(4) is not None
                    # Printed right after the router's line, before the bridge's: present by now if at all.
                    plain = next((m for m in map(PLAIN_HTTP_READY.search, self._lines) if m), None)
                    self.plain_http_port = int(plain.group(1)) if plain else None
                    self.bridge_tls = bridge.string.endswith(TLS_SUFFIX)
                    self.worker_bridge_tls = workers is not None and workers.string.endswith(TLS_SUFFIX)
                    if int(bridge.group(1)) != self.bridge_port:
                        raise RuntimeError(f"the bridge listens on {bridge.group(1)}, not the port given "
                                           f"({self.bridge_port})")
                    if workers and int(workers.group(1)) != self.worker_bridge_port:
                        raise RuntimeError(f"the worker bridge listens on {workers.group(1)}, not the port "
                                           f"given ({self.worker_bridge_port})")
                    return
                if self._process.poll() is not None:
                    raise RuntimeError(f"Tandem exited (code {self._process.returncode}) before it was ready\n"
                                       + self.log())
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"Tandem was not ready within {START_TIMEOUT_S} s\n" + self.log())
                self._ready.wait(min(left, 0.5))

    def log(self) -> str:
        with self._ready:
            return f"--- {' '.join(self._args)}\n" + "\n".join(self._lines)

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(STOP_GRACE_S)
        self._pump.join(STOP_GRACE_S)
        if self._process.stdout is not None and not self._pump.is_alive():
            self._process.stdout.close()
