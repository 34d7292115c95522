"""Endpoints of the hosted plugins, with the real SDKs against 127.0.0.1 only.

* the SDKs' standard variables (OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL, REPLICATE_BASE_URL) are
  honoured, the config's base_url wins over them, the effective endpoint is recorded, and the
  config comments say so;
* a dead endpoint (closed port, a host name that does not resolve, a server that accepts
  connections and never answers) ends the run with one plain message naming it, and nothing
  finished is lost.

The CLI runs load a ``sitecustomize`` that answers every DNS lookup but loopback's with "not
known" and refuses connections to anything but loopback, so no test can reach outside; the commands run
in the test's process (tests/cli_in_process.py: where the process itself is not the subject) get the same
guard there.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from faceedit_bench.errors import ConfigError
from faceedit_bench.execution.calls import Executor
from faceedit_bench.records import EditRequest, Outcome
from tests.cli_in_process import bench_in_process
from tests.fakes.gemini import gemini_server
from tests.fakes.openai import openai_server

ROOT = Path(__file__).resolve().parent.parent
GEMINI_KEY = "AIzaTEST-endpoints-3c9d1f7a2b"
OPENAI_KEY = "sk-TEST-endpoints-8e1a4c6d2f"
FAST = ["tracking=none", "run.max_faces=1", "run.max_sessions=3", "run.workers=1", "run.progress=false",
        "testset=pose"]
#: A dead endpoint is declared after 3 failed attempts; their backoff (1 s, then 2 s by default) is not under test.
QUICK_RETRIES = [f"editor.params.limits.{k}" for k in ("backoff_initial_s=0.01", "backoff_max_s=0.05")]
OFFLINE = '''
import errno, socket
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
_getaddrinfo, _connect = socket.getaddrinfo, socket.socket.connect
def getaddrinfo(host, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else host
    if name is None or name in _LOOPBACK:
        return _getaddrinfo(host, *args, **kwargs)
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
def connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in _LOOPBACK:
        raise OSError(errno.ENETUNREACH, "the test blocks traffic to " + str(address[0]))
    return _connect(self, address)
socket.getaddrinfo, socket.socket.connect = getaddrinfo, connect
'''


def free_port() -> int:
    with socket.socket() as sock:  # bound, then closed: nobody listens there
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def bench(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    offline = tmp_path / "offline"
    offline.mkdir(exist_ok=True)
    (offline / "sitecustomize.py").write_text(OFFLINE)
    environment = {k: v for k, v in os.environ.items() if not k.endswith("_BASE_URL")}
    environment.update(FACEEDIT_BENCH_HOME=str(tmp_path / "ws"), GEMINI_API_KEY=GEMINI_KEY, OPENAI_API_KEY=OPENAI_KEY,
                       PYTHONPATH=os.pathsep.join([str(offline), str(ROOT)]), **env)
    return subprocess.run([sys.executable, "-m", "faceedit_bench", *args], capture_output=True, text=True,
                          cwd=tmp_path, env=environment, timeout=600)


@pytest.fixture
def bench_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str], plugins: Any):
    """``bench`` run in this process, behind the same guard, with the test plugin (its pixel embedder: the
    endpoints, not identity, are under test)."""
    monkeypatch.setattr(socket, "getaddrinfo", socket.getaddrinfo)  # restored after the test
    monkeypatch.setattr(socket.socket, "connect", socket.socket.connect)
    exec(OFFLINE, {})
    return lambda *args, **env: bench_in_process(monkeypatch, capfd, tmp_path, *args, "embedder=pixel", env=env,
                                                 plugins=plugins)


def report_of(tmp_path: Path) -> dict[str, Any]:
    (path,) = sorted((tmp_path / "ws" / "runs").glob("*/report.json"), key=lambda p: p.stat().st_mtime)[-1:]
    return json.loads(path.read_text())


@pytest.fixture(autouse=True)
def _no_endpoint_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL", "REPLICATE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)


# -- a dead endpoint ---------------------------------------------------------------------------


# In this process, a client left open into a closed event loop would be an unraisable exception: an error here.
@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("editor", ["nano_banana", "gpt_image"])
@pytest.mark.parametrize("dead", ["closed_port", "unresolvable"])
def test_a_dead_endpoint_ends_the_run_with_one_message(tmp_path, bench_here, editor, dead):
    """A closed port, in a process of its own (its exit status, and what the interpreter prints as it exits); an
    unresolvable name, in this process (the same command code; its leftovers collected before the test ends)."""
    suffix = "/v1" if editor == "gpt_image" else ""
    url = f"http://127.0.0.1:{free_port()}{suffix}" if dead == "closed_port" else f"http://nonexistent.invalid{suffix}"
    variable = "OPENAI_BASE_URL" if editor == "gpt_image" else "GOOGLE_GEMINI_BASE_URL"
    if dead == "closed_port":  # set in config
        out = bench(tmp_path, f"editor={editor}", f"editor.params.base_url={url}", *FAST, *QUICK_RETRIES)
        source = "from editor.params.base_url"
    else:  # set by the SDK's environment variable
        out = bench_here(f"editor={editor}", *FAST, *QUICK_RETRIES, **{variable: url})
        gc.collect()  # what an exiting interpreter would finalise
        source = f"from ${variable}"
    log = out.stdout + out.stderr
    assert out.returncode == 2, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    for noise in ("Event loop is closed", "Exception ignored", "Task was destroyed"):  # clients closed in their loop
        assert noise not in log, log[-3000:]
    errors = [line for line in log.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, log[-3000:]  # one message, not one per call
    assert f"Error: Cannot connect to {url} ({source}" in out.stderr
    assert ("Connect call failed" in log or "Connection refused" in log or "Connection error" in log
            if dead == "closed_port" else "Name or service not known" in log), log[-3000:]
    assert "3 attempts in a row failed to connect" in log and "run the same command again to resume" in log
    assert "gave up" not in log  # no call was recorded as api_error on the way
    assert " object at 0x" not in log, log[-3000:]  # e.g. aiohttp's ssl:<ssl.SSLContext object at 0x...>
    if editor == "nano_banana" and dead == "closed_port":
        assert f"cannot connect to 127.0.0.1:{url.rsplit(':', 1)[1]}: Connection refused" in log, log[-3000:]


@pytest.mark.parametrize(("editor", "base_url"), [
    ("faceedit_bench_byteplus.editor:SeedEditEditor", "http://127.0.0.1:9/api/v3"),
    ("faceedit_bench_replicate.editor:ReplicateEditor", "http://127.0.0.1:9"),
    ("faceedit_bench_bfl.editor:KontextProEditor", "http://127.0.0.1:9"),
])
def test_every_hosted_editor_names_its_endpoint_for_the_dead_endpoint_message(monkeypatch, editor, base_url):
    import importlib

    from faceedit_bench_replicate.editor import ReplicateEditor

    for variable in ("ARK_API_KEY", "REPLICATE_API_TOKEN", "BFL_API_KEY"):
        monkeypatch.setenv(variable, "test-key-0123456789")
    module, name = editor.split(":")
    cls = getattr(importlib.import_module(module), name)
    extra = {"model": "black-forest-labs/flux-kontext-pro:" + "0a" * 32} if cls is ReplicateEditor else {}
    limits = cls(base_url=base_url, **extra).limits
    assert (limits.endpoint, limits.endpoint_source) == (base_url, "from editor.params.base_url")
    default = cls(**extra).limits
    assert default.endpoint.startswith("https://") and "editor.params.base_url" in default.endpoint_source


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port whose server accepts connections (the kernel completes them) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        yield sock.getsockname()[1]


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("editor", ["nano_banana", "gpt_image"])
def test_an_endpoint_that_accepts_and_never_answers_ends_the_run(bench_here, editor, silent_port):
    url = f"http://127.0.0.1:{silent_port}" + ("/v1" if editor == "gpt_image" else "")
    out = bench_here(f"editor={editor}", f"editor.params.base_url={url}", "editor.params.limits.timeout_s=1",
                     *QUICK_RETRIES, *FAST)
    gc.collect()  # what an exiting interpreter would finalise
    log = out.stdout + out.stderr
    assert out.returncode == 2, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    (error,) = [line for line in log.splitlines() if line.startswith("Error:")]
    assert error.startswith(f"Error: No answer from {url} (from editor.params.base_url): "), error
    assert "3 attempts in a row got no answer within limits.timeout_s=1 s" in error
    assert "accepts connections but never answers" in error and "run the same command again to resume" in error
    assert "gave up" not in log  # no call was recorded as api_error on the way


def test_a_dead_endpoint_loses_nothing_and_the_rerun_resumes(bench_here, tmp_path):
    port = free_port()
    editor = ["editor=nano_banana", f"editor.params.base_url=http://127.0.0.1:{port}", *QUICK_RETRIES]
    common = ["tracking=none", "run.max_sessions=1", "run.workers=1", "run.progress=false", "testset=pose"]
    with gemini_server(api_key=GEMINI_KEY, port=port) as fake:
        first = bench_here(*editor, *common, "run.max_faces=1")
        assert first.returncode == 0, first.stderr[-3000:]
        assert fake.calls == 4
    # The server is gone: face 1 comes from the ledger, face 2's calls cannot connect.
    dead = bench_here(*editor, *common, "run.max_faces=2")
    assert dead.returncode == 2 and f"Cannot connect to http://127.0.0.1:{port}" in dead.stderr, dead.stderr[-3000:]
    with gemini_server(api_key=GEMINI_KEY, port=port) as fake:
        rerun = bench_here(*editor, *common, "run.max_faces=2")
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        assert fake.calls == 4  # only face 2's steps: nothing finished before was paid again
    report = report_of(tmp_path)
    assert report["run"]["computed"]["edit_calls"] == 4
    assert report["counts"]["steps"] == {"ok": 8}


# -- the SDKs' endpoint variables ------------------------------------------------------------------


def edit_once(editor: Any) -> Any:
    async def run() -> Any:
        request = EditRequest(_png(), "add a hat", "f1", "s1", 1, 7)
        return await Executor(editor.limits).call(lambda: editor.aedit(request))

    return asyncio.run(run())


def _png() -> bytes:
    from faceedit_bench.testing import gradient_image

    return gradient_image(1, 32)


def test_openai_base_url_in_the_environment_is_honoured_and_recorded(monkeypatch):
    from faceedit_bench_openai.editor import GptImageEditor
    from faceedit_bench_openai.judge import OpenAIJudge

    with openai_server(api_key=OPENAI_KEY) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{fake.url}/v1")
        editor = GptImageEditor(limits={"requests_per_minute": None, "tokens_per_minute": None})
        # Checked before any call: code that ignored the variable must fail here, not call the public host.
        assert editor.describe()["base_url"] == f"{fake.url}/v1"
        assert editor.limits.endpoint == f"{fake.url}/v1"
        assert editor.limits.endpoint_source == "from $OPENAI_BASE_URL, as editor.params.base_url is null"
        assert edit_once(editor).outcome is Outcome.OK and fake.calls == 1  # the request reached the gateway
        assert OpenAIJudge().describe()["base_url"] == f"{fake.url}/v1"


def test_openai_config_base_url_wins_over_the_environment(monkeypatch):
    from faceedit_bench_openai.editor import GptImageEditor

    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")  # dead: must not be used
    with openai_server(api_key=OPENAI_KEY) as fake:
        editor = GptImageEditor(base_url=f"{fake.url}/v1", limits={"requests_per_minute": None})
        assert edit_once(editor).outcome is Outcome.OK and fake.calls == 1
        assert editor.limits.endpoint_source == "from editor.params.base_url"


def test_openai_default_endpoint_keeps_its_identity(monkeypatch):
    from faceedit_bench_openai.editor import GptImageEditor

    default = GptImageEditor()
    assert "base_url" not in default.describe()  # cache keys of earlier runs stay valid
    assert default.limits.provider_key == "openai:default:OPENAI_API_KEY:gpt-image-1"
    assert default.limits.endpoint == "https://api.openai.com/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.openai.com/v1/")  # the same host, spelt differently
    assert GptImageEditor().describe() == default.describe()
    monkeypatch.setenv("OPENAI_BASE_URL", "api.example.com")
    with pytest.raises(ConfigError, match=r"\$OPENAI_BASE_URL='api.example.com' is not an endpoint"):
        GptImageEditor()


def test_gemini_base_url_in_the_environment_is_honoured_and_recorded(monkeypatch):
    from faceedit_bench_gemini.editor import NanoBananaEditor
    from faceedit_bench_gemini.judge import GeminiJudge

    default = NanoBananaEditor()
    assert "base_url" not in default.describe()
    assert default.limits.provider_key == "gemini:default:GEMINI_API_KEY:gemini-2.5-flash-image"
    with gemini_server(api_key=GEMINI_KEY) as fake:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        editor = NanoBananaEditor(limits={"requests_per_minute": None, "tokens_per_minute": None})
        assert editor.describe()["base_url"] == fake.url == editor.limits.endpoint  # before any call, as above
        assert edit_once(editor).outcome is Outcome.OK and fake.calls == 1
        assert GeminiJudge().describe()["base_url"] == fake.url
        # The config wins over the environment.
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", f"http://127.0.0.1:{free_port()}")
        configured = NanoBananaEditor(base_url=fake.url, limits={"requests_per_minute": None})
        assert edit_once(configured).outcome is Outcome.OK and fake.calls == 2
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "generativelanguage.example")
    with pytest.raises(ConfigError, match="GOOGLE_GEMINI_BASE_URL"):
        NanoBananaEditor()


def test_the_report_records_the_effective_endpoint(bench_here, tmp_path):
    with gemini_server(api_key=GEMINI_KEY) as fake:
        out = bench_here("editor=nano_banana", *FAST, GOOGLE_GEMINI_BASE_URL=fake.url)
        assert out.returncode == 0, out.stderr[-3000:]
        assert fake.calls == 12
    report = report_of(tmp_path)
    (calls,) = report["calls"].values()
    assert calls["endpoint"] == fake.url and calls["endpoint_source"].startswith("from $GOOGLE_GEMINI_BASE_URL")
    assert report["components"]["editor"]["description"]["base_url"] == fake.url


def test_replicate_base_url_in_the_environment_is_honoured_and_recorded(monkeypatch):
    from faceedit_bench_replicate.editor import ReplicateEditor

    from tests.fakes.replicate import DEFAULT_TOKEN, KONTEXT_VERSION, replicate_server

    monkeypatch.setenv("REPLICATE_API_TOKEN", DEFAULT_TOKEN)
    default = ReplicateEditor(model=KONTEXT_VERSION)
    assert "base_url" not in default.describe() and default.limits.endpoint == "https://api.replicate.com"
    with replicate_server(sync_wait_s=0.05) as fake:
        fake.add_version(KONTEXT_VERSION)
        monkeypatch.setenv("REPLICATE_BASE_URL", fake.url)
        limits = {"requests_per_minute": None, "timeout_s": 10.0}
        editor = ReplicateEditor(model=KONTEXT_VERSION, poll_interval_s=0.02, max_wait_s=2.0, limits=limits)
        assert editor.describe()["base_url"] == fake.url == editor.limits.endpoint  # before any call
        assert editor.limits.endpoint_source == "from $REPLICATE_BASE_URL, as editor.params.base_url is null"
        assert edit_once(editor).outcome is Outcome.OK and fake.calls >= 1  # the request reached the gateway
    monkeypatch.setenv("REPLICATE_BASE_URL", "api.example.com")
    with pytest.raises(ConfigError, match=r"\$REPLICATE_BASE_URL='api.example.com' is not an endpoint"):
        ReplicateEditor(model=KONTEXT_VERSION)


#: The plugins whose SDK reads an endpoint variable, and its name (the connection module's BASE_URL_ENV).
HONOURED = {"gemini": "faceedit_bench_gemini.connection", "openai": "faceedit_bench_openai.connection",
            "replicate": "faceedit_bench_replicate.connection"}


@pytest.mark.parametrize("plugin", sorted(HONOURED))
def test_config_comments_say_what_the_code_does_with_the_endpoint_variable(plugin):
    import importlib

    variable = importlib.import_module(HONOURED[plugin]).BASE_URL_ENV
    entries = sorted((ROOT / "plugins" / plugin).glob("faceedit_bench_*/conf/*/*.yaml"))
    checked = 0
    for entry in entries:
        lines = entry.read_text().splitlines()
        at = next((i for i, line in enumerate(lines) if line.strip().startswith("base_url:")), None)
        if at is None or "null" not in lines[at]:
            continue
        comment = []
        for line in reversed(lines[:at]):
            if not line.strip().startswith("#"):
                break
            comment.insert(0, line.strip().lstrip("# "))
        text = " ".join(comment)
        assert f"${variable}" in text, f"{entry.name}: the base_url comment does not say that ${variable} is used"
        assert not any(w in text.lower() for w in ("ignored", "not honoured", "deliberately")), f"{entry.name}: {text}"
        checked += 1
    assert checked, f"no config entry of {plugin} with base_url: null"
