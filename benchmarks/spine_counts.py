"""The spine's counts, measured on this checkout: modules loaded, long functions, config readers, duplicate pairs.

Counted, not timed, so the figures do not depend on the machine:

* rewardsmith modules a fresh process loads for ``import rewardsmith``,
  ``get_reward("think_format")`` and a worker unpickling and scoring
  ``gsm8k_accuracy`` (and how many of them are the sandbox's, the judges' or
  the HTTP client's);
* functions in ``rewardsmith/`` longer than 60 lines, and how many lines of each are code (not its
  signature or docstring);
* modules that parse YAML, and the files that read a config's mapping
  (``read_config_file``, ``load_yaml``, ``normalize_flat``) outside ``rewardsmith/config/``;
* pairs of duplicated 6-line shapes (``duplicates --repo rewardsmith``), when that tool is installed.

Run: ``python benchmarks/spine_counts.py``.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rewardsmith"
HEAVY = ("rewardsmith.sandbox", "rewardsmith.judges", "rewardsmith.http")
#: The functions allowed over 60 lines, each for the reason docs/architecture.md gives (tests/test_spine_counts.py).
KNOWN_LONG = frozenset(
    {
        "rewardsmith/check/audit.py:check",
        "rewardsmith/data/prepare.py:prepare_dataset",
        "rewardsmith/evaluation/job.py:evaluate",
    }
)
#: The most pairs of duplicated 6-line shapes ``duplicates --repo rewardsmith`` may list (tests/test_spine_counts.py).
MOST_DUPLICATE_PAIRS = 25


def loaded_after(script: str) -> list[str]:
    """The rewardsmith modules a fresh process has loaded after running ``script``."""
    listing = "print(json.dumps(sorted(m for m in sys.modules if m.startswith('rewardsmith'))))"
    code = f"import json, sys\n{script}\n{listing}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def worker_script() -> str:
    import cloudpickle

    from rewardsmith import get_reward

    payload = cloudpickle.dumps(get_reward("gsm8k_accuracy")).hex()
    return (
        "import cloudpickle\nimport rewardsmith.core._worker, rewardsmith.core.sample\n"
        f"reward = cloudpickle.loads(bytes.fromhex({payload!r}))\nreward(completions=['#### 5'], answer=['5'])"
    )


def long_functions(limit: int = 60) -> list[tuple[int, int, str]]:
    """Functions longer than ``limit`` lines: (all lines, lines of code besides the signature and docstring, name)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if lines > limit:
                    first = node.body[0]
                    has_doc = isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant)
                    start = first.end_lineno + 1 if has_doc else first.lineno  # type: ignore[operator]
                    code = node.end_lineno - start + 1  # type: ignore[operator]
                    found.append((lines, code, f"{path.relative_to(ROOT)}:{node.name}"))
    return sorted(found, reverse=True)


def config_readers() -> tuple[list[str], list[str]]:
    yaml_modules, readers = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(ROOT))
        if re.search(r"^\s*(import yaml|from yaml)", text, re.M):
            yaml_modules.append(name)
        if "rewardsmith/config/" not in name and re.search(r"\b(read_config_file|load_yaml|normalize_flat)\(", text):
            readers.append(name)
    return yaml_modules, readers


def duplicate_pairs() -> str:
    tool = shutil.which("duplicates")
    if tool is None:
        return "n/a (the duplicates tool is not installed)"
    out = subprocess.run([tool, "--repo", "rewardsmith", "--most", "200", "--seconds", "120"], cwd=ROOT,
                         capture_output=True, text=True).stdout  # fmt: skip
    summary = [line for line in out.splitlines() if "pair" in line.lower()][:1]
    return summary[0].strip() if summary else out.strip().splitlines()[0] if out.strip() else "no output"


def main() -> None:
    cases = {
        "import rewardsmith": "import rewardsmith",
        'get_reward("think_format")': "from rewardsmith import get_reward\nget_reward('think_format')",
        "worker scoring gsm8k_accuracy": worker_script(),
    }
    print("modules loaded (rewardsmith's own, fresh process):")
    for label, script in cases.items():
        loaded = loaded_after(script)
        heavy = {part.split(".")[1]: sum(m.startswith(part) for m in loaded) for part in HEAVY}
        print(f"  {label}: {len(loaded)} ({', '.join(f'{k} {v}' for k, v in heavy.items())})")
    functions = long_functions()
    long_code = sum(code > 60 for _, code, _ in functions)
    print(f"functions over 60 lines in rewardsmith/: {len(functions)} ({long_code} over 60 lines of code besides "
          "the signature and docstring)")  # fmt: skip
    for lines, code, name in functions:
        print(f"  {lines:4d}  ({code:3d} of code)  {name}{'' if name in KNOWN_LONG else '  (not a known exception)'}")
    yaml_modules, readers = config_readers()
    print(f"modules that import yaml: {len(yaml_modules)} ({', '.join(yaml_modules)})")
    print(f"modules outside rewardsmith/config/ calling read_config_file, load_yaml or normalize_flat: {len(readers)}")
    for name in readers:
        print(f"  {name}")
    print(f"duplicated 6-line shapes (at most {MOST_DUPLICATE_PAIRS} pairs): {duplicate_pairs()}")


if __name__ == "__main__":
    main()
