"""Counterfactuals and re-stratification of fairness and training data (§5.1, §6.4, §6.6)."""
