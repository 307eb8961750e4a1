"""The benchmarks' own arithmetic and a small run of each (their speed figures live in docs, not here)."""
from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_scoring  # noqa: E402


def test_model_flops_equals_torch_flop_counter():
    """bench_scoring.model_flops (the FLOPs the share of the matmul peak counts) against
    torch.utils.flop_counter on the same computation: the encoder on each sentence (no
    padding; eager attention so that QK^T and AV are counted too) and the MLM head at one mask."""
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import BertConfig, BertForMaskedLM

    cfg = BertConfig(vocab_size=500, hidden_size=64, num_hidden_layers=3, num_attention_heads=4,
                     intermediate_size=96, attn_implementation="eager")
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
    for what in ("FMAT's way", "fmat.run", "speed ratio", "of the fp32 matmul peak", "batches: automatic",
                 "agreement with the CPU", "bfloat16:"):
        assert what in out
    delta = float(out.split("max |delta log prob|: ")[1].split()[0])
    assert delta <= 1e-5
    agree = float(out.split("agreement with the CPU")[1].split("max |delta log prob| ")[1].split()[0])
    assert agree <= 1e-5


def test_matmul_peak_is_positive_and_finite():
    peak = bench_scoring.matmul_peak(torch.device("cpu"), seconds=0.2)
    assert 0 < peak < float("inf")
