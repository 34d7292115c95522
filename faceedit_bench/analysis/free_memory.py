"""Handing memory the process has freed back to the system, after the report stage's temporaries.

glibc's allocator keeps freed heap memory for reuse; memory another allocator then asks for (the
tables' Parquet conversion allocates through pyarrow's own pool) comes on top of it, so the peak
grows with the largest temporary of the statistics, that is with the number of sessions.
``malloc_trim(0)`` returns those free pages. Elsewhere (not glibc) this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any


@functools.cache
def _glibc() -> Any:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS, Windows)
        return None


def release_free_memory() -> bool:
    """Return the allocator's free pages to the system; True when that was possible."""
    trim = _glibc()
    if trim is None:
        return False
    trim(0)
    return True
