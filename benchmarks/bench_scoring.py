"""Benchmark: fmat.run's batched scorer vs FMAT's way (one fill-mask pipeline call per sentence).

One model with bert-base-uncased's architecture (random weights; 30522-token vocabulary,
hidden 768, 12 layers, 12 heads; the tokenizer is a tiny WordPiece trained here, so no
download is needed) and N FMAT-style sentences (20 queries x N/20 attribute phrases, 4 MASK
options each). Both scorers run on the same model object in this process, timed alternately
chunk by chunk so that load from other processes hits both alike. Prints sentences/s of each,
the speed ratio, the largest |Δ log prob| between them, and the share of this machine's fp32
matmul peak (measured here with torch.matmul) that fmat.run reaches, counting the model's real
FLOPs (2 × multiply-adds of every matmul on real tokens; padding not counted).

    python benchmarks/bench_scoring.py            # 2,000 sentences
    python benchmarks/bench_scoring.py --quick    # 400 sentences
    python benchmarks/bench_scoring.py --device cuda
    python benchmarks/bench_scoring.py --lowp bfloat16,float16   # + lower precision vs fp32
    python benchmarks/bench_scoring.py --arch modernbert --n 200  # any masked-LM architecture
    python benchmarks/bench_scoring.py --arch all --n 100         # every one, one line each

``--arch NAME`` (a transformers ``model_type`` of ``ARCHITECTURES`` in tests/tools/tiny_arch.py) builds that
architecture at the size its config class defaults to (base size for most; the vocabulary
size too) with random weights and a tokenizer of its kind (fmat.tiny), and prints how fmat
scored it (fast path or full head, padded or equal-length batches). ``--arch all`` runs every
architecture in turn and prints one summary line each (the table in docs/scoring.md).

``--lowp`` also scores every sentence with a copy of the model in each given dtype and prints
its sentences/s against fp32 and how far its log probabilities, and the LPRs formed from them
(male - female option of the same sentence), are from fp32's: fmat.run's ``dtype`` option.
``tf32`` in the list does the same with the fp32 model and TensorFlow-32 matrix products
allowed (a GPU's tensor cores; no effect on a CPU); the TF32 matmul peak is printed beside fp32's.

``--sweep 2k,4k,8k,16k,32k,64k`` times fmat.run alone at each number of padded tokens per pass
(the sentence cap lifted; best of ``--sweep-repeats``) and prints the fastest and the
``AUTO_BATCH[device]`` it calls for (``--sweep-only``: nothing else). ``--out FILE.json`` also
writes every figure to a JSON file (benchmarks/gpu_run.sh reads it); ``--tiny`` shrinks the
model (2 layers, hidden 32; the vocabulary kept) to test the script. Bad arguments stop it
before any work, in the ``fmat`` command's style (exit status 2).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_args import check_device, check_positive, int_list, usage_error

from fmat.errors import InputError

#: the model's size under --tiny (the vocabulary is kept: it matters at the MLM head)
TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}

QUERIES = [
    "The [MASK] {ATTRIB}.",
    "Most [MASK] {ATTRIB}.",
    "I think that the [MASK] {ATTRIB}.",
    "Everyone knows that [MASK] {ATTRIB}.",
    "In my opinion, the [MASK] {ATTRIB} every day.",
    "[MASK] {ATTRIB}.",
    "It is said that the [MASK] {ATTRIB} at work.",
    "My [MASK] {ATTRIB}.",
    "Usually the [MASK] {ATTRIB} in public.",
    "Our [MASK] {ATTRIB} more than others.",
    "The young [MASK] {ATTRIB}.",
    "Some [MASK] {ATTRIB}, as people often say.",
    "Every [MASK] {ATTRIB}.",
    "That [MASK] {ATTRIB}.",
    "Her [MASK] {ATTRIB}.",
    "His [MASK] {ATTRIB}.",
    "A [MASK] {ATTRIB}.",
    "This [MASK] {ATTRIB} in the city.",
    "Many [MASK] {ATTRIB} today.",
    "The old [MASK] {ATTRIB} at home.",
]
VERBS = ["likes", "prefers", "values", "avoids", "enjoys", "supports", "leads", "teaches", "helps", "studies"]
NOUNS = [
    "science",
    "children",
    "money",
    "family",
    "career goals",
    "music",
    "sports",
    "the team",
    "art",
    "politics",
    "cooking",
    "the poor",
    "nature",
    "history",
    "technology",
    "friends",
    "travel",
    "books",
    "fashion",
    "math",
]
MASK_WORDS = {"Male": ["man", "boy"], "Female": ["woman", "girl"]}


def attribs(n: int) -> list[str]:
    out = [f"{v} {o}" for v in VERBS for o in NOUNS]
    return out[:n]


def build(tmp: Path, n_sent: int, seed: int = 0, tiny: bool = False):
    from transformers import BertConfig, BertForMaskedLM

    from fmat.design import query
    from fmat.tiny import build_tokenizer

    n_attr = math.ceil(n_sent / len(QUERIES))
    data = query(QUERIES, MASK=MASK_WORDS, ATTRIB={"A": attribs(n_attr)})
    words = sorted(
        {w for q in QUERIES for w in q.replace("[MASK]", "").replace("{ATTRIB}", "").replace(".", " ").replace(",", " ").split()}
        | set(sum(MASK_WORDS.values(), []))
        | {w for a in attribs(n_attr) for w in a.split()}
    )
    tok = build_tokenizer("bert-uncased", words, tmp)
    size = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072)
    cfg = BertConfig(vocab_size=30522, max_position_embeddings=512, **(TINY if tiny else size))
    torch.manual_seed(seed)
    model = BertForMaskedLM(cfg).eval()
    return model, tok, data


#: every architecture at one size, BERT-base's (768 wide, 12 layers, 12 heads, 3,072 inner),
#: with its config's own vocabulary size; settings where an architecture names them otherwise
_BASE = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072}
_SEQ2SEQ = {
    "d_model": 768,
    "encoder_layers": 6,
    "decoder_layers": 6,
    "encoder_attention_heads": 12,
    "decoder_attention_heads": 12,
    "encoder_ffn_dim": 3072,
    "decoder_ffn_dim": 3072,
}
_BASE_FIXES = {
    "xmod": {"languages": ["en_XX"], "default_language": "en_XX"},
    "longformer": {"attention_window": 32},
    "big_bird": {"attention_type": "original_full"},
    "distilbert": {"dim": 768, "n_layers": 6, "n_heads": 12, "hidden_dim": 3072},
    "bart": _SEQ2SEQ,
    "mbart": _SEQ2SEQ,
    "mvp": _SEQ2SEQ,
    "flaubert": {"emb_dim": 768, "n_layers": 12, "n_heads": 12},
    "xlm": {"emb_dim": 768, "n_layers": 12, "n_heads": 12},
    "albert": {"embedding_size": 128},
    "rembert": {"input_embedding_size": 256},
    "nystromformer": {"num_landmarks": 64, "segment_means_seq_len": 64},
    "neomme": {"num_key_value_heads": 4, "head_dim": 64},
}
#: architectures benchmarked at their config's own default size (no BERT-base equivalent)
_OWN_SIZE = ("funnel", "mobilebert", "perceiver", "modernvbert", "ultravbert")
_TRAINED: dict = {}  # tokenizers trained once per kind across an --arch all run
#: architectures --arch all leaves out, and why
NOT_TIMED = {
    "roc_bert": "fmat refuses it (its tokenizer's extra per-token inputs)",
    "ultravbert": "building it at its default size took over 20 GB of memory here (killed)",
}


def build_arch(tmp: Path, mt: str, n_sent: int, seed: int = 0, tiny: bool = False):
    """``(model, tokenizer, data)``: architecture ``mt`` at its config's default size (random
    weights; vocabulary at least the tokenizer's), a tokenizer of its kind, FMAT-style queries."""
    import tiny_arch  # tests/tools: the test suite's builder of every architecture
    from transformers import AutoConfig, AutoModelForMaskedLM

    from fmat import tiny
    from fmat.design import query

    n_attr = math.ceil(n_sent / len(QUERIES))
    data = query(QUERIES, MASK=MASK_WORDS, ATTRIB={"A": attribs(n_attr)})
    words = sorted(
        {w for q in QUERIES for w in q.replace("[MASK]", "").replace("{ATTRIB}", "").replace(".", " ").replace(",", " ").split()}
        | set(sum(MASK_WORDS.values(), []))
        | {w for a in attribs(n_attr) for w in a.split()}
    )
    if "corpus" not in _TRAINED:
        _TRAINED["corpus"] = tiny.make_corpus(words, seed=seed)
    tok = tiny_arch.arch_tokenizer(mt, tmp, _TRAINED, _TRAINED["corpus"], words)
    extra = dict(tiny_arch.ARCHITECTURES[mt][2])
    kw = {k: getattr(tok, f"{k.split('_')[0]}_token_id", None) for k in ("pad_token_id", "bos_token_id", "eos_token_id")}
    fixes = {} if mt in _OWN_SIZE or mt in ("distilbert", "bart", "mbart", "mvp", "flaubert", "xlm") else dict(_BASE)
    fixes.update(_BASE_FIXES.get(mt, {}))
    if tiny and "hidden_size" in fixes:  # --tiny: BERT-like configurations only
        fixes.update(TINY)
    if "text_config" in extra:  # vision-and-text: the default text model, a tiny (unused) vision tower
        fixes = {"vision_config": tiny_arch._TINY_VISION, "text_config": {"model_type": extra["text_config"]["model_type"], **kw}}
    default = AutoConfig.for_model(mt, **{k: v for k, v in fixes.items() if v is not None})
    text = getattr(default, "text_config", None)
    vocab = max(getattr(text or default, "vocab_size", 0) or 0, len(tok))
    if text is not None:
        fixes["text_config"] = {**fixes["text_config"], "vocab_size": vocab}
        config = AutoConfig.for_model(mt, **{**kw, **fixes})
    else:
        config = AutoConfig.for_model(mt, **{**kw, **{k: v for k, v in fixes.items() if v is not None}, "vocab_size": vocab})
    torch.manual_seed(seed)
    model = AutoModelForMaskedLM.from_config(config).eval()
    return model, tok, data


def matmul_peak(device, seconds: float = 3.0, tf32: bool = False) -> float:
    """Best fp32 GFLOP/s of torch.matmul on square and encoder-shaped products (``tf32``: with
    TF32 matrix products allowed, a GPU's tensor-core rate for fp32 data)."""
    best = 0.0
    shapes = [(2048, 2048, 2048), (512, 768, 3072), (512, 3072, 768), (1024, 768, 768)]
    if device.type == "cuda":
        shapes = [(8192, 8192, 8192), (4096, 768, 3072), (4096, 3072, 768)]
    with tf32_matmul(tf32):
        for m, k, n in shapes:
            a = torch.randn(m, k, device=device)
            b = torch.randn(k, n, device=device)
            torch.matmul(a, b)
            t_end = time.perf_counter() + seconds / len(shapes)
            while time.perf_counter() < t_end:
                _sync(device)
                t = time.perf_counter()
                for _ in range(3):
                    torch.matmul(a, b)
                _sync(device)
                best = max(best, gflops(m, k, n, (time.perf_counter() - t) / 3))
    return best


def gflops(m: int, k: int, n: int, seconds: float) -> float:
    """GFLOP/s of an (m x k) @ (k x n) product that took ``seconds``: 2 m k n FLOPs."""
    return 2.0 * m * k * n / seconds / 1e9


@contextlib.contextmanager
def tf32_matmul(enabled: bool = True):
    """Within the block, fp32 matrix products on a CUDA device may use TF32 (tensor cores: 10
    mantissa bits instead of 23) when ``enabled``; the setting before is restored after."""
    if not enabled:
        yield
        return
    mm = torch.backends.cuda.matmul
    if hasattr(mm, "fp32_precision"):  # torch >= 2.9's setting
        before = mm.fp32_precision
        mm.fp32_precision = "tf32"
        try:
            yield
        finally:
            mm.fp32_precision = before
    else:  # pragma: no cover - older torch
        before = mm.allow_tf32
        mm.allow_tf32 = True
        try:
            yield
        finally:
            mm.allow_tf32 = before


def best_sweep(results: list[dict], within: float = 0.03) -> dict:
    """The sweep's choice: of ``results`` (``max_tokens``, ``sps``: sentences/s), the smallest
    ``max_tokens`` within ``within`` (3%) of the fastest: bigger passes only cost memory unless
    they are faster by more than the timing's noise."""
    if not results:
        raise ValueError("no sweep results")
    fastest = max(r["sps"] for r in results)
    return min((r for r in results if r["sps"] >= (1 - within) * fastest), key=lambda r: r["max_tokens"])


def next_pow2(x: int) -> int:
    """The smallest power of two that is at least ``x`` (at least 1)."""
    return 1 << max(0, int(x) - 1).bit_length()


def auto_batch_advice(device_type: str, best: dict, current: tuple[int, int]) -> str:
    """The line that says what ``fmat.scoring.AUTO_BATCH[device_type]`` should be after a sweep:
    the fastest tokens per pass, and a sentence cap (a power of two) that does not bind there."""
    cap = max(current[1], next_pow2(best["most_sentences"]))
    new = (int(best["max_tokens"]), int(cap))
    verdict = "keep it" if new == tuple(current) else f"set it to {new}"
    return f"AUTO_BATCH[{device_type!r}] is {tuple(current)}: {verdict} (the sweep's fastest: {best['sps']:.0f} sentences/s)"


def sweep(model, tok, data, device, values: list[int], repeats: int = 3) -> list[dict]:
    """fmat.run alone at each ``max_tokens`` of ``values`` (the sentence cap lifted to it): the
    best of ``repeats`` timings of every sentence of ``data``, as sentences/s; passes and the
    most sentences in one pass (fmat.scoring.plan_batches' plan for these lengths)."""
    from fmat.scoring import fill_sentences, plan_batches, score_model

    sents = list(dict.fromkeys(fill_sentences(data, tok.mask_token).tolist()))
    lengths = np.array([len(tok(s)["input_ids"]) for s in sents])
    out = []
    for mt in values:
        score_model(model, tok, data.iloc[:8], progress=False, batch_size=mt, max_tokens=mt)  # warm-up
        best = math.inf
        for _ in range(repeats):
            _sync(device)
            t = time.perf_counter()
            score_model(model, tok, data, progress=False, batch_size=mt, max_tokens=mt)
            _sync(device)
            best = min(best, time.perf_counter() - t)
        plan = plan_batches(lengths, mt, mt, device.type)
        out.append(
            dict(max_tokens=mt, sps=len(sents) / best, seconds=best, passes=len(plan), most_sentences=max(len(b) for b in plan))
        )
        print(f"sweep: max_tokens {mt:6d}: {out[-1]['sps']:9.1f} sentences/s ({len(plan)} passes)", flush=True)
    return out


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def model_flops(lengths, cfg) -> float:
    """2 × multiply-adds of the encoder on real tokens + the MLM head at one mask per sentence."""
    H, I, Lyr, V = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers, cfg.vocab_size
    total = 0.0
    for L in lengths:
        per_layer = L * (4 * H * H + 2 * H * I) + 2 * L * L * H  # QKVO + FFN; QK^T and AV
        total += Lyr * per_layer + (H * H + H * V)  # head transform + decoder at the mask
    return 2.0 * total


PROG = "bench_scoring.py"
#: what --lowp compares with fp32: fmat.run's dtypes, and TF32 matrix products on the fp32 model
LOWP = ("bfloat16", "bf16", "float16", "fp16", "tf32")


def parse_args(argv):
    """The arguments, checked (issue 55): a bad one stops here, in the ``fmat`` command's style, exit 2."""
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000, help="number of unique sentences (default 2000)")
    ap.add_argument("--quick", action="store_true", help="400 sentences")
    ap.add_argument("--chunks", type=int, default=0, help="alternation chunks (default: one per ~200 sentences)")
    ap.add_argument("--batch-size", type=int, default=None, help="sentences per pass (default: automatic)")
    ap.add_argument("--max-tokens", type=int, default=None, help="padded tokens per pass (default: automatic)")
    ap.add_argument("--device", default="cpu", help="cpu | cuda | cuda:N | mps (default cpu)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument(
        "--lowp", default="", help="comma-separated dtypes to compare with fp32, e.g. bfloat16,float16; tf32: TF32 matmuls"
    )
    ap.add_argument(
        "--arch",
        default="",
        help="a transformers model_type (ARCHITECTURES of tests/tools/tiny_arch.py) at "
        "its default "
        "size instead of bert-base; 'all': every one, a line each",
    )
    ap.add_argument("--tiny", action="store_true", help="2 layers, hidden 32, the vocabulary kept (tests the script)")
    ap.add_argument("--sweep", default="", help="padded tokens per pass to time fmat.run at, e.g. 2k,4k,8k,16k,32k,64k")
    ap.add_argument("--sweep-only", action="store_true", help="with --sweep: the sweep alone (no FMAT's way, no agreement)")
    ap.add_argument("--sweep-repeats", type=int, default=3, help="timings of each --sweep value; the best counts (default 3)")
    ap.add_argument("--out", default=None, help="also write every figure to this JSON file")
    args = ap.parse_args(argv)
    try:
        check_positive(args.n, "--n", 2000, allow_none=False)
        check_positive(args.chunks or None, "--chunks", 10)
        check_positive(args.batch_size, "--batch-size", 64)
        check_positive(args.max_tokens, "--max-tokens", 1024)
        check_positive(args.threads, "--threads", 2)
        check_positive(args.sweep_repeats, "--sweep-repeats", 3, allow_none=False)
        args.device = check_device(args.device)
        args.lowp = [d.strip() for d in args.lowp.split(",") if d.strip()]
        bad = [d for d in args.lowp if d not in LOWP]
        if bad:
            raise InputError(f"unknown {', '.join(map(repr, bad))}", where="--lowp", fix="use any of bfloat16, float16, tf32")
        if args.arch and args.arch != "all":
            import tiny_arch

            if args.arch not in tiny_arch.ARCHITECTURES:
                raise InputError(
                    f"unknown architecture {args.arch!r}",
                    where="--arch",
                    fix=f"use 'all' or a model_type of tests/tools/tiny_arch.py: {', '.join(tiny_arch.ARCHITECTURES)}",
                )
        args.sweep = int_list(args.sweep, "--sweep", "2k,4k,8k") if args.sweep else []
        if args.sweep_only and not args.sweep:
            raise InputError("--sweep-only needs --sweep", where="--sweep-only", fix="add e.g. --sweep 2k,4k,8k")
        if args.out:
            if args.arch == "all":
                raise InputError("one file cannot hold every architecture", where="--out", fix="use --out with one --arch")
            folder = Path(args.out).resolve().parent
            if not folder.is_dir():
                raise InputError(f"the folder {folder} does not exist", where=f"--out {args.out}", fix="create it first")
    except InputError as err:
        usage_error(PROG, err)
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.arch == "all":
        import tiny_arch

        rc = 0
        for mt in tiny_arch.ARCHITECTURES:
            if mt in NOT_TIMED:
                print(f"SUMMARY {mt}\tnot timed: {NOT_TIMED[mt]}")
                continue
            try:
                rc |= main([*_without_arch(argv if argv is not None else sys.argv[1:]), "--arch", mt])
            except Exception as err:
                print(f"SUMMARY {mt}\tERROR {type(err).__name__}: {str(err).splitlines()[0][:200]}")
                rc = 1
        return rc
    n = 400 if args.quick else args.n
    if args.threads:
        torch.set_num_threads(args.threads)
    device = args.device
    rec: dict = {
        "device": str(device),
        "device_name": device_name(device),
        "torch": torch.__version__,
        "arch": args.arch or "bert",
    }
    rec["tiny"] = args.tiny
    warnings.filterwarnings("ignore")
    from transformers import pipeline
    from transformers.utils import logging as hf_logging

    from fmat.scoring import fill_sentences, plan_batches, score_model

    hf_logging.set_verbosity_error()
    with tempfile.TemporaryDirectory() as tmp:
        t_build = time.perf_counter()
        if args.arch:
            model, tok, data = build_arch(Path(tmp), args.arch, n, tiny=args.tiny)
        else:
            model, tok, data = build(Path(tmp), n, tiny=args.tiny)
        t_build = time.perf_counter() - t_build
    model.to(device)
    sent_all = fill_sentences(data, tok.mask_token)
    uniq = list(dict.fromkeys(sent_all.tolist()))[:n]
    keep = np.isin(sent_all, uniq)
    data = data[keep].reset_index(drop=True)
    sent_all = sent_all[keep]
    n = len(uniq)
    rec["sentences"] = n
    if args.sweep_only:
        return run_sweep(args, model, tok, data, device, rec)
    n_chunks = args.chunks or max(2, round(n / 200))
    chunks = np.array_split(np.arange(n), n_chunks)
    pipe = pipeline("fill-mask", model=model, tokenizer=tok, device=device)
    from fmat.scoring import derive_options, scoring_path

    # the pipeline's targets: each option's whole-word token (what FMAT's name rules give on the paper's models)
    opts = derive_options(tok, list(sent_all), data["M_word"].astype(str).tolist())
    target = np.array([tok.convert_ids_to_tokens(o.pieces[0]) for o in opts], dtype=object)
    oov = np.array([o.oov for o in opts])
    t_pipe = t_fmat = 0.0
    peaks = []
    logp_pipe = np.full(len(data), np.nan)
    logp_fmat = np.full(len(data), np.nan)
    # warm-up both
    batching = dict(batch_size=args.batch_size, max_tokens=args.max_tokens)
    score_model(model, tok, data.iloc[:8], progress=False, **batching)
    pipe(uniq[0], targets=[target[0]], top_k=1)
    for ci, idx in enumerate(chunks):
        sents = [uniq[i] for i in idx]
        rows = np.flatnonzero(np.isin(sent_all, sents))
        order = ("pipe", "fmat") if ci % 2 == 0 else ("fmat", "pipe")
        for who in order:
            _sync(device)
            t = time.perf_counter()
            if who == "pipe":
                got = {}
                for s in sents:  # FMAT's way: one call per unique sentence, all options as targets
                    r_s = rows[sent_all[rows] == s]
                    ts = list(dict.fromkeys(target[r_s]))
                    res = pipe(s, targets=ts, top_k=len(ts))
                    got[s] = {tok.convert_ids_to_tokens(d["token"]): d["score"] for d in res}
                _sync(device)
                t_pipe += time.perf_counter() - t
                for r in rows:
                    if not oov[r]:
                        p = got[sent_all[r]][target[r]]
                        logp_pipe[r] = math.log(p) if p > 0 else -math.inf  # fp32 underflow (random weights)
            else:
                res = score_model(model, tok, data.iloc[rows], progress=False, **batching)
                _sync(device)
                t_fmat += time.perf_counter() - t
                logp_fmat[rows] = res["logp"].to_numpy()
        peaks.append(matmul_peak(device, seconds=1.0))  # the peak under the same load as this chunk
        print(f"chunk {ci + 1}/{len(chunks)} done", end="\r", file=sys.stderr)
    lengths = [len(tok(s)["input_ids"]) for s in uniq]
    plan = [len(b) for idx in chunks for b in plan_batches(np.array(lengths)[idx], args.batch_size, args.max_tokens, device.type)]
    try:
        flops = model_flops(lengths, model.config)
    except (AttributeError, TypeError):  # an architecture whose config names its sizes otherwise
        flops = float("nan")
    peak = float(np.mean(peaks))
    sps_pipe, sps_fmat = n / t_pipe, n / t_fmat
    achieved = flops / t_fmat / 1e9
    path = scoring_path(model, tok)
    print()
    if args.arch:
        params = sum(p.numel() for p in model.parameters())
        print(
            f"architecture: {args.arch} ({type(model).__name__}, {params / 1e6:.0f}M parameters, vocabulary "
            f"{model.get_input_embeddings().weight.shape[0] if hasattr(model.get_input_embeddings(), 'weight') else '?'},"
            f" built in {t_build:.0f} s); fmat.run: {path.describe()}"
        )
    print(
        f"machine: {platform.processor() or platform.machine()}, torch {torch.__version__}, "
        f"threads {torch.get_num_threads()}, device {device}"
    )
    print(f"sentences: {n} unique ({len(data)} rows, mean {np.mean(lengths):.1f} tokens), {len(chunks)} alternating chunks")
    print(
        f"batches: {'batch_size=%s ' % args.batch_size if args.batch_size else ''}"
        f"{'max_tokens=%s' % args.max_tokens if args.max_tokens else ''}"
        f"{'automatic (fmat.scoring.AUTO_BATCH)' if not (args.batch_size or args.max_tokens) else ''}: "
        f"{len(plan)} passes of {min(plan)}-{max(plan)} sentences (mean {np.mean(plan):.0f})"
    )
    print(f"FMAT's way (pipeline per sentence): {sps_pipe:8.1f} sentences/s  ({t_pipe:.1f} s)")
    print(f"fmat.run (batched, head at mask):   {sps_fmat:8.1f} sentences/s  ({t_fmat:.1f} s)")
    print(f"speed ratio: {sps_fmat / sps_pipe:.2f}x")
    finite = np.isfinite(logp_pipe) & np.isfinite(logp_fmat)  # options both score (not OOV, no underflow)
    delta = float(np.max(np.abs(logp_pipe - logp_fmat)[finite])) if finite.any() else float("nan")
    print(f"max |delta log prob|: {delta:.2e}" + (f" ({finite.sum()} of {len(finite)} rows)" if not finite.all() else ""))
    if args.arch:
        print(
            f"SUMMARY {args.arch}\t{type(model).__name__}\t{path.head}\t{path.padding}\t{sps_pipe:.1f}\t"
            f"{sps_fmat:.1f}\t{sps_fmat / sps_pipe:.2f}\t{delta:.1e}"
        )
    print(
        f"model FLOPs: {flops / 1e9:.1f} GFLOP; fmat.run reaches {achieved:.1f} GFLOP/s = "
        f"{100 * achieved / peak:.0f}% of the fp32 matmul peak ({peak:.1f} GFLOP/s: mean over chunks of the "
        f"peak measured right after each chunk; range {min(peaks):.1f}-{max(peaks):.1f})"
    )
    peak_tf32 = matmul_peak(device, seconds=1.0, tf32=True) if "tf32" in args.lowp or device.type == "cuda" else None
    if peak_tf32 is not None:
        print(
            f"TF32 matmul peak: {peak_tf32:.1f} GFLOP/s ({peak_tf32 / peak:.1f}x fp32's"
            + ("; a CPU has no TF32: the same fp32 products)" if device.type != "cuda" else ")")
            + f"; fmat.run in fp32 reaches {100 * achieved / peak_tf32:.0f}% of it"
        )
    rec.update(
        rows=len(data),
        mean_tokens=float(np.mean(lengths)),
        passes=len(plan),
        sps_fmat=sps_fmat,
        sps_fmat_way=sps_pipe,
        speed_ratio=sps_fmat / sps_pipe,
        max_dlogp_fmat_way=delta,
        gflops=achieved,
        peak_fp32=peak,
        share_fp32=achieved / peak,
        peak_tf32=peak_tf32,
        share_tf32=achieved / peak_tf32 if peak_tf32 else None,
    )
    rec["cpu_agreement"] = cpu_reference(model, tok, data, sent_all, uniq[:200], logp_fmat, device)
    rec["lowp"] = {}
    for dt in args.lowp:
        rec["lowp"][dt] = lowp(model, tok, data, dt, logp_fmat, n, t_fmat, batching, device)
    if args.sweep:
        return run_sweep(args, model, tok, data, device, rec)
    write_json(args.out, rec)
    return 0


def device_name(device) -> str:
    """The GPU's name, or the CPU's model (``/proc/cpuinfo``; the platform's words elsewhere)."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    try:
        with open("/proc/cpuinfo") as f:
            return next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def run_sweep(args, model, tok, data, device, rec: dict) -> int:
    """The ``--sweep``: time, print and record fmat.run at each padded-tokens value, and the
    AUTO_BATCH line for this device."""
    from fmat.scoring import AUTO_BATCH

    results = sweep(model, tok, data, device, args.sweep, args.sweep_repeats)
    best = best_sweep(results)
    current = AUTO_BATCH.get(device.type, AUTO_BATCH["cpu"])
    advice = auto_batch_advice(device.type, best, current)
    most = best["most_sentences"]
    print(f"sweep best: max_tokens {best['max_tokens']} ({best['sps']:.1f} sentences/s, {most} sentences a pass at most)")
    print(advice)
    rec.update(sweep=results, sweep_best=best, auto_batch_now=list(current), auto_batch_advice=advice)
    write_json(args.out, rec)
    return 0


def write_json(path, rec: dict) -> None:
    """``rec`` to ``path`` as JSON (NaN and infinities as null); nothing when ``path`` is None."""
    if not path:
        return

    def clean(x):
        if isinstance(x, dict):
            return {str(k): clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        if isinstance(x, (float, np.floating)):
            return float(x) if math.isfinite(x) else None
        if isinstance(x, np.integer):
            return int(x)
        return x

    Path(path).write_text(json.dumps(clean(rec), indent=1) + "\n")


def _without_arch(argv):
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--arch":
            skip = True
            continue
        if not a.startswith("--arch="):
            out.append(a)
    return out


def cpu_reference(model, tok, data, sent_all, sents, logp, device) -> float:
    """Max |Δ log p| between this run's scores and the CPU scoring one sentence a pass (no padding).

    On a GPU this is the CPU↔GPU agreement; on the CPU it checks that batching changes nothing.
    """
    import copy

    from fmat.scoring import score_model

    rows = np.flatnonzero(np.isin(sent_all, sents))
    m = model if device.type == "cpu" else copy.deepcopy(model).to("cpu")
    ref = score_model(m, tok, data.iloc[rows], progress=False, batch_size=1)["logp"].to_numpy()
    worst = float(np.nanmax(np.abs(ref - logp[rows])))
    print(
        f"agreement with the CPU scoring one sentence a pass ({len(sents)} sentences, {len(rows)} rows): "
        f"max |delta log prob| {worst:.2e}"
    )
    return worst


def lowp(model, tok, data, dtype: str, logp32, n: int, sec32: float, batching: dict, device) -> dict:
    """Sentences/s and deviation from fp32 of the model cast to ``dtype`` (fmat.run's ``dtype``);
    ``dtype`` "tf32": the fp32 model with TF32 matrix products allowed (:func:`tf32_matmul`).

    ``logp32``, ``sec32``: fp32's log probabilities of ``data`` and its seconds for its ``n`` sentences.
    Returns the printed figures."""
    import copy

    from fmat.lpr import summary
    from fmat.models import resolve_dtype
    from fmat.scoring import score_model

    m = model if dtype == "tf32" else copy.deepcopy(model).to(resolve_dtype(dtype))
    with tf32_matmul(dtype == "tf32"):
        score_model(m, tok, data.iloc[:8], progress=False, **batching)
        _sync(device)
        t = time.perf_counter()
        res = score_model(m, tok, data, progress=False, **batching)
        _sync(device)
        sec = time.perf_counter() - t
    d = np.abs(res["logp"].to_numpy() - logp32)
    d = d[np.isfinite(d)]
    lpr = {}
    for label, lp in (("fp32", logp32), (dtype, res["logp"].to_numpy())):
        s = data.assign(prob=np.exp(lp), model="m")
        lpr[label] = summary(s, target_pair=False, attrib_pair=False)["LPR"].to_numpy()
    dl = np.abs(lpr[dtype] - lpr["fp32"])
    dl = dl[np.isfinite(dl)]
    print(
        f"{dtype}: {n / sec:8.1f} sentences/s ({sec32 / sec:.2f}x fp32); |delta log prob| vs fp32: median "
        f"{np.median(d):.1e}, 99th pct {np.quantile(d, 0.99):.1e}, max {d.max():.1e}; |delta LPR| (M - F, "
        f"{len(dl)} contrasts): median {np.median(dl):.1e}, max {dl.max():.1e}"
        + ("" if dtype != "tf32" or device.type == "cuda" else " (a CPU has no TF32: fp32 again)")
    )
    if m is not model:
        del m
    return dict(
        sps=n / sec,
        speedup=sec32 / sec,
        logp_median=float(np.median(d)),
        logp_p99=float(np.quantile(d, 0.99)),
        logp_max=float(d.max()),
        lpr_median=float(np.median(dl)),
        lpr_max=float(dl.max()),
        contrasts=int(len(dl)),
    )


if __name__ == "__main__":
    sys.exit(main())
