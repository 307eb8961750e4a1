"""A local TCP server for the network tests (tests/test_network.py, tests/test_offline.py):
each connection it accepts goes to ``handle(conn)`` on the server's own thread."""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Callable, Iterator


@contextlib.contextmanager
def local_server(handle: Callable[[socket.socket], None]) -> Iterator[str]:
    """Serve on 127.0.0.1 (a free port) until the block ends; yields ``http://127.0.0.1:PORT``."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    server.settimeout(0.2)
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            handle(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        server.close()
