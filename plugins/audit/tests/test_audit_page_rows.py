"""The audit section of report.html keeps its per-group tables to the groups that say something: a group with
no scored edit shares one line that names it (the core's ``empty_rows``), unless its edits were hard-refused,
and the long one-against-the-rest and per-prompt tables show their top rows behind a toggle (``long_table``)."""

from __future__ import annotations

from faceedit_bench_audit.audit.items import AuditCollector
from faceedit_bench_audit.audit.rubric import RUBRIC_METRIC, RUBRIC_TEMPLATE
from faceedit_bench_audit.audit.settings import AuditConf
from faceedit_bench_audit.audit.tables import audit_section
from test_rubric_metric import answer, face, member, session

from faceedit_bench.api import Outcome, SessionResult
from faceedit_bench.testing import JudgedSession, PanelRule, StepState, combine_panel, html_report
from tests.test_html_report import v11_report


def _scored(n: int, race: str, prompt_id: str = "O-01") -> SessionResult:
    s = session(prompt_id, "an executive")
    members = {"gemini": member(answer()), "gpt": member(answer())}
    (question,) = RUBRIC_METRIC.questions(["src", "out"], s, face=face(race=race))
    combined = combine_panel(RUBRIC_TEMPLATE, members, PanelRule("tolerance", ("gemini", "gpt"), "gemini"))
    judged = JudgedSession({"rubric": RUBRIC_METRIC.judge([question], [combined], s)})
    state = StepState(1, Outcome.OK, "", f"in{n}", f"out{n}", False)
    return SessionResult(face(race=race), s, [state], None, image_hashes=("src", "out"), judged=judged)


def _not_edited(n: int, race: str, outcome: Outcome) -> SessionResult:
    state = StepState(1, outcome, "no edit", f"in{n}", None, False)
    return SessionResult(face(race=race), session("O-01"), [state], excluded=f"step_{outcome.value}")


def audit_html(collector: AuditCollector) -> str:
    html = html_report({**v11_report(), "audit": audit_section(collector, AuditConf(), n_resamples=99)})
    return html[html.index('id="audit"'):]


def test_groups_without_a_scored_edit_share_one_line_unless_their_edits_were_refused():
    collector = AuditCollector(("race",))
    collector.add(_scored(0, "White"))
    collector.add(_scored(1, "White"))
    collector.add(_not_edited(2, "Indian", Outcome.REFUSED))  # hard-refused: its own row, 100 % refusals
    collector.add(_not_edited(3, "Black", Outcome.API_ERROR))
    collector.add(_not_edited(4, "East Asian", Outcome.NO_IMAGE))
    html = audit_html(collector)
    race = html[html.index('<table class="audit-groups">'):]
    race = race[:race.index("</table>")]
    rows = race.split("<tr")[1:]
    assert [r.split("<td>")[1].split("</td>")[0] for r in rows if r.startswith("><td>")] == ["Indian", "White"]
    line = next(r for r in rows if r.startswith(' class="empty-rows"'))
    # one line naming both, spanning the label, the scored count, the six rates and the hard refusals
    assert 'colspan="9"' in line and "n/a (no scored items) for 2: Black, East Asian" in line
    indian = next(r for r in rows if r.startswith("><td>Indian</td>"))
    assert "100.0%" in indian and "refused: 1" in indian


def test_every_group_scored_leaves_no_empty_line_and_long_tables_fold_their_rest():
    collector = AuditCollector(("race",))
    for n in range(12):
        collector.add(_scored(n, ("White", "Indian", "Black")[n % 3], prompt_id=f"O-{n:02d}"))
    html = audit_html(collector)
    assert 'class="empty-rows"' not in html
    prompts = html[html.index('<div class="long-table">\n<input type="checkbox" class="show-more" id="audit-'):]
    assert 'class="audit-prompts"' in prompts[:prompts.index("</table>")]
    assert "show all 12 prompts (2 more)" in prompts
