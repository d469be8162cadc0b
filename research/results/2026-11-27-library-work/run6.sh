#!/bin/bash
# Issue 43's sixth GPU run: burn (burn-cuda 0.21: cubecl-cuda, fusion and autotune on, a crate
# outside the repository) against its independent reference, interleaved ref / harness / ref,
# twice; then the same calls closed by a context-wide synchronize only (any_stream), and with
# no wait at all. Binaries in gpu-bin/ (stripped, xz): burn_matmul (the crate's bench),
# burn_reference. Clocks are read, never set.
#   bash docs/results/2026-11-27-library-work/run6.sh
set -u
B=$PWD/gpu-bin
cd "$B" && xz -d -f ./*.xz && chmod +x ./* && cd - > /dev/null
W=$(mktemp -d)
cd "$W"
export ENERGY_REQUIRE_GPU=1
q() { nvidia-smi --query-gpu=name,uuid,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,pstate --format=csv,noheader; }
echo "name, uuid, pci bus id, driver, sm, max sm, mem, limit, temp, pstate" > gpu.csv
q >> gpu.csv
ref() { timeout 120 "$B/burn_reference" --seconds 8 --poll-us 5000 --out "ref-burn-$1.json" > "ref-burn-$1.log" 2>&1; echo "ref ($1): exit $? $(grep -oE '"(energy|dynamic|time)_per_call_[js]": ?[0-9.e-]+' "ref-burn-$1.json" | tr -d '\n ')"; }
bench() { CARGO_TARGET_DIR=$W/t-$1 timeout 150 "$B/burn_matmul" --bench "$2" > "$1.log" 2>&1; echo "$1: exit $? (124: killed at 150 s)"; grep -E "^error|energy per launch|dynamic per launch|time per launch" "$1.log" | head -n 4; }
for cycle in 1 2; do
  ref "$cycle-a"; bench "burn-$cycle" '^burn_matmul/'; ref "$cycle-b"
done
bench any-stream 'burn_matmul_any_stream'
bench unwaited 'burn_matmul_unwaited'
q >> gpu.csv
find . -name '*.trace.csv' -exec gzip -9 -n {} +
cp gpu.csv "$OUT/gpu.csv"
tar czf "$OUT/run6.tgz" gpu.csv ./*.log ./*.json $(find . -path '*/energy/new/*' \( -name '*.json' -o -name '*.trace.csv.gz' \))
