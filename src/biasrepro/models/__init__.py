"""Transformer models: the registry, loading, embedded tiny models, fine-tuning, prediction."""
