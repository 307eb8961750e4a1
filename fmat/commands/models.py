"""``fmat download | info | vocab | remove | check``: the models (R: BERT_* and fill_mask_check)."""

from __future__ import annotations

from ._common import add_models_arg, add_output_args, add_timeout_arg, command, emit_table, files, positive_int


def _models_arg(p, required=True):
    add_models_arg(p, required=required)
    p.add_argument("--cache-dir", default=None, help="Hugging Face hub cache (default: $HF_HOME/hub)")


def register(sub) -> None:
    p = command(
        sub,
        "download",
        help="download models from the Hugging Face hub (the only online command)",
        description="Download config, tokenizer and safetensors weights of each model into the "
        "cache and record the resolved commit in a lock file.",
        example="fmat download bert-base-uncased roberta-base --lock resources/models.lock.tsv",
    )
    p.add_argument("names", nargs="+", metavar="MODEL", help="hub model names")
    p.add_argument("--revision", default=None, help="branch, tag or commit (default: main)")
    p.add_argument("--cache-dir", default=None)
    p.add_argument("--lock", default=None, help="lock file (TSV) to update (default: $FMAT_MODELS_LOCK)")
    add_timeout_arg(p)
    files(p, lock="file")
    p.set_defaults(func=_download)

    p = command(
        sub,
        "info",
        help="parameters, vocabulary, layers... of models (R: BERT_info)",
        example="fmat info -m bert-base-uncased -m roberta-base",
    )
    _models_arg(p)
    add_output_args(p)
    p.set_defaults(func=_info)

    p = command(
        sub,
        "vocab",
        help="are words single whole-word tokens of the models? (R: BERT_vocab)",
        example="fmat vocab -m roberta-base he she nurse",
    )
    _models_arg(p)
    p.add_argument("words", nargs="+", help="words to check")
    p.add_argument("--query", default="It is [MASK] here.", help="context sentence (default: %(default)r)")
    p.add_argument("--word-rule", choices=["tokenizer", "fmat"], default="tokenizer")
    add_output_args(p)
    p.set_defaults(func=_vocab)

    p = command(sub, "remove", help="delete models from the local cache (R: BERT_remove)")
    p.add_argument("names", nargs="+", metavar="MODEL")
    p.add_argument("--cache-dir", default=None)
    p.set_defaults(func=_remove)

    p = command(
        sub,
        "check",
        help="top predictions of models for a sentence (R: fill_mask_check)",
        example='fmat check "Paris is the [MASK] of France." -m bert-base-uncased --top 5',
    )
    p.add_argument("query", help="a sentence with one [MASK]")
    _models_arg(p)
    p.add_argument(
        "--top", type=positive_int, default=5, metavar="N", help="how many predictions per model (default: %(default)s)"
    )
    p.add_argument("--device", default=None)
    add_output_args(p)
    p.set_defaults(func=_check)


def _download(args) -> int:
    from ..models import download

    emit_table(
        download(args.names, revision=args.revision, cache_dir=args.cache_dir, lock_path=args.lock, timeout=args.timeout), args
    )
    return 0


def _info(args) -> int:
    from ..models import info

    emit_table(info(args.models, cache_dir=args.cache_dir), args)
    return 0


def _vocab(args) -> int:
    from ..models import vocab

    emit_table(vocab(args.models, args.words, query=args.query, word_rule=args.word_rule, cache_dir=args.cache_dir), args)
    return 0


def _remove(args) -> int:
    from ..models import remove

    removed = remove(args.names, cache_dir=args.cache_dir)
    print("removed: " + (", ".join(removed) if removed else "nothing"))
    return 0


def _check(args) -> int:
    from ..models import fill_mask_check

    emit_table(fill_mask_check(args.query, args.models, top=args.top, device=args.device, cache_dir=args.cache_dir), args)
    return 0
