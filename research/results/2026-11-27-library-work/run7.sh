#!/bin/bash
# Issue 43's seventh GPU run (for an H200; runs 4 and 5 were on H100s): the candle matmul
# (candle-core 0.11.1, CUDA) and the wgpu compute shader (wgpu 30.0.2, Vulkan) of the crates
# beside this script, each against its independent reference, interleaved ref / harness / ref,
# twice. Binaries in gpu-bin/ (stripped, xz): candle_matmul, candle_reference, wgpu_fma,
# wgpu_reference; the Vulkan loader in .gl/ (Debian's libvulkan1). Clocks read, never set.
#   bash docs/results/2026-11-27-library-work/run7.sh
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$ICD" ] && export VK_DRIVER_FILES=$ICD
B=$PWD/gpu-bin
cd "$B" && xz -d -f ./*.xz && chmod +x ./* && cd - > /dev/null
CU13=$(dirname "$(find / -name 'libcublas.so.13*' -path '*cu13*' 2>/dev/null | head -n 1)")
export LD_LIBRARY_PATH="$CU13${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
W=$(mktemp -d)
cd "$W"
export ENERGY_REQUIRE_GPU=1
q() { nvidia-smi --query-gpu=name,uuid,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,pstate --format=csv,noheader; }
echo "name, uuid, pci bus id, driver, sm, max sm, mem, limit, temp, pstate" > gpu.csv
q >> gpu.csv
ref() { timeout 60 "$B/$1_reference" --seconds 8 --poll-us 5000 --out "ref-$1-$2.json" > "ref-$1-$2.log" 2>&1; echo "ref $1 ($2): exit $? $(grep -oE '"(energy|dynamic|time)_per_call_[js]": ?[0-9.e-]+' "ref-$1-$2.json" | tr -d '\n ')"; }
bench() { CARGO_TARGET_DIR=$W/t-$2 timeout 150 "$B/$1" --bench "$3" > "$2.log" 2>&1; echo "$2: exit $? (124: killed at 150 s)"; grep -E "^error|energy per launch|dynamic per launch" "$2.log" | head -n 4; }
save() { find . -name '*.trace.csv' -exec gzip -9 -n {} +; cp gpu.csv "$OUT/gpu.csv"; tar czf "$OUT/run7.tgz" gpu.csv ./*.log ./*.json $(find . -path '*/energy/new/*' \( -name '*.json' -o -name '*.trace.csv.gz' \)); }
for cycle in 1 2; do
  ref candle "$cycle-a"; bench candle_matmul "candle-$cycle" '^candle_matmul(_wait)?/'; ref candle "$cycle-b"
  save
done
for cycle in 1 2; do
  ref wgpu "$cycle-a"; bench wgpu_fma "wgpu-$cycle" '^wgpu_fma/'; ref wgpu "$cycle-b"
  save
done
q >> gpu.csv
save
