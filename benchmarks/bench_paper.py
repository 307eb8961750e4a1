"""Benchmark: the whole paper's scoring -- the 12 models' architectures on the 15 studies' real sentences.

Each of the paper's 12 models (config/config.yaml) is rebuilt with its published architecture
(ARCHS below: layers, hidden and intermediate sizes, heads, vocabulary, positions, token types;
ALBERT's 128-wide factorised embedding and shared layers; DistilBERT's 6 layers; BERTweet-base's
130 positions) and RANDOM weights -- nothing is downloaded. The tokenizer is one of fmat.tiny's,
of the model's family (WordPiece, SentencePiece unigram, byte-level BPE, fastBPE), trained on the
studies' words, so sentence lengths are realistic; the model's vocabulary is the real size
(it matters only at the MLM head, which fmat.run evaluates at the mask only). Each model is saved
to a temporary folder and scored by fmat_replication.score.score_studies -- the workflow's scoring job:
one model load, all 15 studies' query tables (42,860 rows, 16,208 unique sentences a model).

Per model and in total it prints unique sentences, sentences/s, wall time (load included), peak
memory (process RSS on a CPU, torch.cuda.max_memory_allocated on a GPU) and the share of the
device's fp32 matmul peak (FLOPs counted as benchmarks/bench_scoring.py does); and FMAT's way
(one fill-mask pipeline call per unique sentence, all options as targets) with the same model,
timed study by study right after fmat.run's scoring of that study (so that load from other
processes hits both alike), on a sample (``--fmat-way-sample``, default 0.01: the same draw as
fmat.run's when ``--sample`` is 0.01) extrapolated the same way.

    python benchmarks/bench_paper.py --sample 0.01          # CPU: 1% of each study, extrapolated
    python benchmarks/bench_paper.py --device cuda          # GPU: the whole paper (default --sample 1)
    python benchmarks/bench_paper.py --models bert-base-uncased,roberta-base --sample 0.05
    python benchmarks/bench_paper.py --tiny --models albert-base-v2,vinai/bertweet-base --sample 0.002

``--sample F`` scores ceil(F x n) of each study's n unique sentences (seeded draw, all rows of a
drawn sentence) and extrapolates each study's time by n / drawn; the output says so. ``--tiny``
shrinks every architecture (2 layers, hidden 32; real vocabulary) to test the script.
"""

from __future__ import annotations

import argparse
import gc
import logging
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_args import check_device, check_fraction, check_positive, usage_error  # noqa: E402
from bench_scoring import matmul_peak, write_json  # noqa: E402

from fmat.errors import InputError  # noqa: E402

PROG = "bench_paper.py"

STUDIES = ["1A", "1B", "1C", "2A", "2B", "2C", "2D", "3A", "3B", "3C", "3D", "4A", "4B", "4C", "4D"]


@dataclass(frozen=True)
class Arch:
    """A model's published configuration (config.json on the Hugging Face hub)."""

    kind: str  # bert | distilbert | albert | roberta
    tokenizer: str  # fmat.tiny family whose tokenizer type the model uses
    layers: int
    hidden: int
    intermediate: int
    heads: int
    vocab: int
    positions: int
    type_vocab: int = 2
    embedding: int | None = None  # ALBERT's factorised embedding size (layers share one set of weights)
    act: str = "gelu"


#: the paper's 12 models (Bao 2024, Table 2), from their published config.json files
ARCHS: dict[str, Arch] = {
    "bert-base-uncased": Arch("bert", "bert-uncased", 12, 768, 3072, 12, 30522, 512),
    "bert-base-cased": Arch("bert", "bert-cased", 12, 768, 3072, 12, 28996, 512),
    "bert-large-uncased": Arch("bert", "bert-uncased", 24, 1024, 4096, 16, 30522, 512),
    "bert-large-cased": Arch("bert", "bert-cased", 24, 1024, 4096, 16, 28996, 512),
    "distilbert-base-uncased": Arch("distilbert", "bert-uncased", 6, 768, 3072, 12, 30522, 512, 0),
    "distilbert-base-cased": Arch("distilbert", "bert-cased", 6, 768, 3072, 12, 28996, 512, 0),
    "albert-base-v1": Arch("albert", "albert", 12, 768, 3072, 12, 30000, 512, 2, 128, "gelu"),
    "albert-base-v2": Arch("albert", "albert", 12, 768, 3072, 12, 30000, 512, 2, 128, "gelu_new"),
    "roberta-base": Arch("roberta", "roberta", 12, 768, 3072, 12, 50265, 514, 1),
    "distilroberta-base": Arch("roberta", "roberta", 6, 768, 3072, 12, 50265, 514, 1),
    "vinai/bertweet-base": Arch("roberta", "bertweet", 12, 768, 3072, 12, 64001, 130, 1),
    "vinai/bertweet-large": Arch("roberta", "roberta", 24, 1024, 4096, 16, 50265, 514, 1),  # byte-level BPE
}


def tiny_arch(a: Arch) -> Arch:
    """The same model shrunk for tests: 2 layers, hidden 32, 2 heads; vocabulary and positions kept."""
    return replace(a, layers=min(a.layers, 2), hidden=32, intermediate=64, heads=2, embedding=16 if a.embedding else None)


def hf_config(a: Arch, tokenizer):
    """The transformers configuration of ``a`` (special token ids from ``tokenizer``)."""
    from transformers import AlbertConfig, BertConfig, DistilBertConfig, RobertaConfig

    if len(tokenizer) > a.vocab:
        raise ValueError(f"tokenizer has {len(tokenizer)} tokens, more than the model's {a.vocab}")
    common = dict(vocab_size=a.vocab, pad_token_id=tokenizer.pad_token_id, max_position_embeddings=a.positions)
    if a.kind == "bert":
        return BertConfig(
            hidden_size=a.hidden,
            num_hidden_layers=a.layers,
            num_attention_heads=a.heads,
            intermediate_size=a.intermediate,
            type_vocab_size=a.type_vocab,
            **common,
        )
    if a.kind == "distilbert":
        return DistilBertConfig(dim=a.hidden, n_layers=a.layers, n_heads=a.heads, hidden_dim=a.intermediate, **common)
    if a.kind == "albert":
        return AlbertConfig(
            embedding_size=a.embedding,
            hidden_size=a.hidden,
            num_hidden_layers=a.layers,
            num_attention_heads=a.heads,
            intermediate_size=a.intermediate,
            hidden_act=a.act,
            type_vocab_size=a.type_vocab,
            bos_token_id=tokenizer.cls_token_id,
            eos_token_id=tokenizer.sep_token_id,
            **common,
        )
    if a.kind == "roberta":
        return RobertaConfig(
            hidden_size=a.hidden,
            num_hidden_layers=a.layers,
            num_attention_heads=a.heads,
            intermediate_size=a.intermediate,
            type_vocab_size=a.type_vocab,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            tokenizer_class="BertweetTokenizer" if a.tokenizer == "bertweet" else None,
            **common,
        )
    raise ValueError(f"unknown architecture kind {a.kind!r}")


def arch_flops(lengths, a: Arch, head_positions=None) -> float:
    """2 x multiply-adds of every matmul: the encoder on each sentence's real tokens and the MLM
    head at ``head_positions[i]`` positions of sentence i (default 1: fmat.run's head at the mask).

    Per token and layer QKVO (4H^2) + FFN (2HI), per layer QK^T and AV (2L^2H); ALBERT adds the
    embedding projection (EH a token) and its head maps H -> E -> V instead of H -> H -> V."""
    H, I, V = a.hidden, a.intermediate, a.vocab
    E = a.embedding or H
    total = 0.0
    for i, L in enumerate(lengths):
        heads = 1 if head_positions is None else head_positions[i]
        total += a.layers * (L * (4 * H * H + 2 * H * I) + 2 * L * L * H)
        if a.embedding:
            total += L * E * H
        total += heads * (H * E + E * V)
    return 2.0 * total


class PeakMemory:
    """Peak memory of the process while in the ``with`` block: the most RSS seen by a sampling
    thread on a CPU, ``torch.cuda.max_memory_allocated`` on a CUDA device (bytes in ``.peak``)."""

    def __init__(self, device, interval: float = 0.02):
        self.device = torch.device(device)
        self.interval = interval
        self.peak = 0

    def __enter__(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            return self
        self._stop = threading.Event()
        self.peak = rss()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def _poll(self):
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, rss())

    def __exit__(self, *exc):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            self.peak = int(torch.cuda.max_memory_allocated(self.device))
        else:
            self._stop.set()
            self._thread.join()
            self.peak = max(self.peak, rss())
        return False


def rss() -> int:
    """Resident set size of this process in bytes (Linux /proc; elsewhere psutil, else the peak so far)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        pass
    try:
        import psutil

        return psutil.Process().memory_info().rss
    except ImportError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)


def paper_queries(folder: Path) -> dict:
    """The 15 studies' query tables, as rule queries builds them; 1C's names from the SSA counts
    in data/mirror (ssa_names_1c; without GloVe's filter 3,832 names give 1C's 15,328 sentences)."""
    from fmat.io import write_table
    from fmat_replication import criteria
    from fmat_replication.queries import query_table

    counts = criteria.read_ssa_counts(ROOT / "data/mirror/ssa/ssa_national_1900_2017_by_name_sex.tsv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_table(criteria.ssa_names_1c(counts, min_each=100, source="SSA, data/mirror"), folder / "ssa_names_1c.parquet")
        return {sid: query_table(ROOT / "config/studies" / f"{sid}.yaml", folder) for sid in STUDIES}


def sample_queries(tables: dict, fraction: float, mask: str = "[MASK]", seed: int = 0, least: int = 20):
    """``{study: (sampled table, unique sentences, sampled unique sentences)}``: ceil(fraction x n)
    of a study's n unique sentences but at least ``least`` (all of a smaller study, so that a
    study's fixed cost is not multiplied by the extrapolation), drawn with ``seed``, with every
    row that fills them."""
    from fmat.scoring import fill_sentences

    rng = np.random.default_rng(seed)
    out = {}
    for sid, t in tables.items():
        sent = fill_sentences(t, mask)
        uniq = np.array(list(dict.fromkeys(sent.tolist())), dtype=object)
        k = len(uniq) if fraction >= 1 else min(len(uniq), max(least, 1, math.ceil(fraction * len(uniq))))
        pick = set(rng.choice(uniq, size=k, replace=False).tolist())
        keep = np.fromiter((s in pick for s in sent), bool, len(sent))
        sub = t[keep].reset_index(drop=True)
        sub.attrs = dict(t.attrs)
        out[sid] = (sub, len(uniq), k)
    return out


def build_model(name: str, a: Arch, tokenizer, folder: Path, seed: int = 0) -> Path:
    """Save a random-weight ``a`` with ``tokenizer`` to ``folder/<model's base name>``; return the path."""
    import transformers

    cls = {
        "bert": "BertForMaskedLM",
        "distilbert": "DistilBertForMaskedLM",
        "albert": "AlbertForMaskedLM",
        "roberta": "RobertaForMaskedLM",
    }[a.kind]
    out = folder / name.split("/")[-1]  # the folder name is what FMAT's model-name rules see
    torch.manual_seed(seed)
    model = getattr(transformers, cls)(hf_config(a, tokenizer)).eval()
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    if getattr(tokenizer, "_fmat_files", None):
        from fmat.tiny import _write_files

        _write_files(out, tokenizer._fmat_files)
    del model
    gc.collect()
    return out


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class _LoadTime(logging.Handler):
    """Catches the "model %s loaded in %.2f s" log line of :func:`fmat.runner.score_tables`."""

    seconds = float("nan")

    def emit(self, record):
        if record.msg.startswith("model %s loaded in"):
            self.seconds = float(record.args[1])


def score_paper(path: Path, samples: dict, device, batch_size=None, max_tokens=None, way=None) -> dict:
    """Score every study's sampled table with fmat_replication.score.score_studies (one load); seconds of the
    load and of each study, peak memory. ``way``: a :class:`FmatWay` run on each study right after
    fmat.run's (so that load from other processes hits both alike; its time is not fmat.run's, and
    its model's memory is taken off the peak)."""
    from fmat_replication.score import score_studies

    log = logging.getLogger("fmat.runner")  # score_studies loads through fmat.runner.score_tables
    catch = _LoadTime()
    log.addHandler(catch)
    log.setLevel(logging.INFO)
    studies = {sid: ROOT / "config/studies" / f"{sid}.yaml" for sid in samples}
    queries = {sid: s[0] for sid, s in samples.items()}
    study_sec = {}
    try:
        with PeakMemory(device) as mem:
            t = time.perf_counter()
            for sid, scores in score_studies(
                {"name": path.name, "path": str(path)},
                studies,
                queries,
                device=str(device),
                batch_size=batch_size,
                max_tokens=max_tokens,
            ):
                _sync(device)
                study_sec[sid] = time.perf_counter() - t
                if len(scores) != len(queries[sid]) or scores["logp"].isna().all():
                    raise RuntimeError(f"study {sid}: {len(scores)} scores for {len(queries[sid])} rows")
                if way is not None:
                    way.run(sid)
                t = time.perf_counter()
    finally:
        log.removeHandler(catch)
    first = next(iter(study_sec))
    study_sec[first] -= catch.seconds  # the load is logged apart from the first study
    peak = mem.peak - (way.memory if way is not None else 0)
    return {"load": catch.seconds, "study_sec": study_sec, "peak": peak}


class FmatWay:
    """FMAT's way: a transformers fill-mask pipeline loaded from the model's folder (timed; the
    memory it takes is kept in ``.memory``) and called once per unique sentence of a study's
    sample with that sentence's options as targets (:meth:`run`; seconds in ``.study_sec``)."""

    def __init__(self, path: Path, samples: dict, device):
        from transformers import pipeline

        from fmat.scoring import fill_sentences

        before = _allocated(device)
        t0 = time.perf_counter()
        self.pipe = pipeline("fill-mask", model=str(path), device=device)
        self.load = time.perf_counter() - t0
        self.device = device
        self.work = {}
        for sid, (t, _n, _k) in samples.items():
            sent = fill_sentences(t, self.pipe.tokenizer.mask_token)
            words = t["M_word"].astype(str).to_numpy()
            self.work[sid] = [(s, list(dict.fromkeys(words[sent == s]))) for s in dict.fromkeys(sent.tolist())]
        s, opts = next(iter(self.work.values()))[0]
        self.pipe(s, targets=opts, top_k=len(opts))  # warm-up (pages every weight in)
        self.memory = max(0, _allocated(device) - before)
        self.study_sec = {}

    def run(self, sid: str) -> None:
        _sync(self.device)
        t = time.perf_counter()
        for s, opts in self.work[sid]:
            self.pipe(s, targets=opts, top_k=len(opts))
        _sync(self.device)
        self.study_sec[sid] = time.perf_counter() - t

    def close(self) -> None:
        del self.pipe
        gc.collect()


def _allocated(device) -> int:
    """Memory in use now: torch.cuda.memory_allocated on a GPU, the process RSS on a CPU."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        return int(torch.cuda.memory_allocated(device))
    return rss()


def extrapolate(study_sec: dict, samples: dict) -> float:
    """Each study's seconds x (its unique sentences / those scored), summed."""
    return float(sum(sec * samples[sid][1] / samples[sid][2] for sid, sec in study_sec.items()))


def machine_line(device) -> str:
    """Device name, CPU model, threads, load average, date: printed with every figure."""
    cpu = platform.processor() or platform.machine()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        cpu = next((ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name")), cpu)
    except (OSError, subprocess.SubprocessError):
        pass
    dev = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU {cpu}"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    return (
        f"device: {dev}; torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} cores; "
        f"load average {load}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )


def parse_args(argv):
    """The arguments, checked (issue 55): a bad one stops here, in the ``fmat`` command's style, exit 2."""
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", help="cpu | cuda | cuda:N | mps (default cpu)")
    ap.add_argument(
        "--sample",
        type=float,
        default=None,
        help="fraction of each study's unique sentences to score, 0 < F <= 1 (default: 1 on a GPU, "
        "0.01 on a CPU); the times are extrapolated to all sentences",
    )
    ap.add_argument(
        "--least", type=int, default=20, help="with --sample: at least this many sentences of each study (default 20)"
    )
    ap.add_argument("--models", default="", help="comma-separated subset of the 12 models (default: all)")
    ap.add_argument(
        "--fmat-way-sample",
        type=float,
        default=0.01,
        help="fraction for FMAT's way (pipeline per sentence), at most --sample (default 0.01: "
        "the same draw as fmat.run's when --sample is 0.01)",
    )
    ap.add_argument(
        "--fmat-way-least",
        type=int,
        default=None,
        help="with --fmat-way-sample: at least this many sentences of each study (default: --least)",
    )
    ap.add_argument("--no-fmat-way", action="store_true", help="skip FMAT's way (pipeline per sentence)")
    ap.add_argument("--tiny", action="store_true", help="2 layers, hidden 32 (tests the script; real vocabularies)")
    ap.add_argument("--batch-size", type=int, default=None, help="sentences per pass (default: fmat.scoring.AUTO_BATCH)")
    ap.add_argument("--max-tokens", type=int, default=None, help="padded tokens per pass (default: AUTO_BATCH)")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--breakdown",
        action="store_true",
        help="also time each model's phases apart (load, model check, tokenizing, batches on the host, "
        "host<->device copies, forward): where the time goes",
    )
    ap.add_argument("--breakdown-sample", type=float, default=None, help="with --breakdown: its sample (default: --sample)")
    ap.add_argument(
        "--time-budget",
        type=float,
        default=None,
        help="seconds for the whole run: a model that would not fit at --sample runs at --fallback-sample, "
        "and once even that would not fit the rest are left out (the output says which)",
    )
    ap.add_argument("--fallback-sample", type=float, default=0.05, help="with --time-budget (default 0.05)")
    ap.add_argument("--out", default=None, help="also write every figure to this JSON file (rewritten after each model)")
    args = ap.parse_args(argv)
    try:
        models = [m.strip() for m in args.models.split(",") if m.strip()] or list(ARCHS)
        unknown = [m for m in models if m not in ARCHS]
        if unknown:
            raise InputError(f"unknown {', '.join(unknown)}", where="--models", fix=f"use any of {', '.join(ARCHS)}")
        args.models = list(dict.fromkeys(models))
        args.device = device = check_device(args.device)
        if args.sample is None:
            args.sample = 1.0 if device.type == "cuda" else 0.01
        for opt in ("sample", "fmat_way_sample", "fallback_sample", "breakdown_sample"):
            if getattr(args, opt) is not None:
                check_fraction(getattr(args, opt), f"--{opt.replace('_', '-')}")
        for opt, example in (("least", 20), ("fmat_way_least", 20), ("batch_size", 64), ("max_tokens", 8192), ("threads", 2)):
            check_positive(getattr(args, opt), f"--{opt.replace('_', '-')}", example, allow_none=opt != "least")
        if args.time_budget is not None and not args.time_budget > 0:
            raise InputError(f"{args.time_budget:g} seconds", where="--time-budget", fix="give a positive number of seconds")
        if args.out:
            folder = Path(args.out).resolve().parent
            if not folder.is_dir():
                raise InputError(f"the folder {folder} does not exist", where=f"--out {args.out}", fix="create it first")
    except InputError as err:
        usage_error(PROG, err)
    args.fmat_way_sample = min(args.fmat_way_sample, args.sample)
    args.fallback_sample = min(args.fallback_sample, args.sample)
    if args.breakdown_sample is None:
        args.breakdown_sample = args.sample
    return args


def budget_step(elapsed: float, spent_full: list, spent_fallback: list, budget: float | None, margin: float = 1.2) -> str:
    """What ``--time-budget`` lets the next model do: "full" (at --sample) while the slowest model
    so far at that sample (x ``margin``) still fits; then "fallback" (at --fallback-sample) while
    the slowest of those fits; then "stop". ``spent_*``: the seconds each model took (build,
    scoring, FMAT's way, breakdown) at each sample; ``budget`` None: always "full"."""
    if budget is None:
        return "full"
    if not spent_fallback and elapsed + margin * max(spent_full, default=0.0) <= budget:
        return "full"
    if elapsed + margin * max(spent_fallback, default=0.0) <= budget:
        return "fallback"
    return "stop"


def main(argv=None) -> int:
    """Run the benchmark; transformers' global verbosity and progress-bar settings are restored
    afterwards (tests call this in-process)."""
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    try:
        return _main(argv)
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def _main(argv=None) -> int:
    args = parse_args(argv)
    t_start = time.perf_counter()
    device = args.device
    if args.threads:
        torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore")
    from transformers.utils import logging as hf_logging

    from fmat.scoring import fill_sentences
    from fmat.tiny import build_tokenizer
    from fmat_replication.demo import demo_words

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    machine = machine_line(device)
    print(machine, flush=True)
    record = {
        "machine": machine,
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "command": " ".join([PROG, *(sys.argv[1:] if argv is None else argv)]),
        "sample": args.sample,
        "tiny": args.tiny,
        "status": "running",
    }
    from fmat.scoring import AUTO_BATCH

    auto = AUTO_BATCH.get(device.type, AUTO_BATCH["cpu"])
    print(
        f"batches: max_tokens {args.max_tokens or auto[0]}, batch_size {args.batch_size or auto[1]}"
        f"{'' if args.batch_size or args.max_tokens else ' (automatic: fmat.scoring.AUTO_BATCH)'}; fp32"
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_paper_") as tmp:
        tmp = Path(tmp)
        tables = paper_queries(tmp)
        samples = sample_queries(tables, args.sample, seed=args.seed, least=args.least)
        way_least = args.least if args.fmat_way_least is None else args.fmat_way_least
        way_samples = sample_queries(tables, args.fmat_way_sample, seed=args.seed, least=way_least)
        n_rows = sum(len(t) for t in tables.values())
        n_uniq = sum(s[1] for s in samples.values())
        n_drawn = sum(s[2] for s in samples.values())
        words = demo_words(list(tables.values()))
        print(
            f"work: 15 studies, {n_rows:,} query rows, {n_uniq:,} unique sentences a model; "
            + (
                "all scored"
                if args.sample >= 1
                else f"SAMPLE {args.sample:g}: {n_drawn:,} scored, times extrapolated by study "
                f"(x n / drawn; at least {args.least} a study)"
            )
        )
        print(
            "models: published architectures, RANDOM weights"
            + (" shrunk by --tiny (2 layers, hidden 32)" if args.tiny else "")
            + "; tokenizers: fmat.tiny's of each family trained on the studies' words "
            "(the real vocabulary size is kept for the MLM head)",
            flush=True,
        )
        if not args.no_fmat_way:
            print(
                f"FMAT's way: {sum(s[2] for s in way_samples.values()):,} sentences a model "
                f"(sample {args.fmat_way_sample:g}, at least {way_least} a study), extrapolated by study"
            )
        samples_at = {args.sample: samples}
        bd_samples = {}
        spent = {"full": [], "fallback": []}
        skipped = []
        toks = {}
        for name in args.models:
            step = budget_step(time.perf_counter() - t_start, spent["full"], spent["fallback"], args.time_budget)
            if step == "stop":
                skipped.append(name)
                continue
            t_model = time.perf_counter()
            fraction = args.sample if step == "full" else args.fallback_sample
            if fraction not in samples_at:
                samples_at[fraction] = sample_queries(tables, fraction, seed=args.seed, least=args.least)
                print(f"--time-budget: the models from here on at a {fraction:g} sample (extrapolated)", flush=True)
            model_samples = samples_at[fraction]
            a = tiny_arch(ARCHS[name]) if args.tiny else ARCHS[name]
            if a.tokenizer not in toks:
                toks[a.tokenizer] = build_tokenizer(a.tokenizer, words, tmp / f"tok-{a.tokenizer}", seed=args.seed)
            tok = toks[a.tokenizer]
            path = build_model(name, a, tok, tmp / "models", seed=args.seed)
            way = None if args.no_fmat_way else FmatWay(path, way_samples, device)
            res = score_paper(path, model_samples, device, args.batch_size, args.max_tokens, way=way)
            lengths = []
            for t, _n, _k in model_samples.values():
                lengths += [len(tok(s)["input_ids"]) for s in dict.fromkeys(fill_sentences(t, tok.mask_token).tolist())]
            peak = matmul_peak(device, seconds=1.0)  # right after, under the same load
            scored = sum(res["study_sec"].values())
            flops = arch_flops(lengths, a)
            full = extrapolate(res["study_sec"], model_samples)
            row = dict(
                model=name,
                n=n_uniq,
                sample=fraction,
                mean_len=float(np.mean(lengths)),
                load=res["load"],
                score=full,
                wall=res["load"] + full,
                sps=n_uniq / full,
                peak_mem=res["peak"],
                share=flops / scored / 1e9 / peak,
                matmul_peak=peak,
            )
            if way:
                way.close()
                way_full = extrapolate(way.study_sec, way_samples)
                row.update(way_load=way.load, way_wall=way.load + way_full, way_sps=n_uniq / way_full)
            if args.breakdown:
                bd_fraction = min(args.breakdown_sample, fraction)
                if bd_fraction not in bd_samples:
                    bd_samples[bd_fraction] = samples_at.get(bd_fraction) or sample_queries(
                        tables, bd_fraction, seed=args.seed, least=args.least
                    )
                row["breakdown"] = breakdown_row(
                    time_breakdown(path, bd_samples[bd_fraction], device, args.batch_size, args.max_tokens),
                    bd_samples[bd_fraction],
                    row,
                )
            rows.append(row)
            print_row(row, len(rows) == 1)
            if args.breakdown:
                print("    " + breakdown_line(row["breakdown"]), flush=True)
            shutil.rmtree(path)
            spent[step].append(time.perf_counter() - t_model)
            record.update(rows=rows, skipped=skipped, total=totals(rows))
            write_json(args.out, record)
    if skipped:
        print(
            f"STOPPED by --time-budget {args.time_budget:g} s: not measured: {', '.join(skipped)}",
            flush=True,
        )
    if rows:
        print_total(rows, args)
    record.update(rows=rows, skipped=skipped, total=totals(rows) if rows else {}, status="stopped" if skipped else "complete")
    record["seconds"] = time.perf_counter() - t_start
    write_json(args.out, record)
    return 0


#: the phases of :func:`time_breakdown`, as printed
PHASES = {
    "load": "load",
    "check": "model check",
    "tokenize": "tokenizing",
    "host": "batches on the host",
    "copy": "host<->device copies",
    "forward": "forward",
    "outputs": "output sentences and labels",
    "other": "other",
}


def time_breakdown(path: Path, samples: dict, device, batch_size=None, max_tokens=None) -> dict:
    """Where fmat.run's time goes on the model saved at ``path``, phase by phase, each timed alone
    (the device synchronised at each boundary), following fmat.scoring.score_model and mask_logp:
    ``load`` (fmat.models.load_masked_lm onto ``device``), ``check`` (scoring_path's probes), and
    per study of ``samples``: ``tokenize`` (sentences filled, options derived, unique sentences
    tokenized, masks found), ``host`` (padded id and attention arrays built), ``copy`` (those to
    the device, the log probabilities back) and ``forward`` (encoder, head at the mask,
    log-softmax), ``outputs`` (each row's output sentence decoded and its token label)."""
    from fmat.models import load_masked_lm
    from fmat.scoring import (
        _head_fn,
        _mask_logits,
        _outputs,
        _token_labels,
        derive_options,
        fill_sentences,
        plan_batches,
        scoring_path,
    )
    from fmat.tokens import _tokenize_many, mask_position

    clock = time.perf_counter
    _sync(device)
    t = clock()
    model, tok = load_masked_lm(str(path), device=str(device), progress=False)
    _sync(device)
    out = {"load": clock() - t}
    t = clock()
    spath = scoring_path(model, tok)
    _sync(device)
    out["check"] = clock() - t
    head = _head_fn(model, spath)
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    for k in ("tokenize", "host", "copy", "forward", "outputs"):
        out[k] = {}
    with torch.inference_mode():
        for sid, (table, _n, _k) in samples.items():
            t = clock()
            sentences = fill_sentences(table, tok.mask_token)
            opts = derive_options(tok, sentences, table["M_word"].astype(str).to_numpy())
            uniq, row_sent = np.unique(sentences.astype(str), return_inverse=True)
            enc = _tokenize_many(tok, list(uniq), special=True)
            mpos = np.array([mask_position(e, tok.mask_token_id, uniq[i]) for i, e in enumerate(enc)], dtype=np.int64)
            out["tokenize"][sid] = clock() - t
            lengths = np.array([len(e) for e in enc], dtype=np.int64)
            host = copy = forward = 0.0
            for idx in plan_batches(lengths, batch_size, max_tokens, device.type, equal_length=spath.padding != "padded"):
                t0 = clock()
                ids = np.full((len(idx), int(lengths[idx].max())), pad_id, dtype=np.int64)
                att = np.zeros_like(ids)
                for r, i in enumerate(idx):
                    ids[r, : lengths[i]] = enc[i]
                    att[r, : lengths[i]] = 1
                t1 = clock()
                x = [torch.from_numpy(a).to(device) for a in (ids, att, mpos[idx])]
                _sync(device)
                t2 = clock()
                lsm = torch.log_softmax(_mask_logits(model, head, None, *x), dim=-1)
                picked = lsm[:, :4]  # a few entries a sentence, as the options are
                _sync(device)
                t3 = clock()
                picked.double().cpu().numpy()
                t4 = clock()
                host, copy, forward = host + t1 - t0, copy + (t2 - t1) + (t4 - t3), forward + t3 - t2
            out["host"][sid], out["copy"][sid], out["forward"][sid] = host, copy, forward
            t = clock()
            row_ids = np.array([o.pieces[0] if o.pieces else 0 for o in opts], dtype=np.int64)
            _outputs(tok, enc, row_sent, opts, row_ids, {}, tok.mask_token_id)
            _token_labels(tok, opts, row_ids, {}, False)
            out["outputs"][sid] = clock() - t
    del model
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return out


def breakdown_row(bd: dict, samples: dict, row: dict) -> dict:
    """A model's breakdown in seconds of the whole paper: the per-study phases of ``bd``
    (:func:`time_breakdown` on ``samples``) extrapolated as the scoring is; ``load`` is the
    scoring's own (``row``); ``other`` is what the scoring took beyond the timed phases (fmat.run's
    bookkeeping: output sentences decoded, labels, checks)."""
    out = {"load": row["load"], "check": bd["check"]}
    for k in ("tokenize", "host", "copy", "forward", "outputs"):
        out[k] = extrapolate(bd[k], samples)
    out["other"] = row["score"] - sum(v for k, v in out.items() if k != "load")
    return out


def breakdown_line(bd: dict) -> str:
    """``load 1.2 s (10%) | ... ; largest: forward``."""
    total = sum(max(0.0, v) for v in bd.values()) or 1.0
    parts = [f"{PHASES[k]} {_fmt_sec(v)} ({100 * max(0.0, v) / total:.0f}%)" for k, v in bd.items()]
    return "breakdown: " + " | ".join(parts) + f"; largest: {PHASES[max(bd, key=bd.get)]}"


def totals(rows: list) -> dict:
    """The whole run's figures from its model ``rows`` (seconds; bytes)."""
    n = sum(r["n"] for r in rows)
    out = dict(
        models=len(rows),
        sentences=n,
        wall=sum(r["wall"] for r in rows),
        load=sum(r["load"] for r in rows),
        score=sum(r["score"] for r in rows),
        peak_mem=max(r["peak_mem"] for r in rows),
        samples=sorted({r["sample"] for r in rows}),
    )
    out["sps"] = n / out["score"]
    if all("way_wall" in r for r in rows):
        out["way_wall"] = sum(r["way_wall"] for r in rows)
    if all("breakdown" in r for r in rows):
        out["breakdown"] = {k: sum(r["breakdown"][k] for r in rows) for k in PHASES}
    return out


def _fmt_sec(s: float) -> str:
    return f"{s:.1f} s" if s < 120 else f"{s / 60:.1f} min"


def print_row(r: dict, header: bool) -> None:
    if header:
        print(
            f"{'model':26s} {'sentences':>9s} {'tokens':>6s} {'load':>7s} {'sent/s':>8s} {'wall':>9s} "
            f"{'peak mem':>9s} {'matmul peak':>11s} | {'FMAT way sent/s':>15s} {'wall':>9s} {'ratio':>6s}"
        )
    way = (
        f"{r['way_sps']:15.1f} {_fmt_sec(r['way_wall']):>9s} {r['way_wall'] / r['wall']:5.1f}x"
        if "way_sps" in r
        else f"{'-':>15s}"
    )
    print(
        f"{r['model']:26s} {r['n']:9,d} {r['mean_len']:6.1f} {r['load']:6.2f}s {r['sps']:8.1f} "
        f"{_fmt_sec(r['wall']):>9s} {r['peak_mem'] / 2**30:7.2f}Gi {100 * r['share']:10.0f}% | {way}",
        flush=True,
    )


def print_total(rows: list, args) -> None:
    tot = totals(rows)
    n, wall, score = tot["sentences"], tot["wall"], tot["score"]
    what = "the whole paper" if len(rows) == len(ARCHS) else f"{len(rows)} of the 12 models"
    parts = [s for s in tot["samples"] if s < 1]
    est = ""
    if parts:
        k = sum(r["sample"] < 1 for r in rows)
        est = f" (extrapolated{'' if k == len(rows) else f' for {k} models'} from a {' / '.join(f'{s:g}' for s in parts)} sample)"
    print(
        f"TOTAL {what}: {n:,} sentences, fmat.run {n / score:.1f} sentences/s, {_fmt_sec(wall)} wall "
        f"(loads included){est}; peak memory {tot['peak_mem'] / 2**30:.2f} GiB"
    )
    if "breakdown" in tot:
        print("TOTAL " + breakdown_line(tot["breakdown"]))
    if all("way_wall" in r for r in rows):
        way = sum(r["way_wall"] for r in rows)
        west = "" if args.fmat_way_sample >= 1 else f" (extrapolated from a {args.fmat_way_sample:g} sample)"
        print(
            f"TOTAL FMAT's way (pipeline per sentence, same models): {_fmt_sec(way)} wall{west}; "
            f"fmat.run is {way / wall:.1f}x faster"
        )
    print(
        "matmul peak: fp32 torch.matmul GFLOP/s measured right after each model "
        f"({min(r['matmul_peak'] for r in rows):.0f}-{max(r['matmul_peak'] for r in rows):.0f})"
    )


if __name__ == "__main__":
    sys.exit(main())
