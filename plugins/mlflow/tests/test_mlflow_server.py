"""The tracker against a real ``mlflow server`` on loopback (artifacts proxied by the server)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from faceedit_bench_mlflow.tracker import MlflowTracker
from mlflow import MlflowClient
from mlflow_helpers import lifecycle, make_pm, only_run

#: About 6 s on a fast machine, 40 s on a loaded 2-core one.
STARTUP_TIMEOUT_S = 120


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_healthy(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"mlflow server exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"mlflow server: no /health answer within {STARTUP_TIMEOUT_S} s:\n{log.read_text()[-3000:]}")


def _stop_group(server: subprocess.Popen[bytes]) -> None:
    """Stop the server and everything it spawned (its own process group)."""
    for sig, grace in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(server.pid, sig)
        except ProcessLookupError:
            return
        try:
            server.wait(timeout=grace)
            time.sleep(0.5)  # let the uvicorn worker follow its parent
        except subprocess.TimeoutExpired:
            continue
    try:
        os.killpg(server.pid, signal.SIGKILL)  # stragglers of the group
    except ProcessLookupError:
        pass


@pytest.fixture
def server_url(tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    env = {
        **os.environ,
        "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "DO_NOT_TRACK": "true",
    }
    env.pop("MLFLOW_TRACKING_URI", None)
    command = [
        sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
        "--workers", "1",
        "--backend-store-uri", f"sqlite:///{(tmp_path / 'srv.db').as_posix()}",
        "--artifacts-destination", str(tmp_path / "served-artifacts"),
    ]
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True  # own group
        )
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_healthy(url, server, log)
        yield url
    finally:
        _stop_group(server)


@pytest.mark.slow
def test_tracker_against_real_server(server_url, make_run, experiment, tmp_path):
    (tmp_path / "report.json").write_text('{"ok": true}')
    (tmp_path / "sheets").mkdir()
    (tmp_path / "sheets" / "s1.png").write_bytes(b"png")
    long_value = "p" * 7000
    tracker = MlflowTracker(tracking_uri=server_url)
    pm = make_pm(tracker)
    run = make_run("key-server", params={"prompt": long_value, "editor.name": "dummy"})
    metrics = {f"metric_{i:04d}": i / 7 for i in range(1200)}
    lifecycle(
        pm,
        run,
        outcomes=["ok", "no_face"],
        metrics=metrics,
        artifacts={"report": str(tmp_path / "report.json"), "contact_sheets": str(tmp_path / "sheets")},
    )
    lifecycle(pm, run, outcomes=["ok"], metrics={"metric_0001": 5.0})  # rerun: same MLflow run

    client = MlflowClient(tracking_uri=server_url)
    mlrun = only_run(client, experiment)
    assert mlrun.info.status == "FINISHED"
    assert mlrun.info.artifact_uri.startswith("mlflow-artifacts:/"), "the server chose the artifact store"
    assert len(mlrun.data.params["prompt"]) == 6000
    assert mlrun.data.tags["faceedit.params_truncated"] == "prompt"
    assert mlrun.data.metrics["metric_0001"] == 5.0
    assert mlrun.data.metrics["metric_1199"] == pytest.approx(1199 / 7)
    assert (mlrun.data.metrics["steps_ok"], mlrun.data.metrics["steps_no_face"]) == (1, 0)
    served = tmp_path / "served-artifacts"
    assert list(served.rglob("report.json")) and list(served.rglob("contact_sheets/s1.png"))
