"""Debiasing of model representations: SentenceDebias (toxicity paper §6.2, §6.6)."""
