"""The system-call filter of grading workers (coursekit.grading.syscalls), on this machine's kernel.

The filter runs as the grader will run it, in a bubblewrap sandbox (``bwrap --seccomp FD``), and
loaded by :func:`~coursekit.grading.worker.install_filter` into a plain process; in both, each denied
call a hostile notebook made fails with ``EPERM`` and a call of a foreign ABI kills the process,
while a worker's real load (the scientific stack, IPython, processes and threads) works. The same
calls made without the filter do not fail so, which shows that the filter is what stops them; and
the compiled program, read instruction by instruction, denies exactly :data:`DENIED`.
"""

from __future__ import annotations

import ctypes
import errno
import inspect
import json
import os
import platform
import signal
import struct
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import ROOT
from coursekit.grading import syscalls
from coursekit.grading.syscalls import DENIED

# Each denied call a notebook might make, as the probe below makes it. Without the filter, none of
# them fails with EPERM, even unprivileged, but bpf and userfaultfd (which a sandbox or an
# unprivileged user cannot use anyway); with it, every one does.
PROBE = r"""
import ctypes, json, os, subprocess, sys
numbers = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)

def call(name, *args):
    result = libc.syscall(ctypes.c_long(numbers[name]), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return ctypes.get_errno() if result == -1 else 0

sibling = subprocess.Popen(["/usr/bin/sleep", "60"])
reading, writing = os.pipe()
if os.fork() == 0:  # the sibling's sibling, as a worker is bubblewrap's init's
    os.write(writing, str(call("ptrace", 16, sibling.pid, 0, 0)).encode())  # PTRACE_ATTACH
    os._exit(0)
found = {"ptrace": int(os.read(reading, 16))}
os.wait()
found.update(
    process_vm_readv=call("process_vm_readv", sibling.pid, None, 0, None, 0, 0),
    keyctl=call("keyctl", 22, -1, 0),  # KEYCTL_GET_PERSISTENT (for oneself, into no keyring)
    add_key=call("add_key", b"user", b"probe", b"left behind", 11, -2),  # into the process keyring
    perf_event_open=call("perf_event_open", None, 0, -1, -1, 0),
    bpf=call("bpf", 5, None, 0),  # BPF_PROG_LOAD
    userfaultfd=call("userfaultfd", 0),
    io_uring_setup=call("io_uring_setup", 1, None),
    unshare=call("unshare", 0),
    mount=call("mount", b"none", b"/nonexistent", b"tmpfs", 0, None),
    personality=call("personality", 0xFFFFFFFF),  # only asks
)
sibling.kill()
print(json.dumps(found))
"""
PROBED = (
    "ptrace",
    "process_vm_readv",
    "keyctl",
    "add_key",
    "perf_event_open",
    "bpf",
    "userfaultfd",
    "io_uring_setup",
    "unshare",
    "mount",
    "personality",
)
NEED_PRIVILEGE = ("bpf", "userfaultfd")

# What a worker does (coursekit/grading/worker.py): the zygote's imports, its shell, its own calls
# (not dumpable, file descriptors over a socket, a forked child in a session of its own with a memory
# limit), then what a student's cells do. Each result is checked by the test.
LOAD = r"""
import io, json, multiprocessing, os, resource, socket, subprocess, threading
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import scipy.stats
import sympy
from sklearn.linear_model import LogisticRegression
from coursekit.grading.worker import make_shell

worked = {"dumpable": __import__("ctypes").CDLL(None).prctl(4, 0, 0, 0, 0)}  # PR_SET_DUMPABLE
control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
socket.send_fds(control, [b"spawn"], [theirs.fileno()])
message, fds, _, _ = socket.recv_fds(theirs, 64, 1)
worked["fds"] = [message.decode(), len(fds)]
child = os.fork()
if child == 0:
    os.setsid()
    resource.setrlimit(resource.RLIMIT_AS, (2**31, 2**31))
    os._exit(7)
worked["fork"] = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
box = []
thread = threading.Thread(target=box.append, args=(42,))
thread.start()
thread.join()
worked["thread"] = box
worked["subprocess"] = subprocess.run(["/usr/bin/true"]).returncode
with multiprocessing.Pool(2) as pool:
    worked["pool"] = pool.map(abs, [-1, -2, -3])
rng = np.random.default_rng(0)
a, b = rng.normal(size=(60, 60)), rng.normal(size=60)
worked["solve"] = float(np.abs(a @ np.linalg.solve(a, b) - b).max())
worked["p"] = float(scipy.stats.ttest_1samp(rng.normal(size=200), 0.0).pvalue)
x = rng.normal(size=(200, 2))
worked["score"] = float(LogisticRegression().fit(x, x[:, 0] > 0).score(x, x[:, 0] > 0))
figure, axes = plt.subplots()
axes.plot([0, 1], [1, 0])
image = io.BytesIO()
figure.savefig(image, format="png")
worked["png"] = image.getvalue()[:4].hex()
t = sympy.Symbol("t")
worked["sympy"] = str(sympy.integrate(t**2, (t, 0, 3)))
shell = make_shell()
result = shell.run_cell("import numpy as np\ny = int(np.arange(10).sum())", store_history=False, silent=True)
worked["ipython"] = [result.success, shell.user_ns.get("y")]
print(json.dumps(worked))
"""
WORKED = {
    "dumpable": 0,
    "fds": ["spawn", 1],
    "fork": 7,
    "thread": [42],
    "subprocess": 0,
    "pool": [1, 2, 3],
    "png": b"\x89PNG".hex(),
    "sympy": "9",
    "ipython": [True, 45],
}

# A call of a foreign ABI on x86_64: getpid as x32 numbers it, and as i386 does through int 0x80.
FOREIGN = {
    "x32": "libc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall(ctypes.c_long(NUMBER | 0x40000000))",
    "i386": (
        "code = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n"
        "code.write(b'\\xb8\\x14\\x00\\x00\\x00\\xcd\\x80\\xc3')  # mov eax, 20 (getpid); int 0x80; ret\n"
        "ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(code)))()"
    ),
}
LIVENESS_SECONDS = 180  # a bound that separates "finishes" (seconds) from "hangs", not a timing


@pytest.fixture(scope="module")
def compiled() -> bytes:
    return syscalls.program()  # RuntimeError saying what to install where there is no libseccomp


def run(how: str, compiled: bytes, script: str, *args: str, folder) -> subprocess.CompletedProcess:
    """``python -c script args`` under the filter (``how``: "bwrap", "install") or without ("none").

    In bubblewrap the program comes through a memfd passed to ``--seccomp``; a plain process reads it
    from its standard input and loads it with a copy of :func:`install_filter`'s source, without coursekit.
    """
    environment = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "OPENBLAS_NUM_THREADS": "1",
        "PYTHONPATH": str(ROOT),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    if how == "bwrap":
        memory = os.memfd_create("seccomp-program")
        os.write(memory, compiled)
        os.lseek(memory, 0, os.SEEK_SET)
        command = [
            "bwrap",
            "--unshare-all",
            "--die-with-parent",
            "--ro-bind",
            "/",
            "/",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            "/var/tmp",
            "--chdir",
            "/var/tmp",
            "--seccomp",
            str(memory),
            "--",
            sys.executable,
            "-c",
            script,
            *args,
        ]
        home, fds, stdin = "/var/tmp", (memory,), None
    else:
        memory, home, fds = None, str(folder), ()
        loader = "import ctypes, os, struct, sys\n" + inspect.getsource(syscalls.install_filter)
        loader += "install_filter(sys.stdin.buffer.read())\n"
        command = [sys.executable, "-c", (loader if how == "install" else "") + script, *args]
        stdin = compiled if how == "install" else b""
    environment.update(HOME=home, MPLCONFIGDIR=f"{home}/.matplotlib", IPYTHONDIR=f"{home}/.ipython")
    try:
        return subprocess.run(
            command,
            pass_fds=fds,
            input=stdin,
            capture_output=True,
            cwd=folder,
            env=environment,
            timeout=LIVENESS_SECONDS,
        )
    finally:
        if memory is not None:
            os.close(memory)


def printed(result: subprocess.CompletedProcess, count: int = 1) -> list:
    """The last ``count`` lines the script printed, each a JSON value."""
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-2000:]
    return [json.loads(line) for line in result.stdout.decode().splitlines()[-count:]]


@pytest.mark.parametrize("how", ["bwrap", "install"])
def test_denied_calls_fail_with_eperm_and_a_worker_works(how, compiled, tmp_path):
    numbers = json.dumps({name: syscalls.syscall_number(name) for name in PROBED})
    denied, worked = printed(run(how, compiled, PROBE + LOAD, numbers, folder=tmp_path), 2)
    assert denied == dict.fromkeys(PROBED, errno.EPERM)
    assert {name: worked[name] for name in WORKED} == WORKED
    assert worked["solve"] < 1e-8 and 0 < worked["p"] < 1 and worked["score"] > 0.9, worked


def test_without_the_filter_the_probed_calls_do_not_fail_so(compiled, tmp_path):
    numbers = json.dumps({name: syscalls.syscall_number(name) for name in PROBED})
    (found,) = printed(run("none", compiled, PROBE, numbers, folder=tmp_path))
    assert errno.EPERM not in [found[name] for name in PROBED if name not in NEED_PRIVILEGE], found


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x32 and i386 are x86_64's foreign ABIs")
@pytest.mark.parametrize("abi", sorted(FOREIGN))
@pytest.mark.parametrize("how", ["bwrap", "install"])
def test_a_call_of_a_foreign_abi_kills_the_process(how, abi, compiled, tmp_path):
    script = (
        "import ctypes, mmap, resource\nresource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
        + FOREIGN[abi].replace("NUMBER", str(syscalls.syscall_number("getpid")))
        + "\nprint('survived')"
    )
    unfiltered = run("none", compiled, script, folder=tmp_path)
    if unfiltered.returncode != 0:
        pytest.skip(f"this kernel does not run {abi} calls at all: {unfiltered.stderr.decode()[-300:]}")
    assert unfiltered.stdout.decode().split() == ["survived"]
    result = run(how, compiled, script, folder=tmp_path)
    # bubblewrap's init exits with 128 + the signal that killed its child.
    assert result.returncode == (128 + signal.SIGSYS if how == "bwrap" else -signal.SIGSYS), result
    assert result.stdout == b""


# --------------------------------------------------------------------------- the program itself

ALLOW, KILL_PROCESS, EPERM = 0x7FFF0000, 0x80000000, 0x00050000 | errno.EPERM
JUMPS = {
    0x15: lambda a, k: a == k,
    0x25: lambda a, k: a > k,
    0x35: lambda a, k: a >= k,
    0x45: lambda a, k: a & k != 0,
}  # BPF_JMP | BPF_JEQ, JGT, JGE, JSET, with BPF_K


def verdict(program: bytes, number: int, architecture: int) -> int:
    """What the classic-BPF ``program`` returns for a system call (its seccomp_data, arguments zero)."""
    data = struct.pack("=II", number & 0xFFFFFFFF, architecture) + bytes(56)
    code = list(struct.iter_unpack("=HBBI", program))
    position, accumulator = 0, 0
    for _ in range(len(code)):  # classic BPF jumps only forward
        operation, if_true, if_false, k = code[position]
        if operation == 0x06:  # BPF_RET | BPF_K
            return k
        if operation == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            (accumulator,) = struct.unpack_from("=I", data, k)
        elif operation == 0x05:  # BPF_JMP | BPF_JA
            position += k
        elif operation in JUMPS:
            position += if_true if JUMPS[operation](accumulator, k) else if_false
        else:
            raise AssertionError(f"instruction {position} has operation {operation:#x}, not read here")
        position += 1
    raise AssertionError("the program runs off its end")


def native_architecture() -> int:
    library = ctypes.CDLL(syscalls.LIBRARY)
    library.seccomp_arch_native.restype = ctypes.c_uint32
    return library.seccomp_arch_native()


def test_the_program_denies_exactly_the_denied_calls(compiled):
    denied = {syscalls.syscall_number(name) for name in DENIED} - {None}
    native = native_architecture()
    verdicts = {number: verdict(compiled, number, native) for number in range(2048)}
    assert {number for number, found in verdicts.items() if found == EPERM} == denied
    assert all(found == ALLOW for number, found in verdicts.items() if number not in denied)


@given(number=st.integers(0, 0xFFFFFFFE), architecture=st.integers(0, 0xFFFFFFFF))
def test_a_call_of_another_architecture_is_killed(compiled, number, architecture):
    native = native_architecture()
    expected = KILL_PROCESS if architecture != native else verdict(compiled, number, native)
    assert verdict(compiled, number, architecture) == expected


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x32 is x86_64's")
@given(number=st.integers(0x40000000, 0xFFFFFFFE))
def test_an_x32_call_is_killed(compiled, number):
    assert verdict(compiled, number, native_architecture()) == KILL_PROCESS


NEEDED = (
    "clone",
    "clone3",
    "fork",
    "vfork",
    "execve",
    "wait4",
    "waitid",
    "mmap",
    "munmap",
    "mprotect",
    "madvise",
    "futex",
    "prctl",
    "seccomp",
    "rt_sigaction",
    "kill",
    "setsid",
    "prlimit64",
    "socketpair",
    "sendmsg",
    "recvmsg",
    "memfd_create",
    "getrandom",
    "sched_getaffinity",
    "get_mempolicy",
    "pidfd_open",
    "pidfd_send_signal",
    "set_robust_list",
    "rseq",
    "statx",
    "openat",
    "ioctl",
)


def test_what_python_and_its_libraries_need_is_allowed(compiled):
    native = native_architecture()
    numbers = {name: syscalls.syscall_number(name) for name in NEEDED}
    assert not set(NEEDED) & set(DENIED)
    assert {name: verdict(compiled, number, native) for name, number in numbers.items() if number is not None} == {
        name: ALLOW for name, number in numbers.items() if number is not None
    }


def test_every_denied_name_is_a_system_call_libseccomp_knows():
    library = ctypes.CDLL(syscalls.LIBRARY)
    library.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    unknown = [name for name in DENIED if library.seccomp_syscall_resolve_name(name.encode()) == -1]
    assert not unknown, f"libseccomp knows no system call {unknown} on any architecture: a typo, or newer than it"
    assert len(set(DENIED)) == len(DENIED)


# --------------------------------------------------------------------------- without libseccomp


def test_problem_says_how_to_install_libseccomp_where_it_cannot_be_loaded():
    assert syscalls.problem() is None, syscalls.problem()
    said = syscalls.problem("libseccomp-missing.so.0")
    assert "libseccomp-missing.so.0" in said and "apt-get install libseccomp2" in said
    assert "dnf install libseccomp" in said
    with pytest.raises(RuntimeError, match="apt-get install libseccomp2"):
        syscalls.program("libseccomp-missing.so.0")


@pytest.mark.parametrize("program", [b"", b"1234567", bytes(8 * 4097)])
def test_install_refuses_what_is_no_program(program):
    with pytest.raises(ValueError, match="instructions of 8 bytes"):
        syscalls.install_filter(program)
