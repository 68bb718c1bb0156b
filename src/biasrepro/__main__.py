"""``python -m biasrepro``: the same as the ``biasrepro`` command."""

import sys

from biasrepro.cli import main

sys.exit(main())
