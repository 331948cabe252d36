"""What crosses from the worker (coursekit.grading.plain_data): valid values come back equal, forged ones cost little.

The worker runs the student's code, so it can send any bytes. Every valid encoding must decode to
an equal value; anything else must raise ValueError and nothing else, and no input may make the
grader allocate more than the decoding budget, however large a value it declares.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import subprocess
import sys
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sparse
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.lib import format as npy

from conftest import ROOT
from coursekit.grading.plain_data import MAX_DEPTH, Unrepresentable, decode, encode


def crossed(value):
    """``value`` encoded, through JSON and decoded, as the grader receives it."""
    return decode(json.loads(json.dumps(encode(value))))


def npy_text(header: dict, data: bytes = b"", version: tuple = (1, 0)) -> str:
    """Base64 of a .npy file with this header and these data bytes, whatever they declare."""
    buffer = io.BytesIO()
    write = npy.write_array_header_1_0 if version == (1, 0) else npy.write_array_header_2_0
    write(buffer, header)
    return base64.b64encode(buffer.getvalue() + data).decode("ascii")


def npy_header(shape, descr="<f8", fortran_order=False) -> dict:
    return {"descr": descr, "fortran_order": fortran_order, "shape": shape}


# --------------------------------------------------------------------------- valid values


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        3,
        -(2**70),
        0.1,
        float("nan"),
        float("-inf"),
        1 + 2j,
        "ü",
        [1, (2.0, "x")],
        {"a": {1, 2}},
        frozenset({3}),
        np.float32(1.5),
        np.arange(6).reshape(2, 3),
        np.array([[np.nan, 1.0]]),
        np.array(["a", "bc"]),
    ],
)
def test_plain_data_round_trips(value):
    back = crossed(value)
    assert type(back) is type(value)
    if isinstance(value, np.ndarray):
        assert back.dtype == value.dtype and np.array_equal(back, value, equal_nan=value.dtype.kind == "f")
    elif isinstance(value, float) and value != value:
        assert back != back
    else:
        assert back == value


def test_plain_data_keeps_sparse_sparse_and_refuses_objects():
    matrix = sparse.random(5, 7, density=0.3, format="csr", random_state=0)
    back = crossed(matrix)
    assert sparse.issparse(back) and (back != matrix).nnz == 0

    class Rigged(float):
        def __eq__(self, other):
            return True

    for value in (Rigged(1.0), lambda: 1, object()):
        back = decode(encode(value))
        assert isinstance(back, Unrepresentable) and back != back and not (back == 1.0)  # noqa: SIM201 - __eq__ and __ne__, each
    with pytest.raises(ValueError):
        decode({"zz": 1})


def test_object_arrays_of_containers_and_deep_nesting_come_back():
    items = np.empty(3, dtype=object)
    items[:] = [[1, 2], (3, "x"), {"k": None}]  # numpy would unpack the lists if they were assigned together
    back = crossed(items.reshape(3, 1))
    assert back.dtype == object and back.shape == (3, 1) and back.ravel().tolist() == items.tolist()
    itself = np.empty(1, dtype=object)
    itself[0] = itself  # an array holding itself: a placeholder far down, not a recursion error
    assert isinstance(crossed([itself])[0][0], np.ndarray)
    deep = []
    for _ in range(MAX_DEPTH + 8):
        deep = [deep]
    back, depth = crossed(deep), 0
    while isinstance(back, list):
        back, depth = back[0], depth + 1
    assert isinstance(back, Unrepresentable) and depth == MAX_DEPTH + 1


shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)
dtypes = st.one_of(
    hnp.boolean_dtypes(),
    hnp.integer_dtypes(),
    hnp.unsigned_integer_dtypes(),
    hnp.floating_dtypes(),
    hnp.complex_number_dtypes(),
    hnp.datetime64_dtypes(),
    hnp.timedelta64_dtypes(),
    hnp.byte_string_dtypes(max_len=4),
    hnp.unicode_string_dtypes(max_len=4),
    st.just(np.dtype([("x", "<i4"), ("y", ">f8", (2,))])),
    st.just(np.dtype([])),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hnp.arrays(dtypes, shapes), st.booleans())
def test_every_array_comes_back_equal_writable_and_its_own(array, fortran):
    value = np.asfortranarray(array) if fortran else array
    back = crossed(value)
    assert type(back) is np.ndarray and back.dtype == value.dtype and back.shape == value.shape
    assert back.tobytes() == value.tobytes()  # bit for bit: NaN payloads, -0.0, byte order
    assert back.flags.writeable and back.flags.owndata
    assert back.flags.f_contiguous == value.flags.f_contiguous and back.flags.c_contiguous == value.flags.c_contiguous
    if value.ndim == 0:  # a NumPy scalar comes back as one, but for np.bool_, which comes back a bool
        scalar = crossed(value[()])
        assert type(scalar) is (bool if value.dtype == bool else type(value[()]))
        assert np.asarray(scalar, dtype=value.dtype).tobytes() == value.tobytes()


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(
        [
            "csr_matrix",
            "csr_array",
            "csc_matrix",
            "csc_array",
            "coo_matrix",
            "coo_array",
            "dia_matrix",
            "lil_matrix",
            "bsr_array",
            "dok_matrix",
        ]
    ),
    st.integers(0, 6),
    st.integers(0, 6),
    st.floats(0, 1),
    st.sampled_from(["f8", "f4", "i8", "i1", "?", "c16"]),
    st.integers(0, 2**32 - 1),
)
def test_every_sparse_matrix_comes_back_as_its_class(name, rows, cols, density, dtype, seed):
    dense = sparse.random(rows, cols, density=density, random_state=seed).toarray() * 10
    value = getattr(sparse, name)(dense.astype(dtype))
    back = crossed(value)
    expected = name if name[:3] in ("csr", "csc", "coo") else "csr_matrix"
    assert type(back) is getattr(sparse, expected) and back.shape == value.shape and back.dtype == value.dtype
    assert np.array_equal(back.toarray(), value.toarray())


# --------------------------------------------------------------------------- forged values


def test_a_budget_bounds_what_one_call_may_allocate():
    data = encode([np.zeros(1000), np.zeros(1000)])  # 2 * 8,000 bytes, each held twice while read
    assert len(decode(data, max_bytes=40_000)) == 2
    with pytest.raises(ValueError, match="too large to grade"):
        decode(data, max_bytes=25_000)
    text = encode(sparse.csc_matrix((1, 10**5)))
    assert decode(text).shape == (1, 10**5)  # 800 kB of column offsets, from a few hundred bytes sent
    with pytest.raises(ValueError, match="csc_matrix of 100,000 columns"):
        decode(text, max_bytes=500_000)
    answers = encode([sympy.Symbol("x") ** k for k in range(1000, 1010)])  # parsed text costs 300 bytes a character
    assert len(decode(answers, max_bytes=1_000_000)) == 10
    with pytest.raises(ValueError, match="a SymPy expression"):
        decode(answers, max_bytes=50_000)


def csr_parts(shape=(2, 3), data=(1.0, 2.0), indices=(0, 2), indptr=(0, 1, 2), index_type="<i8", data_type="<f8"):
    """A CSR matrix's encoding from these parts, whether or not they fit together."""

    def part(values, dtype):
        array = np.asarray(values, dtype=dtype)
        return {"a": npy_text(npy_header(array.shape, npy.dtype_to_descr(array.dtype)), array.tobytes())}

    return {
        "sp": "csr_matrix",
        "shape": list(shape),
        "data": part(data, data_type),
        "indices": part(indices, index_type),
        "indptr": part(indptr, index_type),
    }


@pytest.mark.parametrize(
    "parts, complaint",
    [
        ({}, None),
        ({"shape": (2, -3)}, "shape is a list of 2 whole numbers"),
        ({"shape": (2, 3, 1)}, "shape is a list of 2 whole numbers"),
        ({"shape": (2.0, 3)}, "shape is a list of 2 whole numbers"),
        ({"shape": (True, 3)}, "shape is a list of 2 whole numbers"),
        ({"indices": (0, 3)}, r"column indices lie in \[0, 3\)"),
        ({"indices": (0, -1)}, r"column indices lie in \[0, 3\)"),
        ({"indices": (0,)}, "has 2 indices and 3 offsets, not 1 and 3"),
        ({"indptr": (0, 2)}, "has 2 indices and 3 offsets, not 2 and 2"),
        ({"indptr": (0, 2, 1)}, "offsets rise from 0"),
        ({"indptr": (1, 1, 2)}, "offsets rise from 0"),
        ({"indptr": (0, 1, 3)}, "offsets rise from 0"),
        ({"indices": ((0, 2),), "indptr": (0, 1, 1)}, "1-D arrays"),
        ({"index_type": "<f8"}, "numbers at integer indices"),
        ({"data": ("a", "b"), "data_type": "<U1"}, "numbers at integer indices"),
    ],
)
def test_a_sparse_matrix_s_parts_are_checked_before_scipy_sees_them(parts, complaint):
    data = csr_parts(**parts)
    if complaint is None:
        assert np.array_equal(decode(data).toarray(), [[1.0, 0, 0], [0, 0, 2.0]])
    else:
        with pytest.raises(ValueError, match=complaint):
            decode(data)


def forged_attacks() -> dict:
    """Forged replies, each a few hundred bytes, that once made the grader allocate gigabytes."""
    empty, no_indices = {"a": npy_text(npy_header((0,)))}, {"a": npy_text(npy_header((0,), "<i4"))}
    offsets = {"a": npy_text(npy_header((2,), "<i8"), np.zeros(2, np.int64).tobytes())}
    m = 2**61 - 1
    return {
        # q5: a 1 x 6e8 CSC matrix as CSR parts; converting to CSC needs 6e8 + 1 column offsets (2.5 GB)
        "csc of 6e8 columns": {
            "sp": "csc_matrix",
            "shape": [1, 6 * 10**8],
            "data": empty,
            "indices": no_indices,
            "indptr": offsets,
        },
        # np.load allocates the array a header declares before reading its data
        "npy of 1e10 items": {"a": npy_text(npy_header((10**10,)), b"\0" * 16)},
        "npy scalar of 1e10 items": {"g": {"a": npy_text(npy_header((10**5, 10**5)), b"\0" * 16)}},
        "npy of 1e10 items, version 2": {"a": npy_text(npy_header((10**10,)), b"\0" * 16, version=(2, 0))},
        "npy in a sparse part": {
            "sp": "csr_matrix",
            "shape": [1, 1],
            "data": {"a": npy_text(npy_header((10**10,)))},
            "indices": no_indices,
            "indptr": offsets,
        },
        "npy of negative shape": {"a": npy_text(npy_header((-1, -(10**10))), b"\0" * 8)},
        "pickled objects": {"a": npy_text(npy_header((1,), "|O"), b"\x80\x04N.")},
        "object array of 1e10 items": {"oa": [10**10], "items": [{"n": 0}]},
        "sparse offsets past its entries": {
            "sp": "csr_matrix",
            "shape": [1, 10**9],
            "data": empty,
            "indices": no_indices,
            "indptr": {"a": npy_text(npy_header((2,), "<i8"), np.array([0, 10**9]).tobytes())},
        },
        "integers whose hashes collide": {"set": [{"i": str(k * m)} for k in range(5_000)]},
    }


ATTACK_RUN = """
import json, resource, sys
from coursekit.grading.plain_data import decode
with open("/proc/self/status") as status:  # a regression fails here rather than swapping the machine
    size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (size + 2**30, resource.RLIM_INFINITY))
attacks = json.load(sys.stdin)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
outcome = {}
for name, data in attacks.items():
    try:
        decode(data)
        outcome[name] = "decoded"
    except BaseException as error:
        outcome[name] = type(error).__name__ + ": " + str(error)[:200]
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({"outcome": outcome, "grown_kib": grown}))
"""


def test_forged_replies_are_refused_and_cost_the_grader_next_to_nothing():
    # In a process of its own: peak memory (ru_maxrss) is the whole process's, whatever allocated it.
    attacks = forged_attacks()
    ran = subprocess.run(
        [sys.executable, "-c", ATTACK_RUN],
        input=json.dumps(attacks),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    report = json.loads(ran.stdout)
    for name in attacks:
        assert report["outcome"][name].startswith("ValueError: "), (name, report["outcome"][name])
    assert report["grown_kib"] < 64 * 1024, report  # far under a gigabyte: each attack once took 2.5 GB or more
    assert "shape" in report["outcome"]["npy of negative shape"]
    assert "declares 10,000,000,000 items of 8 bytes, but 16 bytes" in report["outcome"]["npy of 1e10 items"]
    assert "csc_matrix of 600,000,000 columns" in report["outcome"]["csc of 6e8 columns"]
    assert "hash" in report["outcome"]["integers whose hashes collide"]
    assert "offsets rise from 0" in report["outcome"]["sparse offsets past its entries"]


# Any JSON value, and JSON values shaped like encodings (a dict whose first key is a tag).
TAGS = ["n", "b", "i", "f", "c", "s", "q", "g", "a", "oa", "l", "t", "set", "fs", "d", "sp", "sy", "x", "zz"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3)
        | st.builds(lambda tag, payload: {tag: payload}, st.sampled_from(TAGS), inner)
    ),
    max_leaves=12,
)

plain_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=5)
    | st.complex_numbers()
    | st.fractions()
    | hnp.arrays(st.sampled_from(["f8", "i2", "?", "U3"]), shapes)
    | st.builds(
        lambda n, seed: sparse.random(n, n + 1, density=0.5, format="csc", random_state=seed),
        st.integers(0, 4),
        st.integers(0, 100),
    ),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        | st.frozensets(st.integers(), max_size=3)
    ),
    max_leaves=8,
)

odd = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([10**10, 10**19, 2**63, -1, True, 0]),
    st.floats(),
    st.text(max_size=3),
    st.none(),
    st.lists(st.integers(-3, 10**12), max_size=4),
)


def mutate_npy(text: str, draw) -> str:
    """The .npy file inside ``text`` with its header or its data changed."""
    raw = base64.b64decode(text)
    stream = io.BytesIO(raw)
    version = npy.read_magic(stream)
    read_header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
    shape, fortran_order, dtype = read_header(stream)
    data = raw[stream.tell() :]
    header = npy_header(shape, npy.dtype_to_descr(dtype), fortran_order)
    change = draw(st.sampled_from(["shape", "descr", "data", "order", "bytes"]))
    if change == "shape":
        header["shape"] = draw(
            st.one_of(
                st.tuples(odd),
                st.tuples(odd, odd),
                st.just((10**10,)),
                st.just((-1,)),
                st.lists(st.integers(0, 3), max_size=70).map(tuple),
            )
        )
    elif change == "descr":
        header["descr"] = draw(
            st.sampled_from(
                [
                    "|O",
                    "<f8",
                    "|u1",
                    "<U2",
                    "|V3",
                    "|S0",
                    "<M8[s]",
                    [("a", "|O")],
                    [("a", "<f4"), ("b", "|O")],
                    ("<f8", (3,)),
                    "T",
                    "<f16",
                ]
            )
        )
    elif change == "data":
        data = data[: draw(st.integers(0, len(data)))] + draw(st.binary(max_size=16))
    elif change == "order":
        header["fortran_order"] = not fortran_order
    else:
        flipped = bytearray(raw)
        if flipped:
            flipped[draw(st.integers(0, len(raw) - 1))] ^= draw(st.integers(1, 255))
        return base64.b64encode(bytes(flipped)).decode("ascii")
    try:
        return npy_text(header, data)
    except (ValueError, TypeError):  # a header numpy will not even write
        return text


MUTATIONS = {  # what each mutation applies to: (container, key, child) -> bool
    "npy": lambda container, key, child: key == "a" and isinstance(child, str),
    "base64": lambda container, key, child: key == "a" and isinstance(child, str),
    "shape": lambda container, key, child: key in ("shape", "oa"),
    "tag": lambda container, key, child: isinstance(child, dict) and bool(child),
    "drop key": lambda container, key, child: isinstance(child, dict) and bool(child),
    "add key": lambda container, key, child: isinstance(child, dict),
    "leaf": lambda container, key, child: True,
}


@st.composite
def mutated_encodings(draw):
    """A valid encoding with one part changed: a tag, a key, a leaf, a shape, a .npy header or its base64."""
    root = {"root": json.loads(json.dumps(encode(draw(plain_values))))}
    nodes = []  # (container, key) of every place in the encoding

    def walk(node):
        for key, child in node.items() if isinstance(node, dict) else enumerate(node):
            nodes.append((node, key))
            if isinstance(child, (dict, list)):
                walk(child)

    walk(root)
    change = draw(st.sampled_from(sorted(MUTATIONS)))
    places = [(c, k) for c, k in nodes if MUTATIONS[change](c, k, c[k])] or nodes
    change = change if places is not nodes or change == "leaf" else "leaf"
    container, key = draw(st.sampled_from(places))
    child = container[key]
    if change == "tag":
        tag = next(iter(child))
        container[key] = {draw(st.sampled_from(TAGS)): child[tag], **{k: v for k, v in child.items() if k != tag}}
    elif change == "drop key":
        del child[draw(st.sampled_from(sorted(child)))]
    elif change == "add key":
        child[draw(st.sampled_from(TAGS + ["items", "shape"]))] = draw(json_values)
    elif change == "npy":
        container[key] = mutate_npy(child, draw)
    elif change == "base64":
        cut = draw(st.integers(0, len(child)))
        container[key] = child[:cut] + draw(st.sampled_from(["", "=", "A", "é", "AAAA", "!"]))
    elif change == "shape":
        container[key] = draw(st.lists(odd, max_size=3))
    else:
        container[key] = draw(json_values)
    return root["root"]


def decodes_within(data, budget: int) -> bool:
    """Whether ``data`` decodes with ``budget`` bytes (ValueError is a refusal), checking it held no more."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        held = tracemalloc.get_traced_memory()[0]
        try:
            decode(data, max_bytes=budget)
            decoded = True
        except ValueError:
            decoded = False
        peak = tracemalloc.get_traced_memory()[1] - held
    finally:
        tracemalloc.stop()
    # What decoding holds beyond its budget: a .npy header being parsed, SciPy's bookkeeping.
    assert peak <= budget + 256 * 1024, (peak, budget)
    return decoded


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(json_values, mutated_encodings()))
def test_anything_decodes_or_raises_value_error(data):
    with contextlib.suppress(ValueError):  # any other exception fails the test
        decode(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(plain_values.map(encode), mutated_encodings()), st.integers(0, 2**20))
def test_decoding_holds_no_more_than_its_budget(data, budget):
    import coursekit.symbolic  # noqa: F401 - imported once, not counted against a budget

    decodes_within(data, budget)


def test_large_valid_values_stay_within_their_budget():
    values = [
        np.random.default_rng(0).random(200_000),
        sparse.random(300, 200_000, density=1e-4, format="csc"),
        sparse.random(2_000, 500, density=0.01, format="coo"),
        list(range(20_000)),
        {str(i): Fraction(i, 7) for i in range(5_000)},
        np.array([[1, 2], "x"] * 500, dtype=object),
    ]
    for value in values:
        data = json.loads(json.dumps(encode(value)))
        assert [decodes_within(data, budget) for budget in (10_000, 1_000_000, 20_000_000)] in (
            [False, False, True],
            [False, True, True],
        )
