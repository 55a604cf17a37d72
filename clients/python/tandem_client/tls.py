"""TLS over a socket that one thread reads while others write (the bridge connections' reader thread and
their senders), standard library only.

``ssl.SSLSocket`` is not that: OpenSSL's connection object must not be used by two threads at once, and
it keeps the socket's descriptor number, so a reader still inside ``SSL_read`` when another thread closes
the socket may read — and write alerts to — whatever connection gets that number next (seen as
``bad record mac`` and ``wrong version number`` on the next connection). :class:`TlsSocket` keeps the TLS
state in an ``ssl.SSLObject`` over memory buffers, touched only under a lock, and moves bytes on the plain
socket itself, which threads may share and close as usual.
"""

from __future__ import annotations

import socket
import ssl
import threading
from typing import Any, Optional

_READ_BYTES = 256 << 10


class TlsSocket:
    """The part of the socket API the bridge connections use (``recv``, ``sendall``, ``shutdown``,
    ``close``, ``settimeout``, ``setsockopt``) over TLS. ``recv`` is for one thread at a time; ``sendall``
    for any number. The handshake happens in the constructor, bounded by the socket's timeout; it raises
    ``ssl.SSLError`` (an OSError) when it fails and closes nothing: the caller closes ``sock``."""

    def __init__(self, sock: socket.socket, context: ssl.SSLContext, server_hostname: Optional[str]):
        self.raw = sock
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing, server_hostname=server_hostname)
        self._state_lock = threading.Lock()  # guards self._tls and the BIOs
        self._send_lock = threading.Lock()   # held from taking TLS records out of _outgoing to their send
        self._eof = False
        while True:
            try:
                self._tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._flush()
                if not self._fill():
                    raise ssl.SSLEOFError("the server closed the connection during the TLS handshake") from None
        self._flush()

    # ---- what the TLS connection tells ----

    def version(self) -> Optional[str]:
        """"TLSv1.3", "TLSv1.2", ..."""
        return self._tls.version()

    def getpeercert(self) -> Any:
        return self._tls.getpeercert()

    def cipher(self) -> Any:
        return self._tls.cipher()

    # ---- the socket API ----

    def sendall(self, data: bytes) -> None:
        with self._send_lock:
            with self._state_lock:
                self._tls.write(data)
                records = self._outgoing.read()
            self.raw.sendall(records)

    def recv(self, size: int) -> bytes:
        """Up to ``size`` bytes of plain text; b"" once the server closed (close_notify or TCP EOF)."""
        while True:
            with self._state_lock:
                if self._eof:
                    return b""
                try:
                    data = self._tls.read(size)
                except ssl.SSLWantReadError:
                    data = None
                except ssl.SSLZeroReturnError:  # the server's close_notify
                    self._eof = True
                    return b""
                pending = self._outgoing.pending
            if pending:
                self._flush()  # what reading produced (e.g. a TLS 1.3 key update's answer)
            if data is not None:
                return data
            if not self._fill():
                with self._state_lock:
                    self._eof = True
                return b""

    def shutdown(self, how: int) -> None:
        """Ends the TCP connection (no close_notify: the bridges close on EOF); a blocked recv returns."""
        self.raw.shutdown(how)

    def close(self) -> None:
        self.raw.close()

    def settimeout(self, timeout: Optional[float]) -> None:
        self.raw.settimeout(timeout)

    def setsockopt(self, *args: Any) -> None:
        self.raw.setsockopt(*args)

    def fileno(self) -> int:
        return self.raw.fileno()

    # ---- internals ----

    def _fill(self) -> bool:
        """Reads what the socket has into the TLS connection; False at EOF."""
        data = self.raw.recv(_READ_BYTES)
        if not data:
            return False
        with self._state_lock:
            self._incoming.write(data)
        return True

    def _flush(self) -> None:
        with self._send_lock:
            with self._state_lock:
                records = self._outgoing.read()
            if records:
                self.raw.sendall(records)


def connect(sock: socket.socket, context: Optional[ssl.SSLContext], server_hostname: Optional[str]) -> Any:
    """``sock`` itself without a context, else a :class:`TlsSocket` over it (handshake done; ``sock`` is
    closed when the handshake fails, and the error — an OSError — raised)."""
    if context is None:
        return sock
    try:
        return TlsSocket(sock, context, server_hostname)
    except BaseException:
        sock.close()
        raise
