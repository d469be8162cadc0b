#!/bin/bash
# Issue 17: saxpy measured, then one launch profiled with the breakdown's metrics.
set -u
B=$(cd "$(dirname "$0")" && pwd)
tag=$1
export ENERGY_REQUIRE_GPU=1 ENERGY_DEVICE=nvml XDG_CACHE_HOME=/tmp/cache
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
log=$OUT/$tag-log.txt
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv; } > $log 2>&1
CARGO_TARGET_DIR=/tmp/s timeout 60 $B/saxpy --bench > $OUT/$tag-saxpy.txt 2>&1
echo "saxpy rc=$?" >> $log
M=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,dram__bytes_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,dram__bytes_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum
CARGO_TARGET_DIR=/tmp/s2 timeout 90 $NCU --clock-control none --launch-skip 10 --launch-count 3 --kernel-name saxpy --csv --page raw --print-units base --metrics $M $B/saxpy --bench > /tmp/s/saxpy-ncu.csv 2> $OUT/$tag-ncu.err
echo "ncu rc=$?" >> $log
tar czf $OUT/$tag.tgz -C /tmp/s energy saxpy-ncu.csv
