"""The replication of Bao (2024), "The Fill-Mask Association Test": the logic of the Snakemake
workflow (Snakefile, rules/), built on the library :mod:`fmat` and never imported by it.

One module per stage (``<stage>_stage`` where the library has a module of the stage's name:
no module name means two things); each rule's script (scripts/) calls one function of its stage
(:mod:`.model_stage`, :mod:`.demo`, :mod:`.criteria`, :mod:`.queries`, :mod:`.score`,
:mod:`.lpr_stage`, :mod:`.reliability_stage`, :mod:`.analysis`, :mod:`.compare`,
:mod:`.recovery`, :mod:`.checks`, :mod:`.report_stage`, :mod:`.agreement_stage`).

Around them: :mod:`.config` (the workflow's configuration, checked before any job),
:mod:`.scripts` (logging and errors of every script, model markers), :mod:`.paper` (the paper's
printed numbers, ``config/paper_results.tsv``) and :mod:`.pages` (what the report pages show).
docs/architecture.md has the map of rules, outputs and stage functions, including "where is
this number made".
"""
