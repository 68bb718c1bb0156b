"""Parsing and coreference shared by BiasFinder's three template engines.

:mod:`biasrepro.nlp.parse` runs the spaCy pipeline over a corpus once and caches the parses
with their coreference clusters; :mod:`biasrepro.nlp.coref` puts a rule-based backend and
fastcoref behind one interface that returns clusters as character spans.
"""
