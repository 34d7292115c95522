"""An MLLM writes a test set's instructions step by step; the result is frozen, versioned, cached."""

from __future__ import annotations

import json

import pytest

from faceedit_bench.cli import main
from faceedit_bench.testsets import load_testset
from tests.fakes.gemini import gemini_server

KEY = "test-gemini-key"


def writer(request: dict) -> str:
    """A fake instruction writer: repeats the attribute it was asked for, and sees earlier steps."""
    text = "\n".join(p.get("text", "") for c in request["contents"] for p in c["parts"])
    attribute = text.split("- attribute: ")[1].splitlines()[0]
    first = "none (this is the first instruction)" in text
    return json.dumps({"instruction": f"please apply {attribute}" + ("" if first else " too")})


def test_write_instructions_freezes_a_new_test_set_and_reuses_answers(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    out = tmp_path / "pose-mllm.json"
    with gemini_server(api_key=KEY, judge_answer=writer) as server:
        args = ["write-instructions", "pose", "--judge", "gemini", "-p", f"base_url={server.url}",
                "--out", str(out), "--workspace", str(tmp_path / "ws")]
        assert main(args) == 0
        calls = server.calls
        assert calls == 5 * 4
        written = load_testset(out)
        source = load_testset("pose")
        assert written.name == "pose-mllm" and len(written.sessions) == len(source.sessions)
        for new, old in zip(written.sessions, source.sessions):
            assert [s.attribute for s in new.steps] == [s.attribute for s in old.steps]
            assert new.steps[0].instruction == f"please apply {old.steps[0].attribute}"
            assert new.steps[1].instruction.endswith(" too")  # P1's metadata was given for P2
        content = json.loads(out.read_text())
        assert content["generator"]["name"] == "mllm" and content["generator"]["prompt"]["reconstruction"]
        assert content["generator"]["from"]["content_hash"] == source.content_hash
        assert main(args) == 2 and "never overwritten" in capsys.readouterr().err
        assert main([*args, "--force"]) == 0
        assert server.calls == calls, "answers are cached in the ledger"


def test_a_refused_step_stops_the_build_and_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    out = tmp_path / "x.json"
    with gemini_server(api_key=KEY, judge_answer=lambda request: "I would rather not.") as server:
        code = main(["write-instructions", "pose", "--judge", "gemini", "-p", f"base_url={server.url}",
                     "--out", str(out), "--workspace", str(tmp_path / "ws")])
    assert code == 2 and not out.exists()
    assert "parse_error" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["model", "=x"])
def test_params_must_be_key_value(tmp_path, bad, capsys):
    code = main(["write-instructions", "pose", "--judge", "gemini", "-p", bad, "--out", str(tmp_path / "o.json")])
    assert code == 2
