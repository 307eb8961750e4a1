"""Tiny masked language models of every tokenizer family, built offline in seconds.

For ``fmat pilot`` (models *trained* by :func:`build_trained_model` on planted associations,
docs/planting.md) and the offline demo: real transformers model classes with a few thousand
parameters and tokenizers trained on a generated corpus, saved with ``save_pretrained`` into
a folder that loads exactly like a hub model::

    from fmat.tiny import build_tiny_model, build_demo_models
    path = build_tiny_model("models/tiny-roberta-base", "roberta", ["man", "woman", "He", "She"])
    paths = build_demo_models("models", words)   # {"tiny-bert-base-uncased": Path, ...}

Families (:data:`FAMILIES`) and what their tokenizer does to a word ``man``:

==============  =====================================  ==========================================
family          tokenizer (transformers class)         whole-word token of "man" mid-sentence
==============  =====================================  ==========================================
bert-uncased    WordPiece, lower-case (BertTokenizer)  ``man``
bert-cased      WordPiece (BertTokenizer)              ``man`` (``Man`` is another token)
distilbert      WordPiece, lower-case                  ``man``  (DistilBertForMaskedLM)
roberta         byte-level BPE (RobertaTokenizer)      ``Ġman`` (``man`` at sentence start)
albert          SentencePiece Unigram (AlbertTokenizer) ``▁man``
bertweet        fastBPE, ``@@`` continuations          ``man`` (pieces ``ma@@ n``)
                (BertweetTokenizer: vocab.txt+bpe.codes)
==============  =====================================  ==========================================

The corpus (:func:`make_corpus`, :func:`filler_lines`) makes the given words single whole-word
tokens and other words split into pieces; words that did not become one are listed in
``fmat_tiny.json`` (``not_single``, :func:`read_meta`) and logged. Everything is deterministic
for a given ``seed`` (same files, same weights).
"""

from __future__ import annotations

import itertools
import json
import logging
import random
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from .scoring import _head_fn, _mask_logits, _pad, scoring_path
from .tokens import derive_options, mask_position

log = logging.getLogger(__name__)

#: family -> (model class name, folder name used by :func:`build_demo_models`)
FAMILIES: dict[str, tuple[str, str]] = {
    "bert-uncased": ("BertForMaskedLM", "tiny-bert-base-uncased"),
    "bert-cased": ("BertForMaskedLM", "tiny-bert-base-cased"),
    "distilbert": ("DistilBertForMaskedLM", "tiny-distilbert-base-uncased"),
    "roberta": ("RobertaForMaskedLM", "tiny-roberta-base"),
    "albert": ("AlbertForMaskedLM", "tiny-albert-base-v2"),
    "bertweet": ("RobertaForMaskedLM", "tiny-bertweet-base"),
}

META_FILE = "fmat_tiny.json"
_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]  # BERT's special tokens, ids 0-4
_MAX_POS = 128
_FINAL = 0xF0000  # Supplementary Private Use Area-A: word-final characters for fastBPE training

_TEMPLATES_START = [
    "{w} is here .",
    "{w} said that it was fine .",
    "{w} works as a teacher .",
    "{w} was born in the city .",
]
_TEMPLATES_MID = [
    "i think {w} is good .",
    "the {w} was there yesterday .",
    "we saw {w} in the park , and then we left .",
    "this is about {w} and nothing else .",
    "they said {w} .",
    "people like {w} very much !",
    "it was {w} , not me .",
    'she wrote " {w} " on the board .',
]


# ----------------------------------------------------------------------------- corpus


def _word_parts(words: Iterable) -> list[str]:
    """Unique space-separated parts of the given words/phrases, in order of first appearance."""
    seen: dict[str, None] = {}
    for w in words:
        for part in str(w).split():
            seen.setdefault(part, None)
    return list(seen)


_FUNCTION_WORDS = (
    "the a an this that these those some many most few all every each no one two three four "
    "and or but so then because while when where if as of in on at to from with by for about "
    "into over under after before between through during without i you we they it he she "
    "is was are were be been has have had do did will would can could may might should must "
    "not very often never always here there today yesterday now again also only just still"
).split()
_ONSETS = [""] + (
    "b c d f g h j k l m n p r s t v w y z bl br ch cl cr dr fl fr gl gr pl pr sc sh sk sl sm sn sp st str sw th tr wh qu"
).split()
_NUCLEI = ["a", "e", "i", "o", "u", "ai", "ea", "ee", "ie", "oa", "oo", "ou", "y"]
_CODAS = ["", "", *"b ck d ft g l ll m n nd ng nk nt p r rd rk rn s ss st t th x".split()]


def filler_lines(n: int = 4000, seed: int = 0, words: Sequence[str] = ()) -> list[str]:
    """``n`` lines of ordinary-looking filler text, generated here (no file of the machine is read).

    English function words, ``words`` and pseudo-words built from English onsets, vowels and
    codas, with a Zipf-like frequency: a tokenizer trained on it splits an out-of-vocabulary
    word into several pieces. The same seed gives the same lines.

    Examples
    --------
    >>> lines = filler_lines(3, seed=1)
    >>> len(lines), lines == filler_lines(3, seed=1)
    (3, True)
    """
    rng = random.Random(seed)
    lexicon = list(
        dict.fromkeys(
            "".join(
                rng.choice(_ONSETS) + rng.choice(_NUCLEI) + rng.choice(_CODAS) for _ in range(rng.choice((1, 1, 1, 2, 2, 2, 3)))
            )
            for _ in range(3000)
        )
    )
    content = lexicon + [p for w in words for p in str(w).split()]
    cum = list(itertools.accumulate(1.0 / (k + 10) for k in range(len(content))))
    lines = []
    for _ in range(n):
        k = rng.randint(4, 14)
        out = []
        for j in range(k):
            w = rng.choice(_FUNCTION_WORDS) if rng.random() < 0.45 else rng.choices(content, cum_weights=cum)[0]
            out.append(w[:1].upper() + w[1:] if j == 0 else w)
        lines.append(" ".join(out) + rng.choice((" .", " .", " .", " ?", " !", " , and so on .")))
    return lines


def make_corpus(words: Iterable, seed: int = 0, extra_corpus: Iterable[str] | None = None, repeats: int = 3) -> list[str]:
    """Training sentences: each word part in ``repeats`` start and mid templates, plus extra text.

    Words are used as given and capitalised, so that cased tokenizers learn both forms.

    Examples
    --------
    >>> corpus = make_corpus(["nurse"], repeats=1)
    >>> any(line.startswith("Nurse") for line in corpus), sum("nurse" in line for line in corpus) > 0
    (True, True)
    """
    rng = random.Random(seed)
    parts = _word_parts(words)
    lines = []
    for w in parts:
        cap = w[:1].upper() + w[1:]
        for _ in range(repeats):
            lines.append(rng.choice(_TEMPLATES_START).format(w=w))
            lines.append(rng.choice(_TEMPLATES_START).format(w=cap))
            lines.append(rng.choice(_TEMPLATES_MID).format(w=w))
    extra = filler_lines(words=parts, seed=seed) + [str(x).strip() for x in extra_corpus or ()]
    lines.extend(x for x in extra if x)
    rng.shuffle(lines)
    return lines


# ----------------------------------------------------------------------------- tokenizers


def _vocab_size(words: Sequence[str]) -> int:
    return 8000 + 10 * len(_word_parts(words))


def _marked_bpe(marked: list[str], words, unk: str, **options):
    """A ``tokenizers`` BPE trained on whitespace-split ``marked`` text (no special tokens, every
    character of the text in its alphabet, in sorted order: stable ids); ``options`` go to the trainer."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token=unk))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = trainers.BpeTrainer(
        vocab_size=_vocab_size(words),
        min_frequency=2,
        show_progress=False,
        special_tokens=[],
        initial_alphabet=sorted({c for x in marked for c in x if c != " "}),
        **options,
    )
    tok.train_from_iterator(marked, trainer=trainer)
    return tok


def _wordpiece(corpus, words, lowercase):
    """WordPiece vocabulary learned by BPE merges on BERT-normalised, pre-tokenised words.

    Continuation characters are written as their own symbols chr(_FINAL + ord(c)) during
    training ("##c"): the tokenizers WordPiece trainer numbers "##" pieces in hash order, which
    makes the learned vocabulary vary between runs; plain characters get sorted, stable ids.
    """
    from tokenizers import normalizers, pre_tokenizers
    from transformers import BertTokenizer

    norm = normalizers.BertNormalizer(lowercase=lowercase, strip_accents=lowercase, clean_text=True, handle_chinese_chars=True)
    pre = pre_tokenizers.BertPreTokenizer()

    def mark(line):
        words = [w for w, _ in pre.pre_tokenize_str(norm.normalize_str(line)) if all(ord(c) < 0xFFFE for c in w)]
        return " ".join(w[0] + "".join(chr(_FINAL + ord(c)) for c in w[1:]) for w in words)

    tok = _marked_bpe([mark(x) for x in corpus], words, "[UNK]", limit_alphabet=100000)

    def unmark(piece):
        if ord(piece[0]) >= _FINAL:
            return "##" + "".join(chr(ord(c) - _FINAL) for c in piece)
        return piece[0] + "".join(chr(ord(c) - _FINAL) for c in piece[1:])

    pieces = sorted({unmark(p) for p in tok.get_vocab()} - set(_SPECIAL))
    # every single character also as a continuation (as BERT's vocabularies have)
    pieces = sorted(set(pieces) | {"##" + p for p in pieces if len(p) == 1})
    vocab = {p: i for i, p in enumerate(_SPECIAL + pieces)}
    return BertTokenizer(vocab=vocab, do_lower_case=lowercase, model_max_length=_MAX_POS)


def _bytelevel(corpus, words):
    from tokenizers.implementations import ByteLevelBPETokenizer
    from transformers import AddedToken, RobertaTokenizer

    tok = ByteLevelBPETokenizer(add_prefix_space=False)
    tok.train_from_iterator(
        corpus,
        vocab_size=_vocab_size(words),
        min_frequency=2,
        show_progress=False,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
    )
    data = json.loads(tok.to_str())
    vocab = data["model"]["vocab"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in data["model"]["merges"]]
    return RobertaTokenizer(
        vocab=vocab,
        merges=merges,
        model_max_length=_MAX_POS,
        mask_token=AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False),
    )


def _unigram(corpus, words, lowercase: bool = True):
    from tokenizers.implementations import SentencePieceUnigramTokenizer
    from transformers import AddedToken, AlbertTokenizer

    tok = SentencePieceUnigramTokenizer()
    specials = ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"]
    # ALBERT lower-cases: train on lower-cased text (cased SentencePiece models, XLM-R's: as is)
    tok.train_from_iterator(
        [x.lower() if lowercase else x for x in corpus],
        vocab_size=_vocab_size(words),
        show_progress=False,
        special_tokens=specials,
        unk_token="<unk>",
    )
    data = json.loads(tok.to_str())
    # scores rounded and pieces sorted: the trainer's float sums vary in the last bits
    vocab = [(p, round(float(s), 6)) for p, s in data["model"]["vocab"]]
    # single characters the trainer keeps as fallbacks get scores stepped by 1e-4 in hash order
    # (the run ends at the lowest score): give that run one score, and sort by piece below
    chars = [sc for p, sc in vocab[5:] if len(p) == 1]
    lo = min(chars) if chars else 0.0
    vocab = vocab[:5] + [(p, round(lo, 2) if len(p) == 1 and sc < lo + 0.05 else sc) for p, sc in vocab[5:]]
    vocab = vocab[:5] + sorted(vocab[5:], key=lambda ps: (-ps[1], ps[0]))
    assert [p for p, _ in vocab[:5]] == specials, "Unigram trainer moved the special tokens"
    # The trainer may keep "▁wo" + "man" rather than "▁woman", or "▁he" with a low score: each
    # word (and function word) gets the best score of any piece, so that it wins Viterbi
    # segmentation over two or more pieces (log-probabilities add up).
    top = max(s for p, s in vocab[5:]) if len(vocab) > 5 else -1.0
    wanted = {"\u2581" + (w.lower() if lowercase else w) for w in [*_word_parts(words), *_FUNCTION_WORDS]}
    vocab = vocab[:5] + [(p, top if p in wanted else sc) for p, sc in vocab[5:]]
    vocab += [(piece, top) for piece in sorted(wanted - {p for p, _ in vocab})]
    return AlbertTokenizer(
        vocab=vocab,
        model_max_length=_MAX_POS,
        do_lower_case=lowercase,
        mask_token=AddedToken("[MASK]", lstrip=True, rstrip=False, normalized=False),
    )


def _end_marked_bpe(corpus, words, lowercase: bool = False) -> tuple[list[str], list[tuple[str, str]]]:
    """A BPE whose word-final pieces carry ``</w>`` (fastBPE's and XLM's convention) -> (pieces
    in id order, merges in rank order). A word's last character c is trained as the symbol
    chr(_FINAL + ord(c)): the trainer's end_of_word_suffix would number those in hash order."""

    def mark(line):
        line = line.lower() if lowercase else line
        return " ".join(w[:-1] + chr(_FINAL + ord(w[-1])) for w in line.split() if ord(w[-1]) < 0xFFFE)

    def unmark(sym):
        if sym and ord(sym[-1]) >= _FINAL:
            return sym[:-1] + chr(ord(sym[-1]) - _FINAL) + "</w>"
        return sym

    data = json.loads(_marked_bpe([mark(x) for x in corpus], words, "<unk>").to_str())
    pieces = [unmark(p) for p, _ in sorted(data["model"]["vocab"].items(), key=lambda kv: kv[1])]
    merges = [m if isinstance(m, list) else m.split(" ") for m in data["model"]["merges"]]
    return pieces, [(unmark(a), unmark(b)) for a, b in merges]


def _fastbpe(corpus, words, folder: Path):
    """BERTweet's fastBPE files, learned with the ``tokenizers`` BPE trainer (``</w>`` suffix).

    vocab.txt: ``token count`` lines (fairseq dictionary; <s> <pad> </s> <unk> are implicit
    ids 0-3); a non-final piece is written with ``@@``. bpe.codes: ``a b count`` merges in rank
    order, word-final symbols carrying ``</w>``, as BertweetTokenizer.bpe expects.
    """
    from transformers import BertweetTokenizer

    pieces, merges = _end_marked_bpe(corpus, words)
    tokens = dict.fromkeys(p[:-4] if p.endswith("</w>") else p + "@@" for p in pieces)
    lines = [f"{t} 1" for t in tokens if t not in ("<s>", "<pad>", "</s>", "<unk>", "<mask>") and " " not in t and t]
    lines.append("<mask> 0")
    files = {
        "vocab.txt": "\n".join(lines) + "\n",
        "bpe.codes": "".join(f"{a} {b} {len(merges) - i}\n" for i, (a, b) in enumerate(merges)),
    }
    _write_files(folder, files)
    logging.getLogger("transformers.models.bertweet.tokenization_bertweet").setLevel(logging.ERROR)
    tok = BertweetTokenizer(
        vocab_file=str(folder / "vocab.txt"), merges_file=str(folder / "bpe.codes"), model_max_length=_MAX_POS
    )
    # transformers 5.23's save_vocabulary writes bpe.codes without counts, which its loader
    # misreads: _save writes these files again after save_pretrained
    tok._fmat_files = files
    return tok


def _write_files(folder: Path, files: Mapping[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")


def build_tokenizer(
    family: str,
    words: Sequence,
    folder: Path,
    seed: int = 0,
    extra_corpus: Iterable[str] | None = None,
    corpus: list[str] | None = None,
):
    """Train the tokenizer of ``family`` on :func:`make_corpus` and return the transformers tokenizer."""
    if corpus is None:
        corpus = make_corpus(words, seed=seed, extra_corpus=extra_corpus)
    if family in ("bert-uncased", "distilbert", "bert-cased"):
        return _wordpiece(corpus, words, lowercase=family != "bert-cased")
    if family == "roberta":
        return _bytelevel(corpus, words)
    if family == "albert":
        return _unigram(corpus, words)
    if family == "bertweet":
        return _fastbpe(corpus, words, Path(folder))
    raise ValueError(f"unknown tiny model family {family!r}; use one of {', '.join(FAMILIES)}")


# ----------------------------------------------------------------------------- models


def _config(family: str, tokenizer, hidden: int, layers: int):
    from transformers import AlbertConfig, BertConfig, DistilBertConfig, RobertaConfig

    heads = 2 if hidden % 2 == 0 else 1
    common = dict(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id)
    if family == "distilbert":
        return DistilBertConfig(
            dim=hidden, n_layers=layers, n_heads=heads, hidden_dim=2 * hidden, max_position_embeddings=_MAX_POS, **common
        )
    common.update(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads, intermediate_size=2 * hidden)
    if family in ("bert-uncased", "bert-cased"):
        return BertConfig(max_position_embeddings=_MAX_POS, **common)
    if family in ("roberta", "bertweet"):
        return RobertaConfig(
            max_position_embeddings=_MAX_POS + 2,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            type_vocab_size=1,
            tokenizer_class="BertweetTokenizer" if family == "bertweet" else None,
            **common,
        )
    return AlbertConfig(
        embedding_size=max(8, hidden // 2),
        max_position_embeddings=_MAX_POS,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
        **common,
    )


#: family -> the token string of a whole word mid-sentence (other families: the word as it is)
_WHOLE_WORD = {
    "bert-uncased": str.lower,
    "distilbert": str.lower,
    "roberta": lambda w: "Ġ" + w,
    "albert": lambda w: "▁" + w.lower(),
}


def _is_single_token(tokenizer, family: str, word: str) -> bool:
    """Does ``word`` tokenize, mid-sentence, into exactly its whole-word token? (Checked by
    tokenizing, not by looking the form up: a form can be in the vocabulary and still lose
    the segmentation to smaller pieces.)"""
    lead = tokenizer.tokenize("a")
    parts = tokenizer.tokenize("a " + word)[len(lead) :]
    return len(parts) == 1 and parts[0] == _WHOLE_WORD.get(family, str)(word)


def build_tiny_model(
    out_dir,
    family: str,
    words: Sequence,
    seed: int = 0,
    hidden: int = 32,
    layers: int = 2,
    extra_corpus: Iterable[str] | None = None,
    _corpus: list[str] | None = None,
) -> Path:
    """Build and save a tiny masked LM of ``family`` whose vocabulary holds ``words``.

    Args:
        out_dir: folder to write (created; existing files are overwritten).
        family: one of :data:`FAMILIES`.
        words: words and phrases that must be single whole-word tokens (each space-separated
            part of a phrase is made a token).
        seed: seeds the corpus order and the random weights (same seed, same model).
        hidden, layers: model size (attention heads: 2).
        extra_corpus: more training lines (generated filler text is always added).

    Returns the folder path. Loads with ``AutoModelForMaskedLM.from_pretrained(path)`` and
    ``AutoTokenizer.from_pretrained(path)``. ``fmat_tiny.json`` in the folder records the
    family, seed, sizes and the word parts that did not become single tokens (``not_single``).
    """
    out = _folder(out_dir, family)
    tokenizer = build_tokenizer(family, words, out, seed=seed, extra_corpus=extra_corpus, corpus=_corpus)
    model = _new_model(family, tokenizer, hidden, layers, seed).eval()
    return _save(out, model, tokenizer, family, words, {"seed": seed, "hidden": hidden, "layers": layers})


def _folder(out_dir, family: str) -> Path:
    """``out_dir``, made; a ValueError for a family not in :data:`FAMILIES`."""
    if family not in FAMILIES:
        raise ValueError(f"unknown tiny model family {family!r}; use one of {', '.join(FAMILIES)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return out


def _new_model(family: str, tokenizer, hidden: int, layers: int, seed: int, **settings):
    """A model of ``family`` for ``tokenizer`` with the ``settings`` its config has, its random
    weights drawn with ``seed`` (torch's global generator left as it was)."""
    import torch
    import transformers

    config = _config(family, tokenizer, hidden, layers)
    for key, value in settings.items():
        if hasattr(config, key):
            setattr(config, key, value)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return getattr(transformers, FAMILIES[family][0])(config)


def _save(out: Path, model, tokenizer, family: str, words: Sequence, meta: dict, what: str = "tiny") -> Path:
    """Save a tiny model of ``family`` and its tokenizer into ``out`` with its record
    ``fmat_tiny.json`` (``meta`` + vocabulary size, word count, the words that are not single
    whole-word tokens, which are logged)."""
    import transformers

    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    if getattr(tokenizer, "_fmat_files", None):
        _write_files(out, tokenizer._fmat_files)
    not_single = [w for w in _word_parts(words) if not _is_single_token(tokenizer, family, w)]
    record = {
        "family": family,
        **meta,
        "vocab_size": len(tokenizer),
        "n_words": len(_word_parts(words)),
        "not_single": not_single,
        "transformers": transformers.__version__,
    }
    (out / META_FILE).write_text(json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8")
    if not_single:
        log.warning(
            "%s %s model: %d word(s) are not single whole-word tokens: %s",
            what,
            family,
            len(not_single),
            ", ".join(not_single[:20]) + (" ..." if len(not_single) > 20 else ""),
        )
    return out


def read_meta(path) -> dict:
    """The record ``fmat_tiny.json`` of the tiny model at ``path`` (family, sizes, ``not_single``,
    and ``trained`` for a trained model)."""
    return json.loads((Path(path) / META_FILE).read_text(encoding="utf-8"))


def build_demo_models(
    out_dir, words: Sequence, families: Iterable[str] | Mapping = FAMILIES, seed: int = 0, hidden: int = 32, layers: int = 2
) -> dict[str, Path]:
    """Build one tiny model per family under ``out_dir``; returns ``{folder name: path}``.

    The folder names (:data:`FAMILIES`) make FMAT's model-name rules (uncased/albert → lower
    case, roberta → space prefix, albert → ▁) agree with the tokenizers. The training corpus is
    generated once and shared.
    """
    corpus = make_corpus(words, seed=seed)
    out = {}
    for fam in families:
        name = FAMILIES[fam][1]
        out[name] = build_tiny_model(Path(out_dir) / name, fam, words, seed=seed, hidden=hidden, layers=layers, _corpus=corpus)
    return out


# ----------------------------------------------------------------------------- trained models (known truth)

#: the configs' dropout settings, 0 for training
_DROPOUTS = (
    "hidden_dropout_prob attention_probs_dropout_prob dropout attention_dropout classifier_dropout_prob qa_dropout "
    "seq_classif_dropout"
).split()


def _examples(tokenizer, sentences, filler: Sequence[str], rng) -> tuple[list[list[int]], list[int], list[int], list[str]]:
    """``(inputs, mask positions, labels per row, skipped words)``: each context once, its options'
    tokens as the scorer derives them (:func:`fmat.tokens.derive_options`; not one token: no
    label), then each filler line once with one random token masked."""

    mask_id = tokenizer.mask_token_id
    texts = [c.replace("[MASK]", tokenizer.mask_token, 1) for c in sentences.contexts]
    ids = tokenizer(texts)["input_ids"] if texts else []
    pos = [mask_position(x, mask_id, t) for x, t in zip(ids, texts)]
    flat_ctx = [t for t, opts in zip(texts, sentences.options) for _ in opts]
    flat_words = [w for opts in sentences.options for w in opts]
    derived = derive_options(tokenizer, flat_ctx, flat_words)
    flat_labels = iter([-1 if o.oov else o.pieces[0] for o in derived])
    labels = [[next(flat_labels) for _ in opts] for opts in sentences.options]
    skipped = [w for w, o in zip(flat_words, derived) if o.oov]
    fill_ids = tokenizer(list(filler))["input_ids"] if len(filler) else []
    special = set(tokenizer.all_special_ids)
    f_in, f_pos, f_lab = [], [], []
    for x in fill_ids:
        cand = [j for j, t in enumerate(x) if t not in special]
        if not cand:
            continue
        j = cand[int(rng.integers(len(cand)))]
        f_in.append(x[:j] + [mask_id] + x[j + 1 :])
        f_pos.append(j)
        f_lab.append(x[j])
    return ids + f_in, pos + f_pos, labels + [[t] for t in f_lab], sorted(set(skipped))


def train_masked_lm(
    model,
    tokenizer,
    sentences,
    filler: Sequence[str] = (),
    *,
    steps: int = 1200,
    lr: float = 3e-3,
    batch_size: int = 256,
    seed: int = 0,
    progress: bool = False,
) -> dict:
    """Train ``model`` with the masked-LM objective on ``sentences`` (:class:`fmat.plant.Sentences`)
    and ``filler`` lines (one random token masked each): cross-entropy over the whole
    vocabulary at the mask, AdamW, linear decay.

    A step draws ``batch_size`` sentences at random (a context in proportion to its sentences)
    and scores each mask once against the counts of all its context's options: the expected
    loss of single sentences, with less noise. Returns a record: sentences, contexts, steps, the
    last 100 steps' mean loss, options that are not one token.
    """
    import torch
    from tqdm.auto import tqdm

    rng = np.random.default_rng(seed)
    inputs, pos, labels, skipped = _examples(tokenizer, sentences, filler, rng)
    n_ctx = len(sentences.contexts)
    counts = [np.asarray(c, dtype=float) for c in sentences.counts] + [np.ones(1)] * (len(inputs) - n_ctx)
    width = max(len(x) for x in labels)
    lab = torch.zeros((len(inputs), width), dtype=torch.long)
    share = torch.zeros((len(inputs), width))
    size = np.zeros(len(inputs))
    for k, (ls, cs) in enumerate(zip(labels, counts)):
        keep = [(t, c) for t, c in zip(ls, cs) if t >= 0 and c > 0]
        size[k] = sum(c for _, c in keep)
        for j, (t, c) in enumerate(keep):
            lab[k, j], share[k, j] = t, c / size[k]
    draw = size / size.sum()
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    all_ids, all_att = _pad(inputs, pad_id, "cpu")
    all_pos = torch.tensor(pos)
    lengths = all_att.sum(1)
    model.eval()
    head = _head_fn(model, scoring_path(model, tokenizer))
    model.train()
    torch.manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min((i + 1) / warm, max(0.02, 1.0 - i / steps)))
    losses = []
    for _ in tqdm(range(steps), desc="training", unit="step", leave=False, disable=not progress):
        # a context drawn twice is scored once, its loss counted twice (the same sum)
        picked, times = np.unique(rng.choice(len(inputs), size=batch_size, p=draw), return_counts=True)
        rows, times = torch.from_numpy(picked), torch.from_numpy(times).float()
        L = int(lengths[rows].max())
        logits = _mask_logits(model, head, None, all_ids[rows, :L], all_att[rows, :L], all_pos[rows])
        loss = -((torch.log_softmax(logits, -1).gather(1, lab[rows]) * share[rows]).sum(1) * times).sum() / batch_size
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    vars(model).pop("_fmat_scoring_path", None)  # decided again on the trained weights when it is scored
    return {
        "sentences": int(size.sum()),
        "contexts": n_ctx,
        "steps": int(steps),
        "batch_size": int(batch_size),
        "loss": round(float(np.mean(losses[-100:])), 4) if losses else None,
        "not_one_token": skipped,
    }


def build_trained_model(
    out_dir,
    family: str,
    words: Sequence,
    sentences,
    seed: int = 0,
    hidden: int = 64,
    layers: int = 2,
    steps: int = 1200,
    filler: int = 2000,
    progress: bool = False,
    batch_size: int = 256,
) -> Path:
    """A tiny masked LM of ``family`` *trained* on ``sentences`` (:func:`fmat.plant.training_sentences`)
    plus ``filler`` generated lines: its tokenizer learns the studies' words and the filler
    text, its weights learn the planted probabilities. Saved like :func:`build_tiny_model`;
    ``fmat_tiny.json`` records the training too (``trained``)."""
    import torch

    out = _folder(out_dir, family)
    fill = filler_lines(filler, seed=seed, words=_word_parts(words))
    corpus = make_corpus(words, seed=seed, extra_corpus=None)
    rng = random.Random(seed)
    lines = list(sentences.lines())
    corpus += rng.sample(lines, min(len(lines), 20000))
    tokenizer = build_tokenizer(family, words, out, seed=seed, corpus=corpus)
    # no dropout, and larger initial weights: the tiny model learns the contexts in fewer steps
    model = _new_model(family, tokenizer, hidden, layers, seed, initializer_range=0.1, **dict.fromkeys(_DROPOUTS, 0.0))
    with torch.random.fork_rng(devices=[]):  # training seeds torch's generator: the caller's stays as it was
        record = train_masked_lm(
            model, tokenizer, sentences, fill, steps=steps, seed=seed, progress=progress, batch_size=batch_size
        )
    meta = {"seed": seed, "hidden": hidden, "layers": layers, "trained": record}
    return _save(out, model, tokenizer, family, words, meta, what="trained tiny")


#: the docstrings' example vocabulary, after BERT's five special tokens
DOC_WORDS = ("the", "man", "woman", "is", "a", "nurse", "here", ".")


def doc_tokenizer(words=DOC_WORDS):
    """The docstrings' example WordPiece tokenizer: BERT's five special tokens, then ``words``
    (ids 5, 6, ... in their order).

    Examples
    --------
    >>> doc_tokenizer(["the", "nurse"]).convert_tokens_to_ids(["[MASK]", "nurse"])
    [4, 6]
    """
    from transformers import BertTokenizer

    return BertTokenizer(vocab={p: i for i, p in enumerate([*_SPECIAL, *words])})


def doc_model(words=DOC_WORDS):
    """The docstrings' example masked LM: a one-layer BERT over :func:`doc_tokenizer`'s
    vocabulary of ``words`` (default: ``the man woman is a nurse here .``), random weights drawn
    with seed 0; ``(model, tokenizer)``, the model in eval mode.

    Examples
    --------
    >>> model, tok = doc_model()
    >>> model.config.vocab_size, tok.convert_tokens_to_ids("nurse")
    (13, 10)
    """
    import torch  # here: heavy, as the rest of this module's training code
    from transformers import BertConfig, BertForMaskedLM

    tok = doc_tokenizer(words)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(_SPECIAL) + len(words),
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=1,
        intermediate_size=8,
        max_position_embeddings=32,
    )
    return BertForMaskedLM(config).eval(), tok
