"""``fmat query``: build a query table (R: ``FMAT_query``) from options or a study file."""

from __future__ import annotations

from ..errors import InputError
from ._common import add_output_args, check_study_file, command, emit_table, files

EPILOG = """\
examples:
  # one query, a MASK pair and one TARGET group (MT design), written for R users as CSV
  fmat query "The [MASK] works as a {TARGET}." --mask Male=man --mask Female=woman \\
      --target Occ=nurse,engineer -o q.csv

  # two queries share the groups (a qid column is added); groups are ordered as given
  fmat query "[MASK] is {ATTRIB}." "[MASK] seems {ATTRIB}." --mask Male=he,him \\
      --mask Female=she,her --attrib Warm=kind,friendly --attrib Cold=cold,distant

  # the query table of a study file (all its blocks bound, qid renumbered)
  fmat query --study config/studies/2A.yaml -o q.parquet

  # only check a study file (exit 0 when valid, 2 with the problems listed)
  fmat query --study config/studies/2A.yaml --check

A group is NAME=word1,word2,... (phrases may contain spaces; a phrase with a comma needs a
study file). Word j of every MASK group forms pair j (M_pair), so MASK groups need equal
sizes; likewise several TARGET (or ATTRIB) groups when only one of the two slots is used.
Columns: [qid], query, MASK, M_pair, M_word, [TARGET, T_pair, T_word], [ATTRIB, A_pair, A_word].
"""


def register(subparsers) -> None:
    p = command(
        subparsers,
        "query",
        help="build a query table (FMAT_query) from options or from a study file",
        description="Build the table of queries x [MASK] options (x TARGET/ATTRIB words) that "
        "'fmat run' scores -- the same table R's FMAT_query() makes.",
        epilog=EPILOG,
    )
    p.add_argument("query", nargs="*", help="sentence(s) with one [MASK] (and {TARGET}/{ATTRIB})")
    p.add_argument("--mask", action="append", default=[], metavar="NAME=W1,W2", help="a MASK group (repeat: first group first)")
    p.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="NAME=W1,W2",
        help="a TARGET group, put into {TARGET} (repeat for several)",
    )
    p.add_argument(
        "--attrib",
        action="append",
        default=[],
        metavar="NAME=W1,W2",
        help="an ATTRIB group, put into {ATTRIB} (repeat for several)",
    )
    p.add_argument("--study", metavar="FILE", help="build the query table of this study file instead")
    p.add_argument(
        "--criteria-dir",
        default=None,
        metavar="DIR",
        help="folder of criterion tables, for study word lists read from one (the replication's: resources/criteria)",
    )
    p.add_argument("--check", action="store_true", help="with --study: only validate the file and list its problems")
    add_output_args(p)
    files(p, inputs=("study",))
    p.set_defaults(func=run)


def parse_group(text: str, option: str) -> tuple[str, list[str]]:
    """``NAME=w1,w2`` -> (NAME, [w1, w2])."""
    name, sep, words = text.partition("=")
    name = name.strip()
    items = [w.strip() for w in words.split(",")] if sep else []
    if not sep or not name or not items or any(not w for w in items):
        raise InputError(
            f"cannot read group {text!r}",
            where=option,
            fix=f"write {option} NAME=word1,word2 (no empty words), e.g. {option} Male=he,him",
        )
    return name, items


def _groups(values: list[str], option: str) -> dict[str, list[str]] | None:
    groups: dict[str, list[str]] = {}
    for v in values:
        name, words = parse_group(v, option)
        if name in groups:
            raise InputError(
                f"group {name!r} is given twice", where=option, fix="give each group once (list all its words after '=')"
            )
        groups[name] = words
    return groups or None


def run(args) -> int:
    from ..design import query
    from ..study import load_study, study_criteria

    if args.study:
        if args.query or args.mask or args.target or args.attrib:
            raise InputError(
                "--study cannot be combined with queries or --mask/--target/--attrib",
                where="fmat query",
                fix="use either a study file or the options",
            )
        if args.check:
            check_study_file(args.study, args.criteria_dir)
            unresolved = study_criteria(args.study) if args.criteria_dir is None else []
            if unresolved:
                print(
                    f"{args.study}: valid, except that its criterion word lists "
                    f"({', '.join(unresolved)}) were not checked: no criteria folder "
                    "(give --criteria-dir, or build resources/criteria first)"
                )
            else:
                print(f"{args.study}: valid")
            return 0
        df = load_study(args.study, criteria_dir=args.criteria_dir).queries
    else:
        if args.check:
            raise InputError("--check needs --study FILE", where="fmat query", fix="add --study FILE")
        if not args.query:
            raise InputError(
                "no query given",
                where="fmat query",
                fix='give a sentence, e.g. fmat query "[MASK] is a nurse." --mask Male=he --mask Female=she (or --study FILE)',
            )
        df = query(
            args.query,
            MASK=_groups(args.mask, "--mask"),
            TARGET=_groups(args.target, "--target"),
            ATTRIB=_groups(args.attrib, "--attrib"),
        )
    emit_table(df, args)
    return 0
