"""The replication of Bao (2024), "The Fill-Mask Association Test": the logic of the Snakemake
workflow (Snakefile, rules/), built on the library :mod:`fmat` and never imported by it.

One module per stage (``<stage>_stage`` where the library has a module of the stage's name); each
rule's script (scripts/) calls one function of its stage. Around them: :mod:`.config`,
:mod:`.scripts`, :mod:`.paper` and :mod:`.pages`. docs/architecture.md has the map of rules,
outputs and stage functions, including "where is this number made".
"""
