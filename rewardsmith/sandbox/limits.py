"""Resource limits of a sandboxed program, and the sandbox's errors."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

from rewardsmith.core.errors import RewardConfigError, RewardsmithError

__all__ = ["Limits", "SandboxError", "SandboxUnavailableError", "ToolchainMissingError"]


class SandboxError(RewardsmithError, RuntimeError):
    """The sandbox could not run a program (an infrastructure failure, not the program's): the sample is not scored."""


class ToolchainMissingError(SandboxError):
    """A program's language needs a compiler or interpreter that is not installed (or not usable in the sandbox)."""


class SandboxUnavailableError(SandboxError, RewardConfigError):
    """``isolation="require"`` and namespaces cannot be used here: the sandbox refuses to run anything."""


@dataclass(frozen=True)
class Limits:
    """What one program may use. Each run of a program (each test input) gets all of it.

    * ``timeout``: wall-clock seconds per run; the whole process tree is killed at the end;
    * ``cpu_seconds``: CPU time per process (``RLIMIT_CPU``; default: the timeout, rounded up, plus 1);
    * ``memory_mb``: address space per process (``RLIMIT_AS``): a program that allocates more gets an
      allocation error at once, rather than swapping the machine or waiting for the timeout;
    * ``file_size_mb``: largest file a program may write (``RLIMIT_FSIZE``);
    * ``disk_mb``: size of the private writable directory (a ``tmpfs`` under bubblewrap);
    * ``processes``: processes and threads at once (``RLIMIT_NPROC``, counted per sandbox);
    * ``open_files``: open file descriptors per process (``RLIMIT_NOFILE``);
    * ``output_bytes``: bytes of ``stdout`` (and of ``stderr``) kept; a program that writes more is killed.

    >>> Limits(timeout=2).cpu_limit, Limits(memory_mb=512).as_runner()["memory_bytes"]
    (3, 536870912)
    """

    timeout: float = 10.0
    cpu_seconds: float | None = None
    memory_mb: int = 1024
    file_size_mb: int = 64
    disk_mb: int = 256
    processes: int = 32
    open_files: int = 256
    output_bytes: int = 4_000_000

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and f.name == "cpu_seconds":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise RewardConfigError(f"sandbox limit {f.name} must be a positive number, got {value!r}")

    @property
    def cpu_limit(self) -> int:
        """The ``RLIMIT_CPU`` soft limit, in whole seconds."""
        return math.ceil(self.cpu_seconds if self.cpu_seconds is not None else self.timeout + 1)

    def as_runner(self, processes: int | None = None) -> dict[str, int]:
        """The limits as the sandbox's runner sets them (``setrlimit`` values)."""
        return {
            "cpu_seconds": self.cpu_limit,
            "memory_bytes": int(self.memory_mb * 2**20),
            "file_bytes": int(self.file_size_mb * 2**20),
            "processes": int(processes if processes is not None else self.processes),
            "open_files": int(self.open_files),
        }

    def replace(self, **changes: object) -> Limits:
        """A copy with some limits changed."""
        return Limits(**{**asdict(self), **changes})
