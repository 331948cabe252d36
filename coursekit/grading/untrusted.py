"""Text from a submission, handled as untrusted: JSON parsed within bounds, strings made safe to write.

Everything a student controls reaches the grader as bytes: the submitted notebook, and every reply of
the worker that runs their code. Two rules keep such bytes from ending a batch or leaking into its
files:

- **JSON is parsed within bounds.** :func:`load_json` refuses input over a size and over a number of
  JSON values (counted before parsing, so a parse never holds more than a bounded multiple of the
  input), and turns every failure of the parser, nesting too deep for it included, into
  :class:`UntrustedInput`, a ``ValueError`` with a message in plain ASCII.
- **What is written is plain.** :func:`plain` makes any string printable ASCII of bounded length (a
  lone surrogate, a control character or a newline cannot break a CSV file or a terminal), and
  :func:`identifier` keeps a name only when it is a short Python identifier (an exception's type name,
  say), so that a student cannot put a sentence of their choosing in the scores file.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["UntrustedInput", "identifier", "json_values", "load_json", "plain"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")


class UntrustedInput(ValueError):
    """Input that is too large, too many values or not JSON (the message says which, in plain ASCII)."""


def json_values(raw: bytes) -> int:
    """An upper bound on the JSON values and keys in ``raw``: each follows one of ``[{,:``."""
    return raw.count(b"[") + raw.count(b"{") + raw.count(b",") + raw.count(b":") + 1


def load_json(raw: bytes, max_bytes: int, max_values: int, what: str = "the input") -> Any:
    """Parse ``raw`` as JSON, refusing more than ``max_bytes`` or ``max_values``.

    Parameters
    ----------
    raw : bytes
        UTF-8 encoded JSON.
    max_bytes, max_values : int
        The largest input accepted, and the most JSON values (:func:`json_values`).
    what : str
        What the input is, for the message ("the notebook").

    Returns
    -------
    object
        The parsed value.

    Raises
    ------
    UntrustedInput
        Too large, too many values, not UTF-8, not JSON, or nested too deep to parse.

    Examples
    --------
    >>> load_json(b'{"a": [1, 2]}', 100, 10)
    {'a': [1, 2]}
    >>> load_json(b"[" * 100_000, 10**6, 10**6, "the notebook")
    Traceback (most recent call last):
    ...
    coursekit.grading.untrusted.UntrustedInput: the notebook is not JSON (nested too deep)
    """
    if len(raw) > max_bytes:
        size = f"{max_bytes // 2**20} MiB" if max_bytes >= 2**20 else f"{max_bytes:,} bytes"
        raise UntrustedInput(f"{what} is larger than {size}")
    if json_values(raw) > max_values:
        raise UntrustedInput(f"{what} holds more than {max_values:,} JSON values")
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise UntrustedInput(f"{what} is not JSON (nested too deep)") from None
    except UnicodeDecodeError:
        raise UntrustedInput(f"{what} is not UTF-8 text") from None
    except ValueError as error:
        raise UntrustedInput(f"{what} is not JSON ({plain(str(error), 80)})") from None


def plain(text: Any, limit: int = 300) -> str:
    """``text`` as printable ASCII of at most ``limit`` characters: anything else becomes ``?``.

    Examples
    --------
    >>> plain("caf\\u00e9\\n\\udcff" + "x" * 10, limit=8)
    'caf??...'
    """
    text = _UNPRINTABLE.sub("?", str(text))
    return text if len(text) <= limit else text[: max(limit - 3, 0)] + "..."


def identifier(name: Any, default: str = "an exception") -> str:
    """``name`` if it is a Python identifier of at most 64 characters, else ``default``.

    Examples
    --------
    >>> identifier("ZeroDivisionError"), identifier("/tmp/x load 3.2"), identifier("\\udcff")
    ('ZeroDivisionError', 'an exception', 'an exception')
    """
    return name if isinstance(name, str) and _IDENTIFIER.fullmatch(name) else default
