"""User-facing errors. Every message says what went wrong and how to fix it."""

from __future__ import annotations

from collections.abc import Mapping


class FaceEditBenchError(Exception):
    """Root of the errors faceedit_bench reports to users (no traceback needed)."""


class ConfigError(FaceEditBenchError):
    """The experiment's configuration cannot be used as given."""


class UnknownComponentError(ConfigError):
    def __init__(self, group: str, name: str, available: list[str], suggestions: list[str], *,
                 broken: Mapping[str, str] | None = None) -> None:
        self.group, self.name, self.available, self.suggestions = group, name, available, suggestions
        hint = f" Did you mean {' or '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        listing = ", ".join(available) if available else "(none installed)"
        skipped = (" Broken plugins were skipped and may be the one that provides it: "
                   + "; ".join(f"{n} ({why})" for n, why in sorted(broken.items())) + "." if broken else "")
        super().__init__(
            f"Unknown {group} {name!r}.{hint} Available {group} options: {listing}.{skipped} "
            f"Install the plugin that provides it, or run `faceedit-bench plugins` to see what is installed."
        )


class ClashError(ConfigError):
    def __init__(self, group: str, name: str, providers: list[str]) -> None:
        super().__init__(
            f"{group} {name!r} is registered by more than one plugin: {', '.join(providers)}. "
            "Uninstall one of them, or block one with FACEEDIT_BENCH_DISABLE_PLUGINS=<name>."
        )


class DatasetError(FaceEditBenchError):
    """A dataset cannot be read: missing files, wrong format."""


class ImageError(FaceEditBenchError):
    """Bytes that are not a readable image."""


class StorageError(FaceEditBenchError):
    """The workspace cannot be written: read-only, full, a file where a folder belongs."""
