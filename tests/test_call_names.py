"""Provider calls as people and trackers read them (issue 25, item 9): by role, named by provider, model and
endpoint host; the internal provider key (endpoint, key variable) never becomes a metric name or a row."""

from __future__ import annotations

from types import SimpleNamespace

from faceedit_bench.report.calls_view import call_sources, calls_metrics
from faceedit_bench.report.console import render
from faceedit_bench.report.run_report import metric_key
from faceedit_bench.report.summary_tables import calls_tables
from faceedit_bench.run.call_roles import call_roles, call_tags, calls_section

STATS = {"calls": 12, "attempts": 14, "succeeded": 12, "retries": {"rate_limited": 2}, "gave_up": {},
         "other_requests": {}}


def _report(endpoint: str) -> dict:
    """The calls section of a run whose editor calls Gemini at ``endpoint`` (direct, or through a gateway)."""
    key = f"gemini:{endpoint}:GEMINI_API_KEY:gemini-2.5-flash-image"
    limits = SimpleNamespace(provider_key=key, endpoint=endpoint)
    components = {"editor": SimpleNamespace(limits=limits)}
    infos = {"editor": SimpleNamespace(name="nano_banana", description={"model": "gemini-2.5-flash-image"})}
    roles = call_roles(components, infos)
    return {"calls": calls_section({key: {**STATS, "endpoint": endpoint}}, roles), "tags": call_tags(roles)}


def test_a_gateway_run_and_a_direct_run_have_the_same_metric_names():
    direct, gateway = _report("https://generativelanguage.googleapis.com"), _report("http://127.0.0.1:18977")
    assert calls_metrics(direct, metric_key).keys() == calls_metrics(gateway, metric_key).keys()
    assert calls_metrics(gateway, metric_key) == {"calls_editor": 12, "calls_editor_attempts": 14,
                                                  "calls_editor_succeeded": 12,
                                                  "calls_editor_retries_rate_limited": 2}
    assert gateway["tags"] == {"calls.editor.endpoint": "http://127.0.0.1:18977"}  # where they went: a tag
    secret = _report("https://me:s3cret@gateway.example/v1?token=abc")
    assert secret["tags"] == {"calls.editor.endpoint": "https://gateway.example/v1"}
    assert "s3cret" not in str(secret) and "token" not in str(secret)  # the report's calls section neither


def test_a_panel_names_each_member_and_shared_keys_name_both_roles():
    member = SimpleNamespace(limits=SimpleNamespace(provider_key="openai:default:OPENAI_API_KEY:gpt-5-mini",
                                                    endpoint="https://api.openai.com/v1"))
    shared = SimpleNamespace(provider_key="gemini:default:GEMINI_API_KEY:gemini-2.5-flash", endpoint="")
    components = {"editor": SimpleNamespace(limits=shared),
                  "judge": SimpleNamespace(members={"gemini": SimpleNamespace(limits=shared), "gpt": member})}
    infos = {"editor": SimpleNamespace(name="nano_banana", description={"model": "gemini-2.5-flash"}),
             "judge": SimpleNamespace(name="panel", description={"members": {
                 "gemini": {"name": "gemini", "model": "gemini-2.5-flash"},
                 "gpt": {"name": "openai", "model": "gpt-5-mini"}}})}
    roles = call_roles(components, infos)
    assert [r["role"] for r in roles[shared.provider_key]] == ["editor", "judge_gemini"]
    report = {"calls": calls_section({shared.provider_key: STATS, member.limits.provider_key: STATS}, roles)}
    assert {s.role for s, _ in call_sources(report)} == {"editor+judge_gemini", "judge_gpt"}
    assert "calls_editor_judge_gemini" in calls_metrics(report, metric_key)


def test_reports_written_before_roles_are_read_by_provider_model_and_host():
    old = {"calls": {"gemini:http://127.0.0.1:18977:GEMINI_API_KEY:gemini-2.5-flash": dict(STATS),
                     "replicate:default:REPLICATE_API_TOKEN:owner/model:abc123": dict(STATS),
                     "local:flux_kontext_dev": dict(STATS)}}
    sources = [s for s, _ in call_sources(old)]
    assert [s.name for s in sources] == ["gemini · gemini-2.5-flash · 127.0.0.1:18977",
                                         "replicate · owner/model:abc123", "local · flux_kontext_dev"]
    names = calls_metrics(old, metric_key)
    assert "calls_gemini_gemini_2_5_flash" in names and not [k for k in names if "127" in k or "api_key" in k]


def test_the_console_calls_table_names_roles_and_never_the_key_variable():
    text = render(calls_tables(_report("http://127.0.0.1:18977"), 100), 100)
    assert text.splitlines()[2].split()[:3] == ["editor", "12", "14"]
    assert "editor: gemini · gemini-2.5-flash-image · 127.0.0.1:18977" in text
    assert "GEMINI_API_KEY" not in text and "calls   calls" not in text
