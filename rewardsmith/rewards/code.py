"""``code_syntax``: Python code that parses and uses no disallowed construct, decided on the syntax tree.

This is a check of syntax and style, not of safety. A static check cannot
tell what code will do when run (strings can be assembled, objects walked,
modules reached in ways no list of names covers), so running model-written
code safely is the job of a sandbox (process isolation, resource limits, no
network), not of this reward. What it does close are the cheap ways around
its own rules: dunder names and attributes wherever they appear (names,
attributes, ``match`` class patterns, strings naming them), frame and code
introspection attributes, every code block of a completion (a harmless block
cannot hide a dangerous one), invisible and blank-drawn characters that make
code look other than it is, and code that does not parse but names a
disallowed construct (it scores as disallowed, not as a syntax error).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import unicodedata
from dataclasses import dataclass

from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.rewards._text import fenced_blocks, has_content, visible_text

__all__ = ["CodeSyntax", "code_blocks", "disallowed_constructs"]

_PYTHON_FENCES = ("", "python", "python3", "py")

DEFAULT_DISALLOWED_NAMES: tuple[str, ...] = (
    "exec", "eval", "compile", "open", "__import__", "input", "breakpoint",
    "globals", "locals", "vars", "getattr", "setattr", "delattr", "memoryview",
)  # fmt: skip
DEFAULT_DISALLOWED_MODULES: tuple[str, ...] = (
    "os", "sys", "subprocess", "shutil", "socket", "ctypes", "importlib", "pathlib", "multiprocessing",
    "threading", "signal", "builtins", "pickle", "marshal", "pty", "resource", "asyncio", "urllib", "http",
    "inspect", "gc", "types", "code", "codeop", "runpy", "posix", "nt", "_thread", "io", "tempfile", "glob",
    "fcntl", "mmap", "sysconfig", "site", "zipimport", "webbrowser", "shelve", "dbm", "requests", "httpx",
)  # fmt: skip

#: Dunder names that are plain bookkeeping, not a way into the interpreter.
_HARMLESS_DUNDERS = frozenset({"__name__", "__main__", "__doc__", "__file__", "__init__", "__all__"})
#: Attributes that walk frames, generators, coroutines, tracebacks and code objects (to globals and builtins).
FRAME_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "f_back", "f_builtins", "f_code", "f_globals", "f_locals", "f_trace", "gi_frame", "gi_code",
        "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "cr_origin", "ag_frame", "ag_code", "ag_await",
        "tb_frame", "tb_next", "co_code", "co_consts", "co_names", "func_globals", "func_code", "mro",
    }
)  # fmt: skip
_DUNDER = re.compile(r"__\w{1,64}__")
_CODE_OPEN = re.compile(r"<code>", re.IGNORECASE)
_CODE_CLOSE = re.compile(r"</code>", re.IGNORECASE)


def code_blocks(completion: str) -> list[str]:
    """All the code in a completion: every ``<code>`` block and every fenced Python (or unlabelled) block.

    An unclosed ``<code>`` block runs to the end. Blocks that show nothing are left out.

    >>> code_blocks("Try:\\n```python\\nprint(1)\\n```")
    ['print(1)\\n']
    >>> code_blocks("<code>x = 1</code> and ```\\nimport os\\n```")
    ['x = 1', 'import os\\n']
    """
    blocks: list[str] = []
    outside: list[str] = []
    position = 0
    while True:
        opening = _CODE_OPEN.search(completion, position)
        if opening is None:
            outside.append(completion[position:])
            break
        outside.append(completion[position : opening.start()])
        closing = _CODE_CLOSE.search(completion, opening.end())
        blocks.append(completion[opening.end() : closing.start() if closing else len(completion)])
        if closing is None:
            break
        position = closing.end()
    blocks += fenced_blocks("".join(outside), _PYTHON_FENCES)
    return [b for b in blocks if has_content(b)]


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and len(name) > 4 and name not in _HARMLESS_DUNDERS


def disallowed_constructs(
    tree: ast.AST,
    names: tuple[str, ...] = DEFAULT_DISALLOWED_NAMES,
    modules: tuple[str, ...] = DEFAULT_DISALLOWED_MODULES,
    allow_imports: bool = False,
    allowed_modules: tuple[str, ...] = (),
) -> list[str]:
    """What in a syntax tree breaks the rules: imports, dangerous builtins, dunder and frame walks.

    >>> disallowed_constructs(ast.parse("import os\\nx = ().__class__.__bases__"))
    ['import os', 'attribute __bases__', 'attribute __class__']
    >>> disallowed_constructs(ast.parse("__builtins__['exec']('1')\\ng = (i for i in ())\\ng.gi_frame.f_back"))
    ['attribute f_back', 'attribute gi_frame', 'name __builtins__']
    """
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            targets = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for target in targets:
                root = target.split(".")[0]
                if root in modules or (not allow_imports and root not in allowed_modules):
                    found.append(f"import {target}")
        elif isinstance(node, ast.Name) and (node.id in names or node.id in modules or _is_dunder(node.id)):
            found.append(f"name {node.id}")
        elif isinstance(node, ast.Attribute) and (_is_dunder(node.attr) or node.attr in FRAME_ATTRIBUTES):
            found.append(f"attribute {node.attr}")
        elif isinstance(node, ast.MatchClass):  # case object(__class__=c): attribute access by pattern
            found += [f"attribute {a}" for a in node.kwd_attrs if _is_dunder(a) or a in FRAME_ATTRIBUTES]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if (_DUNDER.fullmatch(text) and _is_dunder(text)) or ".__" in text or text in FRAME_ATTRIBUTES:
                found.append(f"string {text[:40]!r}")
    return found


def _disallowed_tokens(code: str, reward: CodeSyntax) -> list[str]:
    """Disallowed names among the tokens of code that does not parse (or that hides characters)."""
    found: list[str] = []
    names = set(reward.disallowed_names) | set(reward.disallowed_modules)
    previous = ""
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type != tokenize.NAME:
                continue
            word = unicodedata.normalize("NFKC", token.string)
            if word in names or _is_dunder(word) or (word in FRAME_ATTRIBUTES and previous == "."):
                found.append(f"name {word}")
            elif word in ("import", "from") and not reward.allow_imports and not reward.allowed_modules:
                found.append(word)
            previous = token.string
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return found


@register_reward("code_syntax")
@dataclass
class CodeSyntax(Reward):
    """Python code (in ``<code>`` or fenced blocks) that parses and uses no disallowed construct: syntax and style.

    1.0 when every block parses and none uses a disallowed construct;
    ``syntax_error_score`` (0.3) for a syntax error in code that names
    nothing disallowed; 0 for a disallowed construct or when there is no
    code. Decided on the syntax tree, never by matching text: imports (unless
    ``allow_imports``, and never of ``disallowed_modules`` such as ``os``,
    ``sys``, ``subprocess``), ``disallowed_names`` (``exec``, ``eval``,
    ``open``, ``getattr``, ...), dunder names and attributes
    (``().__class__.__bases__``, ``__builtins__``), frame walks
    (``g.gi_frame.f_back``). Every block of the completion is checked. The
    code is parsed, never run; more than ``max_code_chars`` of it scores 0.

    It checks syntax and style, not safety: code that passes it can still do
    harm when run. Run model-written code only in a sandbox.

    Columns: none. Range: [0, 1].

    >>> r = CodeSyntax()
    >>> r(completions=["```python\\ndef f(x):\\n    return x + 1\\n```", "<code>def f(:</code>",
    ...                "<code>import os\\nos.system('ls')</code>", "no code here", "<code>import os(</code>"])
    [1.0, 0.3, 0.0, 0.0, 0.0]
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
        syntax_error = ""
        for block in blocks:
            seen = visible_text(block)
            if seen != block:  # what a reader sees is not what Python reads: check what is seen too
                problems += _disallowed_tokens(seen, self)
            try:
                tree = ast.parse(block)
            except (SyntaxError, ValueError) as exc:
                syntax_error = syntax_error or f"syntax error: {str(exc)[:80]}"
                problems += _disallowed_tokens(block, self)
                continue
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
        if syntax_error:
            return RewardResult(self.syntax_error_score, syntax_error)
        return RewardResult(1.0, f"{len(blocks)} block(s) parse, nothing disallowed")
