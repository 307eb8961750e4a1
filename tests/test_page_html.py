"""The report pages' HTML goes through one templating path (fmat_replication.pages.html: Jinja2,
autoescaped): every converted function escapes a hostile word in text and in attributes, and
no module of fmat_replication/pages builds table markup in a string literal."""

from __future__ import annotations

import ast
import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from fmat.results import RESULT_COLUMNS, results_frame
from fmat_replication.compare import compare
from fmat_replication.pages import cards, design, figures, tables
from fmat_replication.pages.html import TEMPLATES, environment, render
from fmat_replication.paper import load_paper_results

PAGES = Path(__file__).resolve().parents[1] / "fmat_replication" / "pages"
HOSTILE = "<img src=x onerror=alert(1)>"


class _Parsed(HTMLParser):
    """The elements (tag, attributes) and the text of an HTML fragment, entities decoded."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def assert_escaped(page: str, *, text: bool = True, attribute: str | None = None) -> _Parsed:
    """``HOSTILE`` in ``page`` is text, never an element: escaped (once) in the text when
    ``text``, and the whole value of some element's ``attribute`` when given."""
    assert HOSTILE not in page and "<img" not in page
    parsed = _Parsed(page)
    assert "img" not in [tag for tag, _ in parsed.elements]
    if text:
        assert "&lt;img src=x onerror=alert(1)&gt;" in page
        assert HOSTILE in "".join(parsed.text)  # escaped once, not twice
    if attribute:
        values = [a.get(attribute) or "" for _, a in parsed.elements]
        assert any(HOSTILE in v for v in values), (attribute, values)
    return parsed


@pytest.fixture(scope="module")
def paper():
    return load_paper_results()


@pytest.fixture(scope="module")
def rep(paper):
    """A replication table (Studies 1A and 2A, nothing computed) whose reasons and some of whose
    verdicts are the hostile word."""
    out = compare(paper[paper["study"].isin(["1A", "2A"])], pd.DataFrame(columns=RESULT_COLUMNS))
    out["reason"] = f"because {HOSTILE}"
    return out


# ----------------------------------------------------------------------------- escaping


def test_design_html_escapes():
    def page(raw: dict) -> str:
        return render("design.html.j2", design=design.design_data(raw))

    query = {"query": f"The [MASK] {HOSTILE}.", "MASK": {"male": [HOSTILE, "he"], "female": ["she", "her"]}, "TARGET": [HOSTILE]}
    raw = {"queries": [query], "analysis": {"name": HOSTILE, "options": {HOSTILE: HOSTILE}}}
    assert_escaped(page(raw))
    assert_escaped(render("design.html.j2", design=design.design_data(raw), klass=HOSTILE), attribute="class")
    # every value the template words: a group's name, a range, a criterion table and its column,
    # the LPR's groups, the reliability's item and columns, the scoring method, an option's key
    for spec in (
        {HOSTILE: ["a"]},
        {"range": [HOSTILE, 2]},
        {"range": HOSTILE},
        {"criterion": HOSTILE},
        {"criterion": "t", "column": HOSTILE},
    ):
        assert_escaped(page({"queries": [{"query": "q", "TARGET": spec}]}))
    assert_escaped(page({"queries": [{"query": "q", "MASK": {HOSTILE: ["a"], "b": ["c"]}}]}))  # the LPR's [MASK] groups
    assert_escaped(page({"queries": [{"query": "q", "ATTRIB": {HOSTILE: ["a"]}}], "lpr": {"attrib_pair": True}}))
    assert_escaped(page({"reliability": {"item": HOSTILE}}))
    assert_escaped(page({"reliability": {"item": "query", "by": [HOSTILE]}}))
    assert_escaped(page({"score": {"method": HOSTILE}}))
    for value in ({HOSTILE: 1}, {"k": [HOSTILE, "b"]}, [[HOSTILE, "b"]], [HOSTILE]):
        assert_escaped(page({"analysis": {"name": "x", "options": {"o": value}}}))


def test_cards_html_escapes():
    card = {
        "model": HOSTILE,
        "architecture": HOSTILE,
        "model_type": "bert",
        "parameters": 1234567,
        "vocabulary": 3,
        "source": "hub",
        "revision": HOSTILE,
        "commit": "a" * 40,
        "created": HOSTILE,
        "scoring": HOSTILE,
        "probes": [{"query": f"a [MASK] {HOSTILE}", "fills": [{"token_str": HOSTILE, "score": 0.5}]}],
    }
    page = render("model_cards.html.j2", cards=cards.card_texts([card]))
    parsed = assert_escaped(page)
    assert "".join(parsed.text).count(HOSTILE) == 7 and "1,234,567" in page
    assert [a.get("class") for tag, a in parsed.elements if tag == "div"] == ["model-cards", "model-card"]
    assert "No model cards" in render("model_cards.html.j2", cards=[])


def test_html_table_escapes_headers_cells_and_class():
    df = pd.DataFrame({HOSTILE: ["x"], "word": [HOSTILE], "p": [0.0004]})
    page = figures.html_table(df, cls=HOSTILE)
    assert_escaped(page, attribute="class")
    assert "<td>&lt; .001</td>" in page


def test_table_html_escapes_labels_headers_and_titles(paper, rep):
    t = tables.PaperTable(
        title=HOSTILE,
        caption=HOSTILE,
        columns=[HOSTILE],
        rows=[(HOSTILE, [("alpha", "all", "all")])],
        groups=[(HOSTILE, 1)],
        note=HOSTILE,
    )
    parsed = assert_escaped(render("paper_table.html.j2", t=tables.table_cells(t, rep, study="1A")), attribute="title")
    assert "".join(parsed.text).count(HOSTILE) == 6  # title, caption, group, column, label, note
    page = render("paper_table.html.j2", t=tables.table_cells(tables.table_attitude(["2A"], {"2A": HOSTILE}), rep))
    assert_escaped(page, attribute="title")
    assert re.search(
        r"<td class='cell v-nc' title='[^'<>]*&lt;img src=x onerror=alert\(1\)&gt;'>"
        r"<span class='paper'>",
        page,
    )


def test_text_rows_html_escapes_text_and_title(paper, rep):
    rows = tables.other_rows(rep[rep["study"] == "1A"], [tables.paper_table("1A", paper)]).copy()
    rows["condition"] = HOSTILE
    rows.loc[rows.index[0], "verdict"] = HOSTILE
    assert_escaped(render("text_numbers.html.j2", rows=tables.text_rows(rows)), attribute="title")


def test_headlines_and_verdict_box_escape(rep):
    hostile = rep.copy()
    hostile["verdict"] = HOSTILE
    assert_escaped(render("headlines.html.j2", rows=tables.headline_rows(["1A"], hostile)), attribute="title")
    box = render("verdict_box.html.j2", v=tables.verdict_box("1A", hostile, rule_doc=HOSTILE, rule_href=HOSTILE))
    assert_escaped(box, attribute="href")
    assert "rule-link" in box


def test_csv_link_escapes():
    link = render("csv_link.html.j2", d=tables.csv_download(pd.DataFrame({"a": [1]}), HOSTILE), label=HOSTILE)
    assert_escaped(link, attribute="download")
    assert re.search(r"href='data:text/csv;base64,[A-Za-z0-9+/=]+'", link)


def test_ours_only_cells_still_show_numbers(paper):
    stats = results_frame([{"study": "1A", "statistic": "alpha", "condition": "all", "model": HOSTILE, "value": 0.9}])
    t = tables.table_criterion("1A", paper, models=[HOSTILE])
    page = render("paper_table.html.j2", t=tables.table_cells(t, tables.ours_only(stats), study="1A", legend=False))
    assert_escaped(page)
    assert "<td class='cell v-ours'><span class='ours'>0.900</span></td>" in page


# ----------------------------------------------------------------------------- one templating path


def test_the_environment_autoescapes_every_template():
    """One environment for every page (issue 53): the library's (fmat.html), the replication's
    templates first on its path, the library's after them, its formatters as filters."""
    import fmat.html
    from fmat import formatting

    env = environment()
    assert env is fmat.html.environment(str(TEMPLATES))
    assert env.autoescape is True and env.loader.searchpath == [str(TEMPLATES), str(fmat.html.TEMPLATES)]
    assert env.filters["p"] is formatting.p_cell and env.filters["num"] is formatting.number
    names = env.list_templates()
    assert {"paper_table.html.j2", "study_page/page.html.j2", "macros.html.j2"} <= set(names)
    assert all(n.endswith(".html.j2") for n in names)
    for name in names:
        env.get_template(name)  # each one parses
    assert render("csv_link.html.j2", d={"filename": "'", "data": "", "rows": 0}, label="<") == (
        "<a class='csv-download' download='&#39;' href='data:text/csv;base64,'>&lt;</a>"
    )


def _blocks(env, name: str) -> set[str]:
    """The names of the blocks a template defines (nested ones included)."""
    import jinja2.nodes

    source = env.loader.get_source(env, name)[0]
    return {b.name for b in env.parse(source).find_all(jinja2.nodes.Block)}


def test_the_replications_study_page_changes_only_the_smaller_blocks_of_the_librarys():
    """One study page (issue 53): the replication's study.html.j2 extends the library's page and
    keeps its sections' headings and words: it overrides only the smaller blocks of the sections
    it changes (concept not at all), and the concept section's words and verdicts are written
    once, in the library's templates."""
    env = environment()
    base, page = _blocks(env, "study_page/page.html.j2"), _blocks(env, "study.html.j2")
    assert page <= base, f"blocks the library's page does not have: {page - base}"
    sections = {"intro", "effect", "concept", "figures", "reliability", "design", "models"}
    assert not page & sections, f"sections the replication rewrites whole: {page & sections}"
    assert {"verdict", "paper_columns", "effect_figure", "reliability_tables", "design_body", "study_heading"} <= page
    assert not (TEMPLATES / "concept_table.html.j2").exists()  # no second copy of the concept table
    for path in TEMPLATES.glob("*.html.j2"):
        text = path.read_text(encoding="utf-8")
        assert "does not hold when the words are a sample" not in text, path.name  # macros.html.j2 words the verdicts
        assert "treats the models as the only random factor" not in text, path.name


TABLE_MARKUP = re.compile(r"<\s*/?\s*(table|tr|td|th)\b", re.IGNORECASE)


def _literals(tree: ast.AST):
    """Every string constant of a module (docstrings and f-string parts included), with its line."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def test_no_module_of_the_pages_writes_table_markup():
    """Table markup lives in templates/*.html.j2 only: no string literal (f-string parts
    included) of a module under fmat_replication/pages holds <table>, <tr>, <td> or <th>."""
    modules = sorted(PAGES.rglob("*.py"))
    assert {"tables.py", "design.py", "cards.py", "figures.py", "html.py"} <= {p.name for p in modules}
    found = [
        f"{p.relative_to(PAGES)}:{line}: {text.strip()[:80]!r}"
        for p in modules
        for line, text in _literals(ast.parse(p.read_text(encoding="utf-8")))
        if TABLE_MARKUP.search(text)
    ]
    assert not found, "table markup built in Python (put it in a template):\n" + "\n".join(found)
    sample = ast.parse('row = f"<tr><td>{value}</td></tr>"')  # the check would see one
    assert [line for line, text in _literals(sample) if TABLE_MARKUP.search(text)] == [1, 1]  # both parts
