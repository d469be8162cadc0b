#!/bin/bash
# Issue 46, call 5: the reference check of docs/VALIDATION.md with the final code (the idle
# tail ended at the counter's third update, the early-stop allowance).
set -u
B=$(cd "$(dirname "$0")" && pwd)
cd "$B" && xz -dkf validation.xz && chmod +x validation
W=/tmp/w5; rm -rf $W; mkdir -p $W; cd $W
q() { nvidia-smi --query-gpu=index,name,uuid,driver_version,pstate,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv,noheader; }
{ date -u +%FT%TZ; q; } > $OUT/gpus-before.csv
export ENERGY_REQUIRE_GPU=1
s=$(date +%s.%N); $B/validation --repeats 3 --sizes 0.00002,0.001,0.01 --out $W/validation > $W/validation.log 2>&1; e=$?
{ echo "mode,filter,start_s,end_s,exit"; echo "validation,,$s,$(date +%s.%N),$e"; } > $OUT/processes.csv
{ date -u +%FT%TZ; q; } > $OUT/gpus-after.csv
tar -cJf $OUT/call5.tar.xz validation.log validation
tail -n 25 $W/validation.log
