#!/bin/bash
# Issue 46, call 3: the instruction suite's FP16/FP64 kernels at O4 on one GPU (GPU 0 through
# the node queue; GPUs 1-3 alone at the same time, per-board references), then on two GPUs
# and on four through the node queue; a 3-benchmark filter on two GPUs; then the reference
# check of docs/VALIDATION.md (examples/validation.rs) on GPU 0.
set -u
B=$(cd "$(dirname "$0")" && pwd)
cd "$B" && xz -dkf *.xz && chmod +x instructions launch_sizes cargo-energy validation
W=/tmp/w3; rm -rf $W; mkdir -p $W/node; cd $W/node
q() { nvidia-smi --query-gpu=index,name,uuid,driver_version,pstate,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv,noheader; }
{ date -u +%FT%TZ; q; } > $OUT/gpus-before.csv
export ENERGY_REQUIRE_GPU=1 ENERGY_INSTRUCTIONS_LEVELS=O4
now() { date +%s.%N; }
F='instructions/fp(16|64)/'
keep() { mkdir -p $W/$1 && (cd target/energy-gpus && find . \( -name '*.json' -o -name '*.log' -o -name '*.md' \) | tar -cf - -T - ) | tar -xf - -C $W/$1; }
{
  echo "mode,filter,start_s,end_s,exit"
  for g in 1 2 3; do (CUDA_VISIBLE_DEVICES=$g CARGO_TARGET_DIR=$W/ref$g $B/instructions --bench "$F" > $W/ref$g.log 2>&1; echo "ref gpu $g exit $?" >> $W/ref$g.log) & done
  s=$(now); $B/cargo-energy energy run --gpus 0 --exe $B/instructions -- -- "$F" > $W/run-1gpu.log 2>&1; e=$?; echo "node-1gpu,$F,$s,$(now),$e"
  wait; keep runs-1gpu
  s=$(now); $B/cargo-energy energy run --gpus 0,1 --exe $B/instructions -- -- "$F" > $W/run-2gpu.log 2>&1; e=$?; echo "node-2gpu,$F,$s,$(now),$e"
  keep runs-2gpu
  s=$(now); $B/cargo-energy energy run --gpus all --exe $B/instructions -- -- "$F" > $W/run-4gpu.log 2>&1; e=$?; echo "node-4gpu,$F,$s,$(now),$e"
  keep runs-4gpu
  s=$(now); $B/cargo-energy energy run --gpus 0,1 --exe $B/launch_sizes -- -- '^fma_(20us|1ms|10ms)/' > $W/run-3bench.log 2>&1; e=$?; echo "node-3bench-2gpu,fma_(20us|1ms|10ms),$s,$(now),$e"
  keep runs-3bench
  cd $W
  s=$(now); CUDA_VISIBLE_DEVICES=0 $B/validation --repeats 3 --sizes 0.00002,0.001,0.01 --out $W/validation > $W/validation.log 2>&1; e=$?; echo "validation,,$s,$(now),$e"
} > $W/processes.csv
{ date -u +%FT%TZ; q; } > $OUT/gpus-after.csv
cp $W/processes.csv $OUT/
cd $W && find . \( -name '*.json' -o -name '*.log' -o -name '*.md' \) -not -path './node/*' | tar -cJf $OUT/call3.tar.xz -T -
cat $W/processes.csv; tail -n 4 $W/run-1gpu.log $W/run-2gpu.log $W/run-4gpu.log $W/run-3bench.log $W/validation.log
