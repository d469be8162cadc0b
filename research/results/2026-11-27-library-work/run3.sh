#!/bin/bash
# Issue 43's third GPU run, after the sampler change (the energy counter read with a 1 ms
# pause between reads, since run 2 showed back-to-back NVML reads slowing candle's calls):
# the candle matmul and the FMA loop on a stream of its own against their references
# (interleaved ref / harness / ref), the candle call without its wait (refused), and the stream
# benchmarks before (3dfadc4) and after, interleaved. Binaries in gpu-bin/ (xz): candle_matmul,
# candle_reference, library_work, library_reference, launch_sizes, launch_sizes_old.
#   bash docs/results/2026-11-27-library-work/run3.sh
set -u
B=$PWD/gpu-bin
cd "$B" && xz -d -f ./*.xz && chmod +x ./* && cd - > /dev/null
CU13=$(dirname "$(find / -name 'libcublas.so.13*' -path '*cu13*' 2>/dev/null | head -n 1)")
export LD_LIBRARY_PATH="$CU13${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
W=$(mktemp -d)
cd "$W"
export ENERGY_REQUIRE_GPU=1
q() { nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,pstate --format=csv,noheader; }
echo "name, uuid, driver, sm, max sm, mem, limit, temp, pstate" > gpu.csv
q >> gpu.csv
ref() { # ref PROGRAM ARGS TAG
  "$B/$1" $2 --seconds 8 --out "ref-$3.json" > "ref-$3.log" 2>&1
  echo "ref $1 $2 ($3): exit $? $(grep -oE '"(energy|dynamic)_per_call_j": ?[0-9.e-]+' "ref-$3.json" | tr -d '\n ')"
}
bench() { # bench BINARY TAG [FILTER]
  CARGO_TARGET_DIR=$W/t-$2 "$B/$1" --bench ${3:-} > "$2.log" 2>&1
  echo "$1 ($2): exit $?"
}
for cycle in 1 2; do
  ref candle_reference "" "candle-$cycle-a"
  bench candle_matmul "candle-$cycle" '^candle_matmul(_wait)?/'
  ref candle_reference "" "candle-$cycle-b"
done
bench candle_matmul unwaited 'candle_matmul_unwaited'
grep -E "^error" unwaited.log | head -n 3
q >> gpu.csv
ref library_reference "--ms 0.02" "20us-1-a"; ref library_reference "--ms 2" "2ms-1-a"
bench library_work "library-1"
ref library_reference "--ms 0.02" "20us-1-b"; ref library_reference "--ms 2" "2ms-1-b"
for cycle in 1 2; do
  bench launch_sizes_old "sizes-old-$cycle" 'fma_(20us|1ms|10ms|100ms)'
  bench launch_sizes "sizes-new-$cycle" 'fma_(20us|1ms|10ms|100ms)'
done
q >> gpu.csv
find . -name '*.trace.csv' -exec gzip -9 -n {} +
cp gpu.csv "$OUT/gpu.csv"
tar czf "$OUT/run3.tgz" gpu.csv ./*.log ref-*.json $(find . -path '*/energy/new/*' \( -name '*.json' -o -name '*.trace.csv.gz' \))
