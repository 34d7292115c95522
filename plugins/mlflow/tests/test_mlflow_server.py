"""The tracker against a real ``mlflow server`` on loopback (artifacts proxied by the server)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from faceedit_bench_mlflow.tracker import MlflowTracker
from mlflow import MlflowClient
from mlflow_helpers import lifecycle, make_pm, only_run

from tests.browser import support as pages

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
    try:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=15)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(server.pid, signal.SIGKILL)  # the group's stragglers (a uvicorn worker), or all of it
    except ProcessLookupError:
        pass


class Server(NamedTuple):
    url: str
    artifacts: Path  # where the server keeps the artifacts it proxies


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One real server for the module's tests (starting one takes 6 to 40 s)."""
    tmp_path = tmp_path_factory.mktemp("mlflow-server")
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
        process = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True  # own group
        )
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_healthy(url, process, log)
        yield Server(url, tmp_path / "served-artifacts")
    finally:
        _stop_group(process)


@pytest.mark.slow(seconds=10)
def test_tracker_against_real_server(server, make_run, experiment, tmp_path):
    server_url = server.url
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
    served = server.artifacts
    assert list(served.rglob("report.json")) and list(served.rglob("contact_sheets/s1.png"))


def _rest(server: Server, path: str, body: dict | None = None) -> dict:
    """One call of the server's REST API (GET with the query in ``path``, else POST ``body``)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{server.url}/api/2.0/mlflow/{path}", data=data,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def _runs(server: Server, experiment_id: str) -> list[dict]:
    return _rest(server, "runs/search", {"experiment_ids": [experiment_id]}).get("runs", [])


@pytest.mark.slow(seconds=9)
def test_a_ctrl_c_run_is_killed_and_resumed_as_the_same_run_in_an_experiment_that_opens_on_its_runs(
        server, tmp_path, monkeypatch, capsys):
    """Through the real entry point against the real server, read back through its REST API."""
    from faceedit_bench.testing import compose_config, load_plugins, run_config
    from tests.fakes.gemini import gemini_server
    from tests.test_kill_resume import stop_mid_run

    key, experiment = "test-mlflow-kill-key", "faceedit/ctrl-c"
    with gemini_server(api_key=key, latency_s=0.05) as fake:
        release = fake.hold_after(4)  # then both concurrency slots are held: certainly mid-run
        env = {**os.environ, "FACEEDIT_BENCH_HOME": str(tmp_path / "ws"), "GEMINI_API_KEY": key}
        env.pop("MLFLOW_TRACKING_URI", None)
        args = [sys.executable, "-m", "faceedit_bench", "editor=nano_banana", f"editor.params.base_url={fake.url}",
                "editor.params.limits.max_concurrency=2", "testset=pose", "run.max_faces=1", "run.max_sessions=2",
                "run.progress=false", "tracking=mlflow", f"tracking.params.tracking_uri={server.url}",
                f"tracking.params.experiment_name={experiment}"]
        stopped = stop_mid_run(args, env, tmp_path, lambda _: fake.calls >= 6, release, signal.SIGINT)
        assert stopped.returncode == 130, stopped.stderr[-3000:]

        found = _rest(server, f"experiments/get-by-name?experiment_name={urllib.parse.quote(experiment)}")
        experiment_id = found["experiment"]["experiment_id"]
        tags = {t["key"]: t["value"] for t in found["experiment"].get("tags", [])}
        assert tags["mlflow.experimentKind"] == "custom_model_development"  # a runs experiment, not GenAI
        (killed,) = _runs(server, experiment_id)
        run_tags = {t["key"]: t["value"] for t in killed["data"]["tags"]}
        assert killed["info"]["status"] == "KILLED" and run_tags["faceedit.stopped_by"] == "SIGINT"
        assert "faceedit.error" not in run_tags
        runs_table = f"{server.url}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"
        assert f"runs table:\n  {runs_table}" in stopped.stdout

        # The rerun in this process (the stopped run above is the real process): what it prints is checked.
        monkeypatch.setenv("GEMINI_API_KEY", key)
        plugins = load_plugins()
        capsys.readouterr()
        run_config(compose_config(plugins, [*args[3:], f"run.workspace={tmp_path / 'ws'}"]), plugins)
        printed = capsys.readouterr().out
    (resumed,) = _runs(server, experiment_id)
    assert resumed["info"]["run_id"] == killed["info"]["run_id"] and resumed["info"]["status"] == "FINISHED"
    assert "faceedit.stopped_by" not in {t["key"] for t in resumed["data"]["tags"]}
    run_id = resumed["info"]["run_id"]
    link = f"{server.url}/#/experiments/{experiment_id}/runs/{run_id}?workflowType=machine_learning"
    assert f"FINISHED; open:\n  {link}" in printed


@pytest.mark.slow
@pytest.mark.skipif(pages.MISSING is not None and not pages.REQUIRED, reason=str(pages.MISSING))
def test_the_printed_links_open_the_runs_table_and_the_run_in_mlflows_own_ui(server, browser, make_run, experiment):
    """MLflow 3.17's UI opens an experiment on its GenAI overview, where no run is listed, unless the link
    asks for the runs view: the links the tracker prints do."""
    from faceedit_bench_mlflow.experiments import experiment_link, run_link

    pm = make_pm(MlflowTracker(tracking_uri=server.url))
    lifecycle(pm, make_run("key-ui", run_name="linked@pose"), outcomes=["ok"], metrics={"drop_fss": 1.5})
    mlrun = only_run(MlflowClient(tracking_uri=server.url), experiment)

    for link, path in ((experiment_link(server.url, mlrun.info.experiment_id), "/runs?"),
                       (run_link(server.url, mlrun.info.experiment_id, mlrun.info.run_id), mlrun.info.run_id)):
        browser.get(link)
        text = _page_text_once(browser, "linked@pose")
        assert path in browser.current_url and "workflowType=machine_learning" in browser.current_url
        assert "linked@pose" in text


def _page_text_once(driver, wanted: str, timeout_s: float = 120) -> str:
    """The page's text once it shows ``wanted`` (MLflow's UI renders after several requests)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout_s).until(lambda d: wanted in d.find_element(By.TAG_NAME, "body").text)
    return driver.find_element(By.TAG_NAME, "body").text
