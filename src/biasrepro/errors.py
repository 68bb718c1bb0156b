"""Errors that the command line reports as one line and a non-zero exit status."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class BiasreproError(Exception):
    """Base class: an expected failure with a message meant for the user."""


class DataError(BiasreproError):
    """Bad input data, located by file, row and column where they are known.

    ``row`` is the 1-based data row (header excluded) as a user would count it in the file,
    or an archive member name for archives.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        row: int | str | None = None,
        column: str | None = None,
    ) -> None:
        self.message = message
        self.file = None if file is None else str(file)
        self.row = row
        self.column = column
        super().__init__(str(self))

    def __str__(self) -> str:
        where = []
        if self.file is not None:
            where.append(self.file)
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column is not None:
            where.append(f"column '{self.column}'")
        return f"{', '.join(where)}: {self.message}" if where else self.message


class ConfigError(BiasreproError):
    """A configuration key is unknown, missing or has a bad value."""


class DownloadError(BiasreproError):
    """A download failed, was truncated, or did not match its pinned checksum."""


class ModelError(BiasreproError):
    """A model name, path or checkpoint cannot be used (unknown, wrong architecture, unsafe)."""


@contextmanager
def in_file(path: str | Path) -> Iterator[None]:
    """Name ``path`` in a :class:`DataError` raised inside the block that names no file."""
    try:
        yield
    except DataError as e:
        if e.file is None:
            e.file = str(path)
            e.args = (str(e),)
        raise


def shown(value: object) -> str:
    """``value`` as a message shows it: a NumPy scalar as the Python value it holds
    (``2``, not ``np.int64(2)``)."""
    item = getattr(value, "item", None)
    return repr(item() if callable(item) and type(value).__module__ == "numpy" else value)
