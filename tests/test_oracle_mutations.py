"""The exact check of tests/test_oracle.py catches one-line mistakes in the analyses and stages.

Each case rewrites one line of a module's source (a flipped operand, a forgotten / sigma, two
pairs swapped, a criterion joined on the wrong key, a wrong df, an average over the wrong level,
a mislabelled group in the query design...), runs the mutated module in place of the real one
(its functions rebound wherever the workflow reaches them, its analyses re-registered) and asks
that the workflow-against-oracle check of one study finds a difference. The mutations that the
check cannot catch, because they change no number it checks, are listed in ``SURVIVORS`` with
the reason (docs/planting.md, "Mutations")."""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

import pytest
from oracle_check import problems, workflow_vs_oracle

from fmat import analyses

#: (id, module, the line as written, the mutated line, a study that must catch it)
MUTATIONS = [
    (
        "3A: y without / sigma",
        "fmat.analyses.stereotype",
        # the paper's cells (stereotype_pairs), not the crossed variant's line of the same words
        '"pair": lpr["A_word"].astype(str).map(pairs).to_numpy(),\n'
        '            "y": lpr["LPR"].to_numpy(dtype=float) / float(sigma),',
        '"pair": lpr["A_word"].astype(str).map(pairs).to_numpy(),\n            "y": lpr["LPR"].to_numpy(dtype=float),',
        "3A",
    ),
    (
        "3A: d = second minus first group",
        "fmat.analyses.stereotype",
        "a, b = {factor: groups[0]}, {factor: groups[1]}",
        "a, b = {factor: groups[1]}, {factor: groups[0]}",
        "3A",
    ),
    (
        "3D: per-model d flipped",
        "fmat.analyses.stereotype",
        "diff = (m[groups[0]] - m[groups[1]]).dropna()",
        "diff = (m[groups[1]] - m[groups[0]]).dropna()",
        "3D",
    ),
    (
        "3A: pairs 1 and 2 swapped",
        "fmat.analyses.stereotype",
        'order = [f"{x} - {y}" for x, y in zip(*sides)]',
        'order = [f"{x} - {y}" for x, y in zip(*sides)]; order[:2] = order[1::-1]',
        "3A",
    ),
    (
        "3B: domain means without / sigma",
        "fmat.analyses.stereotype",
        'y = lpr.assign(y=lpr["LPR"].to_numpy(dtype=float) / float(sigma))',
        'y = lpr.assign(y=lpr["LPR"].to_numpy(dtype=float))',
        "3B",
    ),
    (
        "3C: reference minus focal domain",
        "fmat.analyses.stereotype",
        'diff = (means[pair[0]] - means[pair[1]]).rename("y").reset_index()',
        'diff = (means[pair[1]] - means[pair[0]]).rename("y").reset_index()',
        "3C",
    ),
    (
        "2A: SD with ddof 0",
        "fmat.analyses.attitude",
        "sd = g.transform(lambda s: s.std(ddof=1))",
        "sd = g.transform(lambda s: s.std(ddof=0))",
        "2A",
    ),
    (
        "2A: standardized over the wrong level (relations pooled)",
        "fmat.analyses.attitude",
        'standardize_within: Sequence[str] = ("model", "perceiver", "relation"),',
        'standardize_within: Sequence[str] = ("model", "perceiver"),',
        "2A",
    ),
    (
        "2B: societal minus personal",
        "fmat.analyses.attitude",
        # the paper's and the crossed contrasts' parts (attitude._parts), not per_model_d's line
        'p1, p2 = perceivers\n        parts.append((f"{p1}-{p2}", per[p1] - per[p2]))',
        'p1, p2 = perceivers\n        parts.append((f"{p1}-{p2}", per[p2] - per[p1]))',
        "2B",
    ),
    (
        "2D: average not divided by the perceivers",
        "fmat.analyses.attitude",
        'parts.append(("average", sum(per.values()) / len(per)))',
        'parts.append(("average", sum(per.values())))',
        "2D",
    ),
    (
        "2C: perceivers swapped",
        "fmat.analyses.attitude",
        "per = {str(q): str(name) for name, q in perceivers.items()}",
        "per = dict(zip([str(q) for q in perceivers.values()], reversed([str(n) for n in perceivers])))",
        "2C",
    ),
    (
        "4A: yearly d without / sigma",
        "fmat.analyses.change",
        'out["d"] = out["d"] / float(sigma)',
        'out["d"] = out["d"]',
        "4A",
    ),
    (
        "4B: century contrast second minus first",
        "fmat.analyses.change",
        'res = fit.compare(["century"], {"century": str(a)}, {"century": str(b)})',
        'res = fit.compare(["century"], {"century": str(b)}, {"century": str(a)})',
        "4B",
    ),
    (
        "4C: per-model slope per year, not per century",
        "fmat.analyses.change",
        'r = sps.linregress(g["year"].to_numpy(float) / year_scale, g["d"].to_numpy(float))',
        'r = sps.linregress(g["year"].to_numpy(float), g["d"].to_numpy(float))',
        "4C",
    ),
    (
        "4D: per-model slope df n - 1",
        "fmat.analyses.change",
        "df = len(g) - 2",
        "df = len(g) - 1",
        "4D",
    ),
    (
        "4A: LMM slope per decade",
        "fmat.analyses.change",
        'df = yearly.assign(time=yearly["year"] / float(year_scale))',
        'df = yearly.assign(time=yearly["year"] / 10.0)',
        "4A",
    ),
    (
        "1A: criterion joined on the phrase, not the item key",
        "fmat.analyses.factual",
        '"item": keyed.where(keyed.notna(), words).to_numpy(),',
        '"item": words.to_numpy(),',
        "1A",
    ),
    (
        "2A: LPR stage, second minus first group",
        "fmat.lpr",
        'out["LPR"] = m["LPR_1"].to_numpy(dtype=float) - m["LPR_2"].to_numpy(dtype=float)',
        'out["LPR"] = m["LPR_2"].to_numpy(dtype=float) - m["LPR_1"].to_numpy(dtype=float)',
        "2A",
    ),
    (
        "2A: query design, the second MASK group's words paired in reverse (caught by the reliability stage's check)",
        "fmat.design",
        "mask_rows = [(g, str(j + 1), w) for g, words in mask.items() for j, w in enumerate(words)]",
        "mask_rows = [(g, str(j + 1), w) for g, words in mask.items() for j, w in "
        "enumerate(words if g == list(mask)[0] else words[::-1])]",
        "2A",
    ),
    (
        "3A: query design, the second ATTRIB group's phrases paired in reverse",
        "fmat.design",
        'paired = [(g, f"{prefix}.{j + 1}", w) for g, words in groups.items() for j, w in enumerate(words)]',
        'paired = [(g, f"{prefix}.{j + 1}", w) for g, words in groups.items() '
        "for j, w in enumerate(words if g == list(groups)[0] else words[::-1])]",
        "3A",
    ),
    (
        "3A: query design, each MASK group's last word labelled with the other group",
        "fmat.design",
        "[q, mg, mj, mw, *extra]",
        "[q, mg if mw != mask[mg][-1] else [g for g in mask if g != mg][0], mj, mw, *extra]",
        "3A",
    ),
    (
        "2B: a contrast's p one-sided",
        "fmat.stats.mixed",
        '"p": float(2 * stats.t.sf(abs(t), df)),',
        '"p": float(stats.t.sf(abs(t), df)),',
        "2B",
    ),
    (
        "3A: nlme level-1 df one too many",
        "fmat.stats.mixed",
        "df_inner = n - G - p1",
        "df_inner = n - G - p1 + 1",
        "3A",
    ),
]

#: one-line mutations the check cannot catch, with the reason (kept here so that a change
#: that makes them catchable, or a new survivor, is seen)
SURVIVORS = [
    (
        "1A: z-scores with ddof 0",
        "fmat.analyses.factual",
        "sd = g.transform(lambda s: s.std(ddof=1)) if within else d[value].std(ddof=1)",
        "sd = g.transform(lambda s: s.std(ddof=0)) if within else d[value].std(ddof=1)",
        "1A",
        "equivalent: every model x template has the same items, so ddof rescales all z-scores "
        "alike and no r changes (only the figure's z values would)",
    ),
    (
        "3D: sequential F from the lower Cholesky factor instead of the upper",
        "fmat.stats.mixed",
        "c0 = np.linalg.cholesky(info).T @ self.beta",
        "c0 = np.linalg.cholesky(info) @ self.beta",
        "3D",
        "equivalent here: every design the oracle checks is balanced, so with sum-to-zero coding the "
        "information matrix is diagonal and its lower and upper factors agree; an unbalanced design "
        "(missing LPRs) would tell them apart: tests/test_stats_mixed.py checks anova against R",
    ),
]


def use_mutant(monkeypatch, module: str, old: str, new: str) -> None:
    """Run ``module`` with ``old`` replaced by ``new`` (exactly one occurrence): its functions
    and classes are rebound in every loaded fmat module that holds them, its analyses
    re-registered; monkeypatch undoes it all."""
    analyses.available()  # every analysis registered now: the registry copied below is complete
    original = importlib.import_module(module)
    path = Path(original.__file__)
    source = path.read_text(encoding="utf-8")
    assert source.count(old) == 1, f"{module}: the line to mutate is not there once: {old!r}"
    mutant = types.ModuleType(module)
    mutant.__file__, mutant.__package__ = str(path), original.__package__
    ours = {n: v for n, v in vars(original).items() if getattr(v, "__module__", None) == module}
    loaded = [m for name, m in list(sys.modules.items()) if name.startswith("fmat") and m is not None]
    if module.startswith("fmat.analyses."):
        kept = {k: v for k, v in analyses._REGISTRY.items() if v.__module__ != module}
        monkeypatch.setattr(analyses, "_REGISTRY", kept)
    monkeypatch.setitem(sys.modules, module, mutant)  # dataclasses look their module up
    exec(compile(source.replace(old, new), str(path), "exec"), mutant.__dict__)
    for mod in loaded:  # the original module among them: modules that hold it reach the mutant
        for attr, value in list(vars(mod).items()):
            for name, obj in ours.items():
                if value is obj and hasattr(mutant, name):
                    monkeypatch.setattr(mod, attr, getattr(mutant, name))


@pytest.mark.parametrize("case", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_a_one_line_mutation_is_caught(case, monkeypatch, tmp_path):
    _, module, old, new, sid = case
    use_mutant(monkeypatch, module, old, new)
    try:
        found = problems(*workflow_vs_oracle(sid, tmp_path))
    except Exception as err:  # a mutant that crashes a stage is caught too
        found = [f"{type(err).__name__}: {err}"]
    assert found, f"mutation {case[0]!r} survived: the exact check of study {sid} saw no difference"


@pytest.mark.parametrize("case", SURVIVORS, ids=[m[0] for m in SURVIVORS])
def test_the_listed_survivors_still_survive(case, monkeypatch, tmp_path):
    """A survivor is listed with its reason; if the check starts to catch it, move it up."""
    _, module, old, new, sid, _reason = case
    use_mutant(monkeypatch, module, old, new)
    assert not problems(*workflow_vs_oracle(sid, tmp_path))


def test_the_unmutated_code_passes_and_the_mutants_are_undone(tmp_path):
    """After the mutation tests (monkeypatch undone) the real modules are in place again."""
    assert analyses.get("stereotype_pairs").__module__ == "fmat.analyses.stereotype"
    assert sys.modules["fmat.lpr"].__file__.endswith("lpr.py")
    assert not problems(*workflow_vs_oracle("3A", tmp_path))
