"""Rules of the code that a reviewer would otherwise check by hand.

Imports: a module's imports stand at its top, where a reader looks for them. A function imports
inside its body only (a) a heavy package (torch, transformers, matplotlib, scipy...: importing
``fmat`` or running ``fmat --help`` does not load them), (b) in the CLI's command modules, which
load the library's modules when a command runs, or (c) where a comment on the line says why
(``# here: ...``, e.g. an import cycle).
"""

from __future__ import annotations

import ast
import io
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: packages a function may import in its body: slow to import, or needed by a few functions only
HEAVY = {
    "torch",
    "transformers",
    "tokenizers",
    "huggingface_hub",
    "matplotlib",
    "scipy",
    "statsmodels",
    "sklearn",
    "patsy",
    "snakemake",
    "gensim",
    "wefe",
    "safetensors",
    "jsonschema",
    "jsonschema_rs",
    "playwright",
    "pingouin",
    "sentencepiece",
    "tqdm",
    "markupsafe",
    "jinja2",
    "pyarrow",
    "openpyxl",
}
#: where a function may import anything: the CLI loads a command's modules when it runs
LAZY = ("fmat/cli.py", "fmat/commands/")
PACKAGES = ("fmat", "fmat_replication")


def function_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import inside a function body of ``path`` that the rules above
    do not allow."""
    src = path.read_text(encoding="utf-8")
    lines = src.splitlines()
    found = []
    for node in ast.walk(ast.parse(src)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for sub in ast.walk(node):
            if not isinstance(sub, (ast.Import, ast.ImportFrom)):
                continue
            names = [("." * sub.level) + (sub.module or "")] if isinstance(sub, ast.ImportFrom) else [a.name for a in sub.names]
            if all(n.lstrip(".").split(".")[0] in HEAVY for n in names):
                continue
            if any("# here:" in line for line in lines[sub.lineno - 1 : sub.end_lineno]):
                continue
            found.append((sub.lineno, names[0]))
    return found


def _modules():
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if not rel.startswith(LAZY):
                yield rel


@pytest.mark.parametrize("rel", list(_modules()))
def test_imports_stand_at_the_top(rel):
    bad = function_imports(REPO / rel)
    assert not bad, (
        f"{rel}: imports inside functions (move them to the top, or say why on the line with "
        f"'# here: <reason>'): " + ", ".join(f"line {n}: {m}" for n, m in bad)
    )


def test_the_import_rule_can_fail(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(
        "import os\n\ndef f():\n    import pandas as pd\n    from .x import y\n    import torch\n"
        "    from fmat import io  # here: fmat.io imports this module\n    return pd, y, torch, io, os\n"
    )
    assert function_imports(f) == [(4, "pandas"), (5, ".x")]


# Size and complexity: a function a reader can hold in mind. Code lines are the lines of a
# function's body that hold code (its signature, docstring, comments and blank lines not counted);
# complexity is McCabe's, as ruff's C901 computes it.
MAX_LINES = 80  # no function longer
LONG_LINES = 60  # at most MAX_LONG functions longer than this
MAX_LONG = 8
MAX_COMPLEXITY = 15


def code_line_counts(path: Path) -> list[tuple[int, str, int]]:
    """(code lines, name, line) of every function and method in ``path``: the lines of its body
    (nested functions included) that hold a token other than a comment, not counting docstrings."""
    src = path.read_text(encoding="utf-8")
    tree = ast.parse(src)
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    blank = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    code = set()
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type not in blank:
            code.update(n for n in range(tok.start[0], tok.end[0] + 1) if n not in docstrings)
    return [
        (sum(1 for n in range(node.body[0].lineno, node.end_lineno + 1) if n in code), node.name, node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


def _all_functions() -> list[tuple[int, str]]:
    found = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            found += [(n, f"{rel}:{line} {name}") for n, name, line in code_line_counts(path)]
    return sorted(found, reverse=True)


def test_no_function_is_too_long():
    sizes = _all_functions()
    too_long = [f"{where} ({n} code lines)" for n, where in sizes if n > MAX_LINES]
    assert not too_long, f"functions over {MAX_LINES} code lines: split them into named steps: " + "; ".join(too_long)
    long = [f"{where} ({n})" for n, where in sizes if n > LONG_LINES]
    assert len(long) <= MAX_LONG, (
        f"{len(long)} functions over {LONG_LINES} code lines (at most {MAX_LONG}): split the longest: " + "; ".join(long)
    )


def test_the_size_count_can_fail(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(
        'def f(\n    a,\n):\n    """Doc.\n\n    more."""\n    # a comment\n\n    x = (a,\n         a)\n'
        "    def g():\n        return x\n    return g\n"
    )
    assert code_line_counts(f) == [(5, "f", 1), (1, "g", 11)]


def too_complex(paths, cwd: Path = REPO) -> list[str]:
    """ruff's C901 lines (``path:line:col: C901 `name` is too complex (n > 15)``) for ``paths``."""
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff, "ruff is a dev dependency (pip install -e '.[dev]')"
    done = subprocess.run(
        [ruff, "check", "--isolated", "--select", "C901", "--config", f"lint.mccabe.max-complexity={MAX_COMPLEXITY}"]
        + ["--output-format", "concise", "--no-cache", *map(str, paths)],
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    assert done.returncode in (0, 1), done.stderr
    return [line for line in done.stdout.splitlines() if "C901" in line]


def test_no_function_is_too_complex():
    bad = too_complex(PACKAGES)
    assert not bad, f"functions of McCabe complexity over {MAX_COMPLEXITY}: split them:\n" + "\n".join(bad)


def test_the_complexity_check_can_fail(tmp_path):
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(MAX_COMPLEXITY))
    (tmp_path / "m.py").write_text(f"def f(x):\n{branches}    return -1\n\n\ndef g(x):\n    return x\n")
    assert [line.split("`")[1] for line in too_complex(["m.py"], tmp_path)] == ["f"]


# Size of the whole: the lines of fmat/ and fmat_replication/ (their .py files, as `wc -l` counts
# them) may only fall. Issue 53 asks for fewer than GOAL_LINES; TODAYS_LINES is where the code
# stands. A change that makes it smaller lowers TODAYS_LINES; a feature's lines are taken from
# elsewhere, or the raise is argued in its commit.
GOAL_LINES = 22_860
TODAYS_LINES = 25_559


def package_lines(root: Path = REPO, packages=PACKAGES) -> int:
    """Lines of the .py files under ``root/<package>`` (``wc -l``: newline characters)."""
    return sum(path.read_bytes().count(b"\n") for package in packages for path in (root / package).rglob("*.py"))


def test_the_packages_do_not_grow():
    n = package_lines()
    assert n <= TODAYS_LINES, (
        f"fmat/ + fmat_replication/ hold {n:,} lines, {n - TODAYS_LINES:,} over today's {TODAYS_LINES:,} "
        f"(issue 53's goal: under {GOAL_LINES:,}): take the lines from elsewhere"
    )


def test_the_line_count_can_fail(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "m.py").write_text("x = 1\n\n# c\n")
    (tmp_path / "a" / "b" / "n.py").write_text('"""Doc."""\n')
    (tmp_path / "a" / "data.txt").write_text("not counted\n")
    assert package_lines(tmp_path, ("a",)) == 4
