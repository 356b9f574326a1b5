"""Atomic file writes: a process killed while writing leaves the old file or the new one whole.

Layer: the standard library only; used by every module that saves something a run depends on
(records, networks, datasets, metrics).
"""

from __future__ import annotations

import os
import pathlib
import tempfile


def write_atomic(path, data: bytes) -> pathlib.Path:
    """Write ``data`` to ``path`` through a temporary file beside it (its own name per writer,
    ``<name>.<random>.tmp``, removed on failure) and a rename. Returns ``path``."""
    path = pathlib.Path(path)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


__all__ = ["write_atomic"]
