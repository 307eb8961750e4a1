# Criterion tables for Studies 1A–1C: resources/criteria/<name>.parquet (docs/criteria.md).
#
#   bls2021_occupations   % male workers of the 50 WEFAT-1 occupations (BLS 2021, table 11)
#   ssa_names_wefat2      % male of the 50 WEFAT-2 names (SSA 1900–2017)
#   ssa_names_1c          names with >= 100 births of each sex (and in GloVe 840B, if available)
#   wefat_{1A,1B,1C}      WEFAT_male scores from GloVe 840B
#
# Raw files come from the official URLs (downloads: localrules, i.e. on the login node) or,
# with `mirror_dir` set, are copied from that folder. Each retrieval is recorded in the source's
# own lock record <raw file>.lock.tsv (sha256, date; an output of the fetch job, kept between
# retrievals by update(), and an input of the tables made from that file); a later retrieval
# that differs is warned about in the fetch rule's log. Rule criteria_lock gathers the records
# into resources/criteria.lock.tsv. Logic: fmat_replication.criteria; scripts/criteria_*.py only call it.


CRITERIA_CFG = config.get("criteria") or {}
# defaults ship with the workflow (found from any working folder); a configured path is
# relative to the working folder, as every path in the config
# (repo_path: relative to the working folder, so that a moved project reruns nothing)
CRITERIA_WORDS = CRITERIA_CFG.get("wefat_words", repo_path("config/criteria/wefat_words.tsv"))
CRITERIA_MAPPING = CRITERIA_CFG.get("bls_mapping", repo_path("config/criteria/bls2021_occupations.tsv"))


CRITERIA_ORIGINS = criteria_origins(config)  # rules/common.smk
# raw copy of each source: resources/criteria/raw/<source>/<official or mirror file name>
CRITERIA_RAW = {n: f"resources/criteria/raw/{n}/{o.filename}" for n, o in CRITERIA_ORIGINS.items()}
# its lock record (rule criteria_fetch)
CRITERIA_RECORD = {n: f"{raw}.lock.tsv" for n, raw in CRITERIA_RAW.items()}
# the full GloVe 840B vocabulary (download, or glove/glove.840B.300d.zip in the mirror);
# False with the mirror's 457-word extract: no GloVe filter for 1C, demo vectors for WEFAT
GLOVE_FULL = CRITERIA_ORIGINS["glove"].full
CRITERIA_ENV = "../envs/criteria.yaml"
CRITERIA_TABLES = ["bls2021_occupations", "ssa_names_wefat2", "ssa_names_1c", "wefat_1A", "wefat_1B", "wefat_1C"]


localrules:
    criteria,
    criteria_fetch,
    criteria_lock,


rule criteria:
    """All criterion tables and the sources' lock (`snakemake criteria`)."""
    input:
        expand("resources/criteria/{name}.parquet", name=CRITERIA_TABLES),
        "resources/criteria.lock.tsv",


rule criteria_lock:
    """The source files' lock records in one table, for people; no job reads it."""
    input:
        list(CRITERIA_RECORD.values()),
    output:
        "resources/criteria.lock.tsv",
    log:
        "logs/criteria/lock.log",
    conda:
        CRITERIA_ENV
    script:
        "../scripts/criteria_lock.py"


rule criteria_fetch:
    """Download one source file (login node) or copy it from mirror_dir; lock its sha256."""
    output:
        raw="resources/criteria/raw/{source}/{filename}",
        lock=update("resources/criteria/raw/{source}/{filename}.lock.tsv"),
    log:
        "logs/criteria/fetch_{source}_{filename}.log",
    wildcard_constraints:
        source="bls2021|ssa|glove",
        filename=alternatives(sorted({o.filename for o in CRITERIA_ORIGINS.values()})),
    retries: 2
    conda:
        CRITERIA_ENV
    params:
        origin=lambda wc: vars(CRITERIA_ORIGINS[wc.source]),
        timeout=CRITERIA_CFG.get("download_timeout", 60),  # seconds without an answer (fmat.net)
    script:
        "../scripts/criteria_fetch.py"


rule criteria_bls2021_occupations:
    input:
        table=CRITERIA_RAW["bls2021"],
        lock=CRITERIA_RECORD["bls2021"],
        mapping=CRITERIA_MAPPING,
        words=CRITERIA_WORDS,
    output:
        "resources/criteria/bls2021_occupations.parquet",
    log:
        "logs/criteria/bls2021_occupations.log",
    conda:
        CRITERIA_ENV
    script:
        "../scripts/criteria_bls.py"


rule criteria_ssa_names_wefat2:
    input:
        counts=CRITERIA_RAW["ssa"],
        lock=CRITERIA_RECORD["ssa"],
        words=CRITERIA_WORDS,
    output:
        "resources/criteria/ssa_names_wefat2.parquet",
    log:
        "logs/criteria/ssa_names_wefat2.log",
    conda:
        CRITERIA_ENV
    params:
        table="wefat2",
        years=CRITERIA_CFG.get("ssa_years", [1900, 2017]),
    script:
        "../scripts/criteria_ssa.py"


rule criteria_ssa_names_1c:
    input:
        counts=CRITERIA_RAW["ssa"],
        lock=CRITERIA_RECORD["ssa"],
        words=CRITERIA_WORDS,
        glove=[CRITERIA_RAW["glove"]] if GLOVE_FULL else [],
    output:
        "resources/criteria/ssa_names_1c.parquet",
    log:
        "logs/criteria/ssa_names_1c.log",
    conda:
        CRITERIA_ENV
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        table="1c",
        years=CRITERIA_CFG.get("ssa_years", [1900, 2017]),
        min_each=CRITERIA_CFG.get("min_births_each_sex", 100),
    script:
        "../scripts/criteria_ssa.py"


rule criteria_wefat:
    """WEFAT_male of the items of Study 1A (occupations), 1B (names) or 1C (ssa_names_1c)."""
    input:
        glove=CRITERIA_RAW["glove"],
        lock=CRITERIA_RECORD["glove"],
        words=CRITERIA_WORDS,
        names=lambda wc: ["resources/criteria/ssa_names_1c.parquet"] if wc.wefat_study == "1C" else [],
    output:
        "resources/criteria/wefat_{wefat_study}.parquet",
    log:
        "logs/criteria/wefat_{wefat_study}.log",
    wildcard_constraints:
        wefat_study="1A|1B|1C",
    conda:
        CRITERIA_ENV
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        glove_full=GLOVE_FULL,
        demo_embedding=bool(CRITERIA_CFG.get("demo_embedding", False)),
    script:
        "../scripts/criteria_wefat.py"
