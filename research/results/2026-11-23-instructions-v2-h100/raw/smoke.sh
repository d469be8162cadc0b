#!/bin/bash
# A one-kernel smoke run: the JIT cubin read back, the SASS read, one measurement.
set -u
B=$(cd "$(dirname "$0")" && pwd)
export ENERGY_REQUIRE_GPU=1 ENERGY_DEVICE=nvml XDG_CACHE_HOME=/tmp/cache CARGO_TARGET_DIR=/tmp/t ENERGY_INSTRUCTIONS_LEVELS=O4
cub=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
[ -n "$cub" ] && export CUOBJDUMP=$cub
s=$(date +%s)
timeout 60 $B/instructions --bench 'instructions/int/add_u32/O4/k8$' > $OUT/smoke.txt 2>&1
echo "smoke rc=$? wall=$(( $(date +%s) - s )) s cuobjdump=${cub:-none}" | tee -a $OUT/smoke.txt
f=$(ls /tmp/t/energy/suites/instructions/*.json 2>/dev/null | head -1)
[ -n "$f" ] && grep -c '"loop_pipes"' "$f" && python3 -c "import json,sys; r=json.load(open('$f')); print(r['run']['facts']['machine_code'])" | tee -a $OUT/smoke.txt
[ -n "$f" ] || exit 3
