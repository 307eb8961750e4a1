#!/usr/bin/env bash
# benchmarks/gpu_run.sh -- issue 56's GPU measurement in ONE call of the device tool (at most 8 minutes).
#
# What it runs, each step under its own `timeout`, all output under $OUT (default
# benchmarks/out/gpu_run, so that it runs anywhere):
#   check          benchmarks/gpu_run.py check: every package the benchmarks import is there
#                  (<1 s, before any of them is imported; else the wheels to carry, exit 2); env.json
#   paper          bench_paper.py --device cuda: the whole paper (12 published architectures, 16,208
#                  sentences each, sample 1), per model and in total, loads included, peak GPU memory,
#                  and --breakdown (load, model check, tokenizing, batches on the host, host<->device
#                  copies, forward, output sentences): where the time goes; --time-budget keeps it
#                  inside its limit (a model that would not fit runs at a 0.05 sample); paper.json
#   scoring        bench_scoring.py --device cuda: sentences/s, the share of the fp32 and TF32 matmul
#                  peaks (both measured on the device), max |Δ log p| against the CPU and FMAT's way,
#                  bf16 / fp16 / TF32 deviations in log p and LPR; scoring.json
#   sweep-bert     bench_scoring.py --sweep-only --sweep 2k..64k: the fastest padded tokens per pass
#   sweep-roberta  and the AUTO_BATCH["cuda"] it calls for, on BERT-base and RoBERTa-base; sweep-*.json
#   summary        summary.md: device, date, command, every headline figure, and a last line
#                  "steps passed: N of 6 (...)"; log.txt holds every step's output.
#
# The device tool's call (the machine's own python3 holds torch, transformers, pandas, pyarrow,
# scipy; the repository goes on PYTHONPATH, nothing is installed):
#
#   1. here, in the repository's root, fetch the wheels of what that machine lacks (jsonschema and
#      its dependencies; `python3 benchmarks/gpu_run.py check` names any other):
#        bash benchmarks/gpu_run.sh --fetch-wheels
#   2. run:  command   "OUT=$OUT bash benchmarks/gpu_run.sh"
#            carry     [".whl"]
#            timeout_s 480
#      then read summary.md (and log.txt) under files_at, and give the machine back.
#
# Without step 1 the check step stops the run at once and prints the exact `pip download` line.
# The steps share GPU_RUN_BUDGET seconds (default 450: leaves 30 s of the 480); a step that would
# pass the budget is cut short, and the summary says so.
#
# Rehearsal on any CPU (tiny models, a few sentences, ~1 minute; tests/test_gpu_run.py runs it):
#   GPU_RUN_DEVICE=cpu GPU_RUN_TINY=1 bash benchmarks/gpu_run.sh
# Other settings: PYTHON (default python3), GPU_RUN_THREADS (torch CPU threads), GPU_RUN_WHEELS
# (default .whl).
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
PY=${PYTHON:-python3}
WHEELS=${GPU_RUN_WHEELS:-.whl}

if [ "${1:-}" = "--fetch-wheels" ]; then
  # the tested versions (envs/lock.txt; benchmarks/gpu_run.py's TESTED) of what the device's image lacks
  exec "$PY" -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$WHEELS" \
    jsonschema==4.26.0 jsonschema-rs==0.60.3 jsonschema-specifications==2025.9.1 referencing==0.37.0 rpds-py==2026.9.1
fi
if [ $# -gt 0 ]; then
  echo "gpu_run.sh: error: unknown argument $1" >&2
  echo "  fix: run it without arguments (settings are environment variables: see its header), or with --fetch-wheels" >&2
  exit 2
fi

DEVICE=${GPU_RUN_DEVICE:-cuda}
TINY=${GPU_RUN_TINY:-0}
BUDGET=${GPU_RUN_BUDGET:-450}
OUT=${OUT:-$ROOT/benchmarks/out/gpu_run}
case "$DEVICE" in cpu | cuda | cuda:[0-9]*) ;; *)
  echo "gpu_run.sh: error: GPU_RUN_DEVICE=$DEVICE" >&2
  echo "  fix: use cuda (default), cuda:N or cpu" >&2
  exit 2
  ;;
esac
mkdir -p "$OUT" || exit 2
LOG=$OUT/log.txt
: >"$LOG"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
THREADS=()
[ -n "${GPU_RUN_THREADS:-}" ] && THREADS=(--threads "$GPU_RUN_THREADS")

CMD="bash benchmarks/gpu_run.sh"
[ "$DEVICE" != cuda ] && CMD="GPU_RUN_DEVICE=$DEVICE $CMD"
[ "$TINY" != 0 ] && CMD="GPU_RUN_TINY=$TINY $CMD"
say() { echo "$*" | tee -a "$LOG"; }
say "gpu_run.sh: device $DEVICE, tiny $TINY, budget ${BUDGET}s, out $OUT, $(date -u '+%Y-%m-%d %H:%M UTC')"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | tee -a "$LOG"

if compgen -G "$WHEELS/*.whl" >/dev/null; then
  say "installing the carried wheels: $(cd "$WHEELS" && echo *.whl)"
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/gpu_run_site "$WHEELS"/*.whl >>"$LOG" 2>&1 ||
    { say "gpu_run.sh: error: the wheels in $WHEELS did not install (log.txt)"; exit 2; }
  export PYTHONPATH=/tmp/gpu_run_site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH}

STEPS=()
# run_step NAME SECONDS COMMAND...: COMMAND under `timeout`, cut to what is left of the budget
# (20 s are kept for the summary); its output to the terminal and log.txt; NAME=exit:seconds in STEPS
run_step() {
  local name=$1 limit=$2 left t0 rc
  shift 2
  left=$((BUDGET - SECONDS - 20))
  [ "$limit" -gt "$left" ] && limit=$left
  if [ "$limit" -lt 5 ]; then
    STEPS+=("$name=skipped")
    say "== $name: skipped (the budget of ${BUDGET}s is spent)"
    return
  fi
  say "== $name (timeout ${limit}s): $*"
  t0=$SECONDS
  timeout --kill-after=10 "$limit" "$@" 2>&1 | tee -a "$LOG"
  rc=${PIPESTATUS[0]}
  STEPS+=("$name=$rc:$((SECONDS - t0))")
  say "== $name: exit $rc after $((SECONDS - t0)) s"
}

run_step check 30 "$PY" benchmarks/gpu_run.py check --out "$OUT"
case "${STEPS[0]}" in check=0:*) ;; *)
  "$PY" benchmarks/gpu_run.py summary --out "$OUT" --steps "${STEPS[*]}" --device "$DEVICE" --tiny "$TINY" \
    --command "$CMD" --seconds "$SECONDS" >/dev/null
  say "gpu_run.sh: the check failed (above): nothing was measured"
  exit 2
  ;;
esac

if [ "$TINY" = 1 ]; then
  PAPER=(--tiny --models albert-base-v2,bert-base-uncased --sample 0.002 --least 2 --breakdown-sample 0.002
    --time-budget 40 --fallback-sample 0.001)
  SCORING=(--tiny --n 40 --chunks 2)
  SWEEP=(--tiny --n 60 --sweep 256,512,1k --sweep-repeats 1)
  LIMITS=(120 90 60 60)
else
  PAPER=(--sample 1 --breakdown-sample 0.2 --time-budget 210 --fallback-sample 0.05)
  SCORING=(--n 2000)
  SWEEP=(--n 4000 --sweep 2k,4k,8k,16k,32k,64k --sweep-repeats 2)
  LIMITS=(240 90 45 45)
fi
run_step paper "${LIMITS[0]}" "$PY" benchmarks/bench_paper.py --device "$DEVICE" "${PAPER[@]}" --breakdown --no-fmat-way \
  "${THREADS[@]}" --out "$OUT/paper.json"
run_step scoring "${LIMITS[1]}" "$PY" benchmarks/bench_scoring.py --device "$DEVICE" "${SCORING[@]}" \
  --lowp bfloat16,float16,tf32 "${THREADS[@]}" --out "$OUT/scoring.json"
run_step sweep-bert "${LIMITS[2]}" "$PY" benchmarks/bench_scoring.py --device "$DEVICE" "${SWEEP[@]}" --sweep-only \
  "${THREADS[@]}" --out "$OUT/sweep-bert.json"
run_step sweep-roberta "${LIMITS[3]}" "$PY" benchmarks/bench_scoring.py --device "$DEVICE" --arch roberta "${SWEEP[@]}" \
  --sweep-only "${THREADS[@]}" --out "$OUT/sweep-roberta.json"

say "== summary"
STEPS+=("summary=0:0")
"$PY" benchmarks/gpu_run.py summary --out "$OUT" --steps "${STEPS[*]}" --device "$DEVICE" --tiny "$TINY" \
  --command "$CMD" --seconds "$SECONDS" || exit 1
for s in "${STEPS[@]}"; do
  case "$s" in *=0:*) ;; *) exit 1 ;; esac
done
exit 0
