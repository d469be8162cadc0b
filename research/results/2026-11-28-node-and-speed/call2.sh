#!/bin/bash
# Issue 46, call 2: (A) 16 held-out benchmarks on GPU 0: one process with this change,
# one process of the commit before it (478e1e4), each in a process of its own with this
# change; (B) the instruction suite's FP16/FP64 kernels at O4 on one GPU (each board, for
# per-board references), two GPUs and four GPUs through the node queue; (C) a 3-benchmark
# filter on two GPUs.
set -u
B=$(cd "$(dirname "$0")" && pwd)
cd "$B" && xz -dkf *.xz && chmod +x heldout heldout-old instructions launch_sizes cargo-energy
W=/tmp/w2; rm -rf $W; mkdir -p $W; cd $W
q() { nvidia-smi --query-gpu=index,name,uuid,driver_version,pstate,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv,noheader; }
{ date -u +%FT%TZ; q; } > $OUT/gpus-before.csv
export ENERGY_REQUIRE_GPU=1
now() { date +%s.%N; }
SUBSET="heldout_reduce_own heldout_reduce_constant heldout_scan_own heldout_stencil5_own heldout_histogram_own heldout_transpose_own heldout_nbody_own heldout_blackscholes_own heldout_cublas_sgemm_own heldout_cublas_dgemm_own heldout_cublas_hgemm_own heldout_cublas_sgemv_own heldout_curand_normal_own heldout_cufft_c2c_own heldout_cublas_saxpy_own heldout_cublas_sdot_own"
re="^($(echo $SUBSET | tr ' ' '|'))/"
F='instructions/fp(16|64)/'
export ENERGY_INSTRUCTIONS_LEVELS=O4
{
  echo "mode,filter,start_s,end_s,exit"
  s=$(now); CUDA_VISIBLE_DEVICES=0 CARGO_TARGET_DIR=$W/new16 $B/heldout --bench "$re" > $W/new16.log 2>&1; e=$?; echo "one-process-new,$re,$s,$(now),$e"
  s=$(now); CUDA_VISIBLE_DEVICES=0 CARGO_TARGET_DIR=$W/old16 $B/heldout-old --bench "$re" > $W/old16.log 2>&1; e=$?; echo "one-process-old,$re,$s,$(now),$e"
  for n in $SUBSET; do
    s=$(now); CUDA_VISIBLE_DEVICES=0 CARGO_TARGET_DIR=$W/each/$n $B/heldout --bench "^$n/" > $W/each-$n.log 2>&1; e=$?; echo "one-per-process-new,^$n/,$s,$(now),$e"
  done
  mkdir -p $W/node && cd $W/node
  for g in 1 2 3; do (CUDA_VISIBLE_DEVICES=$g CARGO_TARGET_DIR=$W/ref$g $B/instructions --bench "$F" > $W/ref$g.log 2>&1; echo "ref gpu $g exit $?" >> $W/ref$g.log) & done
  s=$(now); $B/cargo-energy energy run --gpus 0 --exe $B/instructions -- "$F" > $W/run-1gpu.log 2>&1; e=$?; echo "node-1gpu,$F,$s,$(now),$e"
  wait
  cp -r target/energy-gpus $W/runs-1gpu
  s=$(now); $B/cargo-energy energy run --gpus 0,1 --exe $B/instructions -- "$F" > $W/run-2gpu.log 2>&1; e=$?; echo "node-2gpu,$F,$s,$(now),$e"
  cp -r target/energy-gpus $W/runs-2gpu
  s=$(now); $B/cargo-energy energy run --gpus all --exe $B/instructions -- "$F" > $W/run-4gpu.log 2>&1; e=$?; echo "node-4gpu,$F,$s,$(now),$e"
  cp -r target/energy-gpus $W/runs-4gpu
  s=$(now); $B/cargo-energy energy run --gpus 0,1 --exe $B/launch_sizes -- '^fma_(20us|1ms|10ms)/' > $W/run-3bench.log 2>&1; e=$?; echo "node-3bench-2gpu,fma_(20us|1ms|10ms),$s,$(now),$e"
  cp -r target/energy-gpus $W/runs-3bench
  cd $W
} > $W/processes.csv
{ date -u +%FT%TZ; q; } > $OUT/gpus-after.csv
cp $W/processes.csv $OUT/
cd $W && { find . \( -name '*.json' -o -name '*.log' -o -name '*.md' \) ; find new16 -name '*.trace.csv'; } | tar -cJf $OUT/call2.tar.xz -T -
ls -la $OUT; cat $W/processes.csv; tail -4 $W/run-1gpu.log $W/run-2gpu.log $W/run-4gpu.log $W/run-3bench.log
