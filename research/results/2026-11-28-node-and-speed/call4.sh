#!/bin/bash
# Issue 46, call 4 (the final code: idle handed over, one-tick windows, the early-stop
# check's quarter second of uncovered windows, the idle tail ended at the counter's third
# update): on one GPU, the 69 held-out benchmarks in one process, 16 of them each in a
# process of its own; the FMA loop at 20 µs, 1 ms, 10 ms and 100 ms in one process and each
# in its own.
set -u
B=$(cd "$(dirname "$0")" && pwd)
cd "$B" && xz -dkf *.xz && chmod +x heldout launch_sizes
W=/tmp/w4; rm -rf $W; mkdir -p $W; cd $W
q() { nvidia-smi --query-gpu=index,name,uuid,driver_version,pstate,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv,noheader; }
{ date -u +%FT%TZ; q; } > $OUT/gpus-before.csv
export ENERGY_REQUIRE_GPU=1
now() { date +%s.%N; }
SUBSET="heldout_reduce_own heldout_reduce_constant heldout_scan_own heldout_stencil5_own heldout_histogram_own heldout_transpose_own heldout_nbody_own heldout_blackscholes_own heldout_cublas_sgemm_own heldout_cublas_dgemm_own heldout_cublas_hgemm_own heldout_cublas_sgemv_own heldout_curand_normal_own heldout_cufft_c2c_own heldout_cublas_saxpy_own heldout_cublas_sdot_own"
FMA="fma_20us fma_1ms fma_10ms fma_100ms"
{
  echo "mode,filter,start_s,end_s,exit"
  s=$(now); CARGO_TARGET_DIR=$W/all69 $B/heldout --bench > $W/all69.log 2>&1; e=$?; echo "one-process-all69,,$s,$(now),$e"
  for n in $SUBSET; do
    s=$(now); CARGO_TARGET_DIR=$W/each/$n $B/heldout --bench "^$n/" > $W/each-$n.log 2>&1; e=$?; echo "one-per-process,^$n/,$s,$(now),$e"
  done
  re="^($(echo $FMA | tr ' ' '|'))/"
  s=$(now); CARGO_TARGET_DIR=$W/fma4 $B/launch_sizes --bench "$re" > $W/fma4.log 2>&1; e=$?; echo "one-process-fma4,$re,$s,$(now),$e"
  for n in $FMA; do
    s=$(now); CARGO_TARGET_DIR=$W/eachfma/$n $B/launch_sizes --bench "^$n/" > $W/eachfma-$n.log 2>&1; e=$?; echo "one-per-process-fma,^$n/,$s,$(now),$e"
  done
} > $W/processes.csv
{ date -u +%FT%TZ; q; } > $OUT/gpus-after.csv
cp $W/processes.csv $OUT/
cd $W && { find . \( -name '*.json' -o -name '*.log' -o -name '*.md' \) ; find all69 fma4 -name '*.trace.csv'; } | tar -cJf $OUT/call4.tar.xz -T -
cat $W/processes.csv
