#!/bin/bash
# Issue 16: one part of the instruction suite v2 on this GPU.
# usage: inst.sh NAME FILTER LEVELS [full|one] [SECONDS]
set -u
B=$(cd "$(dirname "$0")" && pwd)
name=$1; filter=$2; levels=$3; threads=${4:-full}; limit=${5:-540}
export ENERGY_REQUIRE_GPU=1 ENERGY_DEVICE=nvml XDG_CACHE_HOME=/tmp/cache CARGO_TARGET_DIR=/tmp/t
export ENERGY_INSTRUCTIONS_LEVELS=$levels ENERGY_INSTRUCTIONS_THREADS=$threads
cub=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
[ -n "$cub" ] && export CUOBJDUMP=$cub
{
  date -u +%FT%TZ
  echo "cuobjdump: ${cub:-none}"
  nvidia-smi --query-gpu=name,uuid,driver_version,power.limit,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,persistence_mode --format=csv
} > $OUT/$name-log.txt 2>&1
s=$(date +%s)
timeout $limit $B/instructions --bench "$filter" > $OUT/$name.txt 2> $OUT/$name.err
echo "rc=$? wall=$(( $(date +%s) - s )) s" >> $OUT/$name-log.txt
date -u +%FT%TZ >> $OUT/$name-log.txt
tar czf $OUT/$name-suites.tgz -C /tmp/t/energy suites
