#!/bin/bash
# Issue 35's GPU runs under protocol v3 (docs/results/model-protocol-v3.json, committed before
# this ran). On the GPU machine, beside the two bench binaries
# (`cargo bench --no-run --bench model --bench heldout`, copied as ./model and ./heldout) and
# ncu-metrics.txt (this folder's: v2's list, unchanged):
#   bash run.sh energy-model     the training suite (train_*, both regimes; the applications
#                                are not part of the protocol and not run)
#   bash run.sh energy-heldout   protocol v3's held-out set (v1's and v2's are not run)
#   bash run.sh ncu-model [deadline_s] | ncu-heldout [deadline_s]   each benchmark under ncu
# NCU_SKIP (a grep -E pattern) names benchmarks not profiled (written so in the summary).
# Each phase writes one tarball under $OUT as soon as it is done, traces gzipped (the run
# readers take `<trace>.gz`). Clocks are read, never set (ncu --clock-control none).
set -u
cd "$(dirname "$0")"
export ENERGY_REQUIRE_GPU=1
phase=$1
# Protocol v3's held-out benchmarks (docs/results/model-protocol-v3.json).
V3='^heldout_(cublas_(cgemm|zgemm|gemmex_f16_f32|strmm|dger|isamax|srot)|cufft_d2z|curand_(philox_normal|mrg32k3a_uniform))_'
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv > "$OUT/gpu-$phase.csv"
measure() { # measure SUITE FILTER SECONDS: the suite's benchmarks matching FILTER, run directory in t-SUITE
  local suite=$1 start=$(date +%s)
  CARGO_TARGET_DIR=$PWD/t-$suite timeout "$3" ./$suite --bench "$2" > $suite.log 2>&1
  echo "exit $? after $(( $(date +%s) - start )) s" >> $suite.log
  tail -n 2 $suite.log
  find t-$suite/energy -name '*.trace.csv' -exec gzip -9 -n {} +
  tar czf "$OUT/$suite-energy.tgz" $suite.log t-$suite/energy
}
profile() { # profile SUITE FILTER DEADLINE_S PER_BENCH_S: each benchmark under ncu until the deadline
  local suite=$1 end=$(( $(date +%s) + $3 )) n s
  mkdir -p ncu-$suite
  for n in $(./$suite --bench --list 2>/dev/null | grep ': benchmark' | grep '/energy' | cut -d/ -f1 | grep -E "$2"); do
    if [ -n "${NCU_SKIP:-}" ] && echo "$n" | grep -qE "$NCU_SKIP"; then echo "$n not profiled: NCU_SKIP" | tee -a ncu-$suite/summary.txt; continue; fi
    if [ "$(date +%s)" -ge "$end" ]; then echo "$n not profiled: the phase's deadline passed" | tee -a ncu-$suite/summary.txt; continue; fi
    s=$(date +%s)
    CARGO_TARGET_DIR=$PWD/t-ncu timeout "$4" ncu --clock-control none --cache-control none --csv --page raw --print-units base \
      --metrics "$(paste -sd, ncu-metrics.txt)" ./$suite --bench --test --exact "$n/energy" > ncu-$suite/$n.csv 2> ncu-$suite/$n.err
    echo "$n rc=$? $(( $(date +%s) - s )) s $(grep -c '^"' ncu-$suite/$n.csv) rows" | tee -a ncu-$suite/summary.txt
  done
  tar czf "$OUT/$suite-ncu.tgz" ncu-$suite
}
case $phase in
  energy-model)   measure model '^train_' 560 ;;
  energy-heldout) measure heldout "$V3" 560 ;;
  ncu-model)      profile model '^train_' "${2:-540}" 40 ;;
  ncu-heldout)    profile heldout "$V3" "${2:-540}" 60 ;;
  *) echo "unknown phase $phase" >&2; exit 2 ;;
esac
