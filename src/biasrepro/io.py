"""The one module through which the harness reads users' files and writes its own.

Reading: :func:`read_table` and :func:`open_input` take CSV, TSV, Parquet, JSON and JSON
lines, plain or gzip/zip (told by their magic bytes), UTF-8 with or without a byte-order
mark, and turn every problem into one :class:`~biasrepro.errors.DataError` naming the file,
the 1-based data row (the header is not counted) and the column. The value policies below
(labels, probabilities, identity fractions, ids, texts) are shared by every command; tables
handed to them carry row numbers as their index, so a row keeps its number after filtering.

Writing: every output is written to a temporary sibling and renamed into place only when
the whole step has succeeded, so a killed or failed step never leaves a file that looks
complete, and an earlier run's output stays as it was. Writers are deterministic: the same
data gives the same bytes (sorted JSON keys, no timestamps, fixed Parquet settings).
"""

from __future__ import annotations

import codecs
import csv
import glob
import gzip
import hashlib
import io
import json
import logging
import math
import os
import re
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from biasrepro.errors import DataError

log = logging.getLogger(__name__)


#: locks this process holds on the outputs it writes (final path -> open lock file): a
#: second run targeting the same output is refused instead of racing this one
_HELD: dict[Path, IO[str]] = {}
_TEMP = re.compile(r"\.tmp-(\d+)\.(.+)")


def _lock_path(final: Path) -> Path:
    """The lock of an output: in one folder per user and machine (``BIASREPRO_OUTPUT_LOCKS``,
    else the temporary directory), named by the output's absolute path's sha256, so no lock
    file lands beside the outputs (where DVC would hash it)."""
    import tempfile

    base = Path(os.environ.get("BIASREPRO_OUTPUT_LOCKS")
                or Path(tempfile.gettempdir()) / f"biasrepro-output-locks-{os.getuid()}")
    base.mkdir(parents=True, exist_ok=True)
    return base / hashlib.sha256(str(final).encode()).hexdigest()[:32]


def lock_output(final: str | Path) -> bool:
    """Hold an exclusive lock on ``final`` until :func:`release_outputs` (or this process's
    end, however it ends); a :class:`DataError` naming the other run's pid when another live
    process holds it. False when this process held it already."""
    import fcntl

    final = Path(final).absolute()
    if final in _HELD:
        return False
    try:
        handle = open(_lock_path(final), "a+", encoding="utf-8")  # noqa: SIM115 - held
    except OSError as e:
        raise DataError(f"cannot lock the output {final} ({e.strerror}); set "
                        "BIASREPRO_OUTPUT_LOCKS to a folder this user can write") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        other = handle.read().strip() or "unknown"
        handle.close()
        raise DataError(f"another run (pid {other}) is writing {final}: wait for it to "
                        "finish, or write to another path") from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    _HELD[final] = handle
    return True


def release_outputs(paths: Sequence[str | Path] | None = None) -> None:
    """Release the locks on ``paths`` (all this process holds when None)."""
    for final in list(_HELD) if paths is None else [Path(p).absolute() for p in paths]:
        handle = _HELD.pop(final, None)
        if handle is not None:
            handle.close()


def check_output(path: str | Path, *, folder: bool = False) -> bool:
    """Before any work: ``path`` (an output file, or with ``folder`` an output folder) can
    be written: a probe file is made and removed in its folder, or in the nearest folder that
    exists (nothing is created), and a file output is locked for this process
    (:func:`lock_output`; True when this call took the lock). One :class:`DataError`
    naming the path otherwise: a file output
    that is a directory, a folder output that is a file, a folder below a file, a folder
    this user cannot write (permissions, an immutable or read-only folder)."""
    path = Path(path)
    if folder and path.exists() and not path.is_dir():
        raise DataError(f"the output folder {path} is a file, not a folder")
    if not folder and path.is_dir():
        raise DataError(f"the output path {path} is a directory; give a file path")
    target = path if folder else path.parent
    existing = next(a for a in [target, *target.parents] if a.exists() or a == a.parent)
    if not existing.is_dir():
        raise DataError(f"cannot make the output folder {target}: {existing} is a file")
    try:  # a probe where the output (or the first folder it needs) will be made
        probe = existing / f".probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise DataError(f"cannot write the output folder {target} ({e.strerror} in "
                        f"{existing}); choose a folder this user can write") from None
    return False if folder else lock_output(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def atomic_outputs(*paths: str | Path) -> Iterator[list[Path]]:
    """Yield temporary paths for ``paths``; rename them all into place on success.

    On any exception the temporary files are removed and the exception propagates; files
    already at the final paths (an earlier run's) are left untouched. Each final path is
    checked and locked first (:func:`check_output`): another live run writing it is refused,
    and its temporary files are never touched (only those of dead processes are cleared).
    Before the first rename every final path is checked again, so a set of outputs is
    committed all or none.
    """
    finals = [Path(p) for p in paths]
    # the name keeps its suffixes, so a step can read back what it wrote before renaming
    temps = [f.with_name(f".tmp-{os.getpid()}.{f.name}") for f in finals]
    taken = [f for f in finals if check_output(f)]  # locks this block releases
    for f in finals:
        f.parent.mkdir(parents=True, exist_ok=True)
        for stale in f.parent.glob(f".tmp-*.{glob.escape(f.name)}"):
            match = _TEMP.fullmatch(stale.name)
            if match is None or match[2] != f.name or _alive(int(match[1])):
                continue
            stale.unlink(missing_ok=True)
    try:
        yield temps
        missing = [str(f) for f, t in zip(finals, temps, strict=True) if not t.exists()]
        if missing:
            raise RuntimeError(f"step finished without writing: {', '.join(missing)}")
        blocked = [str(f) for f in finals if f.is_dir()]
        if blocked:
            raise DataError(f"output path is a directory: {', '.join(blocked)}; nothing was "
                            "written")
    except BaseException:
        for p in temps:
            p.unlink(missing_ok=True)
        release_outputs(taken)
        raise
    for f, t in zip(finals, temps, strict=True):
        os.replace(t, f)
    release_outputs(taken)


#: the fixed Parquet settings of every table the harness writes
PARQUET_COMPRESSION = "zstd"
PARQUET_ROW_GROUP = 1 << 20


def write_parquet(df: pd.DataFrame, path: str | Path) -> None:
    """Write ``df`` (index dropped) as zstd Parquet with fixed, reproducible settings."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    pq.write_table(table, path, compression=PARQUET_COMPRESSION,
                   row_group_size=PARQUET_ROW_GROUP)


class ParquetAppender:
    """Writes frames to one Parquet file in turn, as :func:`write_parquet` writes one frame
    (the same settings, so a single frame gives its bytes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.writer: pq.ParquetWriter | None = None

    def write(self, frame: pd.DataFrame) -> None:
        table = pa.Table.from_pandas(frame, preserve_index=False)
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.path, table.schema,
                                           compression=PARQUET_COMPRESSION)
        elif not table.schema.equals(self.writer.schema, check_metadata=False):
            # a chunk where a column is all missing, or has none missing, infers another type
            table = table.cast(self.writer.schema)
        self.writer.write_table(table, row_group_size=PARQUET_ROW_GROUP)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def _finite(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, str | bytes):  # numpy scalar
        return _finite(obj.item())
    return obj


def dumps_json(obj: Any) -> str:
    """Canonical JSON text: sorted keys, 2-space indent, NaN/inf as null, newline at end."""
    return json.dumps(_finite(obj), sort_keys=True, indent=2, allow_nan=False) + "\n"


def write_json(obj: Any, path: str | Path) -> None:
    Path(path).write_text(dumps_json(obj), encoding="utf-8")


def write_text(text: str, path: str | Path) -> None:
    Path(path).write_text(text, encoding="utf-8")


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def markdown_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A GitHub-flavoured Markdown table of ``rows`` restricted to ``columns``."""

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4f}"
        return "" if v is None else str(v)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(fmt(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(lines) + "\n"


# -- reading: the one way a user's file is opened ------------------------------------------

DELIMITER_NAMES = {",": "comma", "\t": "tab", ";": "semicolon", "|": "pipe"}
#: file suffixes (after .gz/.zip) and how their contents are read
TABLE_SUFFIXES = {".csv": ",", ".tsv": "\t", ".tab": "\t", ".parquet": "parquet",
                  ".pq": "parquet", ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
                  ".txt": "sniff", "": "sniff"}
_COMPRESSED = (".gz", ".gzip", ".zip")
_MAGIC = {b"\x1f\x8b": "gzip", b"PK\x03\x04": "zip", b"PAR1": "parquet"}
_OTHER_BOMS = {b"\xff\xfe\x00\x00": "UTF-32", b"\x00\x00\xfe\xff": "UTF-32",
               b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16"}
_UTF8_BOM = b"\xef\xbb\xbf"
# bytes that are not UTF-8 decode (with errors="surrogateescape") to lone surrogates
_UNDECODABLE = re.compile("[\udc80-\udcff]")
_CORRUPT = (OSError, EOFError, zlib.error, zipfile.BadZipFile)
_FIELD_LIMIT = 1 << 30  # the csv module's default (131,072 characters) refuses long reviews


def require_file(path: str | Path) -> None:
    """Refuse a missing, non-regular (a directory, a FIFO, a device) or zero-byte input."""
    import stat

    path = Path(path)
    if not path.exists():
        raise DataError("input file not found", file=path)
    if path.is_dir():
        raise DataError("input is a directory, not a file: give the file inside it",
                        file=path)
    if not stat.S_ISREG(path.stat().st_mode):
        raise DataError("input is not a regular file (a pipe, socket or device): save it "
                        "to a file first", file=path)
    if path.stat().st_size == 0:
        raise DataError("file is empty", file=path)


def container(path: str | Path) -> str:
    """``gzip``, ``zip``, ``parquet`` (by the file's magic bytes) or ``plain``."""
    with open(path, "rb") as f:
        head = f.read(4)
    return next((kind for magic, kind in _MAGIC.items() if head.startswith(magic)), "plain")


class _Prefixed(io.RawIOBase):
    """A byte stream that replays ``head`` before the rest of ``stream``."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self._head, self._stream = head, stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n], self._head = self._head[:n], self._head[n:]
            return n
        data = self._stream.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def _text_start(stream: IO[bytes], file: str) -> IO[bytes]:
    """``stream`` without a UTF-8 byte-order mark; a UTF-16/32 one is refused."""
    head = stream.read(4)
    if head.startswith(_UTF8_BOM):
        head = head[3:]
    else:
        for bom, name in _OTHER_BOMS.items():
            if head.startswith(bom):
                raise DataError(f"the file is {name} text; save it as UTF-8", file=file)
    return io.BufferedReader(_Prefixed(head, stream))


def _member(archive: zipfile.ZipFile, member: str | None, path: Path) -> str:
    names = [n for n in archive.namelist() if not n.endswith("/")]
    if "[Content_Types].xml" in names and any(n.startswith("xl/") for n in names):
        raise DataError("an Excel workbook, not a table file: save it as CSV UTF-8",
                        file=path)
    if member is None and len(names) == 1:
        return names[0]
    listed = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
    if member is None:
        raise DataError(f"the zip archive holds {len(names)} files; name the table with "
                        f"--member (members: {listed})", file=path)
    if member not in names:
        raise DataError(f"the archive has no member {member!r}; members: {listed}", file=path)
    return member


@contextmanager
def open_input(path: str | Path, *, member: str | None = None) -> Iterator[IO[bytes]]:
    """The bytes of a user's text file: gzip and zip (one member, or ``member``) unpacked
    by their magic bytes, a UTF-8 byte-order mark dropped. Bad archives are DataErrors."""
    path = Path(path)
    require_file(path)
    kind = container(path)
    file = str(path)
    try:
        if kind == "zip":
            with zipfile.ZipFile(path) as archive:
                name = _member(archive, member, path)
                file = f"{path}:{name}" if member is None or name != member else file
                with archive.open(name) as raw:
                    yield _text_start(raw, file)
        elif kind == "gzip":
            with gzip.open(path, "rb") as raw:
                yield _text_start(raw, file)
        else:
            with open(path, "rb") as raw:
                yield _text_start(raw, file)
    except _CORRUPT as e:
        raise DataError(f"truncated or corrupt {kind} file ({e})", file=path) from None


def member_name(path: str | Path, member: str | None = None) -> str:
    """How messages name a file: ``path``, or ``path:member`` inside a zip archive."""
    return f"{path}:{member}" if member else str(path)


def _undecodable_hint(value: str) -> str:
    byte = ord(_UNDECODABLE.search(value)[0]) - 0xDC00
    return (f"not valid UTF-8 text (byte 0x{byte:02x}; a Latin-1 or Windows-1252 export? "
            "save it as UTF-8)")


def iter_records(
    stream: IO[bytes],
    *,
    file: str | Path,
    delimiter: str,
    columns: Sequence[str] | None = None,
    comment: str | None = None,
) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(row, fields)`` for each record of a delimited byte stream (csv quoting rules).

    With ``columns=None`` the first record is the header and is yielded as row 0; otherwise
    the file is headerless and ``columns`` names its fields. Lines starting with ``comment``
    (after spaces) are skipped and not counted. Bytes that are not UTF-8 and NUL characters
    raise a DataError naming the row and column they are in; fields of any length are read.
    """
    csv.field_size_limit(max(csv.field_size_limit(), _FIELD_LIMIT))
    text: Iterator[str] = io.TextIOWrapper(stream, encoding="utf-8", errors="surrogateescape",
                                           newline="")
    if comment is not None:
        text = (line for line in text if not line.lstrip(" \t").startswith(comment))
    reader = csv.reader(text, delimiter=delimiter, strict=True)
    names = list(columns) if columns is not None else None
    row = 0 if columns is None else 1
    try:
        for fields in reader:
            for i, value in enumerate(fields):
                bad = _UNDECODABLE.search(value)
                if not bad and "\x00" not in value:
                    continue
                message = (_undecodable_hint(value) if bad else
                           "NUL character in the text (a binary or UTF-16 file?)")
                if names is None:
                    raise DataError(f"header: {message}", file=file, column=f"field {i + 1}")
                column = names[i] if i < len(names) else f"field {i + 1}"
                raise DataError(message, file=file, row=row, column=column)
            if names is None:
                names = fields
            yield row, fields
            row += 1
    except csv.Error as e:
        hint = ("; a field that starts with a quote must end with one, with quotes inside "
                "doubled (\"\"): quote such fields as CSV writers do, or save the file as "
                "Parquet" if any(k in str(e) for k in ('"', "quote", "EOF")) else "")
        raise DataError(f"malformed delimited text ({e}){hint}", file=file, row=row) from None
    except _CORRUPT as e:
        raise DataError(f"truncated or corrupt compressed file ({e})", file=file) from None


def check_delimiter(first: Sequence[str], *, file: str | Path, delimiter: str,
                    row: int | None) -> None:
    """A first record that did not split at all was probably written with another delimiter."""
    if len(first) != 1:
        return
    expected = DELIMITER_NAMES[delimiter]
    for other, name in DELIMITER_NAMES.items():
        if other != delimiter and other in first[0]:
            what = "the header" if row is None else "this row"
            hint = (" (a spreadsheet export with ';' as separator: export it with commas)"
                    if other == ";" else "")
            raise DataError(
                f"expected {expected}-separated values, but {what} looks {name}-separated"
                + hint, file=file, row=row,
            )


def table_kind(path: str | Path, member: str | None = None) -> str:
    """How :func:`read_table` reads ``path``: a delimiter, ``parquet``, ``json``, ``jsonl``
    or ``sniff``, from the magic bytes and the suffix (after ``.gz``/``.zip``)."""
    path = Path(path)
    require_file(path)
    if container(path) == "parquet":
        return "parquet"
    name = Path(member or path.name)
    while name.suffix.lower() in _COMPRESSED:
        name = name.with_suffix("")
    suffix = name.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise DataError(f"unsupported file type '{suffix}' (expected .csv, .tsv, .parquet, "
                        ".json or .jsonl, optionally .gz or .zip)", file=path)
    return TABLE_SUFFIXES[suffix]


def _sniff(path: Path, member: str | None) -> str:
    """The delimiter of a delimited file of unknown kind (comma when nothing fits)."""
    with open_input(path, member=member) as f:
        sample = f.read(1 << 16).decode("utf-8", errors="replace")
    try:
        return csv.Sniffer().sniff(sample, delimiters=",\t;|").delimiter
    except csv.Error:
        return ","


def read_table(
    path: str | Path,
    *,
    required: Sequence[str] = (),
    delimiter: str | None = None,
    columns: Sequence[str] | None = None,
    member: str | None = None,
    what: str = "table",
    allow_empty: bool = False,
    comment: str | None = None,
) -> pd.DataFrame:
    """A user's table (CSV, TSV, Parquet, JSON or JSON lines; plain, gzip or zip), with the
    1-based data row numbers as index.

    Delimited and JSON-lines values are kept as the user wrote them (strings, ``""`` for an
    empty cell); ``columns`` names the fields of a headerless delimited file. Refused with
    one DataError each: bad encodings, NULs, ragged rows, empty or repeated column names (a
    nameless first column, a row index as pandas writes it, and a nameless column whose
    cells are all empty, as spreadsheets export, are dropped), missing
    ``required`` columns (all listed), and no data rows unless ``allow_empty``. Lines of a
    delimited file that start with ``comment`` are skipped and not counted as rows.
    """
    path = Path(path)
    kind = delimiter or table_kind(path, member)
    file = member_name(path, member)
    if kind == "parquet":
        frame = read_parquet(path, what=f"Parquet {what}")
    elif kind in ("json", "jsonl"):
        frame = _read_json_table(path, member, file, lines=kind == "jsonl")
    else:
        if kind == "sniff":
            kind = _sniff(path, member)
        frame = _read_delimited(path, member, file, kind, columns, comment)
    frame.columns = [str(c) for c in frame.columns]
    if kind == "parquet":
        frame.index = pd.RangeIndex(1, len(frame) + 1)
    require_columns(list(frame.columns), required, file=file)
    if frame.empty and not allow_empty:
        raise DataError("the file holds no data rows", file=file)
    return frame


def _read_delimited(path: Path, member: str | None, file: str, delimiter: str,
                    columns: Sequence[str] | None, comment: str | None) -> pd.DataFrame:
    with open_input(path, member=member) as stream:
        records = [(row, fields) for row, fields in
                   iter_records(stream, file=file, delimiter=delimiter, columns=columns,
                                comment=comment)
                   if fields and fields != [""]]  # blank lines
    if columns is None:
        if not records:
            raise DataError("file is empty", file=file)
        header = records.pop(0)[1]
        check_delimiter(header, file=file, delimiter=delimiter, row=None)
    else:
        header = list(columns)
        if records:
            check_delimiter(records[0][1], file=file, delimiter=delimiter, row=records[0][0])
    width = len(header)
    rows = []
    for row, fields in records:
        if len(fields) > width and not any(f.strip() for f in fields[width:]):
            fields = fields[:width]  # trailing empty fields, as spreadsheets write them
        if len(fields) != width:
            column = header[len(fields)] if len(fields) < width else f"field {len(fields)}"
            raise DataError(f"expected {width} {DELIMITER_NAMES.get(delimiter, repr(delimiter))}"
                            f"-separated fields, found {len(fields)}", file=file, row=row,
                            column=column)
        rows.append(fields)
    frame = pd.DataFrame(rows, columns=range(width), index=[r for r, _ in records],
                         dtype=object)
    keep = []
    for i, name in enumerate(header):
        if not name.strip():
            if i == 0 or all(not v.strip() for v in frame[i]):
                continue  # a row index as pandas and R export it, or an empty column
            raise DataError("a column has values but no name in the header", file=file,
                            column=f"field {i + 1}")
        if name in header[:i]:
            raise DataError(f"column name repeated (fields {header.index(name) + 1} and "
                            f"{i + 1}); rename one", file=file, column=name)
        keep.append(i)
    frame = frame[keep]
    frame.columns = [header[i] for i in keep]
    return frame


def _read_json_table(path: Path, member: str | None, file: str, *,
                     lines: bool) -> pd.DataFrame:
    """JSON (a list of objects) or JSON lines (one object per line) as a frame."""
    with open_input(path, member=member) as stream:
        raw = stream.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"not valid UTF-8 text (byte {e.start})", file=file) from None
    if lines:
        records, index = [], []
        for row, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise DataError(f"not valid JSON ({e.msg}, column {e.colno})", file=file,
                                    row=row) from None
                index.append(row)
    else:
        try:
            records = json.loads(text)
        except json.JSONDecodeError as e:
            raise DataError(f"not valid JSON ({e.msg}, line {e.lineno} column {e.colno})",
                            file=file) from None
        if not isinstance(records, list):
            raise DataError("expected a JSON list of objects, one per row", file=file)
        index = list(range(1, len(records) + 1))
    for row, record in zip(index, records, strict=True):
        if not isinstance(record, dict):
            raise DataError(f"expected an object, found {type(record).__name__}", file=file,
                            row=row)
    names = list(dict.fromkeys(k for r in records for k in r))
    return pd.DataFrame([[r.get(k) for k in names] for r in records], columns=names,
                        index=index, dtype=object)


def read_list(path: str | Path, required: Sequence[str], optional: Sequence[str] = (), *,
              what: str = "word list") -> pd.DataFrame:
    """A word list (CSV with ``#`` comment lines, or any :func:`read_table` format): the
    ``required`` and present ``optional`` columns as stripped strings, none empty, indexed
    by data row."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{what} not found", file=path)
    frame = read_table(path, comment="#", what=what)
    frame.columns = [c.strip() for c in frame.columns]
    require_columns(list(frame.columns), required, file=path)
    columns = [*required, *(c for c in optional if c in frame.columns and c not in required)]
    frame = frame[columns]
    for column in columns:
        values = frame[column]
        reject_rows(values.isna() | (values.astype(str).str.strip() == ""), values,
                    "empty entry", file=path, column=column)
    return frame.apply(lambda s: s.map(lambda v: str(v).strip()))


def read_parquet(path: str | Path, *, what: str = "Parquet file",
                 columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A Parquet file as a frame; a missing, empty or unreadable file is a DataError
    naming it (``what`` says what the file should have been). With ``columns``, only those
    are read (the others are never decoded), in that order; a missing one is a DataError."""
    path = Path(path)
    require_file(path)
    try:
        if columns is not None:
            require_columns(pq.read_schema(path).names, columns, file=path)
        frame = pd.read_parquet(path, columns=None if columns is None else list(columns))
    except (pa.ArrowException, OSError, ValueError) as e:  # ArrowInvalid is a ValueError
        raise DataError(f"not a readable {what} ({e})", file=path) from None
    except (KeyError, TypeError) as e:  # pandas' own metadata in the file is damaged
        raise DataError(f"not a readable {what} (its pandas metadata is damaged: {e!r})",
                        file=path) from None
    _require_unique_names([str(c) for c in frame.columns], file=path)
    for i, dtype in enumerate(frame.dtypes):  # dictionary-encoded (categorical): as values
        if isinstance(dtype, pd.CategoricalDtype):
            frame.isetitem(i, frame.iloc[:, i].astype(dtype.categories.dtype))
    return frame


def _require_unique_names(names: Sequence[str], *, file: Path) -> None:
    repeated = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if repeated is not None:
        raise DataError("column name repeated; rename one", file=file, column=repeated)


def read_parquet_schema(path: str | Path, *, what: str = "Parquet file",
                        columns: Sequence[str] = ()) -> pa.Schema:
    """The Arrow schema of a Parquet file (its footer only), with ``columns`` required;
    errors as :func:`read_parquet`."""
    path = Path(path)
    require_file(path)
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowException, OSError, ValueError) as e:
        raise DataError(f"not a readable {what} ({e})", file=path) from None
    require_columns(schema.names, columns, file=path)
    return schema


def iter_parquet(path: str | Path, *, required: str, optional: Sequence[str] = (),
                 batch_rows: int) -> Iterator[pd.DataFrame]:
    """The ``required`` column and those of ``optional`` present of a Parquet file (in the
    order ``optional``, ``required``), ``batch_rows`` rows at a time, each frame indexed by
    1-based row number, dictionary-encoded (categorical) columns as plain values; a
    file without rows gives one empty frame. A missing ``required`` column, a repeated
    column name and an unreadable file are DataErrors naming the file."""
    path = Path(path)
    require_file(path)
    try:
        reader = pq.ParquetFile(path)
        schema = reader.schema_arrow
        index = (schema.pandas_metadata or {}).get("index_columns", [])
        names = [n for n in schema.names if n not in index]
        _require_unique_names(names, file=path)
        if required not in names:
            raise DataError(f"missing column; found {names}", file=path, column=required)
        wanted = list(dict.fromkeys(c for c in (*optional, required) if c in names))
        if reader.metadata.num_rows == 0:
            yield _plain_frame(schema.empty_table().select(wanted), 1)
            return
        start = 1
        for batch in reader.iter_batches(batch_size=batch_rows, columns=wanted,
                                         use_pandas_metadata=False):
            yield _plain_frame(pa.Table.from_batches([batch]), start)
            start += batch.num_rows
    except (pa.ArrowException, OSError, ValueError) as e:  # ArrowInvalid is a ValueError
        raise DataError(f"not a readable Parquet file ({e})", file=path) from None


def iter_parquet_batches(path: str | Path, *, columns: Sequence[str], batch_rows: int,
                         what: str = "Parquet file") -> Iterator[pa.RecordBatch]:
    """``columns`` of a Parquet file as Arrow record batches of up to ``batch_rows`` rows,
    for a reader that keeps a batch at a time; a missing column or an unreadable file
    (also one that breaks part-way) is a DataError naming it, as :func:`read_parquet`."""
    path = Path(path)
    require_file(path)
    try:
        source = pq.ParquetFile(path)
        require_columns(source.schema_arrow.names, columns, file=path)
        yield from source.iter_batches(batch_size=batch_rows, columns=list(columns))
    except (pa.ArrowException, OSError, ValueError) as e:
        raise DataError(f"not a readable {what} ({e})", file=path) from None


def _plain_frame(table: pa.Table, first_row: int) -> pd.DataFrame:
    # dictionary-encoded columns as plain values: what is read must not depend on how the
    # file stored it
    table = pa.table([c.cast(c.type.value_type) if pa.types.is_dictionary(c.type) else c
                      for c in table.columns], names=table.column_names)
    frame = table.to_pandas()
    frame.index = pd.RangeIndex(first_row, first_row + len(frame))
    return frame


def read_parquet_rows(path: str | Path, *, key: str, values: Sequence[Any],
                      columns: Sequence[str], what: str = "Parquet file",
                      batch_rows: int = 1 << 15) -> pd.DataFrame:
    """Only the rows of a Parquet file whose ``key`` column is in ``values``, and only
    ``columns`` (``key`` among them), in file order: the file is read ``batch_rows`` rows at a
    time and each batch filtered before the next is read, so a sample of a large file (a few
    texts of a million-row mutants table) costs a batch, not the file. Errors as
    :func:`read_parquet`."""
    wanted = list(dict.fromkeys([key, *columns]))
    schema = read_parquet_schema(path, what=what, columns=wanted)
    try:
        lookup = pa.array(list(values), type=schema.field(key).type)
    except (pa.ArrowException, ValueError) as e:
        raise DataError(f"not a readable {what} ({e})", file=path) from None
    kept = [batch.filter(pc.is_in(batch.column(key), value_set=lookup))
            for batch in iter_parquet_batches(path, columns=wanted, batch_rows=batch_rows,
                                              what=what)]
    table = (pa.Table.from_batches(kept) if kept
             else pa.schema([schema.field(c) for c in wanted]).empty_table())
    try:
        return table.select(list(dict.fromkeys(columns))).to_pandas()
    except (KeyError, TypeError, ValueError) as e:  # pandas' own metadata in the file
        raise DataError(f"not a readable {what} (its pandas metadata is damaged: {e!r})",
                        file=path) from None


def read_text(path: str | Path, *, member: str | None = None) -> str:
    """A user's UTF-8 text file (plain, gzip or zip; a byte-order mark dropped) as a string;
    other encodings and NUL characters are refused naming the line (as the row)."""
    with open_input(path, member=member) as stream:
        raw = stream.read()
    file = member_name(path, member)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(_undecodable_hint(raw[e.start:e.start + 1].decode("utf-8",
                                                                         "surrogateescape")),
                        file=file, row=raw[:e.start].count(b"\n") + 1) from None
    if "\x00" in text:
        raise DataError("NUL character in the text (a binary or UTF-16 file?)", file=file,
                        row=text[:text.index("\x00")].count("\n") + 1)
    return text


#: what ``str.splitlines`` ends a line at (``\r\n`` counts as one break)
_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


def iter_text_lines(path: str | Path, *, member: str | None = None,
                    block_bytes: int = 1 << 22) -> Iterator[list[str]]:
    """``read_text(path).splitlines()`` a block of lines at a time (about ``block_bytes`` of
    the file each), so that a large text file is never held whole: the same lines (a block
    ends only at a line break, and ``\r\n`` split across two blocks is one break) and the
    same errors naming the same line, an encoding error anywhere in the file reported before
    a NUL character, as :func:`read_text` reports them; lines before an error are yielded."""
    file = member_name(path, member)
    with open_input(path, member=member) as stream:
        pending, carry, newlines, nul_row = b"", "", 0, None
        while True:
            raw = stream.read(block_bytes)
            final = not raw
            data = pending + raw
            try:
                text, used = codecs.utf_8_decode(data, "strict", final)
            except UnicodeDecodeError as e:
                bad = data[e.start:e.start + 1].decode("utf-8", "surrogateescape")
                raise DataError(_undecodable_hint(bad), file=file,
                                row=newlines + data[:e.start].count(b"\n") + 1) from None
            pending = data[used:]
            if nul_row is None and "\x00" in text:
                nul_row = newlines + text[:text.index("\x00")].count("\n") + 1
            newlines += text.count("\n")
            if nul_row is not None:  # decode the rest: an encoding error is named first
                if final:
                    raise DataError("NUL character in the text (a binary or UTF-16 file?)",
                                    file=file, row=nul_row)
                continue
            text = carry + text
            lines = text.splitlines()
            if final:
                if lines:
                    yield lines
                return
            if not text or text[-1] not in _LINE_BREAKS:
                carry = lines.pop() if lines else ""    # a line still being read
            elif text[-1] == "\r":
                carry = lines.pop() + "\r"             # its "\n" may open the next block
            else:
                carry = ""
            if lines:
                yield lines


def read_json(path: str | Path) -> Any:
    """Parse the JSON file ``path``; a missing file or bad JSON is a :class:`DataError`."""
    with open_input(path) as stream:
        raw = stream.read()
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise DataError(f"not valid UTF-8 text (byte {e.start})", file=path) from None
    except json.JSONDecodeError as e:
        raise DataError(f"not valid JSON ({e})", file=path) from None


def read_csv(path: str | Path, columns: Sequence[str] = (), *,
             na_values: Sequence[str] | None = None) -> pd.DataFrame:
    """A CSV table with pandas' type inference, which must have ``columns``; with
    ``na_values`` only those strings (not pandas' default list) are missing values."""
    options: dict[str, Any] = ({} if na_values is None else
                               {"keep_default_na": False, "na_values": list(na_values)})
    with open_input(path) as stream:
        try:
            df = pd.read_csv(stream, **options)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
            raise DataError(f"not a readable CSV table ({e})", file=path) from None
    require_columns([str(c) for c in df.columns], columns, file=path)
    return df


# -- one policy per kind of value ----------------------------------------------------------


def require_columns(found: Sequence[str], required: Sequence[str], *,
                    file: str | Path) -> None:
    """Refuse a table that lacks required columns, naming them all and what is there."""
    missing = [name for name in required if name not in found]
    if not missing:
        return
    listed = ", ".join(repr(c) for c in found)
    if len(missing) == 1:
        raise DataError(f"missing required column; columns found: {listed}", file=file,
                        column=missing[0])
    raise DataError(f"missing required columns {', '.join(repr(c) for c in missing)}; "
                    f"columns found: {listed}", file=file)


def reject_rows(bad: pd.Series, values: pd.Series, message: str, *, file: str | Path | None,
                column: str) -> None:
    """Raise DataError at the first row where ``bad`` holds (index = 1-based row numbers)."""
    if bad.any():
        row = bad.idxmax()
        raise DataError(f"{message} (got {describe_value(values.loc[row])})", file=file,
                        row=row, column=column)


def describe_value(value: Any) -> str:
    """A cell's value for a message: a numpy scalar as the Python value, a list (a Parquet
    list column gives numpy arrays) or mapping said to be one, long text cut to 80
    characters."""
    import numpy as np

    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (list, tuple, np.ndarray)):
        items = list(value)
        shown = repr(items if len(repr(items)) <= 80 else items[:3])
        return f"a list of {len(items)} item{'s' if len(items) != 1 else ''}: {shown}"
    if isinstance(value, dict):
        return f"a mapping with keys {sorted(map(str, value))[:5]}"
    if isinstance(value, str) and len(value) > 80:
        value = value[:77] + "..."
    return repr(value)


def _missing(value: Any) -> bool:
    """A scalar missing value (None, NaN, NA); never a list."""
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def check_text(values: pd.Series, *, file: str | Path | None, column: str) -> None:
    """Refuse missing, blank or non-string text, and text with NUL characters."""
    reject_rows(values.map(lambda v: not isinstance(v, str) and not _missing(v)), values,
                "text is not a string", file=file, column=column)
    blank = values.isna() | (values.astype(str).str.strip() == "")
    reject_rows(blank, values, "text is empty", file=file, column=column)
    reject_rows(values.str.contains("\x00", regex=False), values,
                "NUL character in the text", file=file, column=column)


def truncate_texts(values: pd.Series, limit: int, *, what: str) -> pd.Series:
    """Texts cut to ``limit`` characters, with the count logged (``what``: whose limit)."""
    long = values.str.len() > limit
    if long.any():
        log.warning("%d text(s) longer than %s (%d characters) truncated to it",
                    int(long.sum()), what, limit)
        values = values.where(~long, values.str.slice(0, limit))
    return values


def check_unique(values: pd.Series, *, file: str | Path | None, column: str) -> None:
    """Refuse a repeated id, naming the row of its second occurrence and of its first."""
    dup = values.duplicated(keep="first")
    if dup.any():
        row = dup.idxmax()
        first = values.index[values == values.loc[row]][0]
        raise DataError(f"duplicate id {values.loc[row]!r} (first seen at row {first})",
                        file=file, row=row, column=column)


def ids(values: pd.Series, *, file: str | Path | None, column: str) -> pd.Series:
    """Ids as text, as the user wrote them: none missing or blank, none repeated."""
    blank = values.isna() | (values.astype(str).str.strip() == "")
    reject_rows(blank, values, "id is missing", file=file, column=column)
    out = values.map(lambda v: str(v.item() if hasattr(v, "item") else v))
    check_unique(out, file=file, column=column)
    return out


def numeric(values: pd.Series, *, file: str | Path | None, column: str) -> pd.Series:
    """``values`` as float64; empty cells become NaN, anything else unparsable is refused."""
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return values.astype("float64")
    out = pd.to_numeric(values.map(lambda v: v if isinstance(v, str | int | float) else "x"),
                        errors="coerce").astype("float64")
    given = values.notna() & (values.astype(str).str.strip() != "")
    reject_rows(given & out.isna(), values, "not a number", file=file, column=column)
    return out


def labels(values: pd.Series, *, file: str | Path | None, column: str,
           allowed: Sequence[int] = (0, 1)) -> pd.Series:
    """Class labels as int64, each one of ``allowed``; a missing label is refused."""
    out = numeric(values, file=file, column=column)
    names = " or ".join(map(str, allowed))
    reject_rows(~out.isin(list(allowed)), values, f"label must be {names}", file=file,
                column=column)
    return out.astype("int64")


def check_range(values: pd.Series, low: float, high: float, *, file: str | Path | None,
                column: str, allow_missing: bool) -> None:
    """Refuse values outside ``[low, high]`` (and missing ones unless ``allow_missing``)."""
    bad = (values < low) | (values > high)
    if not allow_missing:
        bad |= values.isna()
    reject_rows(bad, values, f"value outside [{low:g}, {high:g}]", file=file, column=column)


def probabilities(values: pd.Series, *, file: str | Path | None, column: str) -> pd.Series:
    """Probabilities as float64 in [0, 1]; a missing one is refused."""
    out = numeric(values, file=file, column=column)
    check_range(out, 0, 1, file=file, column=column, allow_missing=False)
    return out


def check_fractions(frame: pd.DataFrame, columns: Sequence[str], *,
                    file: str | Path | None = None,
                    annotated: pd.Series | None = None) -> None:
    """Identity columns hold rater fractions: numbers in [0, 1], or missing (positional rows);
    missing is refused in the rows where ``annotated`` holds."""
    for column in columns:
        values = frame[column].reset_index(drop=True)
        values.index += 1
        values = numeric(values, file=file, column=column)
        check_range(values, 0, 1, file=file, column=column, allow_missing=True)
        if annotated is not None:
            mask = pd.Series(annotated.to_numpy(dtype=bool), index=values.index)
            reject_rows(mask & values.isna(), values, "identity value missing in a row "
                        "with human identity labels", file=file, column=column)
