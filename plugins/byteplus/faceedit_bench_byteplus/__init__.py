"""faceedit-bench-byteplus: SeedEdit 3.0 and Seedream 4.0 through BytePlus ModelArk, as a plugin.

Loading this module is cheap: the Ark runtime (``byteplus-python-sdk-v2``) is imported only
when a call is made. Select the editors with ``editor=seededit`` and ``editor=seedream``; the
key is read from ``$ARK_API_KEY``. Parameters are in ``conf/editor/``.
"""

from __future__ import annotations

from faceedit_bench.api import Register, hookimpl

__all__ = ["faceedit_config_searchpath", "faceedit_register_editors"]


@hookimpl
def faceedit_register_editors(register: Register) -> None:
    register("seededit", "faceedit_bench_byteplus.editor:SeedEditEditor",
             description="SeedEdit 3.0 (seededit-3-0-i2i-250628) through BytePlus ModelArk, one call per step")
    register("seedream", "faceedit_bench_byteplus.editor:SeedreamEditor",
             description="Seedream 4.0 (seedream-4-0-250828) through BytePlus ModelArk, input image plus "
                         "optional reference images")


@hookimpl
def faceedit_config_searchpath() -> list[str]:
    return ["pkg://faceedit_bench_byteplus.conf"]
