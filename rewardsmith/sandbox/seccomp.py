"""The one seccomp filter every sandbox gets: no kernel keyrings.

Kernel keyrings are shared by every process of a uid, across sandboxes: a
key added by one program (its description is even listed in ``/proc/keys``
for all of them) would be seen by the next program run as the same uid. So
``add_key``, ``request_key`` and ``keyctl`` fail with ``ENOSYS`` in the
sandbox, as Docker's default profile also refuses them; no program a
reward runs has a use for them. Everything else is allowed: the namespaces
and limits do the rest.

The filter is a classic BPF program (what ``bwrap --seccomp FD`` reads),
written for the host's architecture and the 32-bit one it can also run
(x86-64 with x32 and i386; AArch64 with 32-bit ARM); on other machines
there is none, and :func:`keyring_filter` returns ``None``.
"""

from __future__ import annotations

import os
import platform
import struct

__all__ = ["keyring_filter", "seccomp_fd"]

_LOAD, _AND, _JUMP_IF_EQUAL, _RETURN = 0x20, 0x54, 0x15, 0x06  # BPF_LD|W|ABS, BPF_ALU|AND|K, BPF_JMP|JEQ|K, BPF_RET|K
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data
_ALLOW, _FAIL = 0x7FFF0000, 0x00050000 | 38  # SECCOMP_RET_ALLOW; SECCOMP_RET_ERRNO with ENOSYS
#: Per machine: (audit architecture, mask for the syscall number, numbers of add_key, request_key, keyctl).
_KEYRING_SYSCALLS = {
    "x86_64": ((0xC000003E, 0xBFFFFFFF, (248, 249, 250)), (0x40000003, None, (286, 287, 288))),  # x32 bit masked
    "aarch64": ((0xC00000B7, None, (217, 218, 219)), (0x40000028, None, (309, 310, 311))),
}


def keyring_filter(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (default: this one) as ``struct sock_filter`` bytes, or ``None``.

    >>> program = keyring_filter("x86_64")
    >>> len(program) % 8, len(program) // 8
    (0, 15)
    >>> keyring_filter("sparc64") is None
    True
    """
    arches = _KEYRING_SYSCALLS.get(machine or platform.machine())
    if arches is None:
        return None
    steps: list[tuple[int, int | str, int, int]] = []
    for arch, mask, numbers in arches:
        block = [(_LOAD, 0, 0, _NR)] + ([(_AND, 0, 0, mask)] if mask else [])
        block += [(_JUMP_IF_EQUAL, "fail", 0, number) for number in numbers]
        steps += [(_LOAD, 0, 0, _ARCH), (_JUMP_IF_EQUAL, 0, len(block), arch), *block]  # another arch: skip
    steps += [(_RETURN, 0, 0, _ALLOW), (_RETURN, 0, 0, _FAIL)]
    fail = len(steps) - 1
    return b"".join(
        struct.pack("=HBBI", code, fail - index - 1 if jump == "fail" else jump, skip, value)
        for index, (code, jump, skip, value) in enumerate(steps)
    )


def seccomp_fd() -> int | None:
    """A pipe's read end holding the filter, for one bubblewrap start (which reads it to the end), or ``None``."""
    program = keyring_filter()
    if program is None:
        return None
    read, write = os.pipe()
    try:
        os.write(write, program)  # far below a pipe's capacity
    finally:
        os.close(write)
    return read
