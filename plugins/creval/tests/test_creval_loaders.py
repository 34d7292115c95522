"""The package's two question-set loaders pass the contract every question-set loader must pass."""

from __future__ import annotations

import pytest
from creval_support import FIXTURE

from faceedit_bench.api import registered
from faceedit_bench.testing import QuestionSetLoaderContract


class TestCrevalBenchQuestions(QuestionSetLoaderContract):
    @pytest.fixture
    def loader(self):
        return registered("question_sets", "creval_bench")

    @pytest.fixture
    def source(self):
        return FIXTURE


class TestFrozenQuestionFile(QuestionSetLoaderContract):
    @pytest.fixture
    def loader(self):
        return registered("question_sets", "file")

    @pytest.fixture
    def source(self, tmp_path):
        """The CREval-Bench fixture's questions, frozen into a question-set file as `questions freeze` writes it."""
        path = tmp_path / "questions.json"
        path.write_text(registered("question_sets", "creval_bench")(str(FIXTURE)).to_json(), encoding="utf-8")
        return path
