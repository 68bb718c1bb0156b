"""Civil Comments (toxicity paper §4.1) from Kaggle-, WILDS- and TFDS-shaped files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fixtures.raw_data import (
    IDENTITIES,
    WILDS_EXTRA,
    civil_rows,
    write_civil_comments_csv,
    zip_member,
)

from biasrepro.data import civil_comments
from biasrepro.data.split import allocate
from biasrepro.errors import ConfigError, DataError

SETTINGS = {"split": {"train": 0.4, "validation": 0.3, "test": 0.3},
            "identity_threshold": 0.5, "toxicity_threshold": 0.5}
SPLITS = ("train", "validation", "test")
OUTPUTS = ("train.parquet", "validation.parquet", "test.parquet", "fairness_original.parquet")


def _prepare(path: Path, out: Path, *, fmt: str = "csv", member: str | None = None,
             seed: int = 7, splits=None) -> tuple[dict[str, pd.DataFrame], dict]:
    settings = SETTINGS if splits is None else {**SETTINGS, "splits": splits}
    civil_comments.prepare(path, fmt=fmt, member=member, identities=IDENTITIES,
                           settings=settings, seed=seed, out_dir=out)
    tables = {name.removesuffix(".parquet"): pd.read_parquet(out / name) for name in OUTPUTS}
    return tables, json.loads((out / "identity_stats.json").read_text())


@pytest.fixture(scope="module")
def kaggle(tmp_path_factory):
    root = tmp_path_factory.mktemp("kaggle")
    write_civil_comments_csv(root / "all_data.csv")
    tables, stats = _prepare(root / "all_data.csv", root / "out")
    return root, tables, stats


def test_schema(kaggle):
    _, tables, _ = kaggle
    train = tables["train"]
    assert list(train.columns) == ["id", "text", "text_raw", "toxicity", "label", *IDENTITIES,
                                   "identity_annotator_count", "signature", "split"]
    dtypes = train.dtypes.astype(str).to_dict()
    assert dtypes["label"] == "int64" and dtypes["toxicity"] == "float64"
    assert dtypes["identity_annotator_count"] == "Int64"
    assert all(dtypes[g] == "float64" for g in IDENTITIES)
    assert list(tables["fairness_original"].columns) == [*train.columns, "identity"]


def test_rows_kept_and_dropped_per_reason(kaggle):
    _, tables, stats = kaggle
    rows = civil_rows()
    assert stats["identity_label_rule"] == "identity_annotator_count > 0"
    assert stats["rows_read"] == len(rows)
    # two rows have identity_annotator_count 0; one comment is only a link
    assert stats["dropped"] == {"no_human_identity_labels": 2, "empty_after_cleaning": 1}
    assert stats["rows_kept"] == len(rows) - 3
    assert sum(len(tables[s]) for s in SPLITS) == stats["rows_kept"]
    kept = pd.concat([tables[s] for s in SPLITS])
    none = kept[kept["text_raw"] == "Annotated, and no identity applies."]
    assert len(none) == 1 and (none[IDENTITIES] == 0).all(axis=None)
    assert none["signature"].item() == "none"


def test_text_cleaned_as_the_paper_lists(kaggle):
    _, tables, _ = kaggle
    kept = pd.concat([tables[s] for s in SPLITS]).set_index("id")
    by_raw = dict(zip(kept["text_raw"], kept["text"], strict=True))
    assert by_raw["Honestly, you're wrong: the woman at the council did fine."] == (
        "honestly , you are wrong : the woman at the council did fine ."
    )
    assert by_raw["Read this https://example.org/a?b=1 first! white voters are idiots."] == (
        "read this first ! white voters are idiots ."
    )
    assert by_raw["Caf\u00e9 owners\u00a0agree \u2014 the new parking rules did fine."] == (
        "cafe owners agree the new parking rules did fine ."
    )


def test_labels_signatures_and_stratified_split(kaggle):
    _, tables, _ = kaggle
    kept = pd.concat([tables[s] for s in SPLITS])
    assert (kept["label"] == (kept["toxicity"] >= 0.5)).all()
    two = kept[kept["text_raw"] == "Men and women both vote."]
    assert two["signature"].item() == "female+male"
    assert set(kept["signature"]) == {*IDENTITIES, "none", "female+male"}
    for (label, sig), group in kept.groupby(["label", "signature"]):
        counts = group["split"].value_counts().reindex(list(SPLITS), fill_value=0).to_dict()
        assert counts == allocate(len(group), SETTINGS["split"]), (label, sig)


def test_fairness_subset_is_the_single_identity_test_rows(kaggle):
    _, tables, stats = kaggle
    test, fair = tables["test"], tables["fairness_original"]
    single = (test[IDENTITIES] >= 0.5).sum(axis=1) == 1
    assert fair["id"].tolist() == test.loc[single, "id"].tolist()
    assert (fair["identity"] == fair["signature"]).all()
    assert set(fair["identity"]) <= set(IDENTITIES)
    for g in IDENTITIES:
        rows = fair[fair["identity"] == g]
        assert stats["fairness_original"]["identities"][g] == {
            "n": len(rows), "n_toxic": int(rows["label"].sum()),
            "toxic_ratio": rows["label"].mean() if len(rows) else None,
        }


def test_stats_per_split_and_identity(kaggle):
    _, tables, stats = kaggle
    for s in SPLITS:
        t = tables[s]
        assert stats["splits"][s]["n"] == len(t)
        for g in IDENTITIES:
            rows = t[t[g] >= 0.5]
            got = stats["splits"][s]["identities"][g]
            assert (got["n"], got["n_toxic"]) == (len(rows), int(rows["label"].sum()))
            assert got["toxic_ratio"] == pytest.approx(rows["label"].mean())


def test_zip_member_gives_the_same_tables_as_the_csv(kaggle):
    root, tables, stats = kaggle
    archive = zip_member(root / "all_data.csv", root / "civil_comments_v1.2.zip",
                         "civil_comments.csv")
    out = root / "from_zip"
    zipped, zstats = _prepare(archive, out, fmt="zip", member="civil_comments.csv")
    for name in OUTPUTS:
        assert (out / name).read_bytes() == (root / "out" / name).read_bytes()
    assert zstats["member"] == "civil_comments.csv" and zstats["format"] == "zip"
    assert {k: v for k, v in zstats.items() if k not in ("format", "member")} == {
        k: v for k, v in stats.items() if k not in ("format", "member")
    }
    # the member was read from the archive, not extracted beside it
    assert sorted(p.name for p in root.iterdir() if p.is_file()) == [
        "all_data.csv", "civil_comments_v1.2.zip"]


def test_tfds_layout_without_annotator_count(kaggle, tmp_path):
    _, kaggle_tables, _ = kaggle
    write_civil_comments_csv(tmp_path / "civil_comments.csv", variant="tfds")
    tables, stats = _prepare(tmp_path / "civil_comments.csv", tmp_path / "out")
    assert stats["identity_label_rule"].startswith("every configured identity column filled")
    # the same rows as by the annotator count: the unannotated ones have blank cells
    assert stats["dropped"] == {"no_human_identity_labels": 2, "empty_after_cleaning": 1}
    kept = pd.concat([tables[s] for s in SPLITS])
    assert kept["identity_annotator_count"].isna().all()
    expected = pd.concat([kaggle_tables[s] for s in SPLITS])
    expected = expected[expected[IDENTITIES].notna().all(axis=1)]
    assert sorted(kept["id"]) == sorted(expected["id"])


def test_kaggle_train_csv_target_column(tmp_path, kaggle):
    _, kaggle_tables, _ = kaggle
    write_civil_comments_csv(tmp_path / "train.csv", variant="train")
    tables, _ = _prepare(tmp_path / "train.csv", tmp_path / "out")
    for s in SPLITS:
        pd.testing.assert_frame_equal(tables[s], kaggle_tables[s])


def test_seeded_split_reruns_identically_and_changes_with_the_seed(kaggle, tmp_path):
    root, tables, _ = kaggle
    again, _ = _prepare(root / "all_data.csv", tmp_path / "same")
    for name in OUTPUTS:
        assert (tmp_path / "same" / name).read_bytes() == (root / "out" / name).read_bytes()
    other, _ = _prepare(root / "all_data.csv", tmp_path / "other", seed=8)
    assert set(other["train"]["id"]) != set(tables["train"]["id"])
    assert len(other["train"]) == len(tables["train"])


def test_the_split_does_not_depend_on_the_row_order(kaggle, tmp_path):
    root, tables, _ = kaggle
    rows = civil_rows()
    shuffled = [rows[i] for i in np.random.default_rng(3).permutation(len(rows))]
    write_civil_comments_csv(tmp_path / "shuffled.csv", rows=shuffled)
    other, _ = _prepare(tmp_path / "shuffled.csv", tmp_path / "out")
    for s in SPLITS:
        assert set(other[s]["id"]) == set(tables[s]["id"])


# -- the three routes to the data, and the source-split selection --------------------------

#: each fixture row's source split: every third row validation or test, the rest train
def _source_splits(rows: list[dict]) -> list[str]:
    return [("train", "train", "validation", "train", "test")[i % 5] for i in range(len(rows))]


def _write(fmt: str, directory: Path, rows: list[dict], splits: list[str]) -> tuple[Path, str]:
    """The fixture file of ``fmt`` (its real header) and the member to read, if any."""
    if fmt == "tfds":
        csv = directory / "civil_comments.csv"
        write_civil_comments_csv(csv, variant="tfds", rows=rows, splits=splits)
        return zip_member(csv, directory / "civil_comments_v1.2.zip", "civil_comments.csv"), None
    name = {"kaggle": "all_data.csv", "wilds": "all_data_with_identities.csv"}[fmt]
    write_civil_comments_csv(directory / name, variant=fmt, rows=rows, splits=splits)
    return directory / name, None


def test_wilds_fixture_carries_its_header(tmp_path):
    path, _ = _write("wilds", tmp_path, civil_rows(), ["train"] * len(civil_rows()))
    header = path.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[0] == "" and header[1:4] == ["id", "comment_text", "split"]
    assert header[-len(WILDS_EXTRA):] == WILDS_EXTRA
    assert "identity_annotator_count" in header


@pytest.mark.parametrize("fmt", ["tfds", "kaggle", "wilds"])
def test_each_format_reads_the_same_comments(kaggle, tmp_path, fmt):
    """Every route gives the Kaggle CSV's tables (TFDS: by its own identity-label rule)."""
    _, kaggle_tables, _ = kaggle
    rows = civil_rows()
    path, member = _write(fmt, tmp_path, rows, ["train"] * len(rows))
    tables, stats = _prepare(path, tmp_path / "out", fmt=fmt, member=member)
    assert stats["format"] == fmt
    assert stats["source_splits"] == {"rows": {"train": stats["rows_read"], "validation": 0,
                                               "test": 0},
                                      "kept": ["train", "validation", "test"], "dropped": 0}
    if fmt == "tfds":
        assert stats["member"] == "civil_comments.csv"
        kept = pd.concat([tables[s] for s in SPLITS])
        expected = pd.concat([kaggle_tables[s] for s in SPLITS])
        assert sorted(kept["id"]) == sorted(expected[expected[IDENTITIES].notna().all(axis=1)]
                                            ["id"])
        return
    if fmt == "wilds":  # WILDS holds only the identity-annotated rows
        assert stats["rows_read"] == sum(1 for r in rows if r["annotators"])
    for s in SPLITS:
        pd.testing.assert_frame_equal(tables[s], kaggle_tables[s])


@pytest.mark.parametrize("fmt", ["tfds", "kaggle", "wilds"])
def test_splits_train_keeps_only_the_source_train_split(tmp_path, fmt):
    rows = civil_rows()
    splits = _source_splits(rows)
    path, member = _write(fmt, tmp_path, rows, splits)
    tables, stats = _prepare(path, tmp_path / "train_only", fmt=fmt, member=member,
                             splits=["train"])
    kept = set(pd.concat([tables[s] for s in SPLITS])["id"])
    train_ids = {r["id"] for r, s in zip(rows, splits, strict=True) if s == "train"}
    assert kept <= train_ids
    source = stats["source_splits"]
    assert source["kept"] == ["train"]
    in_file = [s for r, s in zip(rows, splits, strict=True) if fmt != "wilds" or r["annotators"]]
    # Kaggle's all_data.csv has one test split: validation and test rows both read as test
    expected = {s: in_file.count(s) for s in SPLITS}
    if fmt == "kaggle":
        expected = {"train": expected["train"], "validation": 0,
                    "test": expected["validation"] + expected["test"]}
    assert source["rows"] == expected
    assert source["dropped"] == len(in_file) - expected["train"]
    assert stats["rows_read"] == expected["train"]
    every, _ = _prepare(path, tmp_path / "all", fmt=fmt, member=member, splits="all")
    assert kept < set(pd.concat([every[s] for s in SPLITS])["id"])


def test_kaggle_train_csv_is_all_train(tmp_path):
    write_civil_comments_csv(tmp_path / "train.csv", variant="train")
    header = (tmp_path / "train.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert "split" not in header and "target" in header and "toxicity" not in header
    _, stats = _prepare(tmp_path / "train.csv", tmp_path / "out", fmt="kaggle",
                        splits=["train"])
    assert stats["source_splits"]["rows"]["train"] == stats["rows_read"]
    with pytest.raises(DataError, match="no row of the source split"):
        _prepare(tmp_path / "train.csv", tmp_path / "none", fmt="kaggle", splits=["test"])
    assert not (tmp_path / "none").exists() or not any((tmp_path / "none").iterdir())


def test_unknown_split_value_names_file_row_and_column_and_writes_nothing(kaggle, tmp_path):
    root, _, _ = kaggle
    rows = civil_rows()
    splits = _source_splits(rows)
    path, _ = _write("wilds", tmp_path, rows, splits)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[5] = lines[5].replace(",val,", ",dev,").replace(",train,", ",dev,").replace(
        ",test,", ",dev,")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    with pytest.raises(DataError) as e:
        _prepare(path, out, fmt="wilds")
    assert e.value.row == 5 and e.value.column == "split" and str(path) in str(e.value)
    assert "'dev'" in str(e.value)
    assert not out.exists() or not any(out.iterdir())


def test_a_split_selection_needs_a_format_that_knows_its_splits(kaggle, tmp_path):
    root, _, _ = kaggle
    with pytest.raises(ConfigError, match="no known split column"):
        _prepare(root / "all_data.csv", tmp_path / "out", splits=["train"])
    with pytest.raises(ConfigError, match="'dev' is not one of"):
        _prepare(root / "all_data.csv", tmp_path / "out", fmt="kaggle", splits=["dev"])
    with pytest.raises(ConfigError, match="must be one of"):
        _prepare(root / "all_data.csv", tmp_path / "out", fmt="parquet")


def test_missing_split_column_is_refused(tmp_path):
    write_civil_comments_csv(tmp_path / "train.csv", variant="train")
    with pytest.raises(DataError, match="missing required column") as e:
        _prepare(tmp_path / "train.csv", tmp_path / "out", fmt="wilds")
    assert e.value.column == "split"


def test_each_format_is_checked_as_its_content_when_downloaded() -> None:
    from biasrepro.data.download import EXPECT_BY_FORMAT

    assert {f: EXPECT_BY_FORMAT[f] for f in ("tfds", "kaggle", "wilds", "csv", "zip")} == {
        "tfds": "zip", "kaggle": "text", "wilds": "text", "csv": "text", "zip": "zip"}
    assert set(civil_comments.FORMATS) <= set(EXPECT_BY_FORMAT)


# -- rows outside the study: counted, not fatal; the study's rows: strict ------------------


def _unannotated(rows) -> int:
    """The index of the first row without human identity labels."""
    return next(i for i, r in enumerate(rows) if r["annotators"] == 0)


@pytest.mark.parametrize("edit, reason", [
    ({"comment_text": ""}, "empty_text"),
    ({"toxicity": "high"}, "toxicity_not_a_number"),
])
def test_a_fault_in_a_row_the_study_drops_is_counted_not_fatal(tmp_path, edit, reason):
    """One blank comment among the ~1.5 M rows without identity labels must not stop a run;
    in a row the study keeps the same fault is refused with its row."""
    rows = civil_rows()
    clean, _ = _prepare(_written(tmp_path / "clean.csv", rows), tmp_path / "clean")
    i = _unannotated(rows)
    rows[i].update(edit)
    tables, stats = _prepare(_written(tmp_path / "a.csv", rows), tmp_path / "a")
    assert stats["dropped_rows_with"] == {reason: 1}
    assert stats["dropped"]["no_human_identity_labels"] == 2
    for name, table in tables.items():
        pd.testing.assert_frame_equal(table, clean[name], obj=name)
    j = next(k for k, r in enumerate(rows) if r["annotators"] > 0)
    rows[i] = civil_rows()[i]
    rows[j].update(edit)
    with pytest.raises(DataError) as e:
        _prepare(_written(tmp_path / "b.csv", rows), tmp_path / "b")
    assert e.value.row == j + 1


def _written(path: Path, rows) -> Path:
    write_civil_comments_csv(path, rows=rows)
    return path


def test_reading_in_small_blocks_gives_the_same_tables(kaggle, tmp_path, monkeypatch):
    root, tables, stats = kaggle
    monkeypatch.setattr(civil_comments, "BLOCK_BYTES", 2048)  # a few rows per block
    small, small_stats = _prepare(root / "all_data.csv", tmp_path / "out")
    assert small_stats == stats
    for name, table in tables.items():
        pd.testing.assert_frame_equal(small[name], table, obj=name)


def test_a_fault_in_a_later_block_names_its_row(tmp_path, monkeypatch):
    monkeypatch.setattr(civil_comments, "BLOCK_BYTES", 2048)
    rows = civil_rows()
    j = max(k for k, r in enumerate(rows) if r["annotators"] > 0)
    rows[j]["toxicity"] = 1.5
    with pytest.raises(DataError, match=r"value outside \[0, 1\]") as e:
        _prepare(_written(tmp_path / "a.csv", rows), tmp_path / "a")
    assert e.value.row == j + 1 and e.value.column == "toxicity"


def test_the_console_line_counts_every_dropped_row_by_reason(tmp_path, caplog):
    """Rows dropped for no human identity labels or for being empty after cleaning (an
    emoji-only comment) are counted on the console, not only in identity_stats.json."""
    import logging

    write_civil_comments_csv(tmp_path / "all_data.csv")
    with caplog.at_level(logging.INFO, logger="biasrepro.data.civil_comments"):
        _, stats = _prepare(tmp_path / "all_data.csv", tmp_path / "out")
    line = next(r.getMessage() for r in caplog.records
                if r.getMessage().startswith("civil comments: kept"))
    assert line.startswith(f"civil comments: kept {stats['rows_kept']} of "
                           f"{stats['rows_read']} rows read (dropped: 2 no human identity "
                           "labels, 1 empty after cleaning)")
