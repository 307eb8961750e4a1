"""The benchmarks' own arithmetic and a small run of each (their speed figures live in docs, not here)."""

from __future__ import annotations

import mmap
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_calibration
import bench_paper
import bench_scoring


def test_model_flops_equals_torch_flop_counter():
    """bench_scoring.model_flops (the FLOPs the share of the matmul peak counts) against
    torch.utils.flop_counter on the same computation: the encoder on each sentence (no
    padding; eager attention so that QK^T and AV are counted too) and the MLM head at one mask."""
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import BertConfig, BertForMaskedLM

    cfg = BertConfig(
        vocab_size=500,
        hidden_size=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        intermediate_size=96,
        attn_implementation="eager",
    )
    torch.manual_seed(0)
    model = BertForMaskedLM(cfg).eval()
    lengths = [5, 9, 16]
    counted = 0
    with torch.inference_mode():
        for L in lengths:
            counter = FlopCounterMode(display=False)
            with counter:
                hidden = model.bert(input_ids=torch.randint(5, 500, (1, L)))[0]
                model.cls(hidden[:, 2])
            counted += counter.get_total_flops()
    assert bench_scoring.model_flops(lengths, cfg) == counted


def test_bench_scoring_small_run(capsys):
    """The whole script on 40 sentences, with a lower-precision line: every figure is printed,
    fmat.run agrees with FMAT's way and with one-sentence passes."""
    assert bench_scoring.main(["--n", "40", "--chunks", "2", "--lowp", "bfloat16"]) == 0
    out = capsys.readouterr().out
    for what in (
        "FMAT's way",
        "fmat.run",
        "speed ratio",
        "of the fp32 matmul peak",
        "batches: automatic",
        "agreement with the CPU",
        "bfloat16:",
    ):
        assert what in out
    delta = float(out.split("max |delta log prob|: ")[1].split()[0])
    assert delta <= 1e-5
    agree = float(out.split("agreement with the CPU")[1].split("max |delta log prob| ")[1].split()[0])
    assert agree <= 1e-5


def test_bench_scoring_any_architecture(capsys):
    """--arch times another architecture at BERT-base's size (vocabulary of its own config),
    says how fmat ran it, and fmat.run agrees with FMAT's way on it."""
    assert bench_scoring.main(["--arch", "distilbert", "--n", "20", "--chunks", "2"]) == 0
    out = capsys.readouterr().out
    assert "architecture: distilbert (DistilBertForMaskedLM, 67M parameters, vocabulary 30522" in out
    line = next(x for x in out.splitlines() if x.startswith("SUMMARY distilbert"))
    name, cls, head, padding, fmat_way, ours, ratio, delta = line.split("\t")
    assert (cls, head, padding) == ("DistilBertForMaskedLM", "fast", "padded")
    assert float(ratio) == pytest.approx(float(ours) / float(fmat_way), rel=0.02) and float(delta) <= 1e-5
    assert bench_scoring._without_arch(["--n", "5", "--arch", "all", "--arch=x", "--quick"]) == ["--n", "5", "--quick"]


def test_matmul_peak_is_positive_and_finite():
    peak = bench_scoring.matmul_peak(torch.device("cpu"), seconds=0.2)
    assert 0 < peak < float("inf")


# ---------------------------------------------------------------- bench_paper.py (the whole paper)


def test_paper_architectures_build_the_published_parameter_counts():
    """ARCHS, built as transformers models, have the published models' parameter counts (hub
    model cards / config.json: BERT-base 110M, BERT-large 335M, DistilBERT 66M, ALBERT-base 12M,
    RoBERTa-base 125M, DistilRoBERTa 82M, BERTweet-base 135M, BERTweet-large 355M), within 1%."""
    import transformers

    published = {
        "bert-base-uncased": 109.5e6,
        "bert-base-cased": 108.3e6,
        "bert-large-uncased": 335.1e6,
        "distilbert-base-uncased": 66.4e6,
        "albert-base-v2": 11.7e6,
        "roberta-base": 124.6e6,
        "distilroberta-base": 82.1e6,
        "vinai/bertweet-base": 134.9e6,
        "vinai/bertweet-large": 355.4e6,
    }

    class Tok:  # the special-token ids hf_config reads
        pad_token_id, bos_token_id, eos_token_id, cls_token_id, sep_token_id = 1, 0, 2, 2, 3

        def __len__(self):
            return 100

    cls = {"bert": "BertModel", "distilbert": "DistilBertModel", "albert": "AlbertModel", "roberta": "RobertaModel"}
    for name, n in published.items():
        a = bench_paper.ARCHS[name]
        with torch.device("meta"):
            model = getattr(transformers, cls[a.kind])(bench_paper.hf_config(a, Tok()))
        got = sum(p.numel() for p in model.parameters())
        assert abs(got - n) / n < 0.01, (name, got, n)
    assert set(bench_paper.ARCHS) == set(
        yaml.safe_load((Path(__file__).resolve().parents[1] / "config/config.yaml").read_text())["models"]
    )


def test_arch_flops_equals_torch_flop_counter():
    """bench_paper.arch_flops against torch.utils.flop_counter on whole MLM forwards (head at every
    position) of a small BERT, ALBERT (factorised embedding) and DistilBERT, eager attention."""
    from torch.utils.flop_counter import FlopCounterMode

    class Tok:
        pad_token_id, bos_token_id, eos_token_id, cls_token_id, sep_token_id = 1, 0, 2, 2, 3

        def __len__(self):
            return 100

    import transformers

    lengths = [5, 9, 16]
    for kind, cls in (
        ("bert", "BertForMaskedLM"),
        ("albert", "AlbertForMaskedLM"),
        ("distilbert", "DistilBertForMaskedLM"),
        ("roberta", "RobertaForMaskedLM"),
    ):
        a = bench_paper.Arch(kind, "x", 3, 64, 96, 4, 500, 40, embedding=16 if kind == "albert" else None)
        cfg = bench_paper.hf_config(a, Tok())
        cfg._attn_implementation = "eager"
        torch.manual_seed(0)
        model = getattr(transformers, cls)(cfg).eval()
        counted = 0
        with torch.inference_mode():
            for L in lengths:
                counter = FlopCounterMode(display=False)
                with counter:
                    model(input_ids=torch.randint(5, 100, (1, L)))
                counted += counter.get_total_flops()
        assert bench_paper.arch_flops(lengths, a, head_positions=lengths) == counted, kind


def test_sample_queries_draws_a_fraction_of_each_study():
    import pandas as pd

    from fmat.design import query

    t = query(["The [MASK] is {TARGET}."], MASK={"M": ["man"], "F": ["woman"]}, TARGET={"T": [f"w{i}" for i in range(50)]})
    small = query(["A [MASK] {TARGET}."], MASK={"M": ["man"], "F": ["woman"]}, TARGET={"T": ["a", "b", "c"]})
    got = bench_paper.sample_queries({"big": t, "small": small}, 0.1, least=2)
    sub, n, k = got["big"]
    assert (n, k) == (50, 5) and len(sub) == 10 and isinstance(sub, pd.DataFrame)
    assert set(sub["M_word"].astype(str)) == {"man", "woman"}  # every row of a drawn sentence
    assert got["small"][1:] == (3, 2) and len(got["small"][0]) == 4
    assert bench_paper.sample_queries({"small": small}, 0.1, least=10)["small"][1:] == (3, 3)
    assert bench_paper.extrapolate({"big": 2.0, "small": 1.0}, got) == 2.0 * 10 + 1.0 * 1.5


def test_paper_queries_are_the_papers_work():
    """The 15 studies' query tables: 42,860 rows and 16,208 unique sentences, as issue #21 counts."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        tables = bench_paper.paper_queries(Path(tmp))
    got = bench_paper.sample_queries(tables, 1.0)
    assert sum(len(t) for t in tables.values()) == 42860
    assert sum(s[1] for s in got.values()) == 16208 and got["1C"][1] == 15328


def test_peak_memory_cpu_and_cuda(monkeypatch):
    """CPU: the RSS seen while a block allocates ~200 MB. CUDA (no GPU here): the path resets and
    reads torch.cuda's peak counters, checked with stand-ins."""
    # fresh anonymous pages, each touched: resident whatever the allocator kept from earlier tests
    # (a tensor can reuse a freed heap that is resident already: then RSS does not grow)
    size = 200_000_000
    with bench_paper.PeakMemory("cpu", interval=0.005) as mem:
        before = bench_paper.rss()
        x = mmap.mmap(-1, size)
        for i in range(0, size, mmap.PAGESIZE):
            x[i] = 1
        time.sleep(0.1)
    assert mem.peak >= before + 150e6
    x.close()
    calls = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda d=None: calls.append("sync"))
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda d=None: calls.append(("reset", str(d))))
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda d=None: 123456)
    with bench_paper.PeakMemory("cuda:0") as mem:
        pass
    assert mem.peak == 123456 and ("reset", "cuda:0") in calls


def test_bench_paper_cli_errors(capsys):
    for argv, msg in (
        (["--models", "gpt2"], "unknown gpt2"),
        (["--sample", "0"], "fraction in (0, 1]"),
        (["--sample", "1.5"], "fraction in (0, 1]"),
    ):
        with pytest.raises(SystemExit):
            bench_paper.parse_args(argv)
        assert msg in capsys.readouterr().err
    if not torch.cuda.is_available():
        with pytest.raises(SystemExit):
            bench_paper.parse_args(["--device", "cuda"])
        assert "CUDA is not available" in capsys.readouterr().err
    assert bench_paper.parse_args([]).sample == 0.01


def test_bench_paper_argument_errors_in_the_fmat_style(capsys, tmp_path):
    """Issue 55: a bad argument stops bench_paper.py before any work with exit status 2, the
    argument named and a fix line, as `fmat` does."""
    for argv, msg in (
        (["--models", "bert-base-uncased,gpt2"], "--models: unknown gpt2"),
        (["--fmat-way-sample", "2"], "--fmat-way-sample: 2 is outside (0, 1]"),
        (["--fallback-sample", "0"], "--fallback-sample: 0 is outside (0, 1]"),
        (["--least", "0"], "--least: must be a whole number of at least 1 (got 0)"),
        (["--batch-size", "-4"], "--batch-size: must be a whole number of at least 1 (got -4)"),
        (["--max-tokens", "0"], "--max-tokens: must be a whole number of at least 1"),
        (["--device", "gpu"], "--device: unknown device 'gpu'"),
        (["--time-budget", "0"], "--time-budget: 0 seconds"),
        (["--out", str(tmp_path / "no" / "p.json")], "does not exist"),
    ):
        with pytest.raises(SystemExit) as exc:
            bench_paper.parse_args(argv)
        err = capsys.readouterr().err
        assert exc.value.code == 2 and err.startswith("bench_paper.py: error: ") and msg in err and "\n  fix: " in err, (
            argv,
            err,
        )


def test_bench_scoring_argument_errors_in_the_fmat_style(capsys, tmp_path, monkeypatch):
    """Issue 55: the same for bench_scoring.py; CUDA asked for where there is none is named too."""
    for argv, msg in (
        (["--n", "0"], "--n: must be a whole number of at least 1 (got 0)"),
        (["--batch-size", "0"], "--batch-size: must be a whole number"),
        (["--max-tokens", "-1"], "--max-tokens: must be a whole number"),
        (["--chunks", "-2"], "--chunks: must be a whole number"),
        (["--device", "cuda:x"], "--device: unknown device 'cuda:x'"),
        (["--lowp", "bfloat16,int8"], "--lowp: unknown 'int8'"),
        (["--arch", "gpt2"], "--arch: unknown architecture 'gpt2'"),
        (["--sweep", "2k,abc"], "--sweep: 'abc' is not a whole number"),
        (["--sweep", "0"], "--sweep: '0' is not at least 1"),
        (["--sweep-only"], "--sweep-only: --sweep-only needs --sweep"),
        (["--out", str(tmp_path / "no" / "s.json")], "does not exist"),
    ):
        with pytest.raises(SystemExit) as exc:
            bench_scoring.parse_args(argv)
        err = capsys.readouterr().err
        assert exc.value.code == 2 and err.startswith("bench_scoring.py: error: ") and msg in err and "\n  fix: " in err, (
            argv,
            err,
        )
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for argv in (["--device", "cuda"], ["--device", "cuda:1"]):
        with pytest.raises(SystemExit):
            bench_scoring.parse_args(argv)
        err = capsys.readouterr().err
        assert "CUDA is not available on this machine" in err and "fix: use --device cpu" in err
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(SystemExit):
        bench_paper.parse_args(["--device", "cuda:3"])
    assert "this machine has 1 GPU(s), numbered 0 to 0" in capsys.readouterr().err
    args = bench_scoring.parse_args(["--sweep", "2k,4096", "--lowp", "bf16,tf32"])
    assert args.sweep == [2048, 4096] and args.lowp == ["bf16", "tf32"] and args.device.type == "cpu"


def test_bench_paper_small_run(capsys):
    """The whole script, --tiny, two models of the odd families (ALBERT's factorised embedding
    and SentencePiece; BERTweet's fastBPE and 130 positions), a small sample: every figure is printed."""
    assert (
        bench_paper.main(["--tiny", "--models", "albert-base-v2,vinai/bertweet-base", "--sample", "0.001", "--least", "2"]) == 0
    )
    out = capsys.readouterr().out
    for what in (
        "device: CPU",
        "16,208 unique sentences",
        "SAMPLE 0.001",
        "RANDOM weights",
        "albert-base-v2",
        "vinai/bertweet-base",
        "TOTAL 2 of the 12 models",
        "TOTAL FMAT's way",
        "matmul peak",
    ):
        assert what in out, what
    rows = [ln.split() for ln in out.splitlines() if ln.startswith(("albert-base-v2 ", "vinai/bertweet-base "))]
    assert len(rows) == 2 and all(r[1] == "16,208" and float(r[4]) > 0 for r in rows)


@pytest.mark.parametrize("name", ["runs.csv", "runs.csv.gz"])
def test_bench_calibration_small_run_and_its_table(tmp_path, capsys, name):
    """Two worlds of N0 (null, no others), both inferences: the runs file (plain or gzipped)
    holds one row per world, variant and d; the table's rates are the shares of those rows; a
    rerun skips the worlds already there (resume)."""
    import pandas as pd

    runs, out = tmp_path / name, tmp_path / "summary.csv"
    argv = ["--studies", "N0", "--worlds", "2", "--others", "0", "--kinds", "null", "--runs", str(runs)]
    assert bench_calibration.main([*argv, "--out", str(out), "--figure", str(tmp_path / "f.png")]) == 0
    r = bench_calibration.read_runs(runs)
    assert set(r["kind"]) == {"null"} and sorted(r["seed"].unique()) == [1, 2]  # "null" is no NaN
    assert len(r) == 2 * 2 * 6  # worlds x variants x (d all + 5 pairs)
    assert (r["realised"] == 0).all() and r["null"].all()
    tab = pd.read_csv(out, keep_default_na=False, na_values=[""])
    every = tab[(tab["rows_judged"] == "every row") & (tab["variant"] == "paper")].iloc[0]
    paper = r[r["variant"] == "paper"]
    assert every["fpr"] == pytest.approx((paper["p"] < 0.05).mean())
    assert every["coverage"] == pytest.approx(paper["covered"].mean())
    overall = tab[(tab["rows_judged"] == "overall") & (tab["variant"] == "sentence")].iloc[0]
    assert overall["rows"] == 2 and overall["se_ratio_to_paper"] > 1
    assert (tmp_path / "summary.md").read_text().startswith("| study |")
    capsys.readouterr()
    assert bench_calibration.main(argv) == 0
    assert len(bench_calibration.read_runs(runs)) == len(r)  # nothing run twice


def test_bench_calibration_icc_judges_the_reliability_stages_icc(tmp_path, capsys):
    """``--icc``: one world of 3A of each kind, the ICC rows (2 statistics x 2 conditions)
    under analysis ``icc_models``; the null world is the ICC's (realised 0), the planted one
    judged against the population ICC of ``--population`` more models; the table has them."""
    import pandas as pd

    runs, out = tmp_path / "icc.csv", tmp_path / "icc-summary.csv"
    argv = ["--icc", "--studies", "3A", "--worlds", "1", "--others", "0.5", "--population", "40", "--runs", str(runs)]
    assert bench_calibration.main([*argv, "--out", str(out)]) == 0
    r = bench_calibration.read_runs(runs)
    assert set(r["analysis"]) == {"icc_models"} and set(r["statistic"]) == {"ICC_average", "ICC_single"}
    assert len(r) == 2 * 4 and set(r["condition"]) == {"all", "LPR"}
    null, planted = r[r["kind"] == "null"], r[r["kind"] == "planted"]
    assert (null["realised"] == 0).all() and null["null"].all()
    assert (planted["realised"] > 0.5).all() and not planted["null"].any()
    tab = pd.read_csv(out, keep_default_na=False, na_values=[""])
    assert set(tab["analysis"]) == {"icc_models"} and set(tab["kind"]) == {"null", "planted"}


def test_bench_calibration_jobs_give_the_same_rows(tmp_path, capsys):
    """``--jobs 2`` runs worlds in two one-thread processes and writes the very rows ``--jobs 1``
    writes (world k is seeded k wherever it runs), in the same order: world by world."""
    import pandas as pd

    argv = ["--studies", "2C", "--worlds", "2", "--others", "0,0.5", "--kinds", "null"]
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    assert bench_calibration.main([*argv, "--runs", str(one)]) == 0
    assert bench_calibration.main([*argv, "--runs", str(two), "--jobs", "2"]) == 0
    a, b = bench_calibration.read_runs(one), bench_calibration.read_runs(two)
    assert len(a) > 0 and list(a["seed"]) == sorted(a["seed"])
    pd.testing.assert_frame_equal(a, b)
    assert "--jobs 2" in capsys.readouterr().out
