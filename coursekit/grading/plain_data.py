"""Plain data across a process boundary: numbers, strings, arrays, sparse matrices and containers.

The grader (:mod:`coursekit.grading.grader`) runs a student's code in one process and checks its answers
in another. What crosses between them must be *data*, never code: no pickle, whose loading can run
anything. :func:`encode` turns a value into JSON-compatible nested lists and dicts, and
:func:`decode` turns that back into an equal value. NumPy arrays travel in ``.npy`` format read
with ``allow_pickle=False``; sparse matrices as their CSR parts. Any other object (an estimator, a
lambda, a subclass with a rigged ``__eq__``) becomes an :class:`Unrepresentable` placeholder that
compares equal to nothing, so a test that needs the value fails instead of trusting the object.
"""

from __future__ import annotations

import base64
import io
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["Unrepresentable", "decode", "encode"]

MAX_DEPTH = 32
MAX_BYTES = 256 * 2**20


class Unrepresentable:
    """Stands for a value that is not plain data; it equals nothing and converts to nothing.

    Parameters
    ----------
    type_name : str
        The name of the original value's type, for messages.
    """

    __slots__ = ("type_name",)

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<a {self.type_name} object, which is not plain data>"

    def __eq__(self, other):
        return False

    __hash__ = None


def _array(value: np.ndarray) -> dict:
    if value.dtype.hasobject:
        return {"oa": list(value.shape), "items": [encode(v) for v in value.ravel().tolist()]}
    buffer = io.BytesIO()
    np.save(buffer, value, allow_pickle=False)
    if buffer.tell() > MAX_BYTES:
        raise ValueError(f"an array of {buffer.tell():,} bytes is too large to grade")
    return {"a": base64.b64encode(buffer.getvalue()).decode("ascii")}


def encode(value: Any, _depth: int = 0) -> Any:
    """A JSON-compatible description of ``value`` (see the module docstring).

    Parameters
    ----------
    value : object
        None, bool, int, float, complex, str, Fraction, a NumPy scalar or array, a SciPy sparse
        matrix or array, a SymPy expression or matrix (as its ``srepr`` text, see
        :mod:`coursekit.symbolic`), or a list, tuple, set, frozenset or dict of these.

    Returns
    -------
    object
        Nested dicts and lists of str, to be passed to :func:`decode`.
    """
    if _depth > MAX_DEPTH:
        return {"x": "deeply nested value"}
    kind = type(value)
    if value is None:
        return {"n": 0}
    if kind is bool or kind is np.bool_:
        return {"b": bool(value)}
    if kind is int:
        return {"i": str(value)}
    if kind is float:
        return {"f": float.hex(value)}
    if kind is complex:
        return {"c": [float.hex(value.real), float.hex(value.imag)]}
    if kind is str:
        return {"s": value}
    if kind is Fraction:
        return {"q": [str(value.numerator), str(value.denominator)]}
    if isinstance(value, np.generic) and kind.__module__ == "numpy":
        return {"g": _array(np.asarray(value))}
    if kind is np.ndarray:
        return _array(value)
    if isinstance(value, np.ndarray) and kind.__module__.startswith("numpy."):  # np.matrix, masked arrays
        return _array(np.asarray(value))
    if kind in (list, tuple, set, frozenset):
        tag = {list: "l", tuple: "t", set: "set", frozenset: "fs"}[kind]
        return {tag: [encode(v, _depth + 1) for v in value]}
    if kind is dict:
        return {"d": [[encode(k, _depth + 1), encode(v, _depth + 1)] for k, v in value.items()]}
    if kind.__module__.startswith("scipy.sparse") and hasattr(value, "tocsr"):
        csr = value.tocsr()
        return {"sp": kind.__name__, "shape": [int(n) for n in csr.shape], "data": _array(csr.data),
                "indices": _array(csr.indices), "indptr": _array(csr.indptr)}
    if kind.__module__.startswith("sympy.") and hasattr(value, "free_symbols"):  # a symbolic answer
        # What coursekit.symbolic.to_data sends, without importing it: this runs in the grading
        # worker too, where a question may ban lecturekit (coursekit.grading.isolation).
        import sympy

        return {"sy": sympy.srepr(value)}
    return {"x": kind.__name__}


def _load_array(payload: str) -> np.ndarray:
    raw = base64.b64decode(payload.encode("ascii"), validate=True)
    if len(raw) > MAX_BYTES:
        raise ValueError("array too large")
    return np.load(io.BytesIO(raw), allow_pickle=False)


def decode(data: Any, _depth: int = 0) -> Any:
    """The value that :func:`encode` described; never runs code from ``data``.

    Parameters
    ----------
    data : object
        What :func:`encode` returned, possibly after a JSON round trip.

    Returns
    -------
    object
        An equal value built from NumPy, SciPy and Python's own types, or an
        :class:`Unrepresentable` where the original was not plain data.

    Examples
    --------
    >>> import json, numpy as np
    >>> decode(json.loads(json.dumps(encode({"a": (1, 2.5), "b": np.eye(2)}))))["a"]
    (1, 2.5)
    """
    if _depth > MAX_DEPTH or not isinstance(data, dict) or len(data) < 1:
        raise ValueError("malformed plain data")
    (tag, payload), *_ = data.items()
    if tag == "n":
        return None
    if tag == "b":
        return bool(payload)
    if tag == "i":
        return int(payload)
    if tag == "f":
        return float.fromhex(payload)
    if tag == "c":
        return complex(float.fromhex(payload[0]), float.fromhex(payload[1]))
    if tag == "s":
        return str(payload)
    if tag == "q":
        return Fraction(int(payload[0]), int(payload[1]))
    if tag == "g":
        return _load_array(payload["a"])[()]
    if tag == "a":
        return _load_array(payload)
    if tag == "oa":
        items = [decode(v, _depth + 1) for v in data["items"]]
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out.reshape(data["oa"])
    if tag in ("l", "t", "set", "fs"):
        items = [decode(v, _depth + 1) for v in payload]
        return {"l": list, "t": tuple, "set": set, "fs": frozenset}[tag](items)
    if tag == "d":
        return {decode(k, _depth + 1): decode(v, _depth + 1) for k, v in payload}
    if tag == "sp":
        import scipy.sparse as sparse

        cls = getattr(sparse, payload, None) if payload in ("csr_matrix", "csr_array", "csc_matrix",
                                                             "csc_array", "coo_matrix", "coo_array") else None
        csr = sparse.csr_matrix((_load_array(data["data"]["a"]), _load_array(data["indices"]["a"]),
                                 _load_array(data["indptr"]["a"])), shape=tuple(data["shape"]))
        return cls(csr) if cls is not None else csr
    if tag == "sy":  # rebuilt from an allowlist of SymPy node names, nothing evaluated
        from coursekit.symbolic import SymbolicAnswerError, parse

        try:
            return parse(payload)
        except SymbolicAnswerError as error:
            return Unrepresentable(f"SymPy expression that the grader does not accept ({error})")
    if tag == "x":
        return Unrepresentable(str(payload))
    raise ValueError(f"malformed plain data (tag {tag!r})")
