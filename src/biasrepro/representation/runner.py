"""One calling convention for the representation-bias benchmarks (toxicity paper §6.1).

As bias-bench gives each benchmark a runner (``CrowSPairsRunner``, ``StereoSetRunner``,
``SEATRunner``; Meade et al. 2022, https://github.com/McGill-NLP/bias-bench), each benchmark
module here has a :data:`Runner` named ``run``: it takes a ``(masked LM, tokenizer)`` pair,
the benchmark's own input file(s) and its settings (its key of the ``representation``
config; ``{}`` when it has none), reads the input with the module's reader and returns a
:class:`Result`. The runners call the modules' scoring functions, which stay the
implementation (``crows.score_crows``, ``stereoset.score_stereoset``, ``seat.run_seat``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    import pandas as pd

#: a benchmark's input: one file (CrowS-Pairs CSV, StereoSet JSON) or several (SEAT tests)
Source = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


class Result(NamedTuple):
    """What a runner gives: its JSON-ready ``summary`` (Table 4's numbers and their counts)
    and ``items``, one row per scored item (pair, example or test)."""

    summary: dict[str, Any]
    items: pd.DataFrame


class Runner(Protocol):
    """``run(model, source, settings) -> Result``: ``model`` a (masked LM, tokenizer) pair,
    ``source`` the benchmark's input, ``settings`` its config mapping."""

    def __call__(self, model: tuple[Any, Any], source: Source,
                 settings: Mapping[str, Any], /) -> Result: ...
