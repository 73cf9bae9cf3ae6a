"""What the child process that runs an agent's moves (:mod:`agents.isolation`) is kept from.

A forked child holds a copy of everything its caller held, and runs as the same user. Left so,
an agent could write through the caller's descriptors (the book's database file, its journal,
a table file), take the machine's memory, or signal the process that grades it. Before the
child serves its first move it is given:

* :func:`detach_descriptors`: no descriptor but its pipes and standard streams writes: a file
  the caller opened for writing (the book) is open read-only, anything else it held (pipes,
  sockets) reads ``/dev/null``, so no write of the agent's through a descriptor reaches the
  caller's files or connections, and no number it held is reused for a file the agent opens.
  (Memory the caller mapped stays mapped, as a forked process's memory does: SQLite's
  ``-shm`` index of a book in WAL mode among it);
* :func:`limit_memory`: an address space that may grow by at most a given amount
  (``RLIMIT_AS``): past it, an allocation fails (``MemoryError`` in Python);
* :func:`refuse_reaching_out`: a seccomp filter (Linux on x86-64 and ARM64) under which the
  child and everything it starts may signal only the child itself and its own process group,
  may not move into another process group, push keystrokes into the terminal or take it over,
  read or write another process's memory, trace it, take its descriptors or change its limits.
  Each refused call fails with ``EPERM``, as a call the kernel's permissions refuse does.

None of this is a sandbox: the agent runs as the user, and can open any file the user can
(the book's path among them), use the network, or start programs. What it is kept from is the
tool's own process and what that process holds open.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import platform
import resource
import stat
import struct
import sys

_ARCHES = {
    # machine: (AUDIT_ARCH_*, syscall numbers by name)
    "x86_64": (
        0xC000003E,
        {
            "kill": 62,
            "tkill": 200,
            "tgkill": 234,
            "rt_sigqueueinfo": 129,
            "rt_tgsigqueueinfo": 297,
            "prlimit64": 302,
            "setpgid": 109,
            "ioctl": 16,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "pidfd_send_signal": 424,
            "pidfd_getfd": 438,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "kill": 129,
            "tkill": 130,
            "tgkill": 131,
            "rt_sigqueueinfo": 138,
            "rt_tgsigqueueinfo": 240,
            "prlimit64": 261,
            "setpgid": 154,
            "ioctl": 29,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "pidfd_send_signal": 424,
            "pidfd_getfd": 438,
        },
    ),
}
_MACHINE = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine(), platform.machine())

AVAILABLE = sys.platform.startswith("linux") and _MACHINE in _ARCHES and sys.byteorder == "little"
"""Whether :func:`refuse_reaching_out` can install its filter on this machine."""

_TARGETED = ("kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "prlimit64")
"""Calls whose first argument names the process they act on (0: the caller or its group)."""
_REFUSED = ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_send_signal", "pidfd_getfd")
"""Calls that reach into another process whatever their arguments say."""
_TERMINAL_REQUESTS = (0x5410, 0x5412, 0x541C)
"""``ioctl`` requests refused: TIOCSPGRP (take the terminal's foreground), TIOCSTI (push a
keystroke, a Ctrl-C among them, into its input), TIOCLINUX (paste into a console)."""
_X32_BIT = 0x40000000
"""Set in the numbers of x86-64's x32 system calls, which share the architecture's value."""

# BPF, as seccomp reads it: load a 32-bit word of the call's data, compare, return a verdict.
_LOAD = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_DENY = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO
_NR, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24  # offsets in struct seccomp_data (low words)


def detach_descriptors(keep: set[int]) -> None:
    """Make every open descriptor above 2 that is not in ``keep`` one that writes nothing:

    * a file open for writing is opened again read-only, at the same offset, under the same
      number: the agent reads it as the caller did (a book its code looks moves up in), and
      every write through it fails;
    * a file, folder or device open only for reading is left as it is;
    * anything else (a pipe, a socket, a device open for writing: the caller's connections
      to its pool, a notebook's kernel) now reads ``/dev/null``, opened read-only.

    The number stays taken either way, so a stale object of the caller's never finds a file
    the agent opens under its old number."""
    null = os.open(os.devnull, os.O_RDONLY)
    for fd in _open_descriptors():
        if fd > 2 and fd not in keep and fd != null:
            try:
                _read_only(fd, null)
            except OSError:
                pass  # closed since it was listed
    os.close(null)


def _read_only(fd: int, null: int) -> None:
    """Make ``fd`` read-only as :func:`detach_descriptors` says."""
    kind = os.fstat(fd).st_mode
    writes = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY
    if not writes and (stat.S_ISREG(kind) or stat.S_ISDIR(kind) or stat.S_ISCHR(kind)):
        return
    if stat.S_ISREG(kind):
        try:
            again = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            again = -1  # no /proc, or the file may not be read: nothing, then
        if again >= 0:
            os.lseek(again, os.lseek(fd, 0, os.SEEK_CUR), os.SEEK_SET)
            os.dup2(again, fd, inheritable=False)
            os.close(again)
            return
    os.dup2(null, fd, inheritable=False)


def _open_descriptors() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:  # no /proc: every number up to the limit
        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        return list(range(min(soft, 65536)))


def limit_memory(mebibytes: float) -> None:
    """Let this process's address space grow by at most ``mebibytes`` beyond its size now (a
    forked child starts with its caller's, however large). Where the size cannot be read,
    nothing is limited."""
    try:
        with open("/proc/self/statm") as statm:
            now = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return
    limit = now + int(mebibytes * 2**20)
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def refuse_reaching_out() -> bool:
    """Install the filter the module describes, for this process and all it starts; whether
    it is in place (``False`` where seccomp is not to be had)."""
    if not AVAILABLE:
        return False
    program = _program(os.getpid())
    buffer = ctypes.create_string_buffer(program)
    prog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
    if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0:
        return False
    return libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(prog), 0, 0) == 0


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _program(own: int) -> bytes:
    """The filter's instructions for a process whose id is ``own``."""
    arch, numbers = _ARCHES[_MACHINE]
    code: list[tuple[int, int | str, int | str, int]] = []  # (op, true, false, constant)

    def jump_if(value: int, to: str) -> None:
        code.append((_JEQ, to, 0, value))

    code.append((_LOAD, 0, 0, _ARCH))
    code.append((_JEQ, 0, "deny", arch))
    code.append((_LOAD, 0, 0, _NR))
    code.append((_JGE, "deny", 0, _X32_BIT))
    for name in _TARGETED:
        jump_if(numbers[name], "target")
    jump_if(numbers["setpgid"], "group")
    jump_if(numbers["ioctl"], "request")
    for name in _REFUSED:
        jump_if(numbers[name], "deny")
    code.append((_RET, 0, 0, _ALLOW))
    labels = {"target": len(code)}
    code.append((_LOAD, 0, 0, _ARG0))  # a process: 0 (this one, its group), itself, -itself
    for value in (0, own, -own & 0xFFFFFFFF):
        jump_if(value, "allow")
    code.append((_RET, 0, 0, _DENY))
    labels["group"] = len(code)
    code.append((_LOAD, 0, 0, _ARG1))  # setpgid's group: 0 (a new one) or this process's own
    for value in (0, own):
        jump_if(value, "allow")
    code.append((_RET, 0, 0, _DENY))
    labels["request"] = len(code)
    code.append((_LOAD, 0, 0, _ARG1))
    for value in _TERMINAL_REQUESTS:
        jump_if(value, "deny")
    labels["allow"] = len(code)
    code.append((_RET, 0, 0, _ALLOW))
    labels["deny"] = len(code)
    code.append((_RET, 0, 0, _DENY))

    def offset(at: int, to: int | str) -> int:
        return 0 if isinstance(to, int) else labels[to] - at - 1

    return b"".join(
        struct.pack("=HBBI", op, offset(at, true), offset(at, false), constant)
        for at, (op, true, false, constant) in enumerate(code)
    )
