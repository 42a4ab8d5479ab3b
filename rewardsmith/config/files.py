"""Config files: the one reader of YAML config files (what every command reads a config with).

A file is read once: as UTF-8 text (another encoding is an error naming the
line, not a traceback), as YAML (a syntax error names its line), bounded (an
alias bomb is refused), and with every key written twice in a mapping
reported at once with its path in the file and its lines. Errors say which
file, where in it and what to do.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rewardsmith.core.errors import RewardConfigError

__all__ = ["MAX_YAML_NODES", "load_yaml", "read_config_file", "read_text"]


def read_config_file(
    path: str | os.PathLike[str], *, what: str, sections: str, error: type[RewardConfigError] = RewardConfigError
) -> dict[str, Any]:
    """The mapping a YAML config file holds; ``error`` for a missing file, bad YAML, or not a mapping.

    ``what`` names the kind of config ("training config"), ``sections`` the
    keys it should have, for the messages.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "c.yaml"
    >>> _ = path.write_text("rewards: [think_format]")
    >>> read_config_file(path, what="config", sections="rewards")
    {'rewards': ['think_format']}
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise error(f"{what} file {str(path)!r} does not exist; give the path of a YAML file")
    loaded = load_yaml(read_text(path, error), repr(str(path)), error)
    if loaded is None:
        raise error(f"{str(path)!r} is empty; a {what} needs {sections}")
    if not isinstance(loaded, dict):
        raise error(f"{str(path)!r} must hold a mapping of sections ({sections}), not a {type(loaded).__name__}")
    return loaded


def read_text(path: Path, error: type[RewardConfigError] = RewardConfigError) -> str:
    """The text of a config file, which must be UTF-8 (a BOM is allowed); ``error`` naming the line otherwise.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "latin1.yaml"
    >>> _ = path.write_bytes("rewards: [think_format]\\n# café\\n".encode("latin-1"))
    >>> read_text(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardConfigError: '...latin1.yaml' is not UTF-8 text: line 2, column 6 has the byte 0xe9...
    """
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise error(
            f"{str(path)!r} is not UTF-8 text: line {line}, column {column} has the byte 0x{data[exc.start]:02x}, "
            "which UTF-8 does not allow there (the file is in another encoding, such as Latin-1 or cp1252). "
            "Save it as UTF-8 (in most editors: File, Save with Encoding, UTF-8; or "
            f"`iconv -f latin1 -t utf-8 {path.name} > fixed.yaml`)"
        ) from None


#: The most values a YAML document may expand to, its aliases (``*name``) counted each time they are used.
MAX_YAML_NODES = 100_000


def load_yaml(text: str, where: str, error: type[RewardConfigError] = RewardConfigError) -> Any:
    r"""The data a YAML text holds, read safely and bounded: the one YAML reader of configs.

    Aliases make a YAML file small and its data huge (a "billion laughs" of
    nested ``*name`` references takes a few hundred bytes): the document's
    values are counted with every alias expanded, without expanding them, and
    more than :data:`MAX_YAML_NODES`, a recursive alias or nesting too deep
    for the parser is ``error`` naming ``where``.

    >>> load_yaml("a: &x [1, 2]\nb: *x", "inline")
    {'a': [1, 2], 'b': [1, 2]}
    >>> bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    ...     f"{n}: &{n} [{', '.join(['*' + p] * 10)}]\n" for p, n in zip("abcdef", "bcdefg"))
    >>> load_yaml(bomb, "bomb.yaml")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardConfigError: bomb.yaml: its aliases expand to more than 100,000 values ...

    A key written twice in one mapping is an error (YAML readers keep the last
    one silently), every such key named with its path and lines:

    >>> load_yaml("trainer:\\n  learning_rate: 1e-3\\n  learning_rate: 3e-3\\n", "run.yaml")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardConfigError: run.yaml: trainer.learning_rate is written twice (line 2 and line 3); ...
    """
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node, where, error)
        _check_duplicates(node, where, error)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise error(f"{where} is not valid YAML: {_yaml_problem(exc)}") from None
    except RecursionError:
        raise error(f"{where} nests its values too deeply to read") from None
    finally:
        loader.dispose()


def _check_expansion(root: Any, where: str, error: type[RewardConfigError]) -> None:
    """Count the values of a composed YAML document with aliases expanded (each shared node counted once, by size)."""
    import yaml

    sizes: dict[int, int] = {}
    inside: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        if isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            children = node.value if isinstance(node, yaml.SequenceNode) else []
        key = id(node)
        if finished:
            inside.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[key] > MAX_YAML_NODES:
                raise error(
                    f"{where}: its aliases expand to more than {MAX_YAML_NODES:,} values (a YAML alias bomb?); "
                    "write the values out"
                )
        elif key in inside:
            raise error(f"{where}: an alias refers to a value that holds it (a recursive alias); write it out")
        elif key not in sizes:
            inside.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)


def _yaml_problem(exc: Exception) -> str:
    """A YAML error as one line with its line and column (1-based, as editors count)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is None or problem is None:
        return " ".join(str(exc).split())
    context = getattr(exc, "context", None)
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" + (f" ({context})" if context else "")


def _check_duplicates(root: Any, where: str, error: type[RewardConfigError]) -> None:
    """Every key written twice in one mapping of a composed document, all reported in one ``error``."""
    import yaml

    found: list[tuple[tuple[int, int], str]] = []
    seen: set[int] = set()
    stack: list[tuple[Any, str]] = [(root, "")]
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend((child, f"{path}[{i}]") for i, child in reversed(list(enumerate(node.value))))
        if not isinstance(node, yaml.MappingNode):
            continue
        lines: dict[str, list[tuple[int, int]]] = {}
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                lines.setdefault(key.value, []).append((key.start_mark.line + 1, key.start_mark.column + 1))
                stack.append((value, f"{path}.{key.value}" if path else key.value))
        for key, at in lines.items():
            if len(at) > 1:
                name = f"{path}.{key}" if path else repr(key)
                found.append((at[0], f"{name} is written {_times(len(at))} ({_places(at)})"))
    if found:
        messages = [message for _, message in sorted(found)]
        raise error(f"{where}: {'; '.join(messages)}; keep one of each (YAML would silently use the last)")


def _times(count: int) -> str:
    return "twice" if count == 2 else f"{count} times"


def _places(at: list[tuple[int, int]]) -> str:
    """``line 2 and line 3``; with columns where two are on one line (``line 4 column 3 and line 4 column 9``)."""
    same_line = len({line for line, _ in at}) < len(at)
    places = [f"line {line}" + (f" column {column}" if same_line else "") for line, column in at]
    return ", ".join(places[:-1]) + f" and {places[-1]}"
