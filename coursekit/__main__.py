"""``python -m coursekit COMMAND ...``: see :mod:`coursekit.cli`."""

import sys

from coursekit.cli import main

if __name__ == "__main__":  # importing the module runs nothing
    sys.exit(main())
