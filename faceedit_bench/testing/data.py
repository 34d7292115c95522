"""Contract mixins for the components that provide data: datasets and test-set loaders."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from faceedit_bench.errors import ConfigError, FaceEditBenchError
from faceedit_bench.plugin.protocols import DATASET_CAPABILITIES, Dataset, capability
from faceedit_bench.records import Face, Session, Step, TestSet
from faceedit_bench.testing.helpers import json_description


class DatasetContract:
    """Checks every dataset must pass. Subclass and provide a ``dataset`` fixture that yields
    at least one face."""

    def test_describe_is_json(self, dataset: Any) -> None:
        assert isinstance(dataset, Dataset)
        json_description(dataset)

    def test_capabilities_are_valid(self, dataset: Any) -> None:
        try:
            values = {c.name: capability(dataset, "dataset", c.name) for c in DATASET_CAPABILITIES}
        except ConfigError as exc:
            pytest.fail(str(exc))
        partners = values["partners"]()
        assert isinstance(partners, Iterator), "partners() yields lazily, like faces()"
        base = {face.face_id for face in dataset.faces()}
        offered = {face.face_id for face in partners if isinstance(face, Face)}
        assert base <= offered, f"partners() lacks base faces {sorted(base - offered)[:5]}"

    def test_faces_are_lazy_and_reproducible(self, dataset: Any) -> None:
        faces = dataset.faces()
        assert isinstance(faces, Iterator), "faces() yields lazily: an iterator, not a list"
        first = [face.face_id for face in faces]
        assert first, "the contract's dataset must yield at least one face"
        assert [face.face_id for face in dataset.faces()] == first, "faces() yields the same faces each time"

    def test_faces_are_well_formed(self, dataset: Any) -> None:
        faces = list(dataset.faces())
        assert faces, "the contract's dataset must yield at least one face"
        ids = [face.face_id for face in faces]
        assert len(set(ids)) == len(ids), "face_ids must be unique"
        for face in faces:
            assert isinstance(face, Face) and isinstance(face.face_id, str) and face.face_id
            assert isinstance(face.identity, str) and face.identity, face.face_id
            assert isinstance(face.image, Path) and face.image.is_file(), face.image
            assert isinstance(face.references, tuple), face.face_id
            for reference in face.references:
                assert isinstance(reference, Path) and reference.is_file(), reference
                assert reference.resolve() != face.image.resolve(), f"{face.face_id} is its own reference"
            for attribute, group in face.demographics.items():
                assert isinstance(attribute, str) and (group is None or isinstance(group, str)), (attribute, group)
        n_faces = dataset.describe().get("n_faces")
        if n_faces is not None:
            assert n_faces == len(faces), f"describe() says n_faces={n_faces}, faces() yielded {len(faces)}"


class TestSetLoaderContract:
    """Checks every registered test-set loader must pass. Subclass and provide a ``loader`` fixture (the
    callable the plugin registers)."""

    __test__ = False  # its name starts with "Test": pytest must not collect the mixin itself, only subclasses

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.__test__ = True

    def test_gives_the_same_frozen_test_set_each_time(self, loader: Any) -> None:
        first, again = loader(), loader()
        assert isinstance(first, TestSet), f"a loader returns a TestSet, not {type(first).__name__}"
        assert first.name and first.version and first.taxonomy_version is not None
        assert isinstance(first.content_hash, str) and len(first.content_hash) >= 16, "content_hash names the content"
        assert (again.content_hash, again.sessions) == (first.content_hash, first.sessions), "the set is frozen"

    def test_sessions_are_well_formed(self, loader: Any) -> None:
        test_set = loader()
        assert test_set.sessions, "a test set holds at least one session"
        ids = [s.session_id for s in test_set.sessions]
        assert len(set(ids)) == len(ids), "session ids are unique"
        for session in test_set.sessions:
            assert isinstance(session, Session) and session.steps, session.session_id
            assert [step.k for step in session.steps] == list(range(1, len(session.steps) + 1)), \
                f"{session.session_id}: steps are numbered 1..K"
            for step in session.steps:
                assert isinstance(step, Step) and step.instruction.strip(), (session.session_id, step.k)


class QuestionSetLoaderContract:
    """Checks every registered question-set loader must pass. Subclass and provide ``loader`` (the callable the
    plugin registers with ``faceedit_register_question_sets``) and ``source`` (a path it reads)."""

    __test__ = False  # as TestSetLoaderContract: only subclasses are collected

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.__test__ = True

    def test_gives_the_same_question_set_each_time_named_by_its_content(self, loader: Any, source: Any) -> None:
        first, again = loader(str(source)), loader(str(source))
        assert first.name, "a question set has a name"
        assert isinstance(first.content_hash, str) and len(first.content_hash) >= 16, "content_hash names the content"
        assert again.content_hash == first.content_hash, "reading the same source twice gives the same set"

    def test_a_missing_source_is_a_clear_error(self, loader: Any, tmp_path: Any) -> None:
        with pytest.raises(FaceEditBenchError) as raised:  # never a bare OSError or traceback
            loader(str(tmp_path / "no-such-questions"))
        assert "no-such-questions" in str(raised.value), "the message names the path"
