"""Run this checkout's ``biasrepro`` command line in whatever environment a rule runs in.

Rules call ``python workflow/scripts/biasrepro.py ...`` so that the project environment,
a ``--use-conda`` environment (which holds the dependencies but not the project) and the
container image all run the code of this checkout, the code Snakemake tracks.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from biasrepro.cli import main  # noqa: E402

sys.exit(main())
