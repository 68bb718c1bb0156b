"""BiasFinder (Asyrofi et al.): templates, mutants and bias-uncovering test cases."""
