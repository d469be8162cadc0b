#!/usr/bin/env bash
# Issue 48's GPU run (not yet made): the reduction of reduce-sweep/ (written outside the
# repository from the README alone) swept over block sizes 64-1024 at N = 2^24 and 2^26, and
# the block-256 points as plain benchmarks (reduce_n24_b256_plain, reduce_n26_b256_plain).
# Build here: (cd reduce-sweep && cargo bench --no-run), copy the printed executable beside this
# script as ./reduce_sweep, carry this folder; on the GPU machine: bash run.sh. Clocks are read,
# never set.
set -uo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="$PWD/t" ENERGY_REQUIRE_GPU=1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv | tee gpu.csv
./reduce_sweep --bench 2>&1 | tee sweep.log
tar czf "${OUT:-.}/reduce-sweep-run.tgz" gpu.csv sweep.log t/energy/new
