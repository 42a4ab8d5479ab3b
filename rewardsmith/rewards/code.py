"""``code_syntax``: Python code that parses and uses no disallowed construct, decided on the syntax tree."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.rewards._text import tag_blocks

__all__ = ["CodeSyntax", "code_blocks", "disallowed_constructs"]

_FENCE = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)

DEFAULT_DISALLOWED_NAMES: tuple[str, ...] = (
    "exec", "eval", "compile", "open", "__import__", "input", "breakpoint",
    "globals", "locals", "vars", "getattr", "setattr", "delattr", "memoryview",
)  # fmt: skip
DEFAULT_DISALLOWED_MODULES: tuple[str, ...] = (
    "os", "sys", "subprocess", "shutil", "socket", "ctypes", "importlib", "pathlib", "multiprocessing",
    "threading", "signal", "builtins", "pickle", "marshal", "pty", "resource", "asyncio", "urllib", "http",
)  # fmt: skip


def code_blocks(completion: str) -> list[str]:
    """The code in a completion: ``<code>...</code>`` blocks, else fenced Python (or bare) blocks.

    >>> code_blocks("Try:\\n```python\\nprint(1)\\n```")
    ['print(1)\\n']
    >>> code_blocks("<code>x = 1</code>")
    ['x = 1']
    """
    blocks = tag_blocks(completion, "code")
    if blocks:
        return [b for b in blocks if b.strip()]
    return [b for b in _FENCE.findall(completion) if b.strip()]


def disallowed_constructs(
    tree: ast.AST,
    names: tuple[str, ...] = DEFAULT_DISALLOWED_NAMES,
    modules: tuple[str, ...] = DEFAULT_DISALLOWED_MODULES,
    allow_imports: bool = False,
    allowed_modules: tuple[str, ...] = (),
) -> list[str]:
    """What in a syntax tree breaks the rules: imports, calls to dangerous builtins, dunder attribute walks.

    >>> disallowed_constructs(ast.parse("import os\\nx = ().__class__.__bases__"))
    ['import os', 'attribute __bases__', 'attribute __class__']
    """
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            targets = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for target in targets:
                root = target.split(".")[0]
                if root in modules or (not allow_imports and root not in allowed_modules):
                    found.append(f"import {target}")
        elif isinstance(node, ast.Name) and (node.id in names or node.id in modules):
            found.append(f"name {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr.endswith("__"):
            found.append(f"attribute {node.attr}")
    return found


@register_reward("code_syntax")
@dataclass
class CodeSyntax(Reward):
    """Python code (in ``<code>`` or a fenced block) that parses and uses no disallowed construct.

    1.0 when every block parses and none uses a disallowed construct;
    ``syntax_error_score`` (0.3) for a syntax error; 0 for a disallowed
    construct or when there is no code. Decided on the syntax tree, never by
    matching text: imports (unless ``allow_imports``, and never of
    ``disallowed_modules`` such as ``os``, ``sys``, ``subprocess``),
    ``disallowed_names`` (``exec``, ``eval``, ``open``, ``getattr``, ...), and
    dunder attributes (``().__class__.__bases__`` escapes). The code is
    parsed, never run; more than ``max_code_chars`` of it scores 0.

    Columns: none. Range: [0, 1].

    >>> r = CodeSyntax()
    >>> r(completions=["```python\\ndef f(x):\\n    return x + 1\\n```", "<code>def f(:</code>",
    ...                "<code>import os\\nos.system('ls')</code>", "no code here"])
    [1.0, 0.3, 0.0, 0.0]
    >>> CodeSyntax(allowed_modules=("math",)).check("<code>import math\\nprint(math.pi)</code>").score
    1.0
    """

    default_name = "code_syntax"
    score_range = (0.0, 1.0)

    allow_imports: bool = False
    allowed_modules: tuple[str, ...] = ()
    disallowed_names: tuple[str, ...] = DEFAULT_DISALLOWED_NAMES
    disallowed_modules: tuple[str, ...] = DEFAULT_DISALLOWED_MODULES
    syntax_error_score: float = 0.3
    max_code_chars: int = 200_000

    def score(self, completion: str) -> RewardResult:
        blocks = code_blocks(completion)
        if not blocks:
            return RewardResult(0.0, "no code")
        size = sum(len(b) for b in blocks)
        if size > self.max_code_chars:
            return RewardResult(0.0, f"{size} characters of code, more than max_code_chars={self.max_code_chars}")
        problems: list[str] = []
        for block in blocks:
            try:
                tree = ast.parse(block)
            except (SyntaxError, ValueError) as exc:
                return RewardResult(self.syntax_error_score, f"syntax error: {str(exc)[:80]}")
            except (RecursionError, MemoryError):
                return RewardResult(0.0, "the code is nested too deeply to parse")
            problems += disallowed_constructs(
                tree,
                tuple(self.disallowed_names),
                tuple(self.disallowed_modules),
                self.allow_imports,
                tuple(self.allowed_modules),
            )
        if problems:
            return RewardResult(0.0, "disallowed: " + ", ".join(dict.fromkeys(problems)))
        return RewardResult(1.0, f"{len(blocks)} block(s) parse, nothing disallowed")
