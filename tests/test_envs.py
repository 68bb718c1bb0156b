"""Conda environments for `snakemake --sdm conda`: the lock's pins, and a `conda:` on every rule.

conda cannot run here, so the env files are checked as data: against constraints.txt,
against pyproject.toml, and against the dependency tree of the installed (locked) packages.
"""

import importlib.metadata as metadata
import re
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
ENVS = REPO / "envs"
MAIN_ENV = ENVS / "biasrepro.yaml"
ENV_FILES = sorted(ENVS.glob("*.yaml"))
TORCH = "2.13.0"  # installed first and apart from the lock (offline-environment notes)

WORKFLOW_FILES = [
    path
    for path in [REPO / "Snakefile", REPO / "workflow" / "Snakefile"]
    + sorted((REPO / "workflow" / "rules").glob("*.smk"))
    if path.exists()
]
#: a rule or checkpoint header at any indentation: named (`rule x:`), or unnamed in a loop
#: or a branch (`rule:` with a `name:` directive)
RULE = re.compile(r"^([ \t]*)(?:rule|checkpoint)(?:[ \t]+(\w+))?[ \t]*:", re.M)
NAME = re.compile(r"^\s+name\s*:\s*(.+)$", re.M)
COMMAND = re.compile(r"^\s+(?:shell|script|notebook|wrapper)\s*:", re.M)
CONDA = re.compile(r"^\s+conda\s*:[ \t]*(.*)$", re.M)
STRING_ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)\s*=\s*([\"'])([^\"']+)\2\s*$", re.M)


def lock():
    """constraints.txt as {canonical name: version} (its format is checked in test_container)."""
    pins = {}
    for line in (REPO / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.strip().partition("==")
            pins[canonicalize_name(name)] = version
    return pins


def project_dependencies():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return [Requirement(d) for d in pyproject["project"]["dependencies"]]


def load_env(path):
    env = yaml.safe_load(path.read_text(encoding="utf-8"))
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    (pip,) = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    return env, conda, pip


def pip_pins(path):
    """The env's pip list as [(canonical name, version)], each entry an exact name==version."""
    pins = []
    for entry in load_env(path)[2]:
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s=;@]+)", entry)
        assert match, f"{path.name}: pip entry {entry!r} is not an exact name==version pin"
        pins.append((canonicalize_name(match[1]), match[2]))
    return pins


def runtime_closure():
    """Canonical names of pyproject's dependencies and everything they need, per the
    metadata of the installed distributions (the locked environment)."""
    todo = [(canonicalize_name(r.name), frozenset(r.extras)) for r in project_dependencies()]
    seen = set()
    while todo:
        name, extras = todo.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        try:
            requires = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            pytest.fail(f"{name} is not installed: install the locked environment first")
        for requirement in map(Requirement, requires):
            marker = requirement.marker
            if marker is None or any(marker.evaluate({"extra": e}) for e in extras or {""}):
                todo.append((canonicalize_name(requirement.name), frozenset(requirement.extras)))
    return {name for name, _ in seen}


def test_there_is_an_env_for_the_rules():
    assert MAIN_ENV in ENV_FILES


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_env_is_python_311_from_conda_forge(path):
    env, conda, _ = load_env(path)
    assert env["channels"][0] == "conda-forge" and "nodefaults" in env["channels"]
    pythons = [d for d in conda if re.match(r"python\b", d)]
    assert len(pythons) == 1 and re.fullmatch(r"python=3\.11(\.\d+|\.\*)?", pythons[0]), pythons
    assert "pip" in conda


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_env_pins_the_versions_of_the_lock(path):
    pins = pip_pins(path)
    assert pins[0] == ("torch", TORCH), f"{path.name}: torch=={TORCH} must come first"
    locked = lock()
    wrong = [
        f"{name}=={version} (the lock has {locked.get(name, 'no pin')})"
        for name, version in pins[1:]
        if locked.get(name) != version
    ]
    assert not wrong, f"{path.name} differs from constraints.txt:\n" + "\n".join(wrong)
    names = [name for name, _ in pins]
    assert len(names) == len(set(names)), f"{path.name} pins a package twice"


def test_main_env_pins_the_project_dependencies_and_all_they_need():
    pinned = {name for name, _ in pip_pins(MAIN_ENV)}
    direct = {canonicalize_name(r.name) for r in project_dependencies()}
    assert not direct - pinned, f"pyproject dependencies not pinned: {sorted(direct - pinned)}"
    locked = lock()
    needed = runtime_closure() & set(locked)
    missing = sorted(needed - pinned)
    assert not missing, "add to envs/biasrepro.yaml:\n" + "\n".join(
        f"      - {name}=={locked[name]}" for name in missing
    )
    extra = sorted(pinned - needed - {"torch"})
    assert not extra, f"envs/biasrepro.yaml pins what no rule needs: {extra}"


def blocks_of(text):
    """(rule name, text of the rule) for every rule and checkpoint in a Snakefile's text,
    those made in a loop or under an `if` included: a rule's text ends at the next header
    or at the first later line indented no deeper than its own header. An unnamed rule
    (`rule:`) is named by its `name:` directive (its expression, e.g. an f-string)."""
    headers = list(RULE.finditer(text))
    for k, header in enumerate(headers):
        end = headers[k + 1].start() if k + 1 < len(headers) else len(text)
        indent = len(header[1].expandtabs())
        rest = text[header.end() : end]
        for line in re.finditer(r"^([ \t]*)(\S.*)$", rest, re.M):
            if len(line[1].expandtabs()) <= indent and not line[2].startswith("#"):
                end = header.end() + line.start()
                break
        block = text[header.start() : end]
        named = NAME.search(block)  # its value on the same line or the next one
        yield header[2] or (named[1].strip().rstrip(",") if named else "<unnamed>"), block


def rule_blocks():
    """(file, rule name, text of the rule) for every rule and checkpoint of the workflow."""
    for path in WORKFLOW_FILES:
        for name, block in blocks_of(path.read_text(encoding="utf-8")):
            yield path, name, block


def conda_value(block):
    """The value of a rule's conda: directive, on its line or on the next one."""
    match = CONDA.search(block)
    if match is None:
        return None
    value = match[1].strip() or block[match.end() :].lstrip().splitlines()[0].strip()
    return value.rstrip(",")


def conda_problems(rules, names):
    """What is wrong with the conda: directives of ``rules`` ((file, rule, text)), given
    the workflow's string variables ``names``; empty when every rule that runs something
    names an env file under envs/."""
    problems = []
    for path, rule, block in rules:
        if not COMMAND.search(block):
            continue  # e.g. rule all: it only names targets
        where = f"{path.relative_to(REPO)}, rule {rule}"
        value = conda_value(block)
        if not value:
            problems.append(f"{where}: no conda: directive")
            continue
        literal = re.fullmatch(r"([\"'])(.+)\1", value)
        env = literal[2] if literal else names.get(value)
        if not env:
            problems.append(f"{where}: conda: {value} is neither a string nor a string "
                            "variable")
            continue
        env_path = (path.parent / env).resolve()
        if not (env_path.parent == ENVS and env_path.is_file()):
            problems.append(f"{where}: no env file {env_path}")
    return problems


def string_variables():
    names = {}
    for path in WORKFLOW_FILES:
        names.update({m[1]: m[3] for m in STRING_ASSIGNMENT.finditer(path.read_text("utf-8"))})
    return names


def test_every_rule_names_an_existing_conda_env():
    blocks = [b for b in rule_blocks() if b[0].suffix == ".smk"]
    if not blocks:
        pytest.skip("no rules in workflow/rules/*.smk yet")
    problems = conda_problems(rule_blocks(), string_variables())
    assert not problems, "\n".join(problems)


def test_rules_made_in_loops_and_branches_are_checked_too():
    """Every `rule`/`checkpoint` header of the workflow files is a block of its own, loop
    rules (`rule:` + `name:`) and rules under an `if` included, and a loop rule without a
    conda: directive is reported under its own name."""
    found = list(rule_blocks())
    for path in WORKFLOW_FILES:
        headers = re.findall(r"^[ \t]*(?:rule|checkpoint)\b[^:\n]*:", path.read_text("utf-8"),
                             re.M)
        assert len([b for b in found if b[0] == path]) == len(headers), path
    loop_rules = [(p, rule) for p, rule, block in found if rule.startswith("f\"")]
    assert len(loop_rules) >= 5, loop_rules               # e.g. f"cross_study{...}"
    assert any("biasfinder_predict" in rule for _, rule in loop_rules)
    smk = REPO / "workflow" / "rules" / "example.smk"
    text = (
        'rule named:\n    output: "a"\n    conda: CONDA_ENV\n    shell: "touch a"\n\n'
        'for _root in ROOTS:\n\n'
        '    rule:\n        name:\n            f"looped{_root}"\n        output: "b"\n'
        '        shell: "touch b"\n\n'
        'if FLAG:\n    rule branch:\n        output: "c"\n        conda: "nowhere.yaml"\n'
        '        shell: "touch c"\n'
        'x = 1\n'
    )
    rules = [(smk, name, block) for name, block in blocks_of(text)]
    assert [name for _, name, _ in rules] == ["named", 'f"looped{_root}"', "branch"]
    problems = conda_problems(rules, {"CONDA_ENV": "../../envs/biasrepro.yaml"})
    assert problems == [
        'workflow/rules/example.smk, rule f"looped{_root}": no conda: directive',
        f"workflow/rules/example.smk, rule branch: no env file {smk.parent / 'nowhere.yaml'}",
    ]
