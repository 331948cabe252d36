"""Hostile submissions to 1.1, written as a student who has read the grader's code would write them.

Each attack is a notebook for ``make grade``: an answer cell (most often q6's) that tries to break the
sandbox or the grader, or a file that is not a notebook the grader can read. Where an attack that
works would also be a way to a point, its cell assigns q6's right answer only if it worked (the
right set of letters when it traced bubblewrap's init, kept 1,000 processes, held three gigabytes,
found a classmate's key ...), so that a score says it worked. The tests in test_gradebook.py grade
them in one batch with honest classmates; tests/coursekit/grading/test_grader.py has the older
battery (patched NumPy, reading the hidden tests, faults in one cell).
"""

from __future__ import annotations

import json

import nbformat

from coursekit import exercises

RIGHT_Q6 = "{'b', 'd', 'f', 'g'}"
# Writes a reply the grader did not ask for to the worker's socket (what a forged reply looks like).
FORGE = """
import os, struct
def forge(size, item=b'{"i": "1"}, ', body=None):
    body = body or b'{"status": "ok", "value": {"l": [' + item * ((size - 60) // len(item)) + b'{"i": "1"}]}}'
    for fd in os.listdir('/proc/self/fd'):
        try:
            kind = os.readlink(f'/proc/self/fd/{fd}')
            flags = int(open(f'/proc/self/fdinfo/{fd}').read().split('flags:')[1].split()[0], 8)
        except (OSError, IndexError):
            continue
        if kind.startswith('socket:') or (kind.startswith('pipe:') and flags & 3 == 1):
            try:
                os.write(int(fd), struct.pack('!Q', len(body)))
                view = memoryview(body)
                while view:
                    view = view[os.write(int(fd), view):]
            except OSError:
                pass
"""
SYSCALLS = """
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
NUMBER = {"x86_64": {"ptrace": 101, "process_vm_readv": 310, "add_key": 248, "keyctl": 250},
          "aarch64": {"ptrace": 117, "process_vm_readv": 270, "add_key": 217, "keyctl": 219}}[platform.machine()]
def call(name, *args):
    result = libc.syscall(ctypes.c_long(NUMBER[name]), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return result, ctypes.get_errno()
"""

# Three children that each write 1 GiB and say so, then wait; ``held``: how many did, and are alive
# after ``seconds`` (a first touch of memory can be slow in a virtual machine: they may need a while).
THREE_GIGABYTES = """
import os, select, time
said, say = os.pipe()
children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        try:
            block = np.ones(2**27)
            os.write(say, b"x")
            time.sleep(600)
        finally:
            os._exit(0)
    children.append(pid)
end, done, alive = time.monotonic() + {seconds}, 0, set(children)
while done < 3 and len(alive) == 3 and time.monotonic() < end:
    if select.select([said], [], [], 0.1)[0]:
        done += len(os.read(said, 3))
    alive = {{pid for pid in alive if os.waitpid(pid, os.WNOHANG) == (0, 0)}}
held = done if len(alive) == 3 else 0
"""

# Cells, by the index of the question they answer in 1.1 (0: q1 ... 5: q6).
CELLS: dict[str, dict[int, str]] = {
    # Take over bubblewrap's pid 1 (same user, dumpable) as an earlier attack did: trace it, then
    # read the zygote's memory. Worked: q6's right answer.
    "ptrace-init": {
        5: SYSCALLS
        + (
            "PTRACE_ATTACH, PTRACE_SEIZE = 16, 0x4206\n"
            "traced = [pid for pid in (1, 2) for request in (PTRACE_ATTACH, PTRACE_SEIZE)\n"
            "          if call('ptrace', request, pid, 0, 0)[0] == 0]\n"
            "try:\n"
            "    start = int(open('/proc/1/maps').readline().split('-')[0], 16)\n"
            "except (OSError, ValueError):\n"
            "    start = 0\n"
            "buffer = ctypes.create_string_buffer(64)\n"
            "local = (ctypes.c_void_p * 2)(ctypes.addressof(buffer), 64)\n"
            "remote = (ctypes.c_void_p * 2)(start, 64)\n"
            "read = call('process_vm_readv', 1, ctypes.addressof(local), 1, ctypes.addressof(remote), 1, 0)[0] > 0\n"
            f"q6 = {RIGHT_Q6} if traced or read else {{'z'}}\n"
        )
    },
    # A key in the user's persistent keyring, which outlives the sandbox, for the next submission.
    "keyring-writer": {
        5: SYSCALLS
        + (
            "KEYCTL_GET_PERSISTENT = 22\n"
            "ring, _ = call('keyctl', KEYCTL_GET_PERSISTENT, -1, -4)\n"
            "added, _ = call('add_key', ctypes.c_char_p(b'user'), ctypes.c_char_p(b'lecturekit-q6'),\n"
            "                ctypes.c_char_p(b'bdf'), 3, ring)\n"
            f"q6 = {RIGHT_Q6} if ring > 0 and added > 0 else {{'z'}}\n"
        )
    },
    "keyring-reader": {
        5: SYSCALLS
        + (
            "KEYCTL_GET_PERSISTENT, KEYCTL_SEARCH, KEYCTL_READ = 22, 10, 11\n"
            "ring, _ = call('keyctl', KEYCTL_GET_PERSISTENT, -1, -4)\n"
            "key, _ = call('keyctl', KEYCTL_SEARCH, ring, ctypes.c_char_p(b'user'),\n"
            "              ctypes.c_char_p(b'lecturekit-q6'), 0)\n"
            "payload = ctypes.create_string_buffer(16)\n"
            "size, _ = call('keyctl', KEYCTL_READ, key, payload, 16) if key > 0 else (-1, 0)\n"
            "q6 = set(payload.raw[:size].decode()) if size > 0 else {'z'}\n"
        )
    },
    # 100 processes that spin in sessions of their own: a classmate's worker must still start.
    "cpu-spinners": {
        5: (
            "import os\n"
            "for _ in range(100):\n"
            "    if os.fork() == 0:\n"
            "        os.setsid()\n"
            "        while True:\n"
            "            pass\n"
            "q6 = {'z'}\n"
        )
    },
    # 1,000 processes kept alive. Worked: all of them forked.
    "fork-thousand": {
        5: (
            "import os, time\n"
            "made = 0\n"
            "for _ in range(1000):\n"
            "    try:\n"
            "        pid = os.fork()\n"
            "    except OSError:\n"
            "        break\n"
            "    if pid == 0:\n"
            "        time.sleep(600)\n"
            "        os._exit(0)\n"
            "    made += 1\n"
            f"q6 = {RIGHT_Q6} if made == 1000 else {{'z'}}\n"
        )
    },
    # Three children of 1 GiB each, every page written: each under the worker's address-space limit,
    # together over the sandbox's bound. Worked: all three held their gigabyte at once.
    "three-gigabytes": {5: THREE_GIGABYTES.format(seconds=6.5) + f"q6 = {RIGHT_Q6} if held == 3 else {{'z'}}\n"},
    # Empty files in the sandbox's /tmp, each an inode and a dentry of kernel memory, for 5 s.
    "many-files": {
        5: (
            "import time\n"
            "end, made = time.monotonic() + 5, 0\n"
            "try:\n"
            "    while time.monotonic() < end:\n"
            "        for _ in range(1000):\n"
            "            open(f'/tmp/f{made}', 'w').close()\n"
            "            made += 1\n"
            "except OSError:\n"
            "    pass\n"
            "q6 = {'z'}\n"
        )
    },
    # bubblewrap's init's standard output, which was a file of the host's: two gigabytes into it.
    # Worked: it took them.
    "floods-init-output": {
        5: (
            "import os\n"
            "written = 0\n"
            "try:\n"
            "    out = os.open('/proc/1/fd/1', os.O_WRONLY | os.O_NONBLOCK)\n"
            "    chunk = b'x' * 2**20\n"
            "    while written < 2 * 2**30:\n"
            "        written += os.write(out, chunk)\n"
            "except OSError:\n"
            "    pass\n"
            f"q6 = {RIGHT_Q6} if written >= 2**30 else {{'z'}}\n"
        )
    },
    # Exception type names that carry the host's details (and a lone surrogate) into the scores file.
    "exception-names": {
        0: (
            "class Leak(Exception):\n    pass\n"
            "Leak.__name__ = Leak.__qualname__ = ('/tmp/lecturekit-grader-x load ' + open('/proc/loadavg').read()\n"
            "                                     + open('/proc/meminfo').read(60))\n"
            "raise Leak('from q1')\n"
        ),
        5: FORGE + "import json\n"
        "loadavg = open('/proc/loadavg').read()\n"
        "forge(0, body=json.dumps({'status': 'error', 'detail': '\\udcff' + loadavg}).encode())\n"
        "q6 = {'z'}\n",
    },
    # A forged sparse matrix: under a kilobyte on the wire, six hundred million columns once decoded
    # and converted to CSC.
    "forged-sparse-shape": {
        4: (
            "import numpy as np\n"
            "class Forged:\n"
            "    shape = (1, 600_000_000)\n"
            "    data, indices, indptr = np.zeros(0), np.zeros(0, dtype=np.int32), np.zeros(2, dtype=np.int32)\n"
            "    def tocsr(self):\n"
            "        return self\n"
            "Forged.__module__, Forged.__name__ = 'scipy.sparse._forged', 'csc_matrix'\n"
            "q5 = Forged()\n"
        )
    },
    # A number whose float() never ends (a tower of powers: a hidden test that converted it before
    # checking its type held the grader for minutes; test_checking.py stops such a check), and a
    # special function at an argument that took the guarded evaluator minutes.
    "power-tower": {4: "import sympy\nq5 = sympy.Pow(10, sympy.Pow(2, 30000, evaluate=False), evaluate=False)\n"},
    "larger-tower": {
        4: (
            "import sympy\nq5 = sympy.Pow(10, sympy.Pow(10, sympy.Pow(10, 30, evaluate=False), "
            "evaluate=False), evaluate=False)\n"
        )
    },
    "polygamma": {
        3: (
            "import sympy\ntheta, m, N = sympy.symbols('theta m N', positive=True)\n"
            "q4_log_likelihood = sympy.polygamma(10, -10**6 + sympy.Rational(1, 2)) + m * sympy.log(theta)\n"
            "q4_estimate = sympy.polygamma(10, -10**6 + sympy.Rational(1, 2)) * m / N\n"
        )
    },
}
# Which questions each attack answers honestly (the solution), besides its own cells.
HONEST_ELSEWHERE = {"power-tower", "larger-tower", "polygamma", "forged-sparse-shape"}


def notebook(student: nbformat.NotebookNode, solutions: dict[int, str], name: str) -> nbformat.NotebookNode:
    """The submission of attack ``name``: its cells, the solution elsewhere where it says so, blank otherwise."""
    answers = dict(solutions) if name in HONEST_ELSEWHERE else {}
    answers.update(CELLS[name])
    return exercises.grading_copy(student, answers)


def two_million_names(student: nbformat.NotebookNode, solutions: dict[int, str]) -> str:
    """The honest answers after a first cell of two million names (3.9 MB, one JSON string), which the
    grader splits into statements for the questions with a ban: the notebook's text."""
    nb = json.loads(nbformat.writes(exercises.grading_copy(student, solutions)))
    first = next(
        cell
        for cell in nb["cells"]
        if cell["cell_type"] == "code" and not "".join(cell["source"]).startswith("# Initialize")
    )
    first["source"] = "".join(first["source"]) + "\n" + "x\n" * 2_000_000
    return json.dumps(nb)


def unreadable_files(assignment: str) -> dict[str, str]:
    """Files that are not notebooks the grader can read, by attack name: their text."""
    deep = {"cells": [], "metadata": {"otter": {"assignment_name": assignment}}, "nbformat": 4, "nbformat_minor": 5}
    deep_text = json.dumps(deep)
    return {
        "nested-brackets": "[" * 100_000,
        "nested-metadata": deep_text[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
        # A lone surrogate (JSON's \udcff escape) as the assignment's name.
        "surrogate-name": deep_text.replace(json.dumps(assignment), '"\\udcff"'),
    }
