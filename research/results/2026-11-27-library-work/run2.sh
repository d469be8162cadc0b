#!/bin/bash
# Issue 43's second GPU run: a candle matmul (a crate outside the repository, candle-core
# 0.11.1 with its CUDA backend, built against this harness) and the FMA loop on a stream of
# its own, each against its independent reference (interleaved ref / harness / ref), and the
# same candle call without its wait (refused). The reference now measures its idle before its
# warm-up, at rest (run 1's reference measured it right after the warm-up, still warm), and
# the uncovered host time per window of a context-wide synchronize. Binaries in gpu-bin/
# (xz): candle_matmul (the user crate's bench), candle_reference (its src/bin/reference.rs),
# library_work, library_reference. candle links cuBLAS/cuRAND/cudart 13 at load time: the
# machine's own (the PyTorch environment's nvidia/cu13/lib) are put on LD_LIBRARY_PATH.
#   bash docs/results/2026-11-27-library-work/run2.sh
set -u
B=$PWD/gpu-bin
cd "$B" && xz -d -f ./*.xz && chmod +x ./* && cd - > /dev/null
CU13=$(dirname "$(find / -name 'libcublas.so.13*' -path '*cu13*' 2>/dev/null | head -n 1)")
export LD_LIBRARY_PATH="$CU13${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "cuda 13 libraries: $CU13"
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
bench candle_matmul candle-unwaited 'candle_matmul_unwaited'
grep -E "^error" candle-unwaited.log | head -n 3
q >> gpu.csv
for cycle in 1 2; do
  ref library_reference "--ms 0.02" "20us-$cycle-a"; ref library_reference "--ms 2" "2ms-$cycle-a"
  bench library_work "library-$cycle"
  ref library_reference "--ms 0.02" "20us-$cycle-b"; ref library_reference "--ms 2" "2ms-$cycle-b"
done
q >> gpu.csv
find . -name '*.trace.csv' -exec gzip -9 -n {} +
cp gpu.csv "$OUT/gpu.csv"
tar czf "$OUT/run2.tgz" .
