"""The replication of Bao (2024), "The Fill-Mask Association Test": the logic of the Snakemake
workflow (Snakefile, rules/), built on the library :mod:`fmat` and never imported by it.

One module per stage (``<stage>_stage`` where the library has a module of the stage's name:
no module name means two things); each rule's script (scripts/) calls one function of its stage:

=========================  =====================================  ===========================================
stage (module)             rules                                  function(s) the scripts call
=========================  =====================================  ===========================================
:mod:`.model_stage`        download_model, model_card             ``download_model``, ``model_card``
:mod:`.demo`               demo_models                            ``demo_models``
:mod:`.criteria`           criteria_fetch, criteria_bls2021_...,  ``fetch_source``, ``bls_criterion``,
                           criteria_ssa_names_*, criteria_wefat   ``ssa_criterion``, ``wefat_criterion``
:mod:`.queries`            queries                                ``queries``
:mod:`.score`              score_<group>                          ``score_group``
:mod:`.lpr_stage`          lpr                                    ``lpr``
:mod:`.reliability_stage`  reliability                            ``reliability``
:mod:`.analysis`           analysis                               ``analysis`` (the study's :mod:`.analyses`)
:mod:`.compare`            compare, compare_study                 ``compare_studies`` (verdicts)
:mod:`.report_stage`       report_study, report_index             ``report_page`` (pages: :mod:`.pages`)
:mod:`.agreement_stage`    agreement_download, agreement,         ``download``, ``check_model``, ``summary``
                           agreement_summary
=========================  =====================================  ===========================================

Around them: :mod:`.config` (the workflow's configuration, checked before any job),
:mod:`.scripts` (logging and errors of every script, model markers), :mod:`.paper` (the paper's
printed numbers, ``config/paper_results.tsv``), :mod:`.analyses` (one function per study family)
and :mod:`.pages` (what the report pages show). docs/architecture.md has the map, including
"where is this number made".
"""
