#!/bin/bash
# Issue 60 item 8: where `explain`'s "tensor MMA (HMMA)" units on FFMA-only kernels come from.
# On the GPU machine, beside the stripped bench binaries `fma`, `model` and `heldout` (built on
# the development machine with `cargo bench --no-run --bench fma` and `cargo bench -p
# energy-suites --no-run --bench model --bench heldout`, carried xz-compressed) and
# ncu-metrics.txt (protocol v3's list and smsp__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum):
#   bash run.sh            (both parts; `bash run.sh loop-only`: the first alone)
# 1. The harness's FMA loop (`fma_loop`, the `fma` bench's kernel, JIT at O4) under ncu: every
#    metric of the list, and an export with the SASS and each instruction's executed count.
# 2. Every training kernel of the model suite and protocol v3's held-out benchmarks under ncu
#    with the list (one profile: instruction counts depend on the binary and the driver's JIT,
#    not on the board).
# Clocks are read, never set (ncu --clock-control none).
set -u
cd "$(dirname "$0")"
export ENERGY_REQUIRE_GPU=1
M="$(paste -sd, ncu-metrics.txt)"
V3='^heldout_(cublas_(cgemm|zgemm|gemmex_f16_f32|strmm|dger|isamax|srot)|cufft_d2z|curand_(philox_normal|mrg32k3a_uniform))_'
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv > gpu-before.csv
ncu --version > ncu-version.txt
mkdir -p loop
# One launch of the loop (instruction counts are the same in every launch).
ncu --clock-control none --cache-control none --kernel-name fma_loop --launch-count 1 \
  --section SourceCounters --metrics "$M" --import-source no -o loop/fma_loop -f \
  ./fma --bench --test --exact fma_loop/energy > loop/ncu.log 2>&1
echo "fma_loop export rc=$?" | tee -a summary.txt
ncu --import loop/fma_loop.ncu-rep --csv --page raw --print-units base > loop/fma_loop-raw.csv 2>> loop/ncu.log
ncu --import loop/fma_loop.ncu-rep --csv --page source --print-source sass > loop/fma_loop-sass.csv 2>> loop/ncu.log
echo "fma_loop sass rows $(wc -l < loop/fma_loop-sass.csv)" | tee -a summary.txt
profile() { # profile SUITE FILTER PER_BENCH_S
  local suite=$1 n s
  mkdir -p ncu-$suite
  for n in $(./$suite --bench --list 2>/dev/null | grep ': benchmark' | grep '/energy' | cut -d/ -f1 | grep -E "$2"); do
    s=$(date +%s)
    CARGO_TARGET_DIR=$PWD/t-ncu timeout "$3" ncu --clock-control none --cache-control none --csv --page raw --print-units base \
      --metrics "$M" ./$suite --bench --test --exact "$n/energy" > ncu-$suite/$n.csv 2> ncu-$suite/$n.err
    echo "$n rc=$? $(( $(date +%s) - s )) s $(grep -c '^"' ncu-$suite/$n.csv) rows" | tee -a ncu-$suite/summary.txt
    gzip -9 -n ncu-$suite/$n.csv
  done
}
if [ "${1:-}" != loop-only ]; then
  profile model '^train_' 40
  profile heldout "$V3" 60
fi
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv > gpu-after.csv
tar czf "$OUT/hmma-count${1:+-$1}.tgz" $(ls -d gpu-before.csv gpu-after.csv ncu-version.txt summary.txt loop ncu-model ncu-heldout 2>/dev/null)
