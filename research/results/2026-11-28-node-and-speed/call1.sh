#!/bin/bash
# Issue 46, call 1: per-benchmark cost (heldout bench on GPU 0) and the reference check
# (validation example on GPU 1), run at the same time on two boards of one node.
set -u
B=$(cd "$(dirname "$0")" && pwd)
cd "$B" && xz -dkf *.xz && chmod +x heldout instructions launch_sizes validation cargo-energy
W=/tmp/w; rm -rf $W; mkdir -p $W; cd $W
q() { nvidia-smi --query-gpu=index,name,uuid,driver_version,pstate,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv,noheader; }
{ date -u +%FT%TZ; q; } > $OUT/gpus-before.csv
export ENERGY_REQUIRE_GPU=1
now() { date +%s.%N; }
SUBSET="heldout_reduce_own heldout_reduce_constant heldout_scan_own heldout_stencil5_own heldout_histogram_own heldout_transpose_own heldout_nbody_own heldout_blackscholes_own heldout_cublas_sgemm_own heldout_cublas_dgemm_own heldout_cublas_hgemm_own heldout_cublas_sgemv_own heldout_curand_normal_own heldout_cufft_c2c_own heldout_cublas_saxpy_own heldout_cublas_sdot_own"
(
  CUDA_VISIBLE_DEVICES=1 $B/validation --repeats 3 --sizes 0.00002,0.001,0.01 --out $W/validation > $W/validation.log 2>&1
  echo "validation exit $?" >> $W/validation.log
) &
VPID=$!
{
  echo "mode,filter,start_s,end_s,exit"
  # All 69 in one process.
  s=$(now); CUDA_VISIBLE_DEVICES=0 CARGO_TARGET_DIR=$W/all69 $B/heldout --bench > $W/all69.log 2>&1; e=$?; echo "one-process-all,,$s,$(now),$e"
  # The 16 in one process.
  re="^($(echo $SUBSET | tr ' ' '|'))/"
  s=$(now); CUDA_VISIBLE_DEVICES=0 CARGO_TARGET_DIR=$W/one16 $B/heldout --bench "$re" > $W/one16.log 2>&1; e=$?; echo "one-process-16,$re,$s,$(now),$e"
  # Each of the 16 in a process of its own.
  for n in $SUBSET; do
    s=$(now); CUDA_VISIBLE_DEVICES=0 CARGO_TARGET_DIR=$W/each/$n $B/heldout --bench "^$n/" > $W/each-$n.log 2>&1; e=$?; echo "one-per-process,^$n/,$s,$(now),$e"
  done
} > $W/processes.csv
wait $VPID
{ date -u +%FT%TZ; q; } > $OUT/gpus-after.csv
cp $W/processes.csv $OUT/
cd $W && find . -name '*.json' -o -name '*.log' -o -name '*.csv' -o -name '*.md' | grep -v '\.trace\.csv$' | tar -cJf $OUT/call1.tar.xz -T -
tail -3 $W/all69.log; tail -5 $W/validation.log; cat $W/processes.csv
