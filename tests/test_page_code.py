"""Issue 41: the page code stays small and study-blind. No function in fmat_replication/pages/
is over 60 code lines (docstring and comments aside), no study id is written in it (what
differs between studies comes from the study file, its analysis or its tables), and no page
module writes HTML in f-strings (the templates do)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PAGES = Path(__file__).resolve().parents[1] / "fmat_replication" / "pages"
#: a study id as a string literal: the paper's (1A ... 4D) and the examples' (N0, X1, X2)
STUDY_ID = re.compile(r"""^([1-4][A-D]|N0|X[0-9])$""")


def _functions():
    for path in sorted(PAGES.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = node.body
                has_doc = isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant)
                start = body[1].lineno if has_doc and len(body) > 1 else body[0].lineno
                code = [ln for ln in lines[start - 1 : node.end_lineno] if ln.strip() and not ln.strip().startswith("#")]
                yield f"{path.name}:{node.name}", len(code)


def test_no_page_function_is_over_60_code_lines():
    sizes = dict(_functions())
    assert len(sizes) > 50  # the walk found the functions
    assert {name: n for name, n in sizes.items() if n > 60} == {}


def test_no_study_id_is_written_in_page_code():
    found = []
    for path in sorted(PAGES.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and STUDY_ID.match(node.value):
                found.append(f"{path.name}:{node.lineno}: {node.value!r}")
    assert found == []
    assert STUDY_ID.match("3A") and not STUDY_ID.match("Table 3A")  # the rule itself


def test_no_page_module_writes_tags_in_f_strings():
    tag = re.compile(r"<(h[1-6]|p|div|ul|li|a|table|tr|td|th|span|img|figure)\b")
    found = []
    for path in sorted(PAGES.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr):
                text = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
                if tag.search(text):
                    found.append(f"{path.name}:{node.lineno}")
    assert found == []
