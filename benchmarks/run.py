"""Run every benchmark in this folder: ``python benchmarks/run.py [--quick]``.

Each benchmark times one of our models and its scikit-learn counterpart in the same process, on the
same data, and prints our time over theirs (below 1.0: we are faster). scikit-learn has no hidden
Markov model: bench_hmm.py times ``lecturekit.hmm.CategoricalHMM`` against hmmlearn's. Nothing here asserts on time;
the numbers are for reading.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, to check that the benchmarks run")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    for path in sorted(HERE.glob("bench_*.py")):
        module = importlib.import_module(path.stem)
        module.main(quick=args.quick)


if __name__ == "__main__":
    main()
