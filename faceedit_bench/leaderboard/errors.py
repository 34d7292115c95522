"""Errors of the submission flow: the submission's fault, or the verifier's environment."""

from __future__ import annotations

from faceedit_bench.errors import FaceEditBenchError


class SubmissionRejected(FaceEditBenchError):
    """The submission cannot be accepted as it is (invalid, oversized, unsafe or tampered)."""


class VerificationUnavailable(FaceEditBenchError):
    """This installation cannot verify the submission (a different embedder or judge version,
    a missing dataset): nothing is wrong with the submission itself, so nothing is recorded."""
