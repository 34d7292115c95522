"""Leaderboard: submissions (``submit``), verification by re-scoring (``verify``) and the
generated pages (``leaderboard build``). Described in docs/submissions.md.

Submissions come from strangers: everything read from one is bounded, validated against
``faceedit_bench/schemas/submission.schema.json``, hash-checked and escaped before display.

* Submitting: ``submit``, ``record`` and ``record_sections`` (a run as a submission record), ``bundle`` (the
  bundle on disk), ``schema``, ``limits`` (bounds for untrusted files), ``errors``.
* Verifying: ``verify``, ``reproduction`` (field-by-field comparison), ``tolerances``, ``judged_comparison``
  (judged means against a re-scoring, as distributions), ``consistency`` (a submission's figures against its own
  tables, verified or not).
* The pages: ``build``, ``entries``, ``views``, ``named_views``, ``across`` (all test sets), ``references``
  (the identity baseline), ``group_test_sections``, ``cells`` (tables as plain data), ``render_html`` and
  ``render_markdown``.
"""

from faceedit_bench.leaderboard.errors import SubmissionRejected, VerificationUnavailable

SUBMISSION_SCHEMA_ID = "faceedit_bench/submission"
SUBMISSION_SCHEMA_VERSION = "1.2"

__all__ = ["SUBMISSION_SCHEMA_ID", "SUBMISSION_SCHEMA_VERSION", "SubmissionRejected", "VerificationUnavailable"]
