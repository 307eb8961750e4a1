"""Tiny models of every transformers masked-LM architecture, and weight sharpening: tools of
the test suite and the benchmarks (tests/test_architectures.py, benchmarks/bench_scoring.py),
not of the installed library (issue 33). They build on :mod:`fmat.tiny`'s tokenizer trainers.

:func:`build_tiny_arch` builds any architecture of :data:`ARCHITECTURES` as a tiny random model
with a tokenizer of its kind; :func:`sharpen` spreads a tiny model's weights so that its
probabilities depend clearly on the context; :func:`not_single_words` reads the words a tiny
model did not learn as single tokens.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

# the library's private tokenizer trainers: the same code builds the demo's six families
from fmat.tiny import (
    _MAX_POS,
    META_FILE,
    _bytelevel,
    _end_marked_bpe,
    _unigram,
    _word_parts,
    _wordpiece,
    _write_files,
    make_corpus,
    read_meta,
)


def sharpen(path, std: float = 0.3, seed: int = 0) -> str:
    """Redraw every weight matrix of the tiny model in ``path`` from N(0, std²) and save it.

    A random tiny model's probabilities hardly depend on the context; with a large spread they
    differ clearly (tests of agreement accuracy and of LPBS priors need that). Returns the path.
    """
    import torch
    from transformers import AutoModelForMaskedLM

    model = AutoModelForMaskedLM.from_pretrained(path)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.copy_(torch.randn(p.shape, generator=gen) * std)
    model.save_pretrained(path)
    return str(path)


def not_single_words(path) -> list[str]:
    """Word parts that did not become single whole-word tokens in the tiny model at ``path``."""
    return read_meta(path)["not_single"]


# ----------------------------------------------------------------------------- every masked-LM architecture

#: Every ``AutoModelForMaskedLM`` architecture (transformers ``model_type``) that
#: :func:`build_tiny_arch` builds small, with a tokenizer of its kind:
#: ``model_type -> (tokenizer kind, tokenizer class, config overrides)``. Kinds: ``wordpiece``
#: (lower-cased unless the class says otherwise), ``bytelevel`` (byte-level BPE, ``Ġ``),
#: ``unigram`` (SentencePiece Unigram, ``▁``), ``esm`` (one token per amino-acid letter),
#: ``bytes`` (Perceiver: one token per UTF-8 byte). A tokenizer class of ``None`` means the
#: model's hub tokenizer is a plain ``tokenizer.json`` (byte-level BPE with [CLS]/[SEP]/[MASK],
#: as ModernBERT's).
_TINY_VISION = {
    "model_type": "siglip_vision_model",
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "image_size": 32,
    "patch_size": 8,
}
#: the size of the encoder-decoder ones (bart, mbart, mvp)
_SEQ2SEQ = {
    "d_model": 32,
    "encoder_layers": 2,
    "decoder_layers": 2,
    "encoder_attention_heads": 2,
    "decoder_attention_heads": 2,
    "encoder_ffn_dim": 64,
    "decoder_ffn_dim": 64,
}
ARCHITECTURES: dict[str, tuple[str, str | None, dict]] = {
    "albert": ("unigram", "AlbertTokenizer", {"embedding_size": 16}),
    "bart": (
        "bytelevel",
        "RobertaTokenizer",
        dict(_SEQ2SEQ),
    ),
    "bert": ("wordpiece", "BertTokenizer", {}),
    "big_bird": ("unigram", "BigBirdTokenizer", {"attention_type": "original_full"}),
    "camembert": ("unigram", "CamembertTokenizer", {}),
    "convbert": ("wordpiece", "BertTokenizer", {"embedding_size": 32}),
    "data2vec-text": ("bytelevel", "RobertaTokenizer", {}),
    "deberta": ("bytelevel", "DebertaTokenizer", {}),
    "deberta-v2": ("unigram", "DebertaV2Tokenizer", {}),
    "distilbert": ("wordpiece", "BertTokenizer", {"dim": 32, "n_layers": 2, "n_heads": 2, "hidden_dim": 64}),
    "electra": ("wordpiece", "ElectraTokenizer", {"embedding_size": 16}),
    "ernie": ("wordpiece", "BertTokenizer", {}),
    "esm": ("esm", "EsmTokenizer", {"token_dropout": True}),
    "esmc": ("esm", "EsmcTokenizer", {}),
    "eurobert": ("bytelevel", None, {}),
    "flaubert": ("xlm", "FlaubertTokenizer", {"emb_dim": 32, "n_layers": 2, "n_heads": 2}),
    "fnet": ("unigram", "FNetTokenizer", {}),
    "funnel": (
        "wordpiece",
        "FunnelTokenizer",
        {
            "block_sizes": [1, 1],
            "num_decoder_layers": 1,
            "d_model": 32,
            "n_head": 2,
            "d_head": 16,
            "d_inner": 64,
            "num_hidden_layers": None,
            "hidden_size": None,
            "num_attention_heads": None,
            "intermediate_size": None,
        },
    ),
    "gte": ("unigram", "XLMRobertaTokenizer", {}),
    "ibert": ("bytelevel", "RobertaTokenizer", {}),
    "jina_embeddings_v3": ("unigram", "XLMRobertaTokenizer", {}),
    "layoutlm": ("wordpiece", "BertTokenizer", {}),
    "longformer": ("bytelevel", "RobertaTokenizer", {"attention_window": 8}),
    "luke": ("bytelevel", "RobertaTokenizer", {"entity_vocab_size": 8, "entity_emb_size": 16}),
    "mbart": (
        "unigram",
        "XLMRobertaTokenizer",
        dict(_SEQ2SEQ),
    ),
    "megatron-bert": ("wordpiece", "BertTokenizer", {}),
    "mobilebert": (
        "wordpiece",
        "MobileBertTokenizer",
        {"embedding_size": 16, "intra_bottleneck_size": 16, "num_feedforward_networks": 2},
    ),
    "modernbert": ("bytelevel", None, {"global_attn_every_n_layers": 2, "local_attention": 8}),
    "mpnet": ("wordpiece", "MPNetTokenizer", {}),
    "mra": ("bytelevel", "RobertaTokenizer", {}),
    "mvp": (
        "bytelevel",
        "RobertaTokenizer",
        dict(_SEQ2SEQ),
    ),
    "nomic_bert": ("wordpiece", "BertTokenizer", {}),
    "nystromformer": ("unigram", "AlbertTokenizer", {"num_landmarks": 16, "segment_means_seq_len": 16}),
    "rembert": ("unigram", "RemBertTokenizer", {"input_embedding_size": 16, "output_embedding_size": 16}),
    "roberta": ("bytelevel", "RobertaTokenizer", {}),
    "roberta-prelayernorm": ("bytelevel", "RobertaTokenizer", {}),
    "roformer": ("wordpiece", "BertTokenizer", {}),
    "roc_bert": (
        "wordpiece",
        "RoCBertTokenizer",
        {"shape_vocab_size": 8, "pronunciation_vocab_size": 8, "shape_embed_dim": 16, "pronunciation_embed_dim": 16},
    ),
    "tapas": ("wordpiece", "TapasTokenizer", {}),
    "squeezebert": ("wordpiece", "BertTokenizer", {"embedding_size": 32}),
    "perceiver": (
        "bytes",
        "PerceiverTokenizer",
        {
            "d_model": 32,
            "d_latents": 32,
            "num_latents": 8,
            "num_self_attends_per_block": 1,
            "num_self_attention_heads": 2,
            "num_cross_attention_heads": 2,
            "hidden_size": None,
            "num_hidden_layers": None,
            "intermediate_size": None,
            "num_attention_heads": None,
        },
    ),
    "modernvbert": (
        "bytelevel",
        None,
        {
            "text_config": {"model_type": "modernbert", "global_attn_every_n_layers": 2, "local_attention": 8},
            "vision_config": _TINY_VISION,
            "image_token_id": 5,
        },
    ),
    "ultravbert": (
        "bytelevel",
        None,
        {
            "text_config": {"model_type": "ultrabert", "global_attn_every_n_layers": 2, "local_attention": 8},
            "vision_config": _TINY_VISION,
            "image_token_id": 5,
        },
    ),
    "ultrabert": ("bytelevel", None, {"global_attn_every_n_layers": 2, "local_attention": 8}),
    "neomme": (
        "bytelevel",
        None,
        {"num_key_value_heads": 2, "head_dim": 16, "embedding_rank": 16, "sliding_window": 8, "embedding_dim": 16},
    ),
    "xlm": ("xlm", "XLMTokenizer", {"emb_dim": 32, "n_layers": 2, "n_heads": 2}),
    "xlm-roberta": ("unigram", "XLMRobertaTokenizer", {}),
    "xlm-roberta-xl": ("unigram", "XLMRobertaTokenizer", {}),
    "xmod": ("unigram", "XLMRobertaTokenizer", {"languages": ["en_XX"], "default_language": "en_XX"}),
    "yoso": ("unigram", "AlbertTokenizer", {}),
}

#: masked-LM architectures of this transformers version that :func:`build_tiny_arch` does not
#: build, and why (tests/test_architectures.py checks that every mapping is in one of the two
#: tables, and that each entry here still fails as said).
NOT_BUILT: dict[str, str] = {
    "reformer": "its tokenizer (ReformerTokenizer) has no mask token, so there is no [MASK] to fill: no Reformer "
    "masked-LM checkpoint exists, and fmat refuses a tokenizer without a mask token",
}

_ESM_VOCAB = [
    "<cls>",
    "<pad>",
    "<eos>",
    "<unk>",
    "L",
    "A",
    "G",
    "V",
    "S",
    "E",
    "R",
    "T",
    "I",
    "D",
    "P",
    "K",
    "Q",
    "N",
    "F",
    "Y",
    "M",
    "H",
    "W",
    "C",
    "X",
    "B",
    "U",
    "Z",
    "O",
    ".",
    "-",
    "<null_1>",
    "<mask>",
]


def _class_specials(cls) -> list[str]:
    """The special tokens a tokenizer class starts with when given no vocabulary, in id order."""
    vocab = cls().get_vocab()
    return sorted(vocab, key=vocab.get)


def _wordpiece_pieces(corpus, words, lowercase: bool) -> list[str]:
    """The WordPiece vocabulary of :func:`_wordpiece` without its special tokens, in id order.

    (A fast tokenizer's ``get_vocab()`` comes in hash order, which changes from run to run: taken
    as it is, it gave every build other token ids, so other random weights per token.)"""
    vocab = _wordpiece(corpus, words, lowercase).get_vocab()
    return [p for p in sorted(vocab, key=vocab.get) if not (p.startswith("[") and p.endswith("]")) or len(p) == 1]


def _bytelevel_pieces(corpus, words) -> tuple[list[str], list[tuple[str, str]]]:
    tok = _bytelevel(corpus, words)
    vocab = tok.get_vocab()
    specials = {"<s>", "<pad>", "</s>", "<unk>", "<mask>"}
    data = json.loads(tok.backend_tokenizer.to_str())
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in data["model"]["merges"]]
    return [p for p in sorted(vocab, key=vocab.get) if p not in specials], merges


def _unigram_pieces(corpus, words, lowercase: bool) -> list[tuple[str, float]]:
    tok = _unigram(corpus, words, lowercase)
    data = json.loads(tok.backend_tokenizer.to_str())
    return [(p, s) for p, s in data["model"]["vocab"][5:]]


def _plain_bytelevel(pieces, merges):
    """A ``tokenizer.json`` byte-level BPE tokenizer with [CLS]/[SEP]/[MASK] (ModernBERT's kind)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import AddedToken, PreTrainedTokenizerFast

    specials = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    vocab = {p: i for i, p in enumerate(specials + list(pieces))}
    tk = Tokenizer(models.BPE(vocab=vocab, merges=list(merges), unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    tk.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tk,
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        mask_token=AddedToken("[MASK]", lstrip=True, normalized=False),
        model_max_length=_MAX_POS,
    )


def _xlm_files(corpus, words, lowercase: bool) -> dict[str, str]:
    """XLM/FlauBERT's BPE files: vocab.json and merges.txt with ``</w>`` word ends."""
    pieces, merges = _end_marked_bpe(corpus, words, lowercase=lowercase)
    specials = ["<s>", "</s>", "<pad>", "<unk>"] + [f"<special{i}>" for i in range(10)]
    vocab = {p: i for i, p in enumerate(dict.fromkeys(specials + pieces))}
    return {"vocab.json": json.dumps(vocab, ensure_ascii=False), "merges.txt": "".join(f"{a} {b}\n" for a, b in merges)}


def arch_tokenizer(model_type: str, folder, trained: dict, corpus, words):
    """The tokenizer of ``model_type``'s kind (:data:`ARCHITECTURES`), from pieces trained once per
    kind (``trained`` caches them across architectures)."""
    import transformers
    from transformers import AddedToken

    kind, cls_name, _ = ARCHITECTURES[model_type]
    folder = Path(folder)
    cls = getattr(transformers, cls_name) if cls_name else None
    if kind == "wordpiece":
        if kind not in trained:
            trained[kind] = _wordpiece_pieces(corpus, words, lowercase=True)
        if cls_name in ("RoCBertTokenizer", "TapasTokenizer"):  # file-based (Python) tokenizers
            specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + (["[EMPTY]"] if cls_name == "TapasTokenizer" else [])
            pieces = list(dict.fromkeys(specials + trained[kind]))
            files = {"vocab.txt": "\n".join(pieces) + "\n"}
            kw = {}
            if cls_name == "RoCBertTokenizer":  # every token's glyph-shape and pronunciation ids (a few classes)
                files["word_shape.json"] = json.dumps({p: i % 7 for i, p in enumerate(pieces)}, ensure_ascii=False)
                files["word_pronunciation.json"] = json.dumps({p: i % 5 for i, p in enumerate(pieces)}, ensure_ascii=False)
                kw = {
                    "word_shape_file": str(folder / "word_shape.json"),
                    "word_pronunciation_file": str(folder / "word_pronunciation.json"),
                }
            _write_files(folder, files)
            return cls(vocab_file=str(folder / "vocab.txt"), model_max_length=_MAX_POS, **kw)
        specials = _class_specials(cls)
        vocab = {p: i for i, p in enumerate(dict.fromkeys(specials + trained[kind]))}
        return cls(vocab=vocab, do_lower_case=True, model_max_length=_MAX_POS)
    if kind == "bytelevel":
        if kind not in trained:
            trained[kind] = _bytelevel_pieces(corpus, words)
        pieces, merges = trained[kind]
        if cls is None:
            return _plain_bytelevel(pieces, merges)
        specials = _class_specials(cls)
        vocab = {p: i for i, p in enumerate(dict.fromkeys(specials + pieces))}
        mask = cls().mask_token
        return cls(
            vocab=vocab,
            merges=list(merges),
            model_max_length=_MAX_POS,
            mask_token=AddedToken(mask, lstrip=True, rstrip=False, normalized=False),
        )
    if kind == "unigram":
        # lower-cased where the class lower-cases (ALBERT, FNet), cased otherwise (XLM-R, CamemBERT...)
        lower = "do_lower_case" in cls.__init__.__code__.co_varnames and cls().do_lower_case
        key = (kind, lower)
        if key not in trained:
            trained[key] = _unigram_pieces(corpus, words, lower)
        specials = _class_specials(cls)
        have = set(specials)
        vocab = [(p, 0.0) for p in specials] + [(p, s) for p, s in trained[key] if p not in have]
        mask = cls().mask_token
        kw = {"do_lower_case": lower} if "do_lower_case" in cls.__init__.__code__.co_varnames else {}
        tok = cls(
            vocab=vocab, model_max_length=_MAX_POS, mask_token=AddedToken(mask, lstrip=True, rstrip=False, normalized=False), **kw
        )
        return tok
    if kind == "esm":
        if cls_name == "EsmTokenizer":
            _write_files(folder, {"vocab.txt": "\n".join(_ESM_VOCAB) + "\n"})
            return cls(vocab_file=str(folder / "vocab.txt"), model_max_length=_MAX_POS)
        return cls(model_max_length=_MAX_POS)
    if kind == "xlm":
        lower = cls_name == "XLMTokenizer"  # XLM's English models lower-case, FlauBERT's base models do not
        if (kind, lower) not in trained:
            trained[(kind, lower)] = _xlm_files(corpus, words, lower)
        _write_files(folder, trained[(kind, lower)])
        return cls(vocab_file=str(folder / "vocab.json"), merges_file=str(folder / "merges.txt"), model_max_length=_MAX_POS)
    if kind == "bytes":
        return cls(model_max_length=_MAX_POS)
    raise ValueError(f"unknown tokenizer kind {kind!r}")


def _arch_config(model_type: str, tokenizer, hidden: int, layers: int):
    from transformers import AutoConfig

    _, _, extra = ARCHITECTURES[model_type]
    ids = {f"{k}_token_id": getattr(tokenizer, f"{k}_token_id", None) for k in ("pad", "bos", "eos", "mask", "cls", "sep")}
    kw = {
        "vocab_size": len(tokenizer),
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": 2,
        "intermediate_size": 2 * hidden,
        "max_position_embeddings": _MAX_POS + 2,
    }
    # the tokenizer's special ids (None where it has none: no default id outside the vocabulary)
    known = ("pad_token_id", "bos_token_id", "eos_token_id")
    kw.update({k: v for k, v in ids.items() if v is not None or k in known})
    if "text_config" in extra:  # a vision-and-text model: the text model gets the sizes, the vision tower its own
        text = {**kw, **extra["text_config"]}
        top = {k: v for k, v in kw.items() if k in known}
        return AutoConfig.for_model(model_type, **{**top, **extra, "text_config": text})
    kw.update(extra)
    return AutoConfig.for_model(model_type, **{k: v for k, v in kw.items() if v is not None or k in known})


def build_tiny_arch(
    out_dir,
    model_type: str,
    words: Sequence,
    seed: int = 0,
    hidden: int = 32,
    layers: int = 2,
    corpus: list[str] | None = None,
    trained: dict | None = None,
) -> Path:
    """Build and save a tiny ``AutoModelForMaskedLM`` of transformers architecture ``model_type``
    (one of :data:`ARCHITECTURES`) with a tokenizer of its kind whose vocabulary holds ``words``.

    Random weights (seeded), ``save_pretrained`` (safetensors) into ``out_dir``; loads with
    ``AutoModelForMaskedLM``/``AutoTokenizer.from_pretrained(out_dir)`` like a hub model.
    ``corpus`` and ``trained`` (a dict) let several builds share one corpus and one trained
    tokenizer per kind. ``fmat_tiny.json`` records the architecture and the word parts that
    are not single tokens (for the ``esm`` and ``bytes`` kinds: every word of two or more letters).
    """
    import torch
    import transformers
    from transformers import AutoModelForMaskedLM

    if model_type not in ARCHITECTURES:
        raise ValueError(
            f"tiny_arch does not build {model_type!r}"
            + (f": {NOT_BUILT[model_type]}" if model_type in NOT_BUILT else "")
            + f"; it builds {', '.join(ARCHITECTURES)}"
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if corpus is None:
        corpus = make_corpus(words, seed=seed)
    tokenizer = arch_tokenizer(model_type, out, {} if trained is None else trained, corpus, words)
    config = _arch_config(model_type, tokenizer, hidden, layers)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = AutoModelForMaskedLM.from_config(config)
    model.eval()
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    lead = tokenizer.tokenize("a")
    not_single = [w for w in _word_parts(words) if len(tokenizer.tokenize("a " + w)[len(lead) :]) != 1]
    meta = {
        "family": None,
        "architecture": model_type,
        "model_class": type(model).__name__,
        "tokenizer_class": type(tokenizer).__name__,
        "seed": seed,
        "hidden": hidden,
        "layers": layers,
        "vocab_size": len(tokenizer),
        "n_words": len(_word_parts(words)),
        "not_single": not_single,
        "transformers": transformers.__version__,
    }
    (out / META_FILE).write_text(json.dumps(meta, indent=1, ensure_ascii=False), encoding="utf-8")
    return out
