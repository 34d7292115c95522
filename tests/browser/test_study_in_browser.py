"""A 20-item pairwise study run in headless Chromium as two annotators answering with the keyboard, against the
real server (``faceedit-bench serve``) over a workspace of two real offline runs (the web app tests' own). The server is killed (SIGKILL)
mid-study and started again: both annotators resume where they were and finish. Then the stored answers are
exactly those given, none lost, and the live page's agreement equals Krippendorff's α and Fleiss' κ computed here
from the exported votes. A checklist item of a real CREval run is answered with y / n (and Backspace)."""

from __future__ import annotations

import csv
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from faceedit_bench.testing import run_cli
from tests.browser.support import HEIGHT, WIDTH, assert_nothing_overflows, severe_errors
from tests.browser.test_serve_app import shot
from tests.serve_workspace import judged_workspace  # noqa: F401 - the fixture

KEYS = {"A": "a", "B": "b", "both_good": "t", "both_bad": "n"}
ENV = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}


def _cli(*args: str, cwd: Path, timeout: float = 600) -> str:
    out = subprocess.run([sys.executable, "-m", "faceedit_bench.cli", *args], capture_output=True, text=True,
                         cwd=cwd, env=ENV, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture(scope="module")
def two_runs(judged_workspace, tmp_path_factory) -> Path:  # noqa: F811
    """A copy of the web app's test workspace (two real offline runs: a scripted editor and the identity editor,
    3 faces x 3 pose sessions of 4 steps), so the study's tables go into a ledger of this test's own."""
    ws = tmp_path_factory.mktemp("study-browser") / "ws"
    shutil.copytree(judged_workspace, ws)
    return ws


class Server:
    def __init__(self, workspace: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "faceedit_bench.cli", "serve", str(workspace)],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV)
        for line in self.proc.stdout:  # the address line comes once it listens
            if m := re.search(r"open (http://127\.0\.0\.1:\d+)(/\S*\?token=\S+)", line):
                self.base, self.token_url = m.group(1), m.group(1) + m.group(2)
                return
        raise AssertionError("the server printed no address")

    def kill(self) -> None:
        self.proc.kill()  # SIGKILL: no shutdown handler runs
        self.proc.wait(timeout=60)
        self.proc.stdout.close()


def _vote(annotator: int, item_id: str) -> str:
    """What each annotator answers: a fixed choice per item, the second annotator agreeing on most."""
    h = int(hashlib.sha256(item_id.encode()).hexdigest(), 16)
    first = ["A", "B", "both_good", "both_bad"][h % 4]
    return first if annotator == 0 or h % 5 < 3 else ["A", "B", "both_good", "both_bad"][(h // 7) % 4]


def _answer(browser, link: str, annotator: int, given: dict, stop_after: int | None) -> None:
    """Answer from where the list stands (each page: one key), up to ``stop_after`` items in all."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(link)
    while browser.find_elements(By.NAME, "item_id"):
        done = int(browser.find_element(By.ID, "progress").get_attribute("value"))
        if stop_after is not None and done >= stop_after:
            return
        assert browser.execute_script("return document.documentElement.scrollWidth") <= WIDTH
        item = browser.find_element(By.NAME, "item_id").get_attribute("value")
        images = browser.find_elements(By.CSS_SELECTOR, ".study-images img")
        assert len(images) == 3 and all(browser.execute_script("return arguments[0].complete && "
                                                               "arguments[0].naturalWidth > 0", i) for i in images)
        if annotator == 0 and done == 0:
            shot(browser, "study-annotate")
        vote = "both_good" if item.startswith("gold-") else _vote(annotator, item)
        given[(annotator, item)] = vote
        ActionChains(browser).send_keys(KEYS[vote]).perform()
        WebDriverWait(browser, 30, ignored_exceptions=(StaleElementReferenceException,)).until(  # page changing
            lambda b, d=done: b.find_elements(By.ID, "done")
            or int(b.find_element(By.ID, "progress").get_attribute("value")) == d + 1)


@pytest.mark.slow(seconds=50)  # two server starts and 44 answered pages (the runs are shared)
def test_two_annotators_finish_a_study_across_a_killed_server_and_the_agreement_is_right(browser, two_runs, capsys):
    import krippendorff
    import numpy as np
    from selenium.webdriver.common.by import By
    from statsmodels.stats import inter_rater

    from faceedit_bench.storage.study_tables import StudyTables

    runs = sorted(str(p) for p in (two_runs / "runs").iterdir())
    out = _cli("study", "create", *runs, "--kind", "pairwise", "--items", "20", "--annotators", "2",
               "--per-item", "2", "--gold", "2", cwd=two_runs)
    study_id = re.search(r"study (s-[0-9a-f]+)", out).group(1)
    paths = re.findall(r"(a-[0-9a-f]+)\s+(/annotate/\S+)", out)
    assert len(paths) == 2
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    given: dict[tuple[int, str], str] = {}
    server = Server(two_runs)
    try:
        _answer(browser, server.base + paths[0][1], 0, given, stop_after=9)
        _answer(browser, server.base + paths[1][1], 1, given, stop_after=5)
        server.kill()
        tables = StudyTables(two_runs)
        stored = {(a.annotator, a.item_id): a.answer["vote"] for a in tables.answers(study_id)}
        assert len(stored) == 14  # every answer the server acknowledged before it was killed
        server = Server(two_runs)
        browser.get(server.base + paths[0][1])  # resumed where the annotator was
        assert browser.find_element(By.ID, "progress").get_attribute("value") == "9"
        for n, (_, path) in enumerate(paths):
            _answer(browser, server.base + path, n, given, stop_after=None)
            assert browser.find_element(By.ID, "done").is_displayed()
        stored = {(a.annotator, a.item_id): a.answer["vote"] for a in tables.answers(study_id)}
        names = [who for who, _ in paths]
        assert stored == {(names[n], item): vote for (n, item), vote in given.items()}  # exactly what was given
        assert len(stored) == 2 * 22
        browser.get(server.token_url)
        browser.get(f"{server.base}/studies/{study_id}")
        row = browser.find_element(By.CSS_SELECTOR, 'tr[data-question="vote"][data-group="all"]')
        shown_alpha, shown_kappa = float(row.get_attribute("data-alpha")), float(row.get_attribute("data-kappa"))
        assert "2 of 2" in browser.find_element(By.ID, "progress").text  # both passed both gold items
        shot(browser, "study-results")
        assert_nothing_overflows(browser)
        assert [e["message"] for e in severe_errors(browser)] == []
    finally:
        server.kill()
    # directly from the export (in this process: `study create` above is the command's real-process test)
    capsys.readouterr()
    assert run_cli(["study", "export", study_id, "--workspace", str(two_runs)]) == 0
    export = Path(capsys.readouterr().out.strip())
    rows = list(csv.DictReader(export.open()))
    assert len(rows) == 40
    meaning = {"A": "model_a", "B": "model_b"}
    units: dict[str, dict[str, str]] = {}
    for r in rows:
        pair = tuple(sorted((r["model_a"], r["model_b"])))
        units.setdefault(f"{r['input_id']}|{pair}", {})[r["voter_id"]] = r[meaning[r["vote"]]] \
            if r["vote"] in meaning else r["vote"]
    codes = sorted({v for u in units.values() for v in u.values()})
    data = np.array([[codes.index(units[u][who]) for u in sorted(units)] for who in names], dtype=float)
    assert shown_alpha == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    table, _ = inter_rater.aggregate_raters(data.T.astype(int))
    assert shown_kappa == pytest.approx(inter_rater.fleiss_kappa(table, method="fleiss"))


def test_an_organiser_creates_a_study_from_the_apps_form(browser, two_runs):
    from selenium.webdriver.common.by import By

    from faceedit_bench.serve.app import create_app
    from faceedit_bench.serve.security import new_token
    from tests.serve_workspace import serving

    token = new_token()
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    with serving(create_app(two_runs, token=token)) as base:
        browser.get(f"{base}/studies?token={token}")
        assert_nothing_overflows(browser)
        form = browser.find_element(By.ID, "create-study")
        for box in form.find_elements(By.NAME, "run"):
            box.click()
        form.find_element(By.NAME, "items").send_keys("4")
        form.find_element(By.NAME, "gold").clear()
        form.find_element(By.NAME, "gold").send_keys("0")
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        assert_nothing_overflows(browser)
        links = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "#links a")]
        assert len(links) == 2 and all(link.startswith(f"{base}/annotate/s-") for link in links)
        browser.get(links[0])
        assert browser.find_element(By.ID, "progress-text").text == "0 of 4 answered"  # 4 items, 2 per item


@pytest.mark.slow(seconds=15)  # one CREval run through the engine, then one item answered
def test_an_annotator_answers_a_checklist_item_of_a_real_creval_run_with_y_and_n(browser, plugins, compose, tmp_path,
                                                                                monkeypatch):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    from faceedit_bench.serve.app import create_app
    from faceedit_bench.serve.security import new_token
    from faceedit_bench.storage.study_tables import StudyTables
    from faceedit_bench.studies.create import Settings, create_study
    from faceedit_bench.testing import build_run, run_built
    from tests.fakes.creval import answer_body
    from tests.fakes.openai import openai_server
    from tests.serve_workspace import serving

    monkeypatch.setenv("OPENAI_API_KEY", "sk-browser-checklist")
    with openai_server(api_key="sk-browser-checklist", judge_answer=answer_body) as server:
        cfg = compose("experiment=creval", f"dataset.params.root={Path(__file__).parents[1] / 'data' / 'creval_bench'}",
                      "editor=noise", "embedder=pixel", "tracking=none", "run.workers=1",
                      f"judge.params.base_url={server.url}/v1", "judge.params.limits.max_attempts=2")
        run_built(build_run(cfg, plugins), plugins)
    ws = tmp_path / "ws"
    created = create_study(ws, list((ws / "runs").iterdir()), Settings(kind="checklist", items=1, annotators=1,
                                                                        per_item=1, gold=0))
    link = f"/annotate/{created.study_id}/{next(iter(created.links.values()))}"
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    with serving(create_app(ws, token=new_token())) as base:
        browser.get(base + link)
        questions = [f.get_attribute("data-question") for f in browser.find_elements(By.CSS_SELECTOR, "fieldset")]
        images = browser.find_elements(By.CSS_SELECTOR, ".study-images img")
        assert len(questions) >= 3 and len(images) == 2
        assert all(browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", i)
                   for i in images)
        keys = ["y" if n % 3 else "n" for n in range(len(questions))]
        ActionChains(browser).send_keys("n", Keys.BACKSPACE, *keys).perform()  # the first answer taken back
        WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.ID, "done"))
        assert_nothing_overflows(browser)
    (answer,) = StudyTables(ws).answers(created.study_id)
    assert answer.answer == {q: {"y": "Yes", "n": "No"}[k] for q, k in zip(questions, keys)}
