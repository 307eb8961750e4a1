"""Measurement (issue 53): how often the study id re-enters a module it has already left, followed
from ``fmat study STUDY --report`` to the HTML page.

What is traced.  ``fmat study <study file> -m A -m B -o OUT --device cpu --report`` runs in this
process (``fmat.cli.main``) under :func:`sys.setprofile`, on two tiny untrained models built
first (``fmat.tiny.build_tiny_model``, a BERT and a RoBERTa tokenizer, holding the study's
words: no download, no GPU).  The default study is the one README.md shows,
``config/studies/3A.yaml``.

What is recorded.  Every call (the profiler's ``call`` event, in call order) of a Python function
whose code lies in this repository's ``fmat/`` or ``fmat_replication/`` folder, and whose
*arguments* (the frame's locals at the call: exactly its parameters) *carry the study id*: an
argument that

- is the id string itself (``"3A"``), or
- is a mapping whose ``"id"`` is the id, or
- is an object of a class of ``fmat``/``fmat_replication`` whose attribute ``id`` is the id (a
  ``fmat.study.Study``), or whose attribute ``study`` is such an object or mapping (a wrapper
  that carries the study: ``AnalysisInput``, ``StudyResult``), or
- is a tuple, list or dict (under 64 entries) one of whose items (a dict: values) is one of the
  above.

Comprehension and generator-expression frames (``<listcomp>``, ``<genexpr>``...) are not
functions of the code and are left out; a generator's resumption is not a new call and is left
out too.  Each recorded call is the pair ``(module, function)`` (the module's ``__name__``, the
function's qualified name).

What is counted.  Along that sequence of modules, consecutive calls in the same module form one
*visit*.  A *re-entry* is a visit to a module that an earlier visit already was in: the trace
had left the module for another one and came back.  The count is the number of re-entries
(= visits - distinct modules); each is listed as the (module, function) of the visit's first
call.  A sequence ``a a b a c b`` has visits ``a b a c b`` and 2 re-entries (``a`` at position
3, ``b`` at position 5).  :func:`reentries` is this definition; tests/test_trace_study_id.py
pins it on synthetic sequences and ratchets the real count.

Run: ``python benchmarks/trace_study_id.py [STUDY.yaml] [--show-sequence]`` (about 10-20 s on
one core; ``OMP_NUM_THREADS=1`` recommended).  Prints the count, the re-entries, and the modules
that re-enter most.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from fmat.cli import main as fmat_main
from fmat.study import load_study
from fmat.tiny import build_tiny_model

REPO = Path(__file__).resolve().parents[1]
ROOTS = tuple(str(REPO / name) + "/" for name in ("fmat", "fmat_replication"))
DEFAULT_STUDY = REPO / "config" / "studies" / "3A.yaml"
_NOT_FUNCTIONS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<module>")
_GENERATOR_FLAGS = 0x20 | 0x200 | 0x100  # CO_GENERATOR | CO_ASYNC_GENERATOR | CO_COROUTINE


def reentries(calls: Sequence[tuple[str, str]]) -> list[tuple[int, str, str]]:
    """The re-entries of a sequence of ``(module, function)`` calls (module docstring):
    ``(visit number, module, function)`` of each visit to a module an earlier visit was in.

    >>> reentries([("a", "f"), ("a", "g"), ("b", "h"), ("a", "i"), ("c", "j"), ("b", "k")])
    [(2, 'a', 'i'), (4, 'b', 'k')]
    """
    out = []
    seen: set[str] = set()
    previous = None
    visit = -1
    for module, function in calls:
        if module == previous:
            continue
        visit += 1
        if module in seen:
            out.append((visit, module, function))
        seen.add(module)
        previous = module
    return out


def _is_ours(obj) -> bool:
    return type(obj).__module__.split(".", 1)[0] in ("fmat", "fmat_replication")


def _has_id(obj, sid: str) -> bool:
    if isinstance(obj, Mapping):
        try:
            return obj.get("id") == sid
        except Exception:  # a mapping that refuses .get: not a study
            return False
    if _is_ours(obj):
        return getattr(obj, "id", None) == sid
    return False


def carries(value, sid: str) -> bool:
    """Whether one argument carries the study id (module docstring)."""
    if isinstance(value, str):
        return value == sid
    if _has_id(value, sid):
        return True
    if _is_ours(value):
        inner = getattr(value, "study", None)
        return inner is not None and inner is not value and _has_id(inner, sid)
    return False


class Tracer:
    """A :func:`sys.setprofile` hook that records the calls carrying ``sid``."""

    def __init__(self, sid: str, roots: Sequence[str] = ROOTS):
        self.sid = sid
        self.roots = tuple(roots)
        self.calls: list[tuple[str, str]] = []
        self._ours: dict[object, bool] = {}
        self._generators: dict[int, object] = {}

    def __call__(self, frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        ours = self._ours.get(code)
        if ours is None:
            ours = code.co_filename.startswith(self.roots) and code.co_name not in _NOT_FUNCTIONS
            self._ours[code] = ours
        if not ours:
            return
        if code.co_flags & _GENERATOR_FLAGS:
            if id(frame) in self._generators:
                return  # a generator resumed, not called
            self._generators[id(frame)] = frame  # held, so that its id is not reused while tracing
        star = bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount + star]
        local = frame.f_locals
        for name in names:
            value = local.get(name)
            if (
                carries(value, self.sid)
                or (isinstance(value, (tuple, list)) and len(value) < 64 and any(carries(v, self.sid) for v in value))
                or (
                    isinstance(value, dict)
                    and not _has_id(value, self.sid)
                    and len(value) < 64
                    and any(carries(v, self.sid) for v in value.values())
                )
            ):
                self.calls.append((frame.f_globals.get("__name__", "?"), getattr(code, "co_qualname", code.co_name)))
                return


def build_models(study, folder: Path) -> list[str]:
    """Two tiny untrained models (BERT, RoBERTa tokenizers) whose vocabularies hold the study's words."""
    q = study.queries
    words = sorted({w for c in ("M_word", "T_word", "A_word") if c in q.columns for w in q[c].astype(str)})
    return [
        str(build_tiny_model(folder / "tiny-bert-base-uncased", "bert-uncased", words, seed=1)),
        str(build_tiny_model(folder / "tiny-roberta-base", "roberta", words, seed=2)),
    ]


def trace(study_file: Path = DEFAULT_STUDY, workdir: Path | None = None) -> tuple[str, list[tuple[str, str]], int]:
    """Run ``fmat study STUDY -m A -m B -o OUT --device cpu --threads 1 --no-progress --report`` under
    the tracer -> ``(study id, recorded calls, the command's exit code)``."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(workdir or tmp)
        study = load_study(study_file)
        models = build_models(study, root / "models")
        argv = ["study", str(study_file), *(x for m in models for x in ("-m", m))]
        argv += ["-o", str(root / "out"), "--device", "cpu", "--threads", "1", "--no-progress", "--report"]
        tracer = Tracer(str(study.id))
        threading.setprofile(tracer)
        sys.setprofile(tracer)
        try:
            rc = fmat_main(argv)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
        if rc != 0 or not (root / "out" / "report.html").is_file():
            raise SystemExit(f"fmat study {' '.join(argv[1:])} failed (exit {rc}): nothing to measure")
        return str(study.id), tracer.calls, rc


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("study", nargs="?", type=Path, default=DEFAULT_STUDY, help="a study file (default: config/studies/3A.yaml)")
    ap.add_argument("--show-sequence", action="store_true", help="print every visit, not only the re-entries")
    args = ap.parse_args(argv)
    sid, calls, _ = trace(args.study)
    found = reentries(calls)
    visits = len(reentries(calls)) + len({m for m, _ in calls})
    print(f"study {sid}: {len(calls)} calls carry the id, {visits} module visits, {len({m for m, _ in calls})} modules")
    print(f"re-entries: {len(found)}")
    if args.show_sequence:
        previous = None
        for module, function in calls:
            if module != previous:
                print(f"  visit  {module}.{function}")
            previous = module
    for visit, module, function in found:
        print(f"  #{visit:<4} {module}  ({function})")
    print("modules re-entered most:")
    for module, n in collections.Counter(m for _, m, _ in found).most_common(8):
        print(f"  {n:3d}  {module}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
