"""The Python API names its arguments (issue 55): a wrong type or value given to
``fmat.run_study``, ``fmat.run``, ``fmat.query``, ``fmat.summary`` or ``fmat.power.power_table``
is an InputError whose ``where`` and message name the parameter, before any model loads or any
world is drawn (``run_study(study=123)``, ``models=42``, ``threads='x'`` raised pathlib's or
``int()``'s bare TypeError/ValueError). Hypothesis draws the wrong values; the models named
(``a``, ``b``) do not exist, so a value that slipped through would end in a ModelError, not an
InputError naming the parameter."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fmat
from fmat import arguments
from fmat import power as fpower
from fmat.errors import InputError
from fmat.plant import load_world

REPO = Path(__file__).resolve().parents[1]
X1 = REPO / "config" / "studies" / "X1.yaml"
QUERIES = fmat.query("The [MASK] is a {TARGET}.", MASK={"Male": ["man"], "Female": ["woman"]}, TARGET={"Job": ["nurse", "pilot"]})
SCORES = QUERIES.assign(model="m", prob=[0.2, 0.4, 0.3, 0.1])
STUDY = fmat.load_study(X1)
PLANT = load_world(REPO / "config" / "world.yaml").plant("X1")

# wrong values, by what the parameter takes
ints = st.integers(-(10**12), 10**12)
floats = st.floats(allow_nan=True, allow_infinity=True)
texts = st.text(max_size=12)
lists = st.lists(ints, min_size=1, max_size=3)
dicts = st.dictionaries(st.text(min_size=1, max_size=5), ints, min_size=1, max_size=2)
things = st.sampled_from([object(), b"bytes", 1j, {1, 2}])
NOT_PATH = st.one_of(ints, floats, st.booleans(), lists, dicts, things, st.just(""))
NOT_FLAG = st.one_of(ints, floats, texts, lists, dicts, st.none(), things)
NOT_COUNT = st.one_of(texts, floats, st.booleans(), lists, dicts, things, st.integers(-(10**6), 0))  # counts from 1
NOT_TEXT = st.one_of(ints, floats, st.booleans(), lists, dicts, things)
NOT_MODELS = st.one_of(
    ints, floats, st.booleans(), st.none(), things, st.lists(st.one_of(ints, floats, st.none()), min_size=1, max_size=3)
)
NOT_TABLE = st.one_of(ints, floats, texts, lists, dicts, st.none(), things)
NOT_FUNCTION = st.one_of(ints, floats, texts, lists, dicts, st.booleans())
NOT_DEVICE = st.one_of(floats, st.booleans(), lists, dicts, things)

RUN_STUDY = {
    "study": st.one_of(NOT_PATH, st.none()),
    "models": NOT_MODELS,
    "out": NOT_PATH,
    "resume": NOT_FLAG,
    "report": NOT_FLAG,
    "force": NOT_FLAG,
    "progress": NOT_FLAG,
    "criteria_dir": NOT_PATH,
    "format": NOT_TEXT,
    "device": NOT_DEVICE,
    "batch_size": NOT_COUNT,
    "max_tokens": NOT_COUNT,
    "threads": NOT_COUNT,
    "go_on": NOT_TEXT,
    "echo": NOT_FUNCTION,
}
RUN = {
    "models": NOT_MODELS,
    "data": NOT_TABLE,
    "device": NOT_DEVICE,
    "batch_size": NOT_COUNT,
    "max_tokens": NOT_COUNT,
    "threads": NOT_COUNT,
    "add_tokens": NOT_FLAG,
    "na_out": NOT_FLAG,
    "progress": NOT_FLAG,
    "dtype": st.one_of(NOT_TEXT, st.sampled_from(["float64", "int8", ""])),
    "method": st.one_of(NOT_TEXT, st.sampled_from(["FMAT", "lpb", ""])),
    "word_rule": st.one_of(NOT_TEXT, st.sampled_from(["tokeniser", ""])),
    "pattern_special": st.one_of(ints, floats, texts, lists, st.booleans()),
    "weight_decay": st.one_of(texts, st.booleans(), lists, st.floats(max_value=0), st.just(float("nan")), st.just(float("inf"))),
    "cache_dir": NOT_PATH,
    "lock_path": NOT_PATH,
}
QUERY = {
    "query": st.one_of(
        ints, floats, st.booleans(), dicts, st.none(), st.lists(st.one_of(ints, st.none()), min_size=1, max_size=2)
    ),
    "MASK": st.one_of(ints, floats, st.booleans(), texts, lists, st.none()),
    "TARGET": st.one_of(ints, floats, st.booleans(), texts, lists),
    "ATTRIB": st.one_of(ints, floats, st.booleans(), texts, lists),
    "where": NOT_TEXT,
}
SUMMARY = {"scores": NOT_TABLE, "mask_pair": NOT_FLAG, "target_pair": NOT_FLAG, "attrib_pair": NOT_FLAG}
POWER = {
    "study": st.one_of(NOT_TABLE, st.just(SCORES)),
    "plant": st.one_of(NOT_TABLE, st.just(STUDY)),
    "models": st.one_of(
        ints,
        floats,
        texts,
        dicts,
        st.none(),
        things,
        st.just([]),
        st.lists(st.one_of(ints.filter(lambda n: n < 2), floats, texts), min_size=1, max_size=3),
    ),
    "items": st.one_of(ints, floats, texts, dicts, st.lists(st.one_of(st.integers(max_value=1), floats, texts), min_size=1)),
    "worlds": NOT_COUNT,
    "others": st.one_of(texts, st.booleans(), lists, st.floats().filter(lambda x: not 0 <= x < 1)),
    "seed": st.one_of(texts, floats, st.booleans(), lists, st.integers(max_value=-1), st.integers(min_value=2**32)),
    "alpha": st.one_of(texts, st.booleans(), lists, st.floats().filter(lambda x: not 0 < x < 1)),
    "criteria": st.one_of(ints, floats, texts, lists, st.booleans()),
    "progress": NOT_FUNCTION,
    "jobs": NOT_COUNT,
}


def _call_run_study(**kw):
    args = {"study": X1, "models": ["a", "b"], **kw}
    return fmat.run_study(args.pop("study"), args.pop("models"), **args)


def _call_run(**kw):
    args = {"models": ["a", "b"], "data": QUERIES, "progress": False, **kw}
    return fmat.run(args.pop("models"), args.pop("data"), **args)


def _call_query(**kw):
    args = {
        "query": "The [MASK] is {TARGET}.",
        "MASK": {"Male": ["man"], "Female": ["woman"]},
        "TARGET": {"Job": ["nurse"]},
        **kw,
    }
    return fmat.query(args.pop("query"), **args)


def _call_summary(**kw):
    args = {"scores": SCORES, **kw}
    return fmat.summary(args.pop("scores"), **args)


def _call_power(**kw):
    args = {"study": STUDY, "plant": PLANT, "models": [3], "worlds": 1, "jobs": 1, **kw}
    return fpower.power_table(args.pop("study"), args.pop("plant"), **args)


CASES = [
    (call, name, strategy)
    for call, spec in (
        (_call_run_study, RUN_STUDY),
        (_call_run, RUN),
        (_call_query, QUERY),
        (_call_summary, SUMMARY),
        (_call_power, POWER),
    )
    for name, strategy in spec.items()
]


@pytest.mark.parametrize("call, name, strategy", CASES, ids=[f"{c.__name__[6:]}-{n}" for c, n, _ in CASES])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_wrong_argument_is_an_input_error_naming_the_parameter(call, name, strategy, data):
    value = data.draw(strategy, label=name)
    with pytest.raises(InputError) as err:
        call(**{name: value})
    assert err.value.where == name or str(err.value.where).startswith((f"{name}[", f"{name}.")), (name, value, str(err.value))
    assert name in err.value.message and err.value.fix, (name, value, str(err.value))


def test_the_issues_three_calls_name_their_parameter():
    """The three calls of the issue, word for word."""
    with pytest.raises(InputError, match=r"^study: study must be a path \(text or a pathlib.Path\), not the integer 123"):
        fmat.run_study(study=123, models=["a"])
    with pytest.raises(InputError, match="^models: models must be a model id or folder.*not the integer 42"):
        fmat.run_study(study=X1, models=42)
    with pytest.raises(InputError, match="^threads: threads must be a whole number of 1 or more, or None, not the text 'x'"):
        fmat.run_study(study=X1, models=["a"], threads="x")


def test_right_arguments_pass_the_checks():
    """The checkers return what the functions use, and take what the API documents."""
    import numpy as np

    assert arguments.path("out", Path("o")) == Path("o") and arguments.path("out", None, optional=True) is None
    assert arguments.whole("seed", np.int64(3), minimum=0) == 3 and arguments.flag("resume", np.bool_(True)) is True
    assert arguments.number("alpha", 0.05, low=0, high=1, low_open=True, high_open=True) == 0.05
    assert arguments.models("models", {"mine": Path("m")}) == {"mine": Path("m")}
    assert arguments.models("models", (m for m in ["a", "b"])) == ["a", "b"]
    assert arguments.wholes("models", np.array([3, 6])) == [3, 6]
    assert arguments.device("device", "cuda:1") == "cuda:1" and arguments.device("device", 0) == 0
    assert len(fmat.summary(SCORES, target_pair=False)) == 2
