#!/bin/bash
# Issue 43's tenth GPU run (for an H200): run 1's FMA loop on a stream of its own, again on an
# H200 with the reference method of run 2 on (idle measured before the warm-up and after the
# calls), so that its dynamic energy is comparable; interleaved ref / harness / ref, twice.
# Binaries in gpu-bin/ (stripped, xz): library_work (`cargo bench --bench library_work
# --no-run`), library_reference (`cargo build --release --example library_reference`).
# Clocks read, never set.
#   bash docs/results/2026-11-27-library-work/run10.sh
set -u
B=$PWD/gpu-bin
cd "$B" && xz -d -f ./*.xz && chmod +x ./* && cd - > /dev/null
W=$(mktemp -d)
cd "$W"
export ENERGY_REQUIRE_GPU=1
q() { nvidia-smi --query-gpu=name,uuid,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,pstate --format=csv,noheader; }
echo "name, uuid, pci bus id, driver, sm, max sm, mem, limit, temp, pstate" > gpu.csv
q >> gpu.csv
ref() { timeout 60 "$B/library_reference" --ms "$1" --seconds 8 --out "ref-$2.json" > "ref-$2.log" 2>&1; echo "ref $1 ms ($2): exit $? $(grep -oE '"(energy|dynamic)_per_call_j": ?[0-9.e-]+' "ref-$2.json" | tr -d '\n ')"; }
bench() { CARGO_TARGET_DIR=$W/t-$1 timeout 200 "$B/library_work" --bench > "$1.log" 2>&1; echo "$1: exit $?"; grep -E "^error|energy per launch|dynamic per launch" "$1.log" | head -n 10; }
for cycle in 1 2; do
  ref 0.02 "20us-$cycle-a"; ref 2 "2ms-$cycle-a"
  bench "library-$cycle"
  ref 0.02 "20us-$cycle-b"; ref 2 "2ms-$cycle-b"
done
q >> gpu.csv
find . -name '*.trace.csv' -exec gzip -9 -n {} +
cp gpu.csv "$OUT/gpu.csv"
tar czf "$OUT/run10.tgz" gpu.csv ./*.log ./*.json $(find . -path '*/energy/new/*' \( -name '*.json' -o -name '*.trace.csv.gz' \))
