"""Benchmark: checking a large study file (`fmat query --study FILE --check`).

A study with 200,000 MASK words (two groups of 100,000), checked side by side with one of
20,000 in the same run; prints both times and their ratio (a linear check: about 10x, less with
the fixed start-up). Also times the three parts of the old slow path on the big file:
PyYAML's pure-Python SafeLoader vs the project's loader (libyaml) and jsonschema vs jsonschema-rs.
Target: the 200,000-word check in a few seconds on the 2-core development machine (it took
~10 s, and 55 s under load, before the C loader and the compiled schema gate).
Run:  python benchmarks/bench_validate.py [--words 200000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def write_study(folder: Path, n: int) -> Path:
    words = [f"w{i}" for i in range(n)]
    p = folder / f"S{n}.yaml"
    p.write_text(
        f'id: S{n}\ntitle: t\nqueries:\n  - query: "[MASK] is here."\n    MASK:\n      A: ['
        + ", ".join(words[: n // 2])
        + "]\n      B: ["
        + ", ".join(words[n // 2 :])
        + "]\n",
        encoding="utf-8",
    )
    return p


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t, out


def main() -> None:
    import jsonschema
    import yaml

    from fmat import study, validate
    from fmat.cli import main as fmat_main

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", type=int, default=200_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small, big = write_study(Path(tmp), args.words // 10), write_study(Path(tmp), args.words)
        t_small, rc1 = timed(fmat_main, ["query", "--study", str(small), "--check"])
        t_big, rc2 = timed(fmat_main, ["query", "--study", str(big), "--check"])
        assert rc1 == rc2 == 0
        text = big.read_text(encoding="utf-8")
        t_py, _ = timed(yaml.load, text, yaml.SafeLoader)
        t_c, data = timed(validate.load_yaml, text, str(big))
        t_js, errs = timed(lambda d: list(jsonschema.Draft202012Validator(study.schema()).iter_errors(d)), data)
        t_rs, ok = timed(lambda d: study._fast_validator().is_valid(study._plain(d)), data)
        assert ok and not errs
    print(
        f"fmat query --check: {args.words // 10:,} words {t_small:.2f} s, {args.words:,} words {t_big:.2f} s "
        f"(ratio {t_big / t_small:.1f})"
    )
    print(f"  YAML: PyYAML SafeLoader {t_py:.2f} s, project loader (libyaml) {t_c:.2f} s ({t_py / t_c:.1f}x)")
    print(f"  schema: jsonschema {t_js:.2f} s, jsonschema-rs gate {t_rs:.3f} s ({t_js / t_rs:.0f}x)")


if __name__ == "__main__":
    main()
