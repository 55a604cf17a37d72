"""A Tandem prefill or decode worker in Python, joining a cluster over the worker bridge (standard
library only). The toy model is a template: implement :class:`~tandem_worker.engine.Engine` for a real
engine and pass it to :class:`PrefillWorker` or :class:`DecodeWorker`.

    python3 -m tandem_worker --role decode --bridge 127.0.0.1:7001,127.0.0.1:7002
"""

from .bridge import BridgeError, ConnectionLost, JoinRefused, Refused, ReplyFailed
from .engine import (DecodeInput, Engine, EngineInfo, HostKvEngine, KvCache, KvLayout, PrefillCancelled, Sampling,
                     StopCondition)
from .kv_codec import KvAssembler, KvTransferError, crc32c
from .reconnect import Backoff, RejoinFailed, Supervisor, parse_addresses, run_with_reconnect
from .toy_model import ToyModel
from .worker import (DecodeWorker, IncompatibleModel, PrefillWorker, Worker, WorkerSettings, drain_and_close,
                     make_worker)

__all__ = [
    "Engine", "EngineInfo", "HostKvEngine", "KvCache", "KvLayout", "DecodeInput", "Sampling", "StopCondition",
    "PrefillCancelled", "ToyModel", "KvAssembler", "KvTransferError", "crc32c",
    "Worker", "WorkerSettings", "PrefillWorker", "DecodeWorker", "make_worker", "drain_and_close",
    "BridgeError", "ConnectionLost", "JoinRefused", "IncompatibleModel", "Refused", "ReplyFailed",
    "Supervisor", "Backoff", "RejoinFailed", "run_with_reconnect", "parse_addresses",
]
