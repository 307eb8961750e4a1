"""The offline report path's kernel talks over Unix sockets, not TCP ports: parallel renders
cannot collide on a port (seen in the demo: "ZMQError: Address already in use", then
"Kernel didn't respond in 60 seconds")."""
from __future__ import annotations

import socket

from fmat.report import ipc_kernel_manager


def test_kernel_runs_on_unix_sockets(tmp_path):
    km = ipc_kernel_manager(tmp_path / "k")(kernel_name="python3")
    assert km.transport == "ipc" and km.ip == str(tmp_path / "k")
    km.start_kernel()
    try:
        kc = km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
        reply = kc.execute_interactive("x = 6 * 7", timeout=60)
        assert reply["content"]["status"] == "ok"
        kc.stop_channels()
        names = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("k-"))
        connection = [n for n in names if n.startswith("k-connection-") and n.endswith(".json")]
        sockets = [n for n in names if n not in connection]
        assert len(connection) == 1                               # beside the sockets, not in $TMPDIR
        assert len(sockets) == 5                                  # shell, iopub, stdin, control, hb
        for name in sockets:
            s = socket.socket(socket.AF_UNIX)
            s.connect(str(tmp_path / name))                       # a listening Unix socket
            s.close()
    finally:
        km.shutdown_kernel(now=True)
