"""``python -m coursekit COMMAND ...``: see :mod:`coursekit.cli`."""

import sys

from coursekit.cli import main

sys.exit(main())
