"""Rules of the code that a reviewer would otherwise check by hand.

Imports: a module's imports stand at its top, where a reader looks for them. A function imports
inside its body only (a) a heavy package (torch, transformers, matplotlib, scipy...: importing
``fmat`` or running ``fmat --help`` does not load them), (b) in the CLI's command modules, which
load the library's modules when a command runs, or (c) where a comment on the line says why
(``# here: ...``, e.g. an import cycle).
"""

from __future__ import annotations

import ast
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
    "ipykernel",
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
