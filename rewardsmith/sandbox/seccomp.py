"""The seccomp filter every sandbox gets: a few kernel interfaces that namespaces do not separate.

* **Kernel keyrings** (``add_key``, ``request_key``, ``keyctl``: ``ENOSYS``)
  are shared by every process of a uid, across namespaces: a key one program
  added (its description is even listed in ``/proc/keys``) would be seen by
  the next program run as the same uid. Docker's default profile refuses them
  too.
* **io_uring** (``io_uring_setup``, ``_enter``, ``_register``: ``ENOSYS``):
  what a ring holds (a file lock, say) is freed by deferred kernel work, after
  the program's processes are gone, so a lock could still be held when the
  next program starts; Docker refuses it as well.
* **Socket families** other than ``AF_UNIX``, ``AF_INET``, ``AF_INET6`` and
  ``AF_NETLINK`` (``socket`` and ``socketpair``: ``EAFNOSUPPORT``): ``AF_VSOCK``,
  say, reaches the hypervisor of a virtual machine whatever the network
  namespace; the 32-bit ``socketcall``, whose arguments a filter cannot read,
  is refused (``ENOSYS``), so 32-bit programs use the direct calls, as glibc
  does.

Everything else is allowed: the namespaces and limits do the rest. The filter
is a classic BPF program (what ``bwrap --seccomp FD`` reads), written for the
host's architecture and the 32-bit one it can also run (x86-64 with x32 and
i386; AArch64 with 32-bit ARM); on other machines there is none, and
:func:`sandbox_filter` returns ``None``.
"""

from __future__ import annotations

import platform
import struct
import sys

__all__ = ["sandbox_filter"]

_LOAD, _AND, _JUMP_IF_EQUAL, _RETURN = 0x20, 0x54, 0x15, 0x06  # BPF_LD|W|ABS, BPF_ALU|AND|K, BPF_JMP|JEQ|K, BPF_RET|K
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data; the first argument's low 32 bits follow
_ARG0 = 16 if sys.byteorder == "little" else 20
_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_NO_SUCH_CALL, _NO_SUCH_FAMILY = 0x00050000 | 38, 0x00050000 | 97  # SECCOMP_RET_ERRNO: ENOSYS, EAFNOSUPPORT
_FAMILIES = (1, 2, 10, 16)  # AF_UNIX, AF_INET, AF_INET6, AF_NETLINK
_IO_URING = (425, 426, 427)  # the same numbers on every architecture
#: Per machine: (audit architecture, mask for the syscall number, calls refused, socket and socketpair).
_SYSCALLS = {
    "x86_64": (
        (0xC000003E, 0xBFFFFFFF, (248, 249, 250, *_IO_URING), (41, 53)),  # x32's bit masked: the same calls
        (0x40000003, None, (286, 287, 288, *_IO_URING, 102), (359, 360)),  # i386; 102: socketcall
    ),
    "aarch64": (
        (0xC00000B7, None, (217, 218, 219, *_IO_URING), (198, 199)),
        (0x40000028, None, (309, 310, 311, *_IO_URING), (281, 288)),  # 32-bit ARM (EABI: no socketcall)
    ),
}


def _assemble(steps: list[tuple]) -> bytes:
    """``struct sock_filter`` bytes; a jump given as a label's name goes to that label's step."""
    labels = {step[1]: index for index, step in enumerate(steps) if step[0] == "label"}
    code = [step for step in steps if step[0] != "label"]
    where = {name: index - sum(1 for s in steps[:index] if s[0] == "label") for name, index in labels.items()}
    out = []
    for index, (operation, jump, skip, value) in enumerate(code):
        jump = where[jump] - index - 1 if isinstance(jump, str) else jump
        skip = where[skip] - index - 1 if isinstance(skip, str) else skip
        out.append(struct.pack("=HBBI", operation, jump, skip, value))
    return b"".join(out)


def sandbox_filter(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (default: this one) as ``struct sock_filter`` bytes, or ``None``.

    >>> program = sandbox_filter("x86_64")
    >>> len(program) % 8, len(program) // 8
    (0, 35)
    >>> sandbox_filter("sparc64") is None
    True
    """
    arches = _SYSCALLS.get(machine or platform.machine())
    if arches is None:
        return None
    steps: list[tuple] = []
    for number, (arch, mask, refused, sockets) in enumerate(arches):
        steps += [(_LOAD, 0, 0, _ARCH), (_JUMP_IF_EQUAL, 0, f"next{number}", arch), (_LOAD, 0, 0, _NR)]
        steps += [(_AND, 0, 0, mask)] if mask else []
        steps += [(_JUMP_IF_EQUAL, "no such call", 0, call) for call in refused]
        steps += [(_JUMP_IF_EQUAL, "family", 0, call) for call in sockets]
        steps += [(_RETURN, 0, 0, _ALLOW), ("label", f"next{number}")]
    steps += [(_RETURN, 0, 0, _ALLOW), ("label", "family"), (_LOAD, 0, 0, _ARG0)]
    steps += [(_JUMP_IF_EQUAL, "allow", 0, family) for family in _FAMILIES]
    steps += [(_RETURN, 0, 0, _NO_SUCH_FAMILY), ("label", "no such call"), (_RETURN, 0, 0, _NO_SUCH_CALL)]
    steps += [("label", "allow"), (_RETURN, 0, 0, _ALLOW)]
    return _assemble(steps)
