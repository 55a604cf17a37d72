"""The two worker roles and how to run one.

    from tandem_worker import DecodeWorker, ToyModel, WorkerSettings

    worker = DecodeWorker(ToyModel(), "127.0.0.1", 7001, settings=WorkerSettings(max_batch=16)).start()
    worker.serve_forever() # until close() (another thread) or a lost connection (raises ConnectionLost)

To stay in the cluster across lost connections (several router nodes, backoff, a time budget), run it
with :func:`tandem_worker.reconnect.run_with_reconnect` instead of start()/serve_forever().

:class:`PrefillWorker` (prefill.py) and :class:`DecodeWorker` (decode.py) share :class:`Worker`
(base.py: join, heartbeats, status/drain, router-left). Replace ToyModel by your Engine (engine.py).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Optional, Type

from .base import IncompatibleModel, Worker, WorkerSettings
from .decode import DecodeWorker
from .engine import Engine
from .prefill import PrefillWorker

ROLES = {"prefill": PrefillWorker, "decode": DecodeWorker}


def worker_class(role: str) -> Type[Worker]:
    try:
        return ROLES[role]
    except KeyError:
        raise ValueError(f"role must be one of {sorted(ROLES)}, got {role!r}") from None


def make_worker(role: str, engine: Engine, host: str, port: int, **kwargs: Any) -> Worker:
    """A PrefillWorker or DecodeWorker (not started)."""
    return worker_class(role)(engine, host, port, **kwargs)


def drain_and_close(worker: Worker, timeout_s: float, abort: Optional[threading.Event] = None) -> bool:
    """Graceful leave, as Java's shutdown drain: say draining (routers send nothing new), let running work
    finish for up to ``timeout_s`` (or until ``abort`` is set), then close. True if it was idle before."""
    deadline = time.monotonic() + timeout_s
    if worker.closed_reason is None:
        worker.set_draining(True)
    idle = False
    while worker.closed_reason is None and time.monotonic() < deadline and not (abort and abort.is_set()):
        if worker.idle():
            idle = True
            break
        time.sleep(0.05)
    worker.close()
    return idle


__all__ = ["Worker", "WorkerSettings", "PrefillWorker", "DecodeWorker", "IncompatibleModel", "ROLES",
           "worker_class", "make_worker", "drain_and_close"]
