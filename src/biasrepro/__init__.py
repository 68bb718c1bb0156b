"""biasrepro: reproduce BiasFinder and the toxicity bias/fairness study; re-run them on new data.

All logic lives in this package; the Snakemake rules under ``workflow/`` only call the
``biasrepro`` command line (see :mod:`biasrepro.cli`).
"""

__version__ = "0.1.0"
