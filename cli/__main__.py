"""``python -m sift.cli``: the same as the ``sift`` console script."""

import sys

from sift.cli import main

sys.exit(main())
