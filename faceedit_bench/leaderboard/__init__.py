"""Leaderboard: submissions (``submit``), verification by re-scoring (``verify``) and the
generated pages (``leaderboard build``). Described in docs/submissions.md.

Submissions come from strangers: everything read from one is bounded, validated against
``faceedit_bench/schemas/submission.schema.json``, hash-checked and escaped before display.
"""

from faceedit_bench.leaderboard.errors import SubmissionRejected, VerificationUnavailable

SUBMISSION_SCHEMA_ID = "faceedit_bench/submission"
SUBMISSION_SCHEMA_VERSION = "1.2"

__all__ = ["SUBMISSION_SCHEMA_ID", "SUBMISSION_SCHEMA_VERSION", "SubmissionRejected", "VerificationUnavailable"]
