#!/bin/bash
# Issue 17 on this GPU: the memory suite, its ncu profile, saxpy measured and profiled.
# usage: mem.sh TAG
set -u
B=$(cd "$(dirname "$0")" && pwd)
tag=$1
export ENERGY_REQUIRE_GPU=1 ENERGY_DEVICE=nvml XDG_CACHE_HOME=/tmp/cache
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
log=$OUT/$tag-log.txt
{
  date -u +%FT%TZ; echo "ncu: ${NCU:-none}"; $NCU --version 2>&1 | tail -1
  nvidia-smi --query-gpu=name,uuid,driver_version,power.limit,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,persistence_mode --format=csv
} > $log 2>&1
s=$(date +%s)
CARGO_TARGET_DIR=/tmp/m timeout 260 $B/memory --bench > $OUT/$tag-memory.txt 2> $OUT/$tag-memory.err
echo "memory rc=$? wall=$(( $(date +%s) - s )) s" >> $log
D=/tmp/m/energy/suites
if [ -n "$NCU" ]; then
  timeout 60 $NCU --query-metrics --chip gh100 > /tmp/q.txt 2>&1 || timeout 60 $NCU --query-metrics > /tmp/q.txt 2>&1
  pick() { local out=""; for m in "$@"; do b=${m%.sum}; b=${b%.pct}; b=${b%.avg.per_second}; if grep -q "^$b " /tmp/q.txt || grep -q "^$b$" /tmp/q.txt; then out="$out,$m"; else echo "metric not offered: $m" >> $log; fi; done; echo ${out#,}; }
  M=$(pick l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum lts__t_sectors_srcunit_tex_op_read.sum lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum lts__t_sectors_srcunit_tex_op_write.sum lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum dram__bytes_read.sum dram__bytes_write.sum smsp__inst_executed_op_shared_ld.sum l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum sm__cycles_elapsed.avg.per_second)
  echo "memory metrics: $M" >> $log
  s=$(date +%s)
  ENERGY_MEMORY_PROFILE=1 CARGO_TARGET_DIR=/tmp/m timeout 150 $NCU --clock-control none --cache-control none --kernel-name regex:'^(load|store)' --csv --page raw --print-units base --metrics $M $B/memory --bench > $D/memory-ncu.csv 2> $OUT/$tag-ncu.err
  echo "ncu memory rc=$? wall=$(( $(date +%s) - s )) s" >> $log
  s=$(date +%s)
  CARGO_TARGET_DIR=/tmp/s timeout 60 $B/saxpy --bench > $OUT/$tag-saxpy.txt 2>&1
  echo "saxpy rc=$? wall=$(( $(date +%s) - s )) s" >> $log
  SM=$(pick l1tex__data_pipe_lsu_wavefronts_mem_shared.sum l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum l1tex__t_sectors_pipe_lsu_mem_global_op_st_lookup_hit.sum lts__t_sectors_srcunit_tex_lookup_hit.sum dram__bytes_read.sum dram__bytes_write.sum lts__t_sectors_srcunit_tex.sum l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum sm__cycles_elapsed.avg.per_second)
  s=$(date +%s)
  CARGO_TARGET_DIR=/tmp/s2 timeout 90 $NCU --clock-control none --launch-skip 10 --launch-count 1 --kernel-name saxpy --csv --page raw --print-units base --metrics $SM $B/saxpy --bench > /tmp/s/saxpy-ncu.csv 2> $OUT/$tag-saxpy-ncu.err
  echo "ncu saxpy rc=$? wall=$(( $(date +%s) - s )) s" >> $log
fi
date -u +%FT%TZ >> $log
tar czf $OUT/$tag-memory.tgz -C /tmp/m/energy suites
tar czf $OUT/$tag-saxpy.tgz -C /tmp/s energy saxpy-ncu.csv 2>/dev/null || tar czf $OUT/$tag-saxpy.tgz -C /tmp/s .
