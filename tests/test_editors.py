"""The builtin editors pass the contract every editor plugin should pass."""

from __future__ import annotations

import pytest

from faceedit_bench.builtin.editors import IdentityEditor, ReplayEditor
from faceedit_bench.storage.replay_layout import face_dir
from faceedit_bench.testing import EditorContract, gradient_image


class TestIdentityEditor(EditorContract):
    @pytest.fixture
    def editor(self):
        return IdentityEditor()


class TestReplayEditor(EditorContract):
    @pytest.fixture
    def editor(self, tmp_path):
        step = tmp_path / face_dir("face-1") / "hair-01"
        step.mkdir(parents=True)
        (step / "step_1.png").write_bytes(gradient_image(3))
        return ReplayEditor(str(tmp_path))


class TestReplayEditorWithoutImages(EditorContract):
    @pytest.fixture
    def editor(self, tmp_path):
        return ReplayEditor(str(tmp_path))  # every step: outcome no_image, with a reason
