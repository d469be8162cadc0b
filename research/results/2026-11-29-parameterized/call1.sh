#!/usr/bin/env bash
# Issue 48's first GPU call (2026-11-29): the reduction of reduce-sweep/ (written outside the
# repository from the README alone) swept over block sizes 64-1024 at N = 2^24 and 2^26, and
# the block-256 points as plain benchmarks (reduce_n24_b256_plain, reduce_n26_b256_plain; the
# crate had no other twins yet). Built here: (cd reduce-sweep && cargo bench --no-run), the
# printed executable copied beside this script as ./reduce_sweep (stripped, xz-compressed, the
# call began `xz -d`); on the GPU machine: bash call1.sh. Its output is call1/ (t/energy/new as
# call1/run, gpu.csv, sweep.log). Clocks are read, never set.
set -uo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="$PWD/t" ENERGY_REQUIRE_GPU=1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv | tee gpu.csv
./reduce_sweep --bench 2>&1 | tee sweep.log
tar czf "${OUT:-.}/reduce-sweep-run.tgz" gpu.csv sweep.log t/energy/new
