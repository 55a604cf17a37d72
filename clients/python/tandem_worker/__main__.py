"""python3 -m tandem_worker --role decode|prefill --bridge HOST:PORT[,HOST:PORT...] [--worker-id ID] [--token T]
       [--tls] [--tls-ca FILE] [--tls-cert FILE --tls-key FILE]

Joins the cluster with the toy model and serves until SIGINT/SIGTERM (then drains for up to
--drain-seconds and leaves; a second signal leaves at once). A lost connection is rejoined, under the
same worker id, through the --bridge addresses in turn, for up to --reconnect-timeout seconds. Exit code
0 after a signal, 1 when no join succeeded within --reconnect-timeout, 2 when the join was refused.
--tls speaks TLS to a bridge with worker-bridge.tls-cert (trusting the system's CAs, or --tls-ca's);
--tls-cert/--tls-key present a client certificate to one with worker-bridge.tls-client-ca.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import ssl
import sys
import threading
from typing import List, Optional

from .bridge import ConnectionLost, JoinRefused
from .reconnect import Address, Supervisor, parse_addresses
from .toy_model import TOY_NAME, ToyModel
from .worker import ROLES, WorkerSettings, drain_and_close, make_worker


def _addresses(text: str) -> List[Address]:
    try:
        return parse_addresses(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python3 -m tandem_worker", description=__doc__.split("\n\n")[1].strip())
    p.add_argument("--role", required=True, choices=sorted(ROLES))
    p.add_argument("--bridge", required=True, type=_addresses,
                   help="the worker bridge, HOST:PORT; several router nodes' comma-separated, tried in turn")
    p.add_argument("--worker-id", help="[A-Za-z0-9._-]{1,64}; default: the bridge picks py-<role>-<random>")
    p.add_argument("--token", default=os.environ.get("TANDEM_WORKER_BRIDGE_TOKEN"),
                   help="the bridge's worker-bridge.token (default: $TANDEM_WORKER_BRIDGE_TOKEN)")
    p.add_argument("--max-batch", type=int, default=None,
                   help="decode: sequences per step (default 64); prefill: prompts at once (default 1)")
    p.add_argument("--model", default=TOY_NAME, help="model name to join as (the cluster's; default %(default)s)")
    p.add_argument("--vocab-size", type=int, default=258, help="toy model vocabulary (the cluster's)")
    p.add_argument("--seq-len", type=int, default=512, help="toy model context length (the cluster's)")
    p.add_argument("--prefix-cache-blocks", type=int, default=1024,
                   help="prefill: KV blocks of prompts kept for reuse and announced to the routers (0 = none)")
    p.add_argument("--kv-capacity-bytes", type=int, default=None, help="decode: KV memory limit")
    p.add_argument("--drain-seconds", type=float, default=5.0, help="how long a signal waits for running work")
    p.add_argument("--reconnect-timeout", type=float, default=60.0,
                   help="seconds to keep trying to (re)join after a lost connection, or while no node is "
                        "reachable at start (default %(default)g; 0: exit at once)")
    p.add_argument("--tls", action="store_true",
                   help="TLS to the worker bridge (worker-bridge.tls-cert); implied by the other --tls-* options")
    p.add_argument("--tls-ca", metavar="FILE", help="PEM CA certificates to trust (default: the system's)")
    p.add_argument("--tls-cert", metavar="FILE", help="PEM client certificate (worker-bridge.tls-client-ca)")
    p.add_argument("--tls-key", metavar="FILE", help="PEM key of --tls-cert (default: in --tls-cert's file)")
    p.add_argument("--log-level", default="INFO")
    args = p.parse_args(argv)
    if args.tls_key and not args.tls_cert:
        p.error("--tls-key needs --tls-cert")
    if args.max_batch is not None and args.max_batch < 1:
        p.error("--max-batch must be >= 1")
    if args.reconnect_timeout < 0:
        p.error("--reconnect-timeout must be >= 0")
    return args


def ssl_context_of(args: argparse.Namespace) -> Optional[ssl.SSLContext]:
    """The TLS context the --tls options ask for, or None for plain TCP."""
    if not (args.tls or args.tls_ca or args.tls_cert):
        return None
    context = ssl.create_default_context(cafile=args.tls_ca)
    if args.tls_cert:
        context.load_cert_chain(args.tls_cert, args.tls_key)
    return context


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("tandem_worker")
    settings = WorkerSettings(max_batch=args.max_batch or (64 if args.role == "decode" else 1))
    if args.kv_capacity_bytes is not None:
        settings.kv_capacity_bytes = args.kv_capacity_bytes
    settings.prefix_cache_blocks = args.prefix_cache_blocks
    engine = ToyModel(args.vocab_size, args.seq_len, name=args.model)
    host, port = args.bridge[0]
    try:
        context = ssl_context_of(args)
    except (OSError, ValueError) as e:  # a file that is missing or not PEM, a key that does not match
        log.error("cannot set up TLS: %s", e)
        return 2
    worker = make_worker(args.role, engine, host, port, worker_id=args.worker_id, token=args.token,
                         settings=settings, ssl_context=context)
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        # Only flags here: the handler runs on the main thread, possibly inside a lock the worker holds.
        # A second signal leaves at once (drain_and_close sees it through stop_now).
        if stop.is_set():
            stop_now.set()
        stop.set()

    stop_now = threading.Event()
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    supervisor = Supervisor(worker, args.bridge, reconnect_timeout=args.reconnect_timeout, stop=stop)
    try:
        supervisor.run()
    except JoinRefused as e:
        log.error("join refused by %s:%d: %s", worker.host, worker.port, e)
        worker.close()
        return 2
    except ConnectionLost as e:
        log.error("%s", e)
        worker.close()
        return 1
    if worker.closed_reason is not None:
        log.info("stopped while not joined: leaving")
        worker.close()
        return 0
    log.info("leaving: draining for up to %g s", args.drain_seconds)
    drain_and_close(worker, args.drain_seconds, stop_now)
    return 0


if __name__ == "__main__":
    sys.exit(main())
