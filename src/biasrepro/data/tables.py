"""Former home of the table checks; they live in :mod:`biasrepro.io` now (kept importable)."""

from biasrepro.io import (  # noqa: F401
    DELIMITER_NAMES,
    check_delimiter,
    check_fractions,
    check_range,
    check_text,
    check_unique,
    iter_records,
    numeric,
    read_parquet,
    reject_rows,
    require_columns,
    require_file,
)
