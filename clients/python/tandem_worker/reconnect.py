"""Keeping a worker in the cluster across lost connections (a router node restarted or died, an idle
close): rejoin with the same worker id through any of several router nodes' worker bridges, with
exponential backoff and jitter, within a time budget.

    worker = DecodeWorker(ToyModel(), "10.0.0.1", 7001)
    stop = threading.Event()            # set it (a signal handler, another thread) to return
    run_with_reconnect(worker, [("10.0.0.1", 7001), ("10.0.0.2", 7001)], stop=stop)
    drain_and_close(worker, 5.0)

What a worker held for a lost connection is freed when it ends (the bridge failed those requests with
410 and routers moved them elsewhere); the engine itself is kept. Which refusals are worth retrying:

* the connection cannot be made, or ends during the join, or the join is not answered: the node is
  down or restarting — retried, trying the next address;
* ``worker_id_in_use`` after a drop: the registry entry of the old connection outlives it for up to
  the registry TTL when its node died — retried; at the first join it means another worker has the
  id, which waiting does not fix — fatal;
* any other refusal (``model_mismatch``, ``unauthorized``, ``invalid_join``, an engine of another
  shape): configuration, the same on every node — fatal, raised as is.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from typing import Callable, List, Optional, Sequence, Tuple

from .base import Worker
from .bridge import ConnectionLost, JoinRefused

LOG = logging.getLogger("tandem_worker.reconnect")
Address = Tuple[str, int]

#: Refusals that mean "not now" rather than "never": a silent bridge, or our own lingering entry.
_TRANSIENT = frozenset(("join_timeout",))
_TRANSIENT_AFTER_DROP = frozenset(("worker_id_in_use",))
#: Signal handlers run on the main thread between bytecodes: sleep in slices no longer than this.
_SLICE_S = 0.1


class RejoinFailed(ConnectionLost):
    """No join succeeded within the reconnect budget; ``last`` is the last attempt's error."""

    def __init__(self, message: str, last: Optional[BaseException]):
        super().__init__(message)
        self.last = last


class Backoff:
    """Delays between rounds of attempts: ``initial`` doubling up to ``maximum``, each scaled by a random
    factor in [1 - jitter, 1] so that the workers of a node that died do not all knock at once."""

    def __init__(self, initial: float = 0.2, maximum: float = 5.0, jitter: float = 0.5,
                 rand: Callable[[], float] = random.random):
        if initial <= 0 or maximum < initial or not 0 <= jitter <= 1:
            raise ValueError("need 0 < initial <= maximum and 0 <= jitter <= 1")
        self.initial, self.maximum, self.jitter = initial, maximum, jitter
        self._rand = rand
        self._next = initial

    def reset(self) -> None:
        self._next = self.initial

    def next_delay(self) -> float:
        delay = self._next
        self._next = min(self.maximum, self._next * 2)
        return delay * (1.0 - self.jitter * self._rand())


def parse_addresses(text: str) -> List[Address]:
    """``"host:port,host:port"`` (an empty host is 127.0.0.1); ValueError names the bad entry."""
    out: List[Address] = []
    for item in text.split(","):
        item = item.strip()
        host, sep, port = item.rpartition(":")
        if not sep or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"expected HOST:PORT, got {item!r}")
        out.append((host.strip("[]") or "127.0.0.1", int(port)))  # [::1]:7001 as well
    return out


class Supervisor:
    """Joins ``worker`` through ``addresses`` and keeps it joined. ``run()`` returns once ``stop`` is set
    or the worker was closed; it raises :class:`~tandem_worker.bridge.JoinRefused` for a fatal refusal
    and :class:`RejoinFailed` (a ConnectionLost) when no join succeeded within ``reconnect_timeout``
    seconds of a loss (0: none is tried). The first join gets the same budget for unreachable nodes,
    so workers may start before their router."""

    def __init__(self, worker: Worker, addresses: Sequence[Address], *, reconnect_timeout: float = 60.0,
                 backoff: Optional[Backoff] = None, stop: Optional[threading.Event] = None,
                 logger: Optional[logging.Logger] = None):
        if not addresses:
            raise ValueError("at least one bridge address is needed")
        if reconnect_timeout < 0:
            raise ValueError("reconnect_timeout must be >= 0")
        self.worker = worker
        self.addresses = list(addresses)
        self.reconnect_timeout = reconnect_timeout
        self.backoff = backoff or Backoff()
        self.stop_event = stop or threading.Event()
        self.log = logger or LOG
        self.joins = 0    # successful joins, the first one included
        self.rejoins = 0  # successful joins after a loss
        self._next = 0    # index of the address to try first

    def stop(self) -> None:
        """Makes run() return (within a fraction of a second when it is waiting between attempts)."""
        self.stop_event.set()

    def run(self) -> None:
        if not self._join(after_drop=False):
            return
        while True:
            joined_at = time.monotonic()
            # Wake up now and then: the stop event may be set by a signal handler on this thread.
            while not self.stop_event.is_set() and not self.worker.wait(_SLICE_S):
                pass
            if self.stop_event.is_set() or self.worker.closing:
                return
            reason = self.worker.closed_reason
            where = f"{self.worker.host}:{self.worker.port}"
            if self.reconnect_timeout <= 0:
                raise reason or ConnectionLost(f"the connection to {where} was lost")
            self.log.warning("worker %s lost its connection to %s (%s); rejoining for up to %g s",
                             self.worker.worker_id, where, reason, self.reconnect_timeout)
            if time.monotonic() - joined_at >= self.backoff.maximum:
                self.backoff.reset()  # a connection that lasted: start afresh, first attempt at once
            elif self._sleep(self.backoff.next_delay()):
                return  # a node that accepts and drops at once must not make this a busy loop
            # Rejoin under the id we had (the bridge may have picked it): routers and operators know it.
            self.worker.requested_id = self.worker.worker_id or self.worker.requested_id
            self._next = (self.addresses.index((self.worker.host, self.worker.port)) + 1
                          if (self.worker.host, self.worker.port) in self.addresses else 0) % len(self.addresses)
            if not self._join(after_drop=True):
                return
            self.rejoins += 1

    def _join(self, after_drop: bool) -> bool:
        """True once joined, False when stopped; raises a fatal refusal or RejoinFailed."""
        started = time.monotonic()
        deadline = started + self.reconnect_timeout
        attempt = 0
        last: Optional[BaseException] = None
        # A round tries every address once, the one after the lost node's first (another node is likely
        # up; the lost one may be restarting); the backoff grows between rounds, not within one.
        while True:
            for i in range(len(self.addresses)):
                if self.stop_event.is_set() or self.worker.closing:
                    return False
                host, port = self.addresses[(self._next + i) % len(self.addresses)]
                attempt += 1
                self.worker.host, self.worker.port = host, port
                self.log.info("joining via %s:%d (attempt %d)", host, port, attempt)
                try:
                    self.worker.start()
                except JoinRefused as e:
                    if e.code not in _TRANSIENT and not (after_drop and e.code in _TRANSIENT_AFTER_DROP):
                        raise
                    self.log.warning("join via %s:%d refused for now: %s", host, port, e)
                    last = e
                    continue
                except ConnectionLost as e:
                    if self.worker.closing:
                        return False
                    self.log.warning("join via %s:%d failed: %s", host, port, e)
                    last = e
                    continue
                self._next = (self._next + i) % len(self.addresses)
                self.joins += 1
                if after_drop:
                    self.log.info("worker %s rejoined via %s:%d after %.1f s (%d attempts)", self.worker.worker_id,
                                  host, port, time.monotonic() - started, attempt)
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                what = "rejoin" if after_drop else "join"
                raise RejoinFailed(f"could not {what} through {self._names()} within {self.reconnect_timeout:g} s "
                                   f"({attempt} attempts; last: {last})", last)
            delay = min(self.backoff.next_delay(), left)
            self.log.info("next join attempt in %.2f s (%.1f s of the budget left)", delay, left)
            if self._sleep(delay):
                return False

    def _sleep(self, seconds: float) -> bool:
        """Waits in short slices (so a signal handler setting stop is seen at once); True if stopped."""
        end = time.monotonic() + seconds
        while not self.stop_event.is_set():
            left = end - time.monotonic()
            if left <= 0:
                return False
            self.stop_event.wait(min(left, _SLICE_S))
        return True

    def _names(self) -> str:
        return ", ".join(f"{h}:{p}" for h, p in self.addresses)


def run_with_reconnect(worker: Worker, addresses: Sequence[Address], *, reconnect_timeout: float = 60.0,
                       stop: Optional[threading.Event] = None, backoff: Optional[Backoff] = None) -> Supervisor:
    """Joins and serves until ``stop`` is set or the worker is closed, rejoining after each loss (see
    :class:`Supervisor`); returns the supervisor (its ``rejoins`` count) for the caller to drain the worker."""
    supervisor = Supervisor(worker, addresses, reconnect_timeout=reconnect_timeout, backoff=backoff, stop=stop)
    supervisor.run()
    return supervisor
