#!/bin/bash
# Issue 43's fourth GPU run: run 3's candle reference ran 5-10 % slower per call than the
# harness's windows (2.84-3.00 ms against 2.70-2.72 ms), its NVML reader pausing 1 ms
# between reads. First the reference alone at 1, 5 and 20 ms between reads (4 s each), then
# the candle comparison again, the reference reading every 5 ms, interleaved ref / harness / ref.
# Binaries in gpu-bin/ (xz): candle_matmul, candle_reference.
#   bash docs/results/2026-11-27-library-work/run4.sh
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
for p in 1000 5000 20000; do
  "$B/candle_reference" --seconds 4 --poll-us $p --out "poll-$p.json" > "poll-$p.log" 2>&1
  echo "poll $p us: $(grep -oE '"(time_per_call_s|energy_per_call_j)": ?[0-9.e-]+' "poll-$p.json" | tr -d '\n ')"
done
ref() { "$B/candle_reference" --seconds 8 --poll-us 5000 --out "ref-$1.json" > "ref-$1.log" 2>&1; echo "ref ($1): exit $?"; }
bench() { CARGO_TARGET_DIR=$W/t-$1 "$B/candle_matmul" --bench '^candle_matmul(_wait)?/' > "$1.log" 2>&1; echo "$1: exit $?"; }
for cycle in 1 2; do
  ref "candle-$cycle-a"; bench "candle-$cycle"; ref "candle-$cycle-b"
done
q >> gpu.csv
find . -name '*.trace.csv' -exec gzip -9 -n {} +
cp gpu.csv "$OUT/gpu.csv"
tar czf "$OUT/run4.tgz" gpu.csv ./*.log ./*.json $(find . -path '*/energy/new/*' \( -name '*.json' -o -name '*.trace.csv.gz' \))
