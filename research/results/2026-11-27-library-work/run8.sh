#!/bin/bash
# Issue 43's eighth GPU run. Run 7 (H200) and run 3 (H100) found candle's reference 4-10 %
# slower per call than the harness's windows with a lower power, the total energy per call
# up to 1.5 % apart while the dynamic energy agreed. The reference waits every ~50 ms, the
# harness every ~150 ms (one window); each candle call allocates its 64 MiB product. Here the
# reference waits every 50 ms and every 150 ms (--sync-ms), interleaved with the harness.
#   bash docs/results/2026-11-27-library-work/run8.sh [burn] [candle]
# burn: run6.sh's burn comparison first (binaries burn_matmul, burn_reference).
# candle: binaries candle_matmul, candle_reference (stripped, xz, in gpu-bin/). Clocks read, never set.
set -u
S=$(cd "$(dirname "$0")" && pwd)
B=$PWD/gpu-bin
for part in "$@"; do
  [ "$part" = burn ] && { bash "$S/run6.sh"; mkdir -p "$OUT/burn"; mv "$OUT/run6.tgz" "$OUT/gpu.csv" "$OUT/burn/"; }
done
for part in "$@"; do [ "$part" = candle ] || continue
cd "$B" && xz -d -f ./*.xz 2> /dev/null; chmod +x ./*; cd - > /dev/null
CU13=$(dirname "$(find / -name 'libcublas.so.13*' -path '*cu13*' 2>/dev/null | head -n 1)")
export LD_LIBRARY_PATH="$CU13${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
W=$(mktemp -d)
cd "$W"
export ENERGY_REQUIRE_GPU=1
q() { nvidia-smi --query-gpu=name,uuid,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,pstate --format=csv,noheader; }
echo "name, uuid, pci bus id, driver, sm, max sm, mem, limit, temp, pstate" > gpu.csv
q >> gpu.csv
ref() { timeout 60 "$B/candle_reference" --seconds 8 --poll-us 5000 --sync-ms "$1" --out "ref-$1ms-$2.json" > "ref-$1ms-$2.log" 2>&1; echo "ref every $1 ms ($2): exit $? $(grep -oE '"(energy|dynamic|time)_per_call_[js]": ?[0-9.e-]+' "ref-$1ms-$2.json" | tr -d '\n ')"; }
bench() { CARGO_TARGET_DIR=$W/t-$1 timeout 150 "$B/candle_matmul" --bench '^candle_matmul_wait/' > "$1.log" 2>&1; echo "$1: exit $?"; grep -E "^error|time per launch|energy per launch|dynamic per launch" "$1.log" | head -n 4; }
ref 50 0
for cycle in 1 2; do
  ref 150 "$cycle-a"; bench "candle-$cycle"; ref 150 "$cycle-b"
done
ref 50 3
q >> gpu.csv
find . -name '*.trace.csv' -exec gzip -9 -n {} +
mkdir -p "$OUT/candle"; cp gpu.csv "$OUT/candle/gpu.csv"
tar czf "$OUT/candle/run8.tgz" gpu.csv ./*.log ./*.json $(find . -path '*/energy/new/*' \( -name '*.json' -o -name '*.trace.csv.gz' \))
done
