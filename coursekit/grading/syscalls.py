"""What a grading worker may not ask of the kernel: a system-call filter (seccomp).

The sandbox (:mod:`coursekit.grading.isolation`) decides what a worker sees; this module decides
which system calls it may make. Every worker runs under a filter that lets through every call but
those of :data:`DENIED`, which fail with ``EPERM`` as they would for a process without the
privilege: tracing or reading another process (the zygote, bubblewrap's init, a later worker, all
run by the same user), the kernel's keyrings (the user's persistent keyring outlives the sandbox
and would carry a key from one submission to the next), kernel interfaces with a long record of
exploitable bugs, and what builds or administers a machine. A system call of another architecture
or ABI than the process's own (x32, or i386 through ``int 0x80`` on x86_64), which could reach
those calls under other numbers, kills the process.

:func:`program` compiles the filter with libseccomp (``libseccomp.so.2``, loaded through ctypes:
no C headers needed) into the classic-BPF program that ``bwrap --seccomp FD`` reads from a file
descriptor; :func:`install_filter` (:mod:`coursekit.grading.worker`'s, which runs as a script
without this package) loads that program into the calling process with the C library alone, for a
worker that runs without bubblewrap. :func:`problem` says why no filter can be built here.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import sys

from coursekit.grading.worker import install_filter  # the worker loads the filter itself: see there

__all__ = ["DENIED", "LIBRARY", "INSTALL_HINT", "install_filter", "problem", "program", "syscall_number"]

LIBRARY = "libseccomp.so.2"
INSTALL_HINT = (
    "install libseccomp (Debian, Ubuntu: `sudo apt-get install libseccomp2`; Fedora: `sudo dnf install libseccomp`)"
)

DENIED: tuple[str, ...] = (
    # Another process's memory, file descriptors and state: the zygote, bubblewrap's init and later
    # workers run as the same user, and a traced process can be made to run anything.
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
    "process_madvise",
    "move_pages",
    "migrate_pages",
    # The kernel's keyrings: the user's keyrings outlive every process of the sandbox.
    "keyctl",
    "add_key",
    "request_key",
    # Kernel interfaces with a long record of exploitable bugs that no notebook uses.
    "perf_event_open",
    "bpf",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    # What the sandbox is built of: mounts (old and new API), the root, namespaces, files by handle.
    "mount",
    "umount",
    "umount2",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "open_by_handle_at",
    "name_to_handle_at",
    # The machine itself: kernel code, power, swap, accounting, quotas, the kernel's log, the clock,
    # the host's name, I/O ports.
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "quotactl_fd",
    "syslog",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    "iopl",
    "ioperm",
    # Odd or obsolete: the execution domain (personality can turn off address-space randomisation for
    # what the process runs next), the terminal's hangup, file-system-wide notification, and calls
    # that Docker's default profile denies too.
    "personality",
    "lookup_dcookie",
    "uselib",
    "vhangup",
    "fanotify_init",
    "_sysctl",
    "sysfs",
    "ustat",
    "nfsservctl",
    "create_module",
    "get_kernel_syms",
    "query_module",
    "stime",
    "vm86",
    "vm86old",
)

# libseccomp's actions and attributes (seccomp.h), and the kernel's.
ACT_ALLOW = 0x7FFF0000
ACT_ERRNO = 0x00050000
ACT_KILL_PROCESS = 0x80000000
FLTATR_ACT_BADARCH = 2
PR_GET_SECCOMP = 21


def _bind(library: str) -> ctypes.CDLL:
    """libseccomp, with the signatures of the functions used here (OSError if it cannot be loaded)."""
    lib = ctypes.CDLL(library, use_errno=True)
    signatures = {
        "seccomp_init": (ctypes.c_void_p, [ctypes.c_uint32]),
        "seccomp_release": (None, [ctypes.c_void_p]),
        "seccomp_attr_set": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]),
        "seccomp_rule_add": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]),
        "seccomp_export_bpf": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
        "seccomp_syscall_resolve_name": (ctypes.c_int, [ctypes.c_char_p]),
    }
    for name, (result, arguments) in signatures.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = result, arguments
    return lib


@functools.cache
def _library(library: str) -> ctypes.CDLL:
    """libseccomp, loaded once; RuntimeError saying how to install it where it cannot be loaded here."""
    if not sys.platform.startswith("linux"):
        raise RuntimeError(
            f"a system-call filter needs Linux (this is {sys.platform}): grade in a Linux virtual machine or container"
        )
    libc = ctypes.CDLL(None, use_errno=True)
    if (
        libc.prctl(
            ctypes.c_int(PR_GET_SECCOMP), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)
        )
        < 0
    ):
        raise RuntimeError(
            f"this kernel ({os.uname().release}) cannot filter system calls "
            f"({os.strerror(ctypes.get_errno())}): grade on a kernel built with CONFIG_SECCOMP_FILTER"
        )
    try:
        return _bind(library)
    except (OSError, AttributeError) as error:
        raise RuntimeError(f"{library} cannot be loaded ({error}): {INSTALL_HINT}") from None


def syscall_number(name: str, library: str = LIBRARY) -> int | None:
    """The number of a system call on this machine's native architecture, as libseccomp knows it.

    Parameters
    ----------
    name : str
        A system call's name, e.g. ``"ptrace"``.
    library : str
        The libseccomp to ask.

    Returns
    -------
    int or None
        None where libseccomp does not know the call, or knows it only on other architectures
        (``iopl`` on aarch64, say). RuntimeError where libseccomp cannot be loaded (see :func:`problem`).
    """
    number = _library(library).seccomp_syscall_resolve_name(name.encode())
    return number if number >= 0 else None


@functools.cache
def program(library: str = LIBRARY) -> bytes:
    """The filter of the module docstring, compiled for this machine's native architecture.

    Every system call is allowed but those of :data:`DENIED`, which fail with ``EPERM`` (those
    libseccomp does not know here are left out); a call of another architecture or ABI kills the
    process.

    Parameters
    ----------
    library : str
        The libseccomp to build it with.

    Returns
    -------
    bytes
        The classic-BPF program: an array of ``struct sock_filter`` (8 bytes each), as
        ``bwrap --seccomp FD`` reads it from a file descriptor and :func:`install` loads it.
        RuntimeError, with :func:`problem`'s sentence, where it cannot be built here.
    """
    lib = _library(library)
    context = lib.seccomp_init(ACT_ALLOW)
    if not context:
        raise RuntimeError(
            f"{library} cannot make a filter for this machine's architecture "
            f"({os.uname().machine}): {INSTALL_HINT}, in a version that knows it"
        )

    def check(result: int, what: str) -> None:
        if result < 0:
            raise RuntimeError(f"{library} failed {what}: {os.strerror(-result)}")

    try:
        check(
            lib.seccomp_attr_set(context, FLTATR_ACT_BADARCH, ACT_KILL_PROCESS),
            "to kill the process on a foreign architecture",
        )
        for name in DENIED:
            number = syscall_number(name, library)
            if number is not None:
                check(lib.seccomp_rule_add(context, ACT_ERRNO | errno.EPERM, number, 0), f"to deny {name}")
        memory = os.memfd_create("seccomp-program", os.MFD_CLOEXEC)
        try:
            check(lib.seccomp_export_bpf(context, memory), "to export the program")
            return os.pread(memory, os.fstat(memory).st_size, 0)
        finally:
            os.close(memory)
    finally:
        lib.seccomp_release(context)


@functools.cache
def problem(library: str = LIBRARY) -> str | None:
    """Why no filter can be built here, or None.

    Parameters
    ----------
    library : str
        The libseccomp to try (the default is the one the C library's loader finds).

    Returns
    -------
    str or None
        A sentence saying what is missing (Linux, a kernel that filters system calls, libseccomp,
        a libseccomp that knows this architecture) and how to get it.
    """
    try:
        program(library)
    except RuntimeError as error:
        return str(error)
    return None
