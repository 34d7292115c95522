"""Serving the app: uvicorn on a socket bound here (port 0: a free one), so the printed address is the real one."""

from __future__ import annotations

import socket
import webbrowser
from pathlib import Path

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.serve.security import LOOPBACK, new_token


class ServeError(FaceEditBenchError):
    """A workspace that is not one, or an address that cannot be served."""


def check_workspace(workspace: Path) -> Path:
    workspace = Path(workspace).expanduser()
    if not (workspace / "runs").is_dir() and not (workspace / "ledger.sqlite").is_file():
        raise ServeError(f"{workspace}: not a workspace (no runs/ folder in it). Pass the folder a run wrote to, "
                         "e.g. `faceedit-bench serve .faceedit_bench` (the run.workspace setting).")
    return workspace.resolve()


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port} ({exc.strerror}); pick another --port, or 0 for a "
                         "free one") from None
    sock.listen(128)
    return sock


def url_of(host: str, port: int, token: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/runs?token={token}"


def serve(workspace: Path, *, host: str = "127.0.0.1", port: int = 0, open_browser: bool = False,
          allow_remote: bool = False) -> None:
    """Serve ``workspace`` until stopped (Ctrl-C), printing the address with its access token."""
    import uvicorn

    from faceedit_bench.serve.app import create_app

    workspace = check_workspace(workspace)
    if host not in LOOPBACK and not allow_remote:
        raise ServeError(f"--host {host} would let other machines reach the app; add --allow-remote to mean it "
                         "(every page then needs the printed token), or leave --host out for 127.0.0.1")
    token = new_token()
    sock = bind(host, port)
    port = sock.getsockname()[1]
    hosts = [*LOOPBACK, host] if host not in ("0.0.0.0", "::") else ["*"]
    app = create_app(workspace, token=token, allowed_hosts=hosts)
    url = url_of("127.0.0.1" if host in ("0.0.0.0", "::") else host, port, token)
    print(f"faceedit_bench serves {workspace}\n  open {url}\n  (Ctrl-C stops it)", flush=True)
    if open_browser:
        webbrowser.open(url)
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
