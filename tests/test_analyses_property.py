"""Property test (issue 54): every study file that passes the study-file check runs through its
analysis on scores without an unexpected error.

For every registered analysis family (``fmat.analyses.available()``) hypothesis draws a valid
study file of that family's design: one or several templates, single words or several per
group, contrasts in order, reversed or of one group twice, relations with their verbs reversed,
and words a model cannot score (out of vocabulary: ``prob`` NaN, as ``fmat.run`` with
``na_out``) for some or all models, which leaves cells empty. Each file is read with
``load_study`` (the checks of ``fmat study --check``); one that passes is scored by the world's
own probabilities (``fmat.plant.planted_scores``: no model, milliseconds) and run through the
pipeline's analysis stage. The outcome must be a result (the results shape) or an InputError
that names the file, the field and the fix: never another exception.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fmat import analyses, plant
from fmat.errors import InputError
from fmat.results import RESULT_COLUMNS
from fmat.stages import lpr_table
from fmat.study import load_study

POS = ["like", "adore", "notice", "love", "praise"]
NEG = ["dislike", "loathe", "ignore", "hate", "blame"]
NOUNS = ["cats", "dogs", "birds", "fish", "frogs", "bees", "ants", "owls", "bats", "rats", "cows", "pigs"]
TRAITS = ["kind", "warm", "calm", "rude", "cold", "mean", "fair", "vain", "wise", "dull"]
TEMPLATES_T = ["I [MASK] {TARGET}.", "Most people [MASK] {TARGET}.", "We [MASK] {TARGET}."]
#: the reliability stage is not under test here: no rows of its own
NO_RELIABILITY = pd.DataFrame(columns=RESULT_COLUMNS)
TEMPLATES_A = ["The [MASK] is {ATTRIB}.", "A [MASK] is {ATTRIB}.", "That [MASK] is {ATTRIB}."]


def _order(draw, pair):
    """A contrast as written: in order, reversed, or one group twice."""
    kind = draw(st.sampled_from(["ok", "ok", "reversed", "twice"]))
    return {"ok": list(pair), "reversed": list(pair[::-1]), "twice": [pair[0], pair[0]]}[kind]


@st.composite
def attitude(draw):
    n_rel = draw(st.integers(1, 2))
    n_words = draw(st.integers(1, 3))
    n_cat = draw(st.integers(2, 3))
    templates = TEMPLATES_T[: draw(st.integers(1, 3))]
    cats = {f"C{k}": NOUNS[k * n_words : (k + 1) * n_words] for k in range(n_cat)}
    mask = {"Positive": POS[:n_rel], "Negative": NEG[:n_rel]}
    relations = {f"r{k}": [POS[k], NEG[k]] if draw(st.booleans()) or k else [NEG[k], POS[k]] for k in range(n_rel)}
    data = {
        "queries": [{"query": t, "MASK": mask, "TARGET": cats} for t in templates],
        "lpr": {"mask_pair": True, "target_pair": False},
        "analysis": {
            "name": "attitude_weat",
            "options": {
                "target_contrast": _order(draw, ["C0", "C1"]),
                "relations": relations,
                "perceivers": {f"p{k}": t for k, t in enumerate(templates)},
            },
        },
    }
    return data, {}, POS[:n_rel] + NEG[:n_rel]


@st.composite
def stereotype_pairs(draw):
    n_words = draw(st.integers(1, 2))
    n_pairs = draw(st.integers(1, 3))
    templates = TEMPLATES_A[: draw(st.integers(1, 2))]
    mask = {"Male": NOUNS[:n_words], "Female": NOUNS[4 : 4 + n_words]}
    attrib = {"Warm": TRAITS[:n_pairs], "Cold": TRAITS[5 : 5 + n_pairs]}
    options = {"mask_contrast": _order(draw, ["Male", "Female"])}
    if n_words > 1 and draw(st.booleans()):
        options["mask_wordings"] = [[NOUNS[k], NOUNS[4 + k]] for k in range(n_words)]
    if draw(st.booleans()):
        options["attrib_contrast"] = _order(draw, ["Warm", "Cold"])
    data = {
        "queries": [{"query": t, "MASK": mask, "ATTRIB": attrib} for t in templates],
        "lpr": {"mask_pair": False, "attrib_pair": True},
        "analysis": {"name": "stereotype_pairs", "options": options},
    }
    return data, {}, mask["Male"] + mask["Female"]


@st.composite
def stereotype_domains(draw):
    n_words = draw(st.integers(1, 2))
    n_items = draw(st.integers(1, 2))
    n_forms = draw(st.integers(1, 2))
    groups = {f"G{k}": TRAITS[k * n_items : (k + 1) * n_items] for k in range(2 * n_forms)}
    mask = {"Male": NOUNS[:n_words], "Female": NOUNS[4 : 4 + n_words]}
    forms = {f"f{k}": _order(draw, [f"G{2 * k}", f"G{2 * k + 1}"]) for k in range(n_forms)}
    data = {
        "queries": [{"query": "Most [MASK] are {ATTRIB}.", "MASK": mask, "ATTRIB": groups}],
        "lpr": {"mask_pair": False, "attrib_pair": False},
        "analysis": {
            "name": "stereotype_domains",
            "options": {"mask_contrast": _order(draw, ["Male", "Female"]), "forms": forms},
        },
    }
    return data, {}, mask["Male"] + mask["Female"]


@st.composite
def change(draw):
    n_years = draw(st.integers(2, 12))
    years = list(range(1900, 1900 + n_years))
    templates = ["Most {TARGET} worked in [MASK].", "Many {TARGET} lived in [MASK]."][: draw(st.integers(1, 2))]
    options = {"average_over": ["query"]}
    if draw(st.booleans()):
        options["century_contrasts"] = [_order(draw, [years[-1], years[0]])]
    data = {
        "queries": [
            {"query": t, "MASK": {"Year": {"range": [years[0], years[-1]]}}, "TARGET": {"Male": ["men"], "Female": ["women"]}}
            for t in templates
        ],
        "lpr": {"mask_pair": False, "target_pair": True},
        "reliability": {"item": "query", "by": ["TARGET"], "lpr": {"mask_pair": False, "target_pair": False}},
        "analysis": {"name": "change_over_time", "options": options},
    }
    return data, {}, [str(y) for y in years]


def _factual(name):
    @st.composite
    def draw_factual(draw):
        n_items = draw(st.integers(3, 8))
        items = NOUNS[:n_items]
        templates = ["The [MASK] likes {TARGET}.", "A [MASK] keeps {TARGET}."][: draw(st.integers(1, 2))]
        rng = np.random.default_rng(draw(st.integers(0, 99)))
        table = pd.DataFrame({"item": items, "pct_male": rng.uniform(5, 95, n_items), "wefat_male": rng.normal(size=n_items)})
        options = {"criterion": {"table": "crit", "item": "item", "column": "pct_male"}}
        if draw(st.booleans()):
            options["wefat"] = {"table": "crit", "item": "item", "column": "wefat_male"}
        if name == "factual_names":
            options["mixed_models"] = draw(st.booleans())
        data = {
            "queries": [
                {"query": t, "MASK": {"Male": ["man"], "Female": ["woman"]}, "TARGET": {"Item": items}} for t in templates
            ],
            "lpr": {"mask_pair": True, "target_pair": False},
            "reliability": {"item": "query", "by": ["model"]},
            "analysis": {"name": name, "options": options},
        }
        return data, {"crit": table}, ["man", "woman"]

    return draw_factual()


DESIGNS = {
    "attitude_weat": attitude(),
    "stereotype_pairs": stereotype_pairs(),
    "stereotype_domains": stereotype_domains(),
    "change_over_time": change(),
    "factual_wefat": _factual("factual_wefat"),
    "factual_names": _factual("factual_names"),
}

STUDIES = Path(__file__).resolve().parents[1] / "config" / "studies"


def _example_design(name: str):
    """A family without a strategy above is drawn from its example study (the file under
    config/studies/ that names it): its design as written, its [MASK] words the ones a model
    may not score. A strategy above varies the design too."""
    for path in sorted(STUDIES.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if (data.get("analysis") or {}).get("name") == name:
            groups = [g for q in data.get("queries") or [] for g in dict(q.get("MASK") or {}).values()]
            words = sorted({str(w) for g in groups if isinstance(g, list) for w in g})
            return st.just(({k: v for k, v in data.items() if k not in ("id", "title")}, {}, words))
    return None


DESIGNS.update({n: d for n in analyses.available() if n not in DESIGNS and (d := _example_design(n)) is not None})


def test_every_registered_family_is_drawn():
    """A family registered without a design here (a strategy above, or its example study under
    config/studies/) would go untested."""
    assert sorted(DESIGNS) == analyses.available()


def _named(err: InputError, path) -> None:
    """The error names the file, the field and the fix."""
    where = str(err.where or "")
    assert str(path) in where, f"no file in {err}"
    assert len(where) > len(str(path)) + 2, f"no field in {err}"
    assert err.fix, f"no fix in {err}"


@pytest.mark.parametrize("family", sorted(DESIGNS))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_a_file_that_passes_the_check_runs_or_says_what_to_fix(family, data, tmp_path_factory):
    body, criteria, options = data.draw(DESIGNS[family])
    folder = tmp_path_factory.mktemp("s")
    path = folder / "P.yaml"
    path.write_text(yaml.safe_dump({"id": "P", "title": f"a {family} study", **body}, sort_keys=False), encoding="utf-8")
    try:
        study = load_study(path)
    except InputError as err:  # refused before any model loads
        _named(err, path)
        return
    models = [f"m{k}" for k in range(data.draw(st.integers(2, 4), label="models"))]
    scores = plant.planted_scores(study, plant.Plant(study="P"), models, criteria)
    oov = data.draw(st.lists(st.sampled_from(options), unique=True, max_size=len(options)), label="oov words")
    some = data.draw(st.lists(st.sampled_from(models), min_size=1, unique=True), label="models without them")
    gone = scores["M_word"].astype(str).isin(oov).to_numpy() & scores["model"].astype(str).isin(some).to_numpy()
    scores.loc[gone, ["prob", "logp"]] = np.nan
    scores.loc[gone, "oov"] = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lpr = lpr_table(study, scores)
            stats, figures, status = analyses.analysis_stage(study, scores, lpr, NO_RELIABILITY, criteria, sid="P")
    except InputError as err:  # the scores cannot feed it (every word of a contrast unscorable): said, with the fix
        _named(err, path)
        return
    assert list(stats.columns) == RESULT_COLUMNS and status["implemented"] and status["run"]
    assert set(stats["study"].astype(str)) <= {"P"}
