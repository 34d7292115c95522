"""Helpers for dataset authors: the checks of the parameters every dataset takes and the labels a face carries,
worded as the builtin datasets word them (``dataset.params.<name> must be ...``), so a plugin's dataset fails
like a builtin one. Import them from here (``from faceedit_bench.api.datasets import check_limit``).

* :func:`demographics`: the ``Face.demographics`` mapping (``gender``, ``skin_tone``, ``age_group``, ``age``,
  then any extra labels, every value a string or None);
* :func:`check_limit`, :func:`check_dataset_count`, :func:`check_fss`, :func:`check_dataset_flag`: the common
  parameters (``limit``, ``max_references``, ``min_base_fss``, ``single_face_only``), each returned when valid,
  else a ConfigError naming the parameter;
* :func:`require`: a path that must exist, else a DatasetError saying what is there instead, where to get the
  data and which parameter to set;
* :func:`label_summary`: the ``gender: female 40, male 40`` lines a dataset's ``check`` prints.
"""

from __future__ import annotations

from faceedit_bench.builtin.datasets._common import (
    check_dataset_count,
    check_dataset_flag,
    check_fss,
    check_limit,
    demographics,
    label_summary,
    require,
)

__all__ = ["check_dataset_count", "check_dataset_flag", "check_fss", "check_limit", "demographics", "label_summary",
           "require"]
