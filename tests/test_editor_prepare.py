"""Each hosted editor's ``prepare`` (the capability the engine calls beside the first admission) imports
what its first call needs, in a fresh interpreter, and makes no call."""

from __future__ import annotations

import json
import os
import subprocess
import sys

#: editor -> the modules its first call imports, which ``prepare`` imports ahead of it.
FIRST_CALL_MODULES = {
    "nano_banana": ["google.genai", "requests"],
    "gpt_image": ["openai"],
    "seedream": ["byteplussdkarkruntime"],
    "replicate": ["replicate", "httpx"],
    "kontext_pro": ["httpx2"],
}
#: The parameters each is built with besides ``base_url``.
PARAMS = {"replicate": {"model": "bytedance/bagel:" + "7" * 64, "prices": {}}}

PROBE = """
import json, sys
from faceedit_bench.plugin.manager import get_plugins
from faceedit_bench.plugin.protocols import capability
registry, found, params = get_plugins().registry, {}, json.loads(sys.argv[2])
for name, modules in json.loads(sys.argv[1]).items():
    editor = registry.create("editors", name, {"base_url": "http://127.0.0.1:9", **params.get(name, {})})
    before = [m for m in modules if m in sys.modules]
    capability(editor, "editor", "prepare")()
    found[name] = {"before": before, "after": [m for m in modules if m in sys.modules]}
print(json.dumps(found))
"""


def test_each_hosted_editors_prepare_imports_what_its_first_call_needs():
    env = {**os.environ, **{k: "sk-prepare-test" for k in ("GEMINI_API_KEY", "OPENAI_API_KEY", "ARK_API_KEY",
                                                           "REPLICATE_API_TOKEN", "BFL_API_KEY")}}
    probe = subprocess.run([sys.executable, "-c", PROBE, json.dumps(FIRST_CALL_MODULES), json.dumps(PARAMS)], env=env,
                           capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0, probe.stderr[-3000:]
    found = json.loads(probe.stdout)
    for name, modules in FIRST_CALL_MODULES.items():
        assert found[name]["after"] == modules, name
    assert found["nano_banana"]["before"] == []  # building the editor imports no SDK
