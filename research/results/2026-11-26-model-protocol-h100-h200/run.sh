#!/bin/bash
# Issue 35's GPU runs under the frozen protocol (docs/results/model-protocol.json, committed
# before this ran). On the GPU machine, beside the two bench binaries
# (`cargo bench --no-run --bench model --bench heldout`, copied as ./model and ./heldout) and
# ncu-metrics.txt (this folder's: the model's terms, executed instructions, the SM clock and
# the protocol's candidate terms):
#   bash run.sh energy   the training suite (both regimes), then the held-out suite
#   bash run.sh ncu      each benchmark of both under ncu (its --test launches)
#   bash run.sh ncu-heldout | ncu-model   one suite's profiles (a short lease: held-out first)
# NCU_SKIP (a grep -E pattern) names benchmarks not profiled (written so in the summary).
# Each suite writes one tarball under $OUT as soon as it is done. Clocks are read, never set
# (ncu --clock-control none).
set -u
cd "$(dirname "$0")"
export ENERGY_REQUIRE_GPU=1
phase=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv > "$OUT/gpu-$phase.csv"
measure() { # measure SUITE SECONDS: the suite's cargo bench, its run directory in t-SUITE
  local suite=$1 start=$(date +%s)
  CARGO_TARGET_DIR=$PWD/t-$suite timeout "$2" ./$suite --bench > $suite.log 2>&1
  echo "exit $? after $(( $(date +%s) - start )) s" >> $suite.log
  tail -n 2 $suite.log
  tar czf "$OUT/$suite-energy.tgz" $suite.log t-$suite/energy
}
profile() { # profile SUITE DEADLINE_S PER_BENCH_S: each benchmark under ncu until the deadline
  local suite=$1 end=$(( $(date +%s) + $2 )) n s
  mkdir -p ncu-$suite
  for n in $(./$suite --bench --list 2>/dev/null | grep ': benchmark' | grep '/energy' | cut -d/ -f1); do
    if [ -n "${NCU_SKIP:-}" ] && echo "$n" | grep -qE "$NCU_SKIP"; then echo "$n not profiled: NCU_SKIP" | tee -a ncu-$suite/summary.txt; continue; fi
    if [ "$(date +%s)" -ge "$end" ]; then echo "$n not profiled: the phase's deadline passed" | tee -a ncu-$suite/summary.txt; continue; fi
    s=$(date +%s)
    CARGO_TARGET_DIR=$PWD/t-ncu timeout "$3" ncu --clock-control none --cache-control none --csv --page raw --print-units base \
      --metrics "$(paste -sd, ncu-metrics.txt)" ./$suite --bench --test --exact "$n/energy" > ncu-$suite/$n.csv 2> ncu-$suite/$n.err
    echo "$n rc=$? $(( $(date +%s) - s )) s $(grep -c '^"' ncu-$suite/$n.csv) rows" | tee -a ncu-$suite/summary.txt
  done
  tar czf "$OUT/$suite-ncu.tgz" ncu-$suite
}
case $phase in
  energy) measure model 380; measure heldout 190 ;;
  ncu)    profile model 330 40; profile heldout 220 60 ;;
  ncu-heldout) profile heldout "${2:-220}" 60 ;;
  ncu-model)   profile model "${2:-330}" 40 ;;
  *) echo "unknown phase $phase" >&2; exit 2 ;;
esac
