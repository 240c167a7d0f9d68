#!/usr/bin/env bash
# Every GPU measurement autodev needs, in one command, on any machine with an NVIDIA GPU:
#
#     bash benchmarks/gpu-run.sh                 # results in ./gpu-out
#     OUT=/some/dir PYTHON=.venv/bin/python bash benchmarks/gpu-run.sh
#
# It runs this checkout's code (PYTHONPATH) with $PYTHON (default python3), which needs
# autodev's dependencies, CuPy with the CUDA libraries, pytest and hypothesis: for instance
# `pip install -e '.[test,bench,plot]' && autodev doctor --install`, then `autodev doctor`
# clean. autodev itself must be installed (`pip install -e .`, or with --no-deps
# --no-build-isolation where nothing can be downloaded): asv's benchmark processes import
# it from the environment, and Dask finds its backend through the installed entry point. On a machine without network access, put wheels of what is missing (asv, ...) in
# .whl/ at the top of the checkout: they are installed into a private directory first.
#
# Steps, each time-boxed so that the whole run ends within GPU_RUN_LIMIT seconds (570 by
# default; raise it for a slower machine or a fuller run):
#   1. pytest -m gpu          -> $OUT/pytest-gpu-<gpu>.xml; fails if a gpu test failed, was
#                                skipped at set-up (no GPU reached it) or none ran
#   1b. cupy_probe            -> $OUT/cupy-facts-<gpu>.json (what CuPy accepts and refuses)
#   2. autodev calibrate      -> $OUT/profile-<gpu>.json  (tolerated if the command is missing)
#   3. side-by-side report    -> $OUT/report-<gpu>.json, $OUT/report-<gpu>.png
#   4. overhead script        -> $OUT/overhead-<gpu>.json  (tiny/large calls with a GPU present)
#   5. asv --quick            -> $OUT/asv-results-<gpu>.tar.gz  (skipped if asv is absent):
#                                the overhead, chained, reference and threads classes, one
#                                asv run per class (each saved as it ends), this commit,
#                                this interpreter (--python=same), machine name <gpu>
# Everything printed also goes to $OUT/gpu-run-<gpu>.log. Exit status: 0 only if every step
# that ran passed. Afterwards, commit the profile under calibration/, the asv results under
# benchmarks/results/<gpu>/ (`tar -xzf asv-results-<gpu>.tar.gz -C benchmarks results/<gpu>`
# puts them where asv.conf.json's results_dir keeps every machine's), and put the report's
# figures in docs/performance.md.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
[[ $PY == */* ]] && PY="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")"  # step 5 runs elsewhere
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# a cache of its own: the measured profile goes to $OUT, the user's cache is left alone
export AUTODEV_CACHE_DIR="${AUTODEV_CACHE_DIR:-$scratch/cache}"
START=$SECONDS
LIMIT="${GPU_RUN_LIMIT:-570}"   # seconds: the whole run, every step included

if compgen -G ".whl/*.whl" >/dev/null; then  # wheels added by hand (no network access)
  site="$scratch/site-packages"
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$site" .whl/*.whl && export PYTHONPATH="$site:$PYTHONPATH"
fi

# the compiled hot path, if this machine can build it (setuptools and a C compiler); without
# it autodev runs its pure-Python paths, and `autodev info` below says which
"$PY" setup.py -q build_ext --inplace >/dev/null 2>&1 \
  || echo "note: autodev._speedups not built here; the pure-Python hot path runs"

gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
tag="$(printf '%s' "${gpu:-nogpu}" | tr -cs 'A-Za-z0-9._-' '-' | sed 's/^-*//; s/-*$//')"
exec > >(tee -a "$OUT/gpu-run-$tag.log") 2>&1
echo "== autodev gpu-run on '${gpu:-no GPU found by nvidia-smi}' at $(date -u '+%F %T UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
"$PY" -c 'import sys, numpy, scipy; print("python", sys.version.split()[0], "numpy", numpy.__version__, "scipy", scipy.__version__)'
"$PY" -c 'import cupy; print("cupy", cupy.__version__, "available:", cupy.is_available())' || echo "cupy: not importable"
"$PY" -c 'import autodev, autodev._config as c; print("compiled hot path:", c.SPEEDUPS_STATUS); [print(" ", d) for d in autodev.devices()]'

status=0
fail() { echo "!! $*"; status=1; }
left() { echo $(( LIMIT - (SECONDS - START) )); }
box() {  # box SECONDS CMD...: run CMD with at most SECONDS (and never past LIMIT)
  local t=$1; shift
  local l; l=$(left)
  (( l < t )) && t=$l
  if (( t < 10 )); then echo "!! no time left for: $*"; return 124; fi
  timeout --kill-after=5 "$t" "$@"
}

echo "== 1. pytest -m gpu"
junit="$OUT/pytest-gpu-$tag.xml"
rm -f "$junit"
timeout_opt=()
"$PY" -c "import pytest_timeout" 2>/dev/null && timeout_opt=(--timeout=60)
# several workers share the GPU where pytest-xdist is installed: CuPy compiles each new kernel
# on first use, and a fresh machine compiles them all
"$PY" -c "import xdist" 2>/dev/null && timeout_opt+=(-n "${GPU_TEST_WORKERS:-4}")
box 190 "$PY" -m pytest -m gpu -q -rs --tb=short -p no:cacheprovider "${timeout_opt[@]}" \
  --junitxml="$junit"
rc=$?
if (( rc != 0 )); then fail "pytest -m gpu exited $rc"; fi
if [[ -f $junit ]]; then
  "$PY" - "$junit" <<'EOF' || status=1
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else list(root)
ran = sum(int(s.get("tests", 0)) for s in suites)
skipped = sum(int(s.get("skipped", 0)) for s in suites)
print(f"gpu tests: {ran} collected, {skipped} skipped (by their own bodies: a set-up skip fails pytest)")
if ran == 0:
    print("!! no gpu-marked test ran")
    sys.exit(1)
EOF
else
  fail "pytest wrote no report"
fi

echo "== 1b. what this CuPy accepts and refuses"
box 40 "$PY" benchmarks/cupy_probe.py --json "$OUT/cupy-facts-$tag.json" || fail "cupy_probe exited $?"

echo "== 2. autodev calibrate"
if "$PY" -m autodev calibrate --help >/dev/null 2>&1; then
  box 120 "$PY" -m autodev calibrate --output "$OUT/profile-$tag.json" --no-progress \
    || fail "autodev calibrate exited $?"
  # the steps below decide with this machine's profile, not the embedded default
  [[ -f $OUT/profile-$tag.json ]] && export AUTODEV_PROFILE="$OUT/profile-$tag.json"
else
  echo "autodev calibrate is not available in this checkout: no profile written (skipped)"
fi

echo "== 3. side-by-side report"
box 120 "$PY" -m benchmarks.report --budget 1.0 \
  --json "$OUT/report-$tag.json" --png "$OUT/report-$tag.png" || fail "report exited $?"

echo "== 4. overhead"
box 60 "$PY" benchmarks/overhead.py --quick --json "$OUT/overhead-$tag.json" \
  || fail "overhead exited $?"

echo "== 4b. whole programs (benchmarks/programs.py: times and where the calls ran)"
box 40 "$PY" benchmarks/programs.py --rounds 5 --json "$OUT/programs-$tag.json" \
  || fail "programs exited $?"

echo "== 5. asv --quick"
if "$PY" -c "import asv" 2>/dev/null; then
  (
    cd benchmarks &&
    "$PY" -m asv machine --yes --machine "$tag" >/dev/null &&
    # --python=same saves results only with a commit hash (needs .git in the copy)
    hash="$(git rev-parse HEAD 2>/dev/null)" && save=(--set-commit-hash "$hash") || save=()
    # one asv run per class: asv saves a run's results when it ends (merging them with the
    # commit's earlier ones), so a run stopped by the time box loses its class alone
    for file in bench_overhead bench_chained bench_reference bench_threads; do
      for cls in $(sed -n 's/^class \([A-Za-z0-9_]*\).*/\1/p' "benchmarks/$file.py"); do
        box "$(left)" "$PY" -m asv run --python=same --quick --machine "$tag" "${save[@]}" \
          --bench "^$file\.$cls\." --show-stderr \
          || { echo "asv stopped in $file.$cls ($?): the classes before it are saved"; break 2; }
      done
    done
  )
  if [[ -d benchmarks/results/$tag ]]; then
    tar -czf "$OUT/asv-results-$tag.tar.gz" -C benchmarks results/"$tag" results/benchmarks.json 2>/dev/null
  fi
else
  echo "asv is not installed here: skipped (pip install asv, or put its wheels in .whl/)"
fi

echo "== done in $((SECONDS - START)) s, status $status; files in $OUT:"
ls -la "$OUT"
exit $status
