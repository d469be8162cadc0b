#!/bin/bash
# Issue 43's GPU run: library work measured against an independent reference, the same work
# refused when not waited for, and today's stream benchmarks before and after the change.
# On the GPU machine, from the repository root, with the binaries in gpu-bin/ (xz-compressed):
#   library_work, library_work_unwaited, launch_sizes (this commit's `cargo bench --no-run`),
#   launch_sizes_old (the same bench built at 3dfadc4, before the change),
#   library_reference (`cargo build --release --example library_reference`).
#   bash docs/results/2026-11-27-library-work/run.sh
# Writes under $OUT: run.tgz (logs, result files, traces gzipped) and gpu.csv.
# Clocks are read, never set.
set -u
B=$PWD/gpu-bin
cd "$B" && xz -d -f ./*.xz && chmod +x ./* && cd - > /dev/null
W=$(mktemp -d)
cd "$W"
export ENERGY_REQUIRE_GPU=1
q() { nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,pstate --format=csv,noheader; }
echo "name, uuid, driver, sm, max sm, mem, limit, temp, pstate" > gpu.csv
q >> gpu.csv
ref() { # ref MS TAG
  "$B/library_reference" --ms "$1" --seconds 8 --out "ref-$2.json" > "ref-$2.log" 2>&1
  echo "ref $1 ms ($2): exit $? $(grep -E 'energy_per_call|dynamic_per_call' "ref-$2.json" | tr -d '\n ')"
}
bench() { # bench BINARY TAG [FILTER]
  CARGO_TARGET_DIR=$W/t-$2 "$B/$1" --bench ${3:-} > "$2.log" 2>&1
  echo "$1 ($2): exit $?"
}
# 1. Library work against the reference, interleaved ref / harness / ref, twice.
for cycle in 1 2; do
  ref 0.02 "20us-$cycle-a"; ref 2 "2ms-$cycle-a"
  bench library_work "library-$cycle"
  ref 0.02 "20us-$cycle-b"; ref 2 "2ms-$cycle-b"
done
q >> gpu.csv
# 2. The same work not waited for: refused, exit != 0.
bench library_work_unwaited unwaited
grep -E "error|refused|still busy|kept drawing" unwaited.log | head -n 5
# 3. Stream benchmarks before (3dfadc4) and after, interleaved (20 µs … 100 ms).
for cycle in 1 2; do
  bench launch_sizes_old "sizes-old-$cycle" 'fma_(20us|1ms|10ms|100ms)'
  bench launch_sizes "sizes-new-$cycle" 'fma_(20us|1ms|10ms|100ms)'
done
q >> gpu.csv
find . -name '*.trace.csv' -exec gzip -9 -n {} +
cp gpu.csv "$OUT/gpu.csv"
tar czf "$OUT/run.tgz" .
