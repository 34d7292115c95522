"""Builtin dataset loaders, one module per on-disk format: ``celeba``, ``celebset``, ``fairface``,
``fairface_hf`` (the Hugging Face parquet layout), ``folder``, ``imdb_wiki`` and ``sample``; ``_common`` holds
what they share.

Targets are lazy ``"module:attr"`` strings, so a format's module is imported only when
it is selected; each factory is called with the config's ``dataset.params`` as keyword
arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from faceedit_bench import hookimpl

if TYPE_CHECKING:
    from faceedit_bench.plugin.registry import Register

_PKG = "faceedit_bench.builtin.datasets"


@hookimpl
def faceedit_register_datasets(register: Register) -> None:
    register("folder", f"{_PKG}.folder:FolderDataset",
             description="your own images listed in a CSV manifest (file,identity,role,gender,skin_tone,age)")
    register("celeba", f"{_PKG}.celeba:CelebADataset",
             description="CelebA aligned faces in the official layout; gender and age from attributes")
    register("fairface", f"{_PKG}.fairface:FairFaceDataset",
             description="FairFace portraits with race/gender/age labels (label CSVs or HF parquet); "
                         "no identities (FSS against itself)")
    register("celebset", f"{_PKG}.celebset:CelebSETDataset",
             description="CelebSET reconstruction from IMDB-WIKI: celebset.csv, or imdb.mat + skin-tone CSV")
    register("sample", f"{_PKG}.sample:SampleDataset",
             description="8 real faces shipped in insightface/scikit-image; offline smoke test only")

