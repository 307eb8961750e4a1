"""benchmarks/gpu_run.sh's two Python steps, standard library only (they run before anything is known
to import): ``check`` (every package the benchmarks import is there; what to carry if not) and
``summary`` (summary.md from the steps' JSON files).

    python3 benchmarks/gpu_run.py check --out DIR
    python3 benchmarks/gpu_run.py summary --out DIR --steps "check=0:1 paper=0:95 ..." --device cuda
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import platform
import sys
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: every third-party package that bench_paper.py and bench_scoring.py import (found with
#: `python -X importtime` on a run of each): import name -> distribution
NEEDED = {
    "torch": "torch",
    "transformers": "transformers",
    "tokenizers": "tokenizers",
    "huggingface_hub": "huggingface-hub",
    "safetensors": "safetensors",
    "numpy": "numpy",
    "pandas": "pandas",
    "pyarrow": "pyarrow",
    "scipy": "scipy",
    "yaml": "pyyaml",
    "jsonschema": "jsonschema",
    "jsonschema_rs": "jsonschema-rs",
    "jsonschema_specifications": "jsonschema-specifications",
    "referencing": "referencing",
    "rpds": "rpds-py",
    "attrs": "attrs",
    "sentencepiece": "sentencepiece",
    "regex": "regex",
    "tqdm": "tqdm",
    "jinja2": "jinja2",
    "packaging": "packaging",
    "filelock": "filelock",
}
#: where envs/lock.txt has no line for a needed distribution (a dependency of a dependency): the
#: version tested here
TESTED = {
    "jsonschema-specifications": "2025.9.1",
    "referencing": "0.37.0",
    "rpds-py": "2026.9.1",
    "attrs": "26.1.0",
}
#: the versions that decide the numbers: a difference is printed (not an error)
WATCHED = ("torch", "transformers", "tokenizers", "numpy", "pandas")
PIP_DOWNLOAD = (
    "python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp "
    "--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 "
    "--platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl"
)
#: the goals of issue 56
GOAL_PAPER_S = 180.0
GOAL_AGREEMENT = 1e-5
TF32_RULE = 1e-4


def lock_versions(path: Path = ROOT / "envs/lock.txt") -> dict[str, str]:
    """``{distribution (lower case, - for _): version}`` from a pip lock file (``name==version`` lines)."""
    out = dict(TESTED)
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            out[name.strip().lower().replace("_", "-")] = version.split(";")[0].strip()
    return out


def installed(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def check(out: Path | None) -> int:
    """Print each needed package's version beside the tested one; missing ones: the commands that
    carry them (the device README's wheels) and exit status 2. Writes ``env.json`` into ``out``."""
    lock = lock_versions()
    missing, rows = [], []
    for module, dist in NEEDED.items():
        found = importlib.util.find_spec(module) is not None
        version = installed(dist) if found else None
        tested = lock.get(dist, "?")
        rows.append({"module": module, "distribution": dist, "version": version if found else None, "tested": tested})
        if not found:
            missing.append(dist)
        same = tested == "?" or (version or "").split("+")[0] == tested
        note = "MISSING" if not found else ("" if same else f"differs from the tested {tested}")
        if note:
            print(f"  {module:26s} {version or '-':14s} {note}")
    env = {
        "python": platform.python_version(),
        "executable": sys.executable,
        "platform": platform.platform(),
        "packages": rows,
        "missing": missing,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    if out is not None:
        (out / "env.json").write_text(json.dumps(env, indent=1) + "\n")
    print(
        f"python {env['python']} ({sys.executable}); "
        + ", ".join(f"{r['distribution']} {r['version']}" for r in rows if r["distribution"] in WATCHED and r["version"])
    )
    if missing:
        pins = " ".join(f"{d}=={lock.get(d, 'VERSION')}" for d in missing)
        print(
            f"gpu_run: error: {len(missing)} package(s) the benchmarks import are missing: {', '.join(missing)}\n"
            f"  fix: on the machine that calls the device tool, in the repository's root:\n"
            f"    {PIP_DOWNLOAD} {pins}\n"
            "  then call again with carry ['.whl'] (gpu_run.sh installs .whl/*.whl with\n"
            "  `pip install --no-index --no-deps --target` before anything else)",
            file=sys.stderr,
        )
        return 2
    print(f"check: all {len(NEEDED)} packages the benchmarks import are there")
    return 0


# ----------------------------------------------------------------------------- summary


def parse_steps(text: str) -> list[tuple[str, str, float | None]]:
    """``"check=0:1 paper=124:200 sweep=skipped"`` -> ``[(name, status, seconds)]``, status
    "passed", "timed out (exit 124)", "failed (exit N)" or "skipped"."""
    out = []
    for item in text.split():
        name, _, rest = item.partition("=")
        if rest == "skipped":
            out.append((name, "skipped", None))
            continue
        rc, _, sec = rest.partition(":")
        status = "passed" if rc == "0" else ("timed out (exit 124)" if rc in ("124", "137") else f"failed (exit {rc})")
        out.append((name, status, float(sec) if sec else None))
    return out


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _e(x) -> str:
    return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.1e}"


def _sec(s) -> str:
    if s is None:
        return "n/a"
    return f"{s:.1f} s" if s < 120 else f"{s / 60:.1f} min ({s:.0f} s)"


def summary_lines(out: Path, steps: list, device: str, tiny: bool, command: str, seconds: float | None) -> list[str]:
    """summary.md's lines: every headline figure of the run's JSON files in ``out``, and last a
    line that says which steps passed."""
    env = _read(out / "env.json") or {}
    paper, scoring = _read(out / "paper.json"), _read(out / "scoring.json")
    name = (paper or scoring or {}).get("device_name", device)
    versions = {r["distribution"]: r["version"] for r in env.get("packages", [])}
    lines = [
        "# benchmarks/gpu_run.sh: the whole paper's scoring on one device (issue 56)",
        "",
        f"- device: **{name}** (`{device}`); {env.get('date', time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()))}",
        f"- command: `{command}`" + (f"; {seconds:.0f} s in all" if seconds is not None else ""),
        f"- python {env.get('python', '?')}; "
        + ", ".join(f"{d} {versions.get(d)}" for d in WATCHED if versions.get(d))
        + (f"; missing: {', '.join(env['missing'])}" if env.get("missing") else ""),
    ]
    if tiny:
        lines.append(
            "- **TINY rehearsal** (GPU_RUN_TINY=1: 2-layer models, a few sentences): it tests the script, it measures nothing"
        )
    lines += ["", "## The whole paper (bench_paper.py)", ""]
    if paper and paper.get("rows"):
        tot = paper["total"]
        verdict = "met" if tot["wall"] <= GOAL_PAPER_S and tot["models"] == 12 and not tiny else "NOT met"
        samples = ", ".join(f"{s:g}" for s in tot["samples"])
        lines += [
            f"- **total {_sec(tot['wall'])}** wall, loads included, {tot['models']} of 12 models "
            f"({tot['sentences']:,} sentences; sample {samples}{', extrapolated' if min(tot['samples']) < 1 else ''}); "
            f"fmat.run {tot['sps']:.0f} sentences/s; peak memory {tot['peak_mem'] / 2**30:.2f} GiB"
            + (f"; status {paper.get('status')}" if paper.get("status") != "complete" else ""),
            f"- goal (whole paper under {GOAL_PAPER_S:.0f} s on one GPU, loads included): **{verdict}**",
        ]
        if paper.get("skipped"):
            lines.append(f"- not measured (time budget): {', '.join(paper['skipped'])}")
        if "breakdown" in tot:
            bd = tot["breakdown"]
            whole = sum(max(0.0, v) for v in bd.values()) or 1.0
            largest = max(bd, key=bd.get)
            lines.append(
                "- where the time goes: "
                + ", ".join(f"{k} {_sec(v)} ({100 * max(0.0, v) / whole:.0f}%)" for k, v in bd.items())
                + f"; **largest: {largest}**"
            )
        lines += [
            "",
            "| model | sample | load s | scoring s | wall s | sentences/s | peak GiB |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in paper["rows"]:
            lines.append(
                f"| {r['model']} | {r['sample']:g} | {r['load']:.2f} | {r['score']:.1f} | {r['wall']:.1f} | "
                f"{r['sps']:.0f} | {r['peak_mem'] / 2**30:.2f} |"
            )
    else:
        lines.append("- no figures (the step did not write paper.json)")
    lines += ["", "## One model, FMAT's way beside it, precision (bench_scoring.py)", ""]
    if scoring:
        agree = scoring.get("cpu_agreement")
        ok = agree is not None and agree <= GOAL_AGREEMENT
        lines += [
            f"- fmat.run {scoring['sps_fmat']:.0f} sentences/s, FMAT's way {scoring['sps_fmat_way']:.0f} "
            f"({scoring['speed_ratio']:.1f}x); {scoring['sentences']} sentences, mean {scoring['mean_tokens']:.1f} tokens",
            f"- matmul peak: fp32 {scoring['peak_fp32']:.0f} GFLOP/s, TF32 {scoring.get('peak_tf32') or float('nan'):.0f} "
            f"GFLOP/s (measured here); fmat.run reaches {100 * scoring['share_fp32']:.0f}% of fp32's"
            + (f", {100 * scoring['share_tf32']:.0f}% of TF32's" if scoring.get("share_tf32") else ""),
            f"- max |Δ log p| against the CPU (one sentence a pass): **{_e(agree)}** (goal ≤ {GOAL_AGREEMENT:.0e}: "
            f"{'met' if ok else 'NOT met'}); against FMAT's way on this device: {_e(scoring.get('max_dlogp_fmat_way'))}",
        ]
        if scoring.get("lowp"):
            lines += ["", "| precision | speed vs fp32 | max |Δ log p| | median |Δ LPR| | max |Δ LPR| |", "|---|---|---|---|---|"]
            for dt, v in scoring["lowp"].items():
                lines.append(f"| {dt} | {v['speedup']:.2f}x | {_e(v['logp_max'])} | {_e(v['lpr_median'])} | {_e(v['lpr_max'])} |")
            tf = scoring["lowp"].get("tf32")
            if tf:
                rule = "may become the default" if tf["lpr_max"] <= TF32_RULE else "the default stays fp32"
                lines += ["", f"- TF32 rule: max |Δ LPR| {_e(tf['lpr_max'])} vs {TF32_RULE:.0e}: **{rule}**"]
    else:
        lines.append("- no figures (the step did not write scoring.json)")
    lines += ["", "## Padded tokens per pass (bench_scoring.py --sweep)", ""]
    sweeps = sorted(out.glob("sweep-*.json"))
    for path in sweeps:
        sw = _read(path)
        if not sw or "sweep" not in sw:
            lines.append(f"- {path.name}: no figures")
            continue
        cells = ", ".join(f"{r['max_tokens']}: {r['sps']:.0f}" for r in sw["sweep"])
        lines += [f"- {sw.get('arch')}: sentences/s by max_tokens {cells}", f"  - {sw.get('auto_batch_advice')}"]
    if not sweeps:
        lines.append("- no figures (no sweep-*.json)")
    passed = [n for n, st, _ in steps if st == "passed"]
    lines += ["", "## Steps", ""]
    lines += [f"- {n}: {st}" + (f" ({s:.0f} s)" if s is not None else "") for n, st, s in steps]
    lines += ["", f"steps passed: {len(passed)} of {len(steps)} ({', '.join(n + ' ' + st for n, st, _ in steps)})"]
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="gpu_run.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("check", "summary"))
    ap.add_argument("--out", default=None, help="the run's folder ($OUT)")
    ap.add_argument("--steps", default="", help="summary: name=exit:seconds ... (gpu_run.sh writes it)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tiny", default="0")
    ap.add_argument("--command", default="bash benchmarks/gpu_run.sh")
    ap.add_argument("--seconds", type=float, default=None)
    args = ap.parse_args(argv)
    out = Path(args.out) if args.out else None
    if args.what == "check":
        return check(out)
    if out is None:
        ap.error("summary needs --out")
    lines = summary_lines(out, parse_steps(args.steps), args.device, args.tiny not in ("", "0"), args.command, args.seconds)
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
