"""``python -m coursekit COMMAND ...``: see :mod:`coursekit.cli`."""

import sys

from coursekit.cli import main

if __name__ == "__main__":  # not when a process of the book's execution pool imports this module
    sys.exit(main())
