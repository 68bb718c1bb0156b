"""The papers' tables beside ours: published data, cells, reasons, errors."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BIN, REPO

from biasrepro.analysis import paper_tables as pt

PUBLISHED = REPO / "published"
PAPERS = REPO.parent / "shared" / "papers"
ATTRS = {"gender": {"marginalized": ["female"], "non_marginalized": ["male"]},
         "race": {"marginalized": ["black", "asian"], "non_marginalized": ["white"]},
         "religion": {"marginalized": ["jewish", "muslim"], "non_marginalized": ["christian"]}}
SETTINGS = {"models.registry": {"bert-tiny": {"source": "embedded", "architecture": "bert"}},
            "models.tasks": {"toxicity": ["bert-tiny"], "sentiment": ["bert-tiny"]},
            "methods.tasks": {"toxicity": ["baseline", "upstream-sentDebias-gender"],
                              "sentiment": ["baseline"]}}


def _write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def _toxicity(d: Path) -> Path:
    """A tiny fairness report of bert-tiny: baseline and upstream-sentDebias-gender."""
    d.mkdir(parents=True, exist_ok=True)
    gaps = []
    for method, values in (("baseline", (0.02, 0.05, 0.01)),
                           ("upstream-sentDebias-gender", (0.01, 0.04, 0.005))):
        for fset in ("original", "balanced"):
            for metric, v in zip(("FPR_gap", "TPR_gap", "AUC_gap"), values, strict=True):
                gaps.append({"model": "bert-tiny", "method": method, "fairness_set": fset,
                             "attribute": "gender", "metric": metric, "value": v, "note": ""})
    report = {"gaps": gaps,
              "sensescore": [{"model": "bert-tiny", "method": "baseline", "attribute": "race",
                              "sense_score": None, "note": "no pair"}],
              "dataset_bias": [{"method": "baseline", "attribute": "gender",
                                "selection": 0.04, "overamplification_raw": 10.0,
                                "overamplification": 1.0, "overamplification_share": 0.1,
                                "note": ""}],
              "training": {"baseline": {"path": "x", "rows": 100}},
              "fairness_sets": {"original": {"rows": 40}, "balanced": {"rows": 80}},
              "settings": {"attributes": ATTRS}}
    (d / "report.json").write_text(json.dumps(report), encoding="utf-8")
    _write_csv(d / "correlations.csv", [
        {"group": "bias_vs_fairness", "model": "bert-tiny", "fairness_set": "balanced",
         "x": "selection", "y": "FPR_gap", "rho": "0.5", "n": "3", "p_cluster": "0.6666667",
         "note": ""}])
    _write_csv(d / "training_groups.csv", [
        {"method": "baseline", "group": "male", "n": "30", "n_positive": "3",
         "positive_ratio": "0.1"}])
    _write_csv(d / "group_metrics.csv", [
        {"model": "bert-tiny", "method": "baseline", "fairness_set": "original",
         "group": "male", "n": "20", "positives": "5"}])
    return d / "report.json"


#: bert-tiny's baseline ROC-AUC on each scored set (distinct, so a wrong set shows)
AUCS = {"test": 0.9, "validation": 0.88, "fairness-original": 0.7, "fairness-balanced": 0.8}


def _classification(path: Path) -> Path:
    path.write_text(json.dumps([{"task": "toxicity", "model": "bert-tiny", "method": "baseline",
                                 "set": name, "roc_auc": auc} for name, auc in AUCS.items()]),
                    encoding="utf-8")
    return path


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "biasrepro"), "analysis", "paper-tables", *args],
                          capture_output=True, text=True, timeout=120)


def _run(tmp: Path, out: Path, published: Path = PUBLISHED) -> subprocess.CompletedProcess:
    return _cli("--published", str(published), "--toxicity", str(_toxicity(tmp / "tox")),
                "--classification", str(_classification(tmp / "classification.json")),
                "--settings", json.dumps(SETTINGS), "--out-dir", str(out))


def _rows(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return {(r["row"], r["column"]): r for r in csv.DictReader(f)}


def test_cells_hold_ours_published_and_the_difference(tmp_path: Path) -> None:
    proc = _run(tmp_path, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    t3 = _rows(tmp_path / "out" / "toxicity-table3.csv")
    cell = t3[("gender/bert/balanced", "FPR_gap")]
    assert (cell["ours"], cell["published"], cell["reason"]) == ("0.02", "0.008", "")
    assert float(cell["difference"]) == pytest.approx(0.02 - 0.008)
    assert (cell["our_model"], cell["stand_in"], cell["our_source"]) == \
        ("bert-tiny", "yes", "embedded")
    assert "Table 3, row Gender / BERT / Balanced, column FPR_gap" == cell["source"]
    md = (tmp_path / "out" / "toxicity-table3.md").read_text(encoding="utf-8")
    assert "| Gender / BERT / Balanced | 0.020 / 0.008 (+0.012) |" in md
    assert "BERT → bert-tiny (embedded stand-in)" in md
    auc = _rows(tmp_path / "out" / "toxicity-table5.csv")[("gender/bert/baseline", "AUC")]
    assert float(auc["difference"]) == pytest.approx(0.8 - 0.830)
    # Table 10: all three gaps of upstream-sentDebias-gender are below the baseline's
    t10 = _rows(tmp_path / "out" / "toxicity-table10.csv")
    flag = t10[("upstream-sentDebias", "bert/gender")]
    assert (flag["ours"], flag["published"], flag["difference"]) == ("1", "0", "1")
    index = (tmp_path / "out" / "index.md").read_text(encoding="utf-8")
    assert all(f"[{tid}]({tid}.md)" in index for tid in pt.TABLE_IDS)


def test_each_auc_is_compared_on_the_set_its_table_says(tmp_path: Path) -> None:
    """§4.2's AUCs against the test split, Tables 5-8's against the balanced fairness set,
    and each table's notes name the set."""
    assert _run(tmp_path, tmp_path / "out").returncode == 0
    out = tmp_path / "out"
    text = _rows(out / "toxicity-text-auc.csv")[("bert/baseline", "AUC")]
    assert float(text["ours"]) == AUCS["test"] and "the test split" in text["our_note"]
    for n in (5, 6, 7, 8):
        cell = _rows(out / f"toxicity-table{n}.csv")[("gender/bert/baseline", "AUC")]
        assert float(cell["ours"]) == AUCS["fairness-balanced"]
        assert "the balanced fairness set" in cell["our_note"]
        assert "ROC-AUC on the balanced fairness set" in \
            (out / f"toxicity-table{n}.md").read_text(encoding="utf-8")


def test_appendix_aucs_are_compared_on_the_sets_the_appendix_names(tmp_path: Path) -> None:
    """The IMDB-gendered models' AUCs (0.899/0.912/0.914) on IMDB-gendered's test split, the
    perturbed-data models' (0.869/0.860/0.877) "on the perturbed-IMDB-gendered dataset", and
    the SST AUCs on the SST fairness set; never on IMDB's own test split."""
    settings = {**SETTINGS, "methods.tasks": {
        **SETTINGS["methods.tasks"],
        "sentiment": ["baseline", "imdb-gendered", "downstream-perturbed-data"]}}
    aucs = {**AUCS, "imdb-gendered-test": 0.85, "imdb-gendered-perturbed-test": 0.83}
    records = [{"task": "sentiment", "model": "bert-tiny", "method": method,
                "set": name, "roc_auc": auc + (0.01 if method != "imdb-gendered" else 0)}
               for name, auc in aucs.items()
               for method in ("imdb-gendered", "downstream-perturbed-data")]
    (tmp_path / "c.json").write_text(json.dumps(records), encoding="utf-8")
    proc = _cli("--published", str(PUBLISHED), "--classification", str(tmp_path / "c.json"),
                "--settings", json.dumps(settings), "--out-dir", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    rows = _rows(tmp_path / "out" / "toxicity-appendix-sentiment.csv")
    sst = rows[("model/bert/imdb-gendered", "AUC/sst-original")]
    assert (float(sst["ours"]), sst["published"]) == (AUCS["fairness-original"], "0.860")
    assert "SST sentiment-fairness set" in sst["our_note"]
    gendered = rows[("model/bert/imdb-gendered", "AUC")]
    assert (float(gendered["ours"]), gendered["published"]) == (0.85, "0.912")
    assert "IMDB-gendered's test split" in gendered["our_note"]
    perturbed = rows[("model/bert/downstream-perturbed-data", "AUC")]
    assert (float(perturbed["ours"]), perturbed["published"]) == (0.84, "0.860")
    assert "perturbed IMDB-gendered's test split" in perturbed["our_note"]


def test_cells_we_cannot_produce_say_why(tmp_path: Path) -> None:
    assert _run(tmp_path, tmp_path / "out").returncode == 0
    out = tmp_path / "out"
    t3 = _rows(out / "toxicity-table3.csv")
    albert = t3[("gender/albert/balanced", "FPR_gap")]
    assert albert["ours"] == "" and albert["difference"] == ""
    assert "no albert model among this configuration's models.tasks.toxicity (bert-tiny)" \
        in albert["reason"]
    assert "no balanced-set gaps of bert-tiny/baseline for race" in \
        t3[("race/bert/balanced", "FPR_gap")]["reason"]
    t5 = _rows(out / "toxicity-table5.csv")
    assert "method upstream-sentDebias-race is not in this configuration's " \
        "methods.tasks.toxicity" in t5[("race/bert/upstream-sentDebias-race", "AUC")]["reason"]
    t4 = _rows(out / "toxicity-table4.csv")
    assert "--representation" in t4[("bert/pretrained", "crows/gender")]["reason"]
    t12 = _rows(out / "toxicity-table12.csv")
    assert "undefined in our results: no pair" in t12[("bert/baseline", "race")]["reason"]
    assert "--biasfinder" in _rows(out / "biasfinder-table4.csv")[("total", "btc")]["reason"]
    assert "--sentiment" in next(iter(_rows(out / "toxicity-appendix-sentiment.csv")
                                      .values()))["reason"]
    md = (out / "toxicity-table3.md").read_text(encoding="utf-8")
    assert "n/a [1] / 0.006" in md and "\n1. not run: no albert model" in md
    for path in out.glob("*.csv"):
        for r in _rows(path).values():
            assert bool(r["ours"]) != bool(r["reason"]), (path.name, r)


def test_biasfinder_table4_reports_rates_pairs_and_classes(tmp_path: Path) -> None:
    """Beside the counts: our BTC rate, possible pairs, classes, lists and occupation mode,
    and our class count against the paper's (79 occupations, 26 countries)."""
    rows = [{"model": "bert-tiny", "method": "baseline", "threshold": "0.5",
             "lists": "original", "occupation_templates": "first", "characteristic": c,
             "classes": k, "templates": t, "mutants": "1", "btc": b, "possible_pairs": p,
             "btc_rate": str(int(b) / int(p))}
            for c, k, t, b, p in (("gender", "2.0", "10", "30", "1200"),
                                  ("occupation", "79.0", "20", "600", "61620"),
                                  ("country", "25", "5", "40", "1500"),
                                  ("total", "", "35", "670", "64320"))]
    table = tmp_path / "table4.csv"
    _write_csv(table, rows)
    out = tmp_path / "out"
    settings = {**SETTINGS, "biasfinder.methods": None, "models.training.sentiment": "tse",
                "models.training.named.tse": TSE}
    proc = _cli("--published", str(PUBLISHED), "--biasfinder", str(table), "--settings",
                json.dumps(settings), "--out-dir", str(out))
    assert proc.returncode == 0, proc.stderr
    t4 = _rows(out / "biasfinder-table4.csv")
    # the command passes the training settings through to every cell's note
    assert all("ours fine-tuned with setting 'tse'" in r["our_note"] for r in t4.values())
    country = t4[("country", "classes")]
    assert (country["ours"], country["published"], country["difference"]) == ("25", "26", "-1")
    assert t4[("occupation", "classes")]["difference"] == "0"
    assert ("total", "classes") not in t4
    note = t4[("occupation", "btc")]["our_note"]
    assert note.endswith(" | ours, occupation: BTC rate 0.0097 over 61,620 possible pairs "
                         "between 79 classes; word lists: original, occupation templates: "
                         "first")
    md = (out / "biasfinder-table4.md").read_text(encoding="utf-8")
    assert "#Classes" in md and "| Country-of-Origin | 5 / 2,344 (-2,339) | 40 / 5,296 " \
        "(-5,256) | 25 / 26 (-1) |" in md
    assert "\n- ours, total: BTC rate 0.0104 over 64,320 possible pairs; word lists" in md
    assert md.count("ours fine-tuned with setting 'tse'") == 1   # one line for every cell


def test_the_papers_checkpoint_is_not_a_stand_in() -> None:
    settings = {**SETTINGS, "models.registry": {"bert-tiny": {
        "source": "hub", "architecture": "bert", "id": "google-bert/bert-base-uncased"}}}
    res = pt.Results(settings=settings, classification={("toxicity", "bert-tiny",
                                                         "baseline", "test"): 0.91})
    cell = next(c for c in pt.read_published(PUBLISHED) if c.table_id == "toxicity-text-auc"
                and c.row == "bert/baseline")
    ours = pt.resolve(cell, res)
    assert (ours.value, ours.stand_in, ours.paper_model) == (0.91, "no", "BERT")


def test_published_files_parse_with_a_source_for_every_cell() -> None:
    cells = pt.read_published(PUBLISHED)
    assert {c.table_id for c in cells} == set(pt.TABLE_IDS)
    keys = [(c.table_id, c.row, c.column) for c in cells]
    assert len(keys) == len(set(keys))
    assert all(re.match(r"(Table \d+|§\d|Appendix)", c.source) for c in cells)
    res = pt.Results(settings=SETTINGS)
    for c in cells:  # every key is understood: with no results, every cell has a reason
        assert pt.resolve(c, res).reason


def _corrupt(tmp: Path, edit) -> Path:
    pub = tmp / "published"
    shutil.copytree(PUBLISHED, pub)
    path = pub / "toxicity_fairness.csv"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(edit(lines)), encoding="utf-8")
    return pub


@pytest.mark.parametrize(("edit", "message"), [
    (lambda ls: [ls[0].replace(",source,", ",origin,")] + ls[1:],
     "column 'source': missing required column"),
    (lambda ls: [ls[0], ls[1].replace(",0.001,", ",n/a,")] + ls[2:],
     "row 1, column 'value': 'n/a' is not a number"),
    (lambda ls: [ls[0], ls[1], ls[1]] + ls[2:], "is published twice"),
    (lambda ls: [ls[0], ls[1].replace("gender/albert/original", "gender/gpt2/original")]
     + ls[2:], "row 1, column 'row': toxicity-table3: unknown model 'gpt2'"),
    (lambda ls: [ls[0], re.sub(r',"[^"]*",', ",,", ls[1])] + ls[2:],
     "row 1, column 'source': empty value"),
    (lambda ls: [ls[0]] + [x for x in ls[1:] if ",toxicity-table9," not in x],
     "no published cell for table toxicity-table9"),
])
def test_malformed_published_file_is_one_error(tmp_path: Path, edit, message: str) -> None:
    pub = _corrupt(tmp_path, edit)
    out = tmp_path / "out"
    proc = _run(tmp_path, out, published=pub)
    assert proc.returncode == 2, proc.stderr
    errors = [x for x in proc.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "toxicity_fairness.csv" in errors[0] and message in errors[0], errors[0]
    assert not out.exists() or not any(out.iterdir())


def test_missing_study_file_is_one_error(tmp_path: Path) -> None:
    report = _toxicity(tmp_path / "tox")
    (report.parent / "group_metrics.csv").unlink()
    out = tmp_path / "out"
    proc = _cli("--published", str(PUBLISHED), "--toxicity", str(report), "--settings",
                json.dumps(SETTINGS), "--out-dir", str(out))
    assert proc.returncode == 2
    assert "group_metrics.csv" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists() or not any(out.iterdir())


def test_outputs_are_byte_identical_on_rerun(tmp_path: Path) -> None:
    assert _run(tmp_path, tmp_path / "a").returncode == 0
    assert _run(tmp_path, tmp_path / "b").returncode == 0
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(p.name for p in pt.output_files(tmp_path / "a"))
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_table_ids_import_without_pandas() -> None:
    code = ("import sys, biasrepro.analysis.paper_tables as p; "
            "assert 'pandas' not in sys.modules; print(len(p.TABLE_IDS))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == str(len(pt.TABLE_IDS)), proc.stderr


# -- the typed-in values against the paper text --------------------------------------------


def _paper(name: str) -> list[str]:
    path = PAPERS / name
    if not path.exists():
        pytest.skip(f"paper text {path} not present")
    return path.read_text(encoding="utf-8").splitlines()


def _cell_text(cell: str) -> str:
    text = re.sub(r"\\(up|down)arrow", "", cell).replace("$", "").strip()
    text = text.replace("e^{-05}", "e-05")
    return "0" + text if text.startswith(".") else text


def _region(lines: list[str], header: str, caption: str, nth: int = 0) -> list[str]:
    start = [i for i, x in enumerate(lines) if x.startswith(header)][nth]
    end = next(i for i in range(start, len(lines)) if lines[i].startswith(caption))
    return [x for x in lines[start + 1:end] if x.strip()]


def _parsed_toxicity_tables(lines: list[str]) -> dict[tuple[str, str, str], str]:
    """Tables 3-8, 10 and 12 read mechanically from the tab-separated lines of the text."""
    models = {"albert-base": "albert", "bert-base-uncased": "bert", "bert-base": "bert",
              "roberta-base": "roberta"}
    out: dict[tuple[str, str, str], str] = {}
    attr = None
    for line in _region(lines, "Attribute\tModel\tDataset", "Table 3:"):
        f = line.split("\t")
        attr = f[0].lower() or attr
        for metric, c in zip(pt.GAPS, f[3:], strict=True):
            out[("toxicity-table3", f"{attr}/{f[1].lower()}/{f[2].lower()}", metric)] = \
                _cell_text(c)
    for n in range(4):
        tid, model = f"toxicity-table{n + 5}", None
        for line in _region(lines, "Attribute\tModel\tAUC", f"Table {n + 5}:", n):
            f = line.split("\t")
            attr = f[0].lower() or attr
            if f[1].startswith("+"):
                method = f[1][1:].replace(" ", "")
            else:
                model, method = f[1].lower(), "baseline"
            for metric, c in zip(("AUC", *pt.GAPS), f[2:], strict=True):
                out[(tid, f"{attr}/{model}/{method}", metric)] = _cell_text(c)
    columns = [f"{s}/{a}" for s in ("crows", "stereoset", "seat") for a in pt.ATTRIBUTES]
    for line in _region(lines, "Model\tCrowsPairs", "Table 4:"):
        f = line.split("\t")
        if f[0].startswith("+"):
            variant = "sentdebias-" + f[0].rsplit("-", 1)[1]
        elif f[0]:
            model, variant = models[f[0].lower()], "pretrained"
        else:
            continue
        for col, c in zip(columns, f[1:], strict=True):
            out[("toxicity-table4", f"{model}/{variant}", col)] = _cell_text(c)
    for line in _region(lines, "Model\tGender\tRace\tReligion", "Table 12:"):
        f = line.split("\t")
        if f[0].startswith("+"):
            method = f[0][1:].strip()
        else:
            model, method = models[f[0].lower()], "baseline"
        for a, c in zip(pt.ATTRIBUTES, f[1:], strict=True):
            out[("toxicity-table12", f"{model}/{method}", a)] = _cell_text(c)
    columns = [f"{m}/{a}" for m in ("albert", "bert", "roberta") for a in pt.ATTRIBUTES]
    for line in _region(lines, "Debias approach", "Table 10:"):
        f = line.split("\t")
        row = f[0].lower().replace("sentdebias", "sentDebias")
        for col, c in zip(columns, f[1:], strict=True):
            out[("toxicity-table10", row, col)] = {"✓": "1", "✗": "0"}[c.strip()]
    return out


def test_typed_values_match_the_toxicity_papers_tables() -> None:
    parsed = _parsed_toxicity_tables(_paper("toxicity-fairness.txt"))
    typed = {(c.table_id, c.row, c.column): c.text for c in pt.read_published(PUBLISHED)}
    tables = {k[0] for k in parsed}
    assert len(tables) == 8 and len(parsed) == 792
    assert {k: typed.get(k) for k in parsed} == parsed
    assert not [k for k in typed if k[0] in tables and k not in parsed]


def test_typed_values_appear_where_the_source_says() -> None:
    lines = _paper("toxicity-fairness.txt")
    cells = pt.read_published(PUBLISHED)
    end = next(i for i, x in enumerate(lines) if x.startswith("Table 9:"))
    start = max(i for i, x in enumerate(lines[:end]) if x == "AlBERT")
    table9 = [x.strip() for x in lines[start:end]]
    values = [c.text for c in cells if c.table_id == "toxicity-table9"]
    numbers = [x for x in table9 if re.fullmatch(r"-?\d\.\d+", x)]
    assert numbers == values
    text = "\n".join(lines)
    for c in cells:
        if c.table_id in ("toxicity-text-auc", "toxicity-text-metric-correlations"):
            assert re.search(rf"(?<![\d.]){re.escape(c.text)}(?!\d)", text), c.source
    sst = next(x for x in lines if "predict the labels of the SST-sentiment-fairness" in x)
    assert tuple(c.text for c in cells if c.column == "AUC/sst-original") == \
        re.findall(r"AUC scores of (0\.\d+) for AlBERT-base, (0\.\d+) for BERT-base, and "
                   r"(0\.\d+) for RoBERTA-base", sst)[0] == ("0.865", "0.860", "0.878")
    for printed in ("5795", "6118.5", "443,046", "382,212", "841,814", "55,476", "3,716",
                    "6,046", "0.309", "0.899", "0.0005", "9,790"):
        assert printed in text
    bf = "\n".join(_paper("biasfinder.txt"))
    row = re.search(r"Gender ([\d,]+) ([\d,]+)Occupation ([\d,]+) ([\d,]+)"
                    r"Country-of-Origin ([\d,]+) ([\d,]+)\nTotal ([\d,]+) ([\d,]+)", bf)
    assert row is not None
    typed = {(c.row, c.column): c.text for c in cells if c.table_id == "biasfinder-table4"}
    order = [(r, k) for r in ("gender", "occupation", "country", "total")
             for k in ("templates", "btc")]
    assert [typed[k] for k in order] == [g.replace(",", "") for g in row.groups()]
    assert typed["occupation", "classes"] == "79" and "set of 79 honest" in bf
    assert typed["country", "classes"] == "26" and "52 names taken" in bf and \
        "from 26 countries of origin" in bf


TSE = {"epochs": 20, "batch_size": 8, "learning_rate": 1e-5, "max_length": 512,
       "warmup_steps": 50, "weight_decay": 0.01, "early_stopping_patience": 7,
       "eval_steps": 500, "eval_fraction": 0.4, "truncation_side": "right"}
BERT4DOC = {"epochs": 5, "batch_size": 24, "learning_rate": 2e-5, "max_length": 128,
            "warmup_steps": 0, "warmup_ratio": 0.1, "weight_decay": 0.01,
            "early_stopping_patience": None, "eval_fraction": 0.0, "truncation_side": "left"}


@pytest.mark.parametrize(("own", "expected"), [
    ("bert4doc", "ours fine-tuned with setting 'bert4doc': lr 2e-05, batch 24, 5 epochs, "
     "max_length 128 keeping the tail, no early stopping: as the published model "
     "(BiasFinder v1, BERT4doc)"),
    (None, "ours fine-tuned with setting 'tse': lr 1e-05, batch 8, 20 epochs, max_length 512 "
     "keeping the head, early stopping (patience 7, evaluated every 500 steps): NOT as the "
     "published model (BiasFinder v1, BERT4doc: lr 2e-05, batch 24, 5 epochs, max_length 128 "
     "keeping the tail, no early stopping); differs in learning_rate, batch_size, epochs, "
     "max_length, truncation_side, early_stopping_patience"),
])
def test_biasfinder_table4_says_how_the_compared_model_was_trained(own, expected) -> None:
    """Every Table 4 cell names the training setting of our BERT and whether it is v1's,
    so a model trained otherwise is never silently compared with the published counts."""
    entry = {"source": "hub", "architecture": "bert", "id": "google-bert/bert-base-uncased"}
    settings = {**SETTINGS, "biasfinder.methods": None,
                "models.registry": {"bert-tiny": entry | ({"training": {"sentiment": own}}
                                                          if own else {})},
                "models.training.sentiment": "tse",
                **{f"models.training.named.{n}": s for n, s in (("tse", TSE),
                                                                 ("bert4doc", BERT4DOC))}}
    row = {"model": "bert-tiny", "method": "baseline", "characteristic": "gender",
           "templates": "10", "btc": "30"}
    res = pt.Results(settings=settings, biasfinder={("bert-tiny", "baseline", "gender"): row})
    cell = next(c for c in pt.read_published(PUBLISHED)
                if c.table_id == "biasfinder-table4" and (c.row, c.column) == ("gender", "btc"))
    ours = pt.resolve(cell, res)
    assert ours.value == 30 and expected in ours.note


def test_biasfinder_classes_of_a_characteristic_without_templates(tmp_path: Path) -> None:
    """A characteristic that yielded no template has no class count, and says why."""
    rows = [{"model": "bert-tiny", "method": "baseline", "threshold": "0.5",
             "characteristic": c, "classes": k, "templates": t, "mutants": m, "btc": "0",
             "possible_pairs": p, "btc_rate": r}
            for c, k, t, m, p, r in (("gender", "", "0", "0", "0", ""),
                                     ("occupation", "79", "2", "158", "6162", "0.0"),
                                     ("country", "", "0", "0", "0", ""),
                                     ("total", "", "2", "158", "6162", "0.0"))]
    table = tmp_path / "table4.csv"
    _write_csv(table, rows)
    proc = _cli("--published", str(PUBLISHED), "--biasfinder", str(table), "--settings",
                json.dumps({**SETTINGS, "biasfinder.methods": None}), "--out-dir",
                str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    t4 = _rows(tmp_path / "out" / "biasfinder-table4.csv")
    assert t4[("country", "classes")]["reason"].startswith(
        "our run generated no template of this characteristic")
    assert t4[("country", "templates")]["ours"] == "0"
