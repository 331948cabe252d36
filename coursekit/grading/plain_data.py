"""Plain data across a process boundary: numbers, strings, arrays, sparse matrices and containers.

The grader (:mod:`coursekit.grading.grader`) runs a student's code in one process and checks its answers
in another. What crosses between them must be *data*, never code: no pickle, whose loading can run
anything. :func:`encode` turns a value into JSON-compatible nested lists and dicts, and
:func:`decode` turns that back into an equal value. NumPy arrays travel in ``.npy`` format; sparse
matrices as their CSR parts. Any other object (an estimator, a lambda, a subclass with a rigged
``__eq__``) becomes an :class:`Unrepresentable` placeholder that compares equal to nothing, so a
test that needs the value fails instead of trusting the object.

**Decoding is bounded.** The worker runs the student's code, so every byte it sends may be forged,
and a few forged bytes can declare an enormous value: a ``.npy`` header claiming 10**10 items, a
sparse matrix of shape (1, 6 * 10**8) whose conversion to CSC needs an index array of 6 * 10**8 + 1
entries. One call of :func:`decode` works against a budget of ``max_bytes`` (:data:`MAX_BYTES`,
256 MiB, unless the caller asks for less), charged *before* anything is allocated:

- an array: its ``.npy`` bytes and the array copied from them (each item at least one byte);
- a sparse matrix: its parts as arrays, SciPy's copies of them, and what its shape implies for
  the class asked for (a CSC matrix's ``cols + 1`` offsets, a COO matrix's row indices);
- an object array: 8 bytes an item, besides the items;
- a SymPy expression: 300 bytes a character of its text (what parsing holds at most);
- every value: :data:`VALUE_BYTES` for itself, and an integer or fraction its digits.

Past the budget, and on anything malformed, :func:`decode` raises :class:`ValueError` and nothing
else. A ``.npy`` payload is read by hand, never by ``np.load`` (which allocates what the header
declares before reading the data): the header with :mod:`numpy.lib.format` (at most
:data:`MAX_HEADER` characters), no object dtype, and the items the header declares must be exactly
the bytes that follow it. A sparse matrix's parts are checked (1-D integer index arrays of the
right lengths, offsets from 0 to the number of entries, never decreasing, indices inside the shape)
before SciPy sees them. A set or dict whose keys' hashes collide (more than :data:`MAX_COLLISIONS`
equal hashes, as forged integers ``k * (2**61 - 1)`` all have) is refused, since building it would
take time quadratic in its size.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import base64
import binascii
import io
import math
import sys
from collections import Counter
from typing import Any

import numpy as np
from numpy.lib import format as npy

__all__ = ["MAX_BYTES", "Unrepresentable", "decode", "encode"]

MAX_DEPTH = 32
MAX_BYTES = 256 * 2**20  # what one decode call may allocate, unless its caller asks for less
MAX_HEADER = 10_000  # characters of a .npy header: NumPy's own default limit
MAX_DIGITS = 4_300  # of an integer: Python's default limit on int(text)
MAX_COLLISIONS = 64  # keys of one set or dict that may share a hash
MAX_DIMENSION = 2**63 - 1  # the largest length of an axis NumPy and SciPy index
VALUE_BYTES = 128  # what any decoded value costs: a Python object and its slot in a container
_SYMPY_BYTES = 300  # a character of srepr text, parsed (coursekit.symbolic.parse)
_SPARSE = ("csr_matrix", "csr_array", "csc_matrix", "csc_array", "coo_matrix", "coo_array")
_CONTAINERS = {"l": list, "t": tuple, "set": set, "fs": frozenset}
_KEYS = {"oa": {"oa", "items"}, "sp": {"sp", "shape", "data", "indices", "indptr"}}


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


# --------------------------------------------------------------------------- encoding (in the worker)


def _array(value: np.ndarray, depth: int) -> dict:
    if value.dtype.hasobject:
        return {"oa": list(value.shape), "items": [encode(v, depth + 1) for v in value.ravel().tolist()]}
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
    if kind is getattr(sys.modules.get("fractions"), "Fraction", None):  # never imported here: it may be banned
        return {"q": [str(value.numerator), str(value.denominator)]}
    if isinstance(value, np.generic) and kind.__module__ == "numpy":
        return {"g": _array(np.asarray(value), _depth)}
    if kind is np.ndarray:
        return _array(value, _depth)
    if isinstance(value, np.ndarray) and kind.__module__.startswith("numpy."):  # np.matrix, masked arrays
        return _array(np.asarray(value), _depth)
    if kind in (list, tuple, set, frozenset):
        tag = {list: "l", tuple: "t", set: "set", frozenset: "fs"}[kind]
        return {tag: [encode(v, _depth + 1) for v in value]}
    if kind is dict:
        return {"d": [[encode(k, _depth + 1), encode(v, _depth + 1)] for k, v in value.items()]}
    if kind.__module__.startswith("scipy.sparse") and hasattr(value, "tocsr"):
        csr = value.tocsr()
        return {
            "sp": kind.__name__,
            "shape": [int(n) for n in csr.shape],
            "data": _array(csr.data, _depth),
            "indices": _array(csr.indices, _depth),
            "indptr": _array(csr.indptr, _depth),
        }
    if kind.__module__.startswith("sympy.") and hasattr(value, "free_symbols"):  # a symbolic answer
        # What coursekit.symbolic.to_data sends, without importing it: this runs in the grading
        # worker too, where a question may ban lecturekit (coursekit.grading.isolation).
        import sympy

        return {"sy": sympy.srepr(value)}
    return {"x": kind.__name__}


# --------------------------------------------------------------------------- decoding (in the grader)


class _Budget:
    """The bytes one :func:`decode` call may still allocate."""

    __slots__ = ("left", "limit")

    def __init__(self, limit: int):
        self.left = self.limit = limit

    def spend(self, size: int, what: str) -> None:
        if size > self.left:
            raise ValueError(
                f"too large to grade: {what} would take {size:,} bytes, more than is left of the "
                f"{self.limit:,} that one answer may take; send a smaller value"
            )
        self.left -= size


def decode(data: Any, *, max_bytes: int = MAX_BYTES) -> Any:
    """The value that :func:`encode` described; never runs code from ``data``, never allocates much more.

    Parameters
    ----------
    data : object
        What :func:`encode` returned, possibly after a JSON round trip, or anything a hostile
        worker may have sent instead.
    max_bytes : int, default MAX_BYTES
        What decoding may allocate, as the module docstring counts it.

    Returns
    -------
    object
        An equal value built from NumPy, SciPy and Python's own types, or an
        :class:`Unrepresentable` where the original was not plain data.

    Raises
    ------
    ValueError
        If ``data`` is not what :func:`encode` returns, or its value would take more than ``max_bytes``;
        no other exception.

    Examples
    --------
    >>> import json, numpy as np
    >>> decode(json.loads(json.dumps(encode({"a": (1, 2.5), "b": np.eye(2)}))))["a"]
    (1, 2.5)
    >>> import base64, io
    >>> header = io.BytesIO()  # a .npy header declaring 10**10 float64 (80 GB), and no data
    >>> np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10**10,)})
    >>> decode({"a": base64.b64encode(header.getvalue()).decode()})
    Traceback (most recent call last):
    ...
    ValueError: malformed plain data: an array's header declares 10,000,000,000 items of 8 bytes, but 0 bytes follow it
    """
    try:
        return _decode(data, _Budget(max_bytes), 0)
    except ValueError:
        raise
    except Exception as error:  # noqa: BLE001 - NumPy, SciPy or Python refusing a forged part in words of their own
        raise ValueError(f"malformed plain data ({type(error).__name__}: {str(error)[:200]})") from None


def _malformed(what: str) -> ValueError:
    return ValueError(f"malformed plain data: {what}")


def _text(value: Any, what: str, limit: int | None = None) -> str:
    if type(value) is not str or (limit is not None and len(value) > limit):
        longest = "" if limit is None else f" of at most {limit:,} characters"
        raise _malformed(f"{what} is a string{longest}")
    return value


def _pair(value: Any, what: str) -> list:
    if type(value) is not list or len(value) != 2:
        raise _malformed(f"{what} is a list of two")
    return value


def _shape(value: Any, what: str, ndim: int | None = None) -> tuple[int, ...]:
    if (
        type(value) not in (list, tuple)
        or len(value) > 64
        or (ndim is not None and len(value) != ndim)
        or not all(type(n) is int and 0 <= n <= MAX_DIMENSION for n in value)
    ):
        axes = "up to 64" if ndim is None else str(ndim)
        raise _malformed(f"{what} is a list of {axes} whole numbers from 0 to 2**63 - 1")
    return tuple(value)


def _decode(data: Any, budget: _Budget, depth: int) -> Any:
    if depth > MAX_DEPTH + 1:  # encode puts a placeholder one level below its deepest container
        raise _malformed(f"values nested more than {MAX_DEPTH} levels deep")
    if type(data) is not dict or not data:
        raise _malformed("every value is a dict whose first key is its tag")
    tag = next(iter(data))
    if data.keys() != _KEYS.get(tag, {tag}):
        keys = sorted(_KEYS[tag]) if tag in _KEYS else [tag]
        raise _malformed(f"a value tagged {tag!r} has the keys {keys}, not {sorted(map(str, data))[:6]}")
    budget.spend(VALUE_BYTES, "a value")
    payload = data[tag]
    if tag == "n":
        return None
    if tag == "b":
        if type(payload) is not bool:
            raise _malformed("a bool is true or false")
        return payload
    if tag == "i":
        return _integer(payload, budget)
    if tag == "f":
        return _float(payload)
    if tag == "c":
        real, imag = _pair(payload, "a complex number")
        return complex(_float(real), _float(imag))
    if tag == "s":
        return _text(payload, "a str")
    if tag == "q":
        numerator, denominator = (_integer(part, budget) for part in _pair(payload, "a fraction"))
        if denominator == 0:
            raise _malformed("a fraction's denominator is 0")
        # imported here, not above: a question may ban fractions (and decimal) in the worker
        from fractions import Fraction

        return Fraction(numerator, denominator)
    if tag == "g":
        if type(payload) is not dict or payload.keys() != {"a"}:
            raise _malformed("a NumPy scalar is a 0-d array")
        scalar = _load_array(payload["a"], budget)
        if scalar.ndim != 0:
            raise _malformed("a NumPy scalar is a 0-d array")
        return scalar[()]
    if tag == "a":
        return _load_array(payload, budget)
    if tag == "oa":
        return _object_array(data, budget, depth)
    if tag in _CONTAINERS:
        if type(payload) is not list:
            raise _malformed(f"a {_CONTAINERS[tag].__name__} is a list of values")
        items = [_decode(v, budget, depth + 1) for v in payload]
        if tag in ("set", "fs"):
            _check_hashes(items, f"a {_CONTAINERS[tag].__name__}")
        return _CONTAINERS[tag](items)
    if tag == "d":
        if type(payload) is not list:
            raise _malformed("a dict is a list of [key, value] pairs")
        pairs = [_pair(pair, "a dict's entry") for pair in payload]
        keys = [_decode(key, budget, depth + 1) for key, _ in pairs]
        _check_hashes(keys, "a dict")
        return dict(zip(keys, [_decode(value, budget, depth + 1) for _, value in pairs], strict=True))
    if tag == "sp":
        return _sparse(data, budget)
    if tag == "sy":  # rebuilt from an allowlist of SymPy node names, nothing evaluated
        from coursekit.symbolic import MAX_TEXT, SymbolicAnswerError, parse

        text = _text(payload, "a SymPy expression's srepr")
        budget.spend(_SYMPY_BYTES * min(len(text), MAX_TEXT + 1), "a SymPy expression")  # longer: refused at once
        try:
            return parse(text)
        except SymbolicAnswerError as error:
            return Unrepresentable(f"SymPy expression that the grader does not accept ({error})")
    if tag == "x":
        return Unrepresentable(_text(payload, "a type's name"))
    raise _malformed(f"unknown tag {tag!r}")


def _integer(payload: Any, budget: _Budget) -> int:
    text = _text(payload, "an integer", MAX_DIGITS + 1)
    budget.spend(32 + len(text), "an integer")
    try:
        return int(text)
    except ValueError:
        raise _malformed(f"an integer is written in decimal digits, not {text[:20]!r}") from None


def _float(payload: Any) -> float:
    text = _text(payload, "a float", 100)
    try:
        return float.fromhex(text)
    except (ValueError, OverflowError):
        raise _malformed(f"a float is written as float.hex writes it, not {text[:20]!r}") from None


def _check_hashes(items: list, what: str) -> None:
    try:
        counts = Counter(hash(item) for item in items)
    except TypeError:
        raise _malformed(f"{what} holds a value that cannot be hashed") from None
    if counts and max(counts.values()) > MAX_COLLISIONS:
        raise _malformed(
            f"{what} holds more than {MAX_COLLISIONS} keys of one hash, which would take quadratic time to build"
        )


def _load_array(payload: Any, budget: _Budget) -> np.ndarray:
    """An array from base64 ``.npy`` text, allocating only what the bytes present hold."""
    text = _text(payload, "an array (base64 text of a .npy file)")
    budget.spend(len(text) // 4 * 3, "an array's .npy bytes")
    try:  # not base64.b64decode, which would first copy the text to bytes
        raw = binascii.a2b_base64(text, strict_mode=True)
    except ValueError:  # binascii.Error, or a character that is not ASCII
        raise _malformed("an array's text is not base64") from None
    stream = io.BytesIO(raw)
    try:
        version = npy.read_magic(stream)
        if version not in ((1, 0), (2, 0)):
            raise ValueError(f"version {version} of the format, not 1.0 or 2.0")
        read_header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        shape, fortran_order, dtype = read_header(stream, max_header_size=MAX_HEADER)
    except ValueError as error:
        raise _malformed(f"an array's .npy header: {str(error)[:200]}") from None
    if dtype.hasobject or dtype.kind not in "biufcmMSUV" or dtype.subdtype is not None:
        raise _malformed(f"an array of dtype {dtype} travels as its items, not as .npy bytes")
    shape = _shape(shape, "an array's shape")
    count, data = math.prod(shape), memoryview(raw)[stream.tell() :]
    if count * dtype.itemsize != len(data):
        raise _malformed(
            f"an array's header declares {count:,} items of {dtype.itemsize} bytes, but {len(data):,} bytes follow it"
        )
    budget.spend(count * max(dtype.itemsize, 1), "an array")
    order = "F" if fortran_order else "C"
    if dtype.itemsize == 0:  # np.frombuffer cannot count items of no bytes
        return np.empty(shape, dtype=dtype, order=order)
    return np.frombuffer(data, dtype=dtype, count=count).reshape(shape, order=order).copy(order="K")


def _object_array(data: dict, budget: _Budget, depth: int) -> np.ndarray:
    shape, items = _shape(data["oa"], "an object array's shape"), data["items"]
    if type(items) is not list or len(items) != math.prod(shape):
        raise _malformed("an object array's items are a list of as many values as its shape holds")
    budget.spend(8 * len(items), "an object array")
    out = np.empty(len(items), dtype=object)
    for index, item in enumerate(items):  # one by one: numpy would unpack items that are lists
        out[index] = _decode(item, budget, depth + 1)
    return out.reshape(shape)


def _sparse(data: dict, budget: _Budget):
    """A sparse matrix from its CSR parts, in the class it was sent as, checked before SciPy sees it."""
    name = _text(data["sp"], "a sparse matrix's class", 100)
    name = name if name in _SPARSE else "csr_matrix"  # as a CSR matrix, whatever else it was
    rows, cols = _shape(data["shape"], "a sparse matrix's shape", ndim=2)
    parts = []
    for key in ("data", "indices", "indptr"):
        part = data[key]
        if type(part) is not dict or part.keys() != {"a"}:
            raise _malformed(f"a sparse matrix's part {key!r} is an array")
        parts.append(_load_array(part["a"], budget))
    values, indices, indptr = parts
    if values.ndim != 1 or indices.ndim != 1 or indptr.ndim != 1:
        raise _malformed("a sparse matrix's data, indices and indptr are 1-D arrays")
    if values.dtype.kind not in "biufc" or indices.dtype.kind not in "iu" or indptr.dtype.kind not in "iu":
        raise _malformed("a sparse matrix holds numbers at integer indices")
    entries = len(values)
    if len(indices) != entries or len(indptr) != rows + 1:
        raise _malformed(
            f"a sparse matrix of shape ({rows}, {cols}) with {entries} entries has {entries} indices "
            f"and {rows + 1} offsets, not {len(indices)} and {len(indptr)}"
        )
    if indptr[0] != 0 or indptr[-1] != entries or np.any(indptr[1:] < indptr[:-1]):
        raise _malformed("a sparse matrix's offsets rise from 0 to its number of entries")
    if entries and (indices.min() < 0 or indices.max() >= cols):
        raise _malformed(f"a sparse matrix's column indices lie in [0, {cols})")
    # SciPy may copy every part to its own index and value types; converting to CSC builds
    # cols + 1 offsets and copies of the entries, converting to COO a row index for each entry.
    entry_bytes = 8 + max(values.dtype.itemsize, 8)
    budget.spend(entries * entry_bytes + 8 * (rows + 1), "a sparse matrix")
    if name.startswith("csc"):
        budget.spend(entries * entry_bytes + 8 * (cols + 1), f"a {name} of {cols:,} columns")
    elif name.startswith("coo"):
        budget.spend(entries * (8 + entry_bytes), f"a {name}")
    import scipy.sparse as sparse

    csr = sparse.csr_matrix((values, indices, indptr), shape=(rows, cols))
    return getattr(sparse, name)(csr)
