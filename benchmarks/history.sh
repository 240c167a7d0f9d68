#!/usr/bin/env bash
# The asv history of this kind of machine: a small selection of the suite over a sample of
# main's commits, each commit built and installed in asv's own virtualenv (no CUDA wheels;
# see asv_install.py). Results go to benchmarks/results/<machine>/, to be committed.
#
#     bash benchmarks/history.sh                  # 10 commits spread over main
#     bash benchmarks/history.sh 4 HEAD~50..main  # 4 commits of a range (git rev-list syntax)
#     ASV=.venv/bin/asv MACHINE=my-box bash benchmarks/history.sh
#     bash benchmarks/history.sh 10 main --skip-existing-commits   # further args go to asv run
#
# Before the first run, describe the machine once (asv keeps it in ~/.asv-machine.json):
#     cd benchmarks && asv machine --machine NAME --yes   (then edit the description)
# Afterwards: cd benchmarks && asv publish && asv preview   (the HTML, on a local port)
#
# The selection: the dispatch overhead on tiny calls (NumPy; autodev as the machine is and
# with a simulated GPU usable), the chained workloads (NumPy and autodev, float64, data on
# the host), the large host chains of bench_threads at 1e6 elements, and the whole programs
# of bench_programs (NumPy and autodev). Each parameter set
# takes three samples in one process: enough for a history, short on a small machine.
# The run is niced: it is meant to share a machine.
set -euo pipefail
cd "$(dirname "$0")"
ASV="${ASV:-asv}"
steps="${1:-10}"
range="${2:-main}"
shift $(( $# < 2 ? $# : 2 ))
machine=()
[[ -n "${MACHINE:-}" ]] && machine=(--machine "$MACHINE")
exec nice -n "${NICE:-19}" "$ASV" run --steps "$steps" "$range" "${machine[@]}" \
  -a repeat=3 -a processes=1 \
  --bench "DispatchOverhead\.time_call\('(numpy|autodev)', '\w+', 'float64', 'host', '(here|sim)'\)" \
  --bench "(ElementwiseChain|PowerIteration|SparseMatvecLoop)\.time_\w+\('(numpy|autodev)', \d+, 'float64', 'host'\)" \
  --bench "ThreadedChains\.time_chain\('\w+', '\w+', '\w+', '\w+', 1000000\)" \
  --bench "Programs\.time_program" "$@"
