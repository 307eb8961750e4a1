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
"""

from __future__ import annotations

import argparse
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


def build(tmp: Path, n_sent: int, seed: int = 0):
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
    cfg = BertConfig(
        vocab_size=30522,
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=3072,
        max_position_embeddings=512,
    )
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


def build_arch(tmp: Path, mt: str, n_sent: int, seed: int = 0):
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


def matmul_peak(device, seconds: float = 3.0) -> float:
    """Best fp32 GFLOP/s of torch.matmul on square and encoder-shaped products."""
    best = 0.0
    shapes = [(2048, 2048, 2048), (512, 768, 3072), (512, 3072, 768), (1024, 768, 768)]
    if device.type == "cuda":
        shapes = [(8192, 8192, 8192), (4096, 768, 3072), (4096, 3072, 768)]
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
            dt = (time.perf_counter() - t) / 3
            best = max(best, 2 * m * k * n / dt / 1e9)
    return best


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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000, help="number of unique sentences (default 2000)")
    ap.add_argument("--quick", action="store_true", help="400 sentences")
    ap.add_argument("--chunks", type=int, default=0, help="alternation chunks (default: one per ~200 sentences)")
    ap.add_argument("--batch-size", type=int, default=None, help="sentences per pass (default: automatic)")
    ap.add_argument("--max-tokens", type=int, default=None, help="padded tokens per pass (default: automatic)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--lowp", default="", help="comma-separated dtypes to compare with fp32, e.g. bfloat16,float16")
    ap.add_argument(
        "--arch",
        default="",
        help="a transformers model_type (ARCHITECTURES of tests/tools/tiny_arch.py) at "
        "its default "
        "size instead of bert-base; 'all': every one, a line each",
    )
    args = ap.parse_args(argv)
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
    device = torch.device(args.device)
    warnings.filterwarnings("ignore")
    from transformers import pipeline
    from transformers.utils import logging as hf_logging

    from fmat.scoring import fill_sentences, plan_batches, score_model

    hf_logging.set_verbosity_error()
    with tempfile.TemporaryDirectory() as tmp:
        t_build = time.perf_counter()
        model, tok, data = build_arch(Path(tmp), args.arch, n) if args.arch else build(Path(tmp), n)
        t_build = time.perf_counter() - t_build
    model.to(device)
    sent_all = fill_sentences(data, tok.mask_token)
    uniq = list(dict.fromkeys(sent_all.tolist()))[:n]
    keep = np.isin(sent_all, uniq)
    data = data[keep].reset_index(drop=True)
    sent_all = sent_all[keep]
    n = len(uniq)
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
    cpu_reference(model, tok, data, sent_all, uniq[:200], logp_fmat, device)
    for dt in filter(None, args.lowp.split(",")):
        lowp(model, tok, data, dt.strip(), logp_fmat, n, t_fmat, batching, device)
    return 0


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


def cpu_reference(model, tok, data, sent_all, sents, logp, device) -> None:
    """Max |Δ log p| between this run's scores and the CPU scoring one sentence a pass (no padding).

    On a GPU this is the CPU↔GPU agreement; on the CPU it checks that batching changes nothing.
    """
    import copy

    from fmat.scoring import score_model

    rows = np.flatnonzero(np.isin(sent_all, sents))
    m = model if device.type == "cpu" else copy.deepcopy(model).to("cpu")
    ref = score_model(m, tok, data.iloc[rows], progress=False, batch_size=1)["logp"].to_numpy()
    print(
        f"agreement with the CPU scoring one sentence a pass ({len(sents)} sentences, {len(rows)} rows): "
        f"max |delta log prob| {np.nanmax(np.abs(ref - logp[rows])):.2e}"
    )


def lowp(model, tok, data, dtype: str, logp32, n: int, sec32: float, batching: dict, device) -> None:
    """Sentences/s and deviation from fp32 of the model cast to ``dtype`` (fmat.run's ``dtype``).

    ``logp32``, ``sec32``: fp32's log probabilities of ``data`` and its seconds for its ``n`` sentences."""
    import copy

    from fmat.lpr import summary
    from fmat.models import resolve_dtype
    from fmat.scoring import score_model

    m = copy.deepcopy(model).to(resolve_dtype(dtype))
    score_model(m, tok, data.iloc[:8], progress=False, **batching)
    _sync(device)
    t = time.perf_counter()
    res = score_model(m, tok, data, progress=False, **batching)
    _sync(device)
    sec = time.perf_counter() - t
    d = np.abs(res["logp"].to_numpy() - logp32)
    lpr = {}
    for label, lp in (("fp32", logp32), (dtype, res["logp"].to_numpy())):
        s = data.assign(prob=np.exp(lp), model="m")
        lpr[label] = summary(s, target_pair=False, attrib_pair=False)["LPR"].to_numpy()
    dl = np.abs(lpr[dtype] - lpr["fp32"])
    print(
        f"{dtype}: {n / sec:8.1f} sentences/s ({sec32 / sec:.2f}x fp32); |delta log prob| vs fp32: median "
        f"{np.median(d):.1e}, 99th pct {np.quantile(d, 0.99):.1e}, max {d.max():.1e}; |delta LPR| (M - F, "
        f"{len(dl)} contrasts): median {np.median(dl):.1e}, max {dl.max():.1e}"
    )
    del m


if __name__ == "__main__":
    sys.exit(main())
