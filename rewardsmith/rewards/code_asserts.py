"""Which asserts of a row's tests are tests: those whose condition involves the program.

Datasets' test code holds asserts that test nothing: HumanEval's debugging
lines (``assert True, "This prints if this assert fails 1 (good for
debugging!)"``), asserts on constants, or on the test's own locals
(``expected = 5; assert expected > 0``). Counted as tests they pay any program
that loads (a ``pass`` body earns 2/7 on HumanEval/83). An assert is a test
when its condition reads a name the program reaches: the candidate (HumanEval's
``check`` parameter and the entry point), the program's functions (MBPP), or a
name bound from one of them (``result = candidate(3)``, ``out.append(f(x))``,
a helper function that calls the candidate), followed through assignments,
loops, ``with`` and comprehensions until nothing more is reached.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

__all__ = ["asserts_on_program", "program_names"]


def _reads(node: ast.AST | None, names: set[str]) -> bool:
    return node is not None and any(
        isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in names for n in ast.walk(node)
    )


def _targets(node: ast.AST) -> set[str]:
    """The names a binding target writes, including the base of ``x[i] = ...`` and ``x.a = ...``."""
    found: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            found.add(n.id)
    return found


def _bindings(node: ast.AST) -> Iterable[tuple[set[str], ast.AST | None]]:
    """(names bound, the part their value comes from) for one node that binds names."""
    if isinstance(node, ast.Assign):
        yield set().union(*map(_targets, node.targets)), node.value
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
        yield _targets(node.target), node.value
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        yield _targets(node.target), node.iter
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        yield _targets(node.optional_vars), node.context_expr
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield {node.name}, ast.Module(list(node.body), [])
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        base = node.func.value
        while isinstance(base, (ast.Attribute, ast.Subscript)):
            base = base.value
        if isinstance(base, ast.Name):  # out.append(candidate(x)) puts the candidate's value in out
            yield {base.id}, ast.Module([ast.Expr(a) for a in [*node.args, *(k.value for k in node.keywords)]], [])


def program_names(trees: Sequence[ast.AST], seeds: Iterable[str]) -> set[str]:
    """The names in ``trees`` that reach the program, starting from ``seeds`` (the program's own names).

    >>> tree = ast.parse("x = 5\\nr = f(2)\\ny = [r]\\nfor v in y: z = v")
    >>> sorted(program_names([tree], {"f"}))
    ['f', 'r', 'v', 'y', 'z']
    """
    reached = set(seeds)
    nodes = [n for tree in trees for n in ast.walk(tree)]
    bindings = [b for n in nodes for b in _bindings(n)]
    changed = True
    while changed:
        changed = False
        for names, source in bindings:
            if not names <= reached and _reads(source, reached):
                reached |= names
                changed = True
    return reached


def asserts_on_program(tree: ast.AST, reached: set[str]) -> bool:
    """Whether ``tree`` holds an assert whose condition reads a name in ``reached`` (see the module docs).

    >>> reached = {"candidate"}
    >>> asserts_on_program(ast.parse('assert True, "good for debugging"'), reached)
    False
    >>> [asserts_on_program(ast.parse(code), reached) for code in ("assert candidate(1) == 1", "assert 1 == 1")]
    [True, False]
    """
    return any(isinstance(n, ast.Assert) and _reads(n.test, reached) for n in ast.walk(tree))
