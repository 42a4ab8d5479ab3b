"""Languages the local sandbox runs: Python, C++ (g++) and JavaScript (node).

Python programs run on the sandbox's own interpreter (the one its runner uses),
in a fork of the runner, so they start without a second interpreter. C++ is
compiled once per program with ``g++`` (the ``cxx`` toolchain setting) and
the binary run on each input; JavaScript runs with ``node``. A toolchain that
is not installed is a :class:`~rewardsmith.sandbox.limits.ToolchainMissingError`
naming it, before anything runs: never a score.

>>> language("c++").name, language("js").filename
('cpp', 'main.js')
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.sandbox.limits import ToolchainMissingError

__all__ = ["LANGUAGES", "Language", "Toolchain", "language", "resolve_tool"]


@dataclass(frozen=True)
class Language:
    """How to build and run a program of one language (``{tool}`` is the resolved compiler or interpreter)."""

    name: str
    filename: str
    tool: str | None = None
    compile: tuple[str, ...] | None = None
    run: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    fence_tags: tuple[str, ...] = ()


LANGUAGES: dict[str, Language] = {
    "python": Language("python", "main.py", aliases=("py", "python3"), fence_tags=("python", "py", "python3")),
    "cpp": Language(
        "cpp",
        "main.cpp",
        tool="g++",
        compile=("{tool}", "-O2", "-std=c++17", "-o", "main", "main.cpp"),
        run=("./main",),
        aliases=("c++", "cxx", "cc"),
        fence_tags=("cpp", "c++", "cxx", "cc"),
    ),
    "javascript": Language(
        "javascript",
        "main.js",
        tool="node",
        run=("{tool}", "main.js"),
        aliases=("js", "node", "nodejs"),
        fence_tags=("javascript", "js", "node", "nodejs"),
    ),
}


def language(name: str) -> Language:
    """The language called ``name`` (or one of its aliases); an unknown name is a config error."""
    key = str(name).strip().lower()
    for lang in LANGUAGES.values():
        if key == lang.name or key in lang.aliases:
            return lang
    raise RewardConfigError(f"unknown language {name!r}; the sandbox runs: {', '.join(LANGUAGES)}")


@dataclass(frozen=True)
class Toolchain:
    """A resolved compiler or interpreter: its path, and the host folders the sandbox must see for it."""

    path: str
    folders: tuple[str, ...]


def resolve_tool(lang: Language, tools: Mapping[str, str] | None = None) -> Toolchain | None:
    """The toolchain ``lang`` needs (``tools`` overrides the default command, e.g. ``{"cpp": "clang++"}``).

    ``None`` for Python (the sandbox's interpreter runs it).
    """
    if lang.tool is None:
        return None
    wanted = (tools or {}).get(lang.name) or lang.tool
    found = shutil.which(wanted)
    if found is None:
        raise ToolchainMissingError(
            f"{lang.name} programs need {wanted!r}, which is not installed here (not on PATH); install it, or point "
            f"the sandbox at it with tools={{{lang.name!r}: '/path/to/{os.path.basename(wanted)}'}}"
        )
    folders = (os.path.dirname(os.path.dirname(os.path.abspath(p))) for p in (found, os.path.realpath(found)))
    return Toolchain(os.path.abspath(found), tuple(dict.fromkeys(folders)))
