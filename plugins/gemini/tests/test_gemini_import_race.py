"""An edit made while another thread is importing ``requests`` (MLflow opening on its thread does) succeeds.

The SDK reads ``sys.modules["requests"]`` without importing it; seen half-initialised, the call failed with
"partially initialized module 'requests' has no attribute 'structures'". Run in a fresh interpreter, where
nothing has imported ``requests`` yet; the other thread's import is held open until 1 s after the edit starts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from gemini_helpers import FAST_LIMITS, KEY

from tests.fakes.gemini import GeminiServer

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = textwrap.dedent('''
    import asyncio, importlib.util, sys, threading
    from faceedit_bench_gemini.editor import NanoBananaEditor
    from faceedit_bench.api import EditRequest
    from faceedit_bench.testing import Executor, gradient_image
    import google.genai  # noqa: F401 - as a run has it before its first call

    assert "requests" not in sys.modules, "this check needs an interpreter that has not imported requests"
    importing, finish = threading.Event(), threading.Event()

    class HeldOpen:
        """The real loader, paused once the module is in sys.modules and before its body runs."""
        def __init__(self, real):
            self.real = real
        def create_module(self, spec):
            return self.real.create_module(spec)
        def exec_module(self, module):
            importing.set()
            finish.wait()
            self.real.exec_module(module)

    class SlowRequests:
        def find_spec(self, name, path=None, target=None):
            if name != "requests":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec("requests")
            spec.loader = HeldOpen(spec.loader)
            return spec

    sys.meta_path.insert(0, SlowRequests())
    threading.Thread(target=lambda: __import__("requests"), daemon=True).start()
    importing.wait()

    async def edit():
        threading.Timer(1.0, finish.set).start()  # a timer thread: the edit may block this one on the import
        editor = NanoBananaEditor(base_url=sys.argv[1], limits=%(limits)r)
        request = EditRequest(gradient_image(1), "make the hair red", "face-1", "hair-01", 1, 7)
        return await Executor(editor.limits).call(lambda: editor.aedit(request))

    result = asyncio.run(edit())
    print(result.outcome.value, result.reason)
''') % {"limits": FAST_LIMITS}


def test_an_edit_while_another_thread_imports_requests_succeeds(fake: GeminiServer, tmp_path):
    env = {**os.environ, "GEMINI_API_KEY": KEY,
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop("GOOGLE_API_KEY", None)
    script = tmp_path / "edit.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script), fake.url], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[0] == "ok", done.stdout + done.stderr[-3000:]
