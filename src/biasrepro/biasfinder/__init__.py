"""BiasFinder (Asyrofi et al.): templates, mutants and bias-uncovering test cases.

``biasrepro.biasfinder.run(texts_or_path, model)`` runs every step on a corpus with a
sentiment model (a directory, a Hub id, a registry name or any callable from texts to
probabilities) and returns a :class:`~biasrepro.biasfinder.pipeline.Result`.
"""

from __future__ import annotations

from typing import Any


def run(corpus: Any, model: Any, **kwargs: Any) -> Any:
    """BiasFinder in one call: :func:`biasrepro.biasfinder.pipeline.run`."""
    from biasrepro.biasfinder.pipeline import run as _run

    return _run(corpus, model, **kwargs)
