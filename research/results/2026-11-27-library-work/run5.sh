#!/bin/bash
# Issue 43's fifth GPU run: a wgpu compute shader (Vulkan, no CUDA; a crate outside the
# repository, wgpu 30.0.2) against its independent reference (interleaved ref / harness / ref,
# twice), and the same dispatches without the wait. The Vulkan loader travels as Debian's
# libvulkan1 package in .gl/ (the device tool's README); the driver's ICD is NVIDIA's.
# Binaries in gpu-bin/ (xz): wgpu_fma (the crate's bench), wgpu_reference.
#   bash docs/results/2026-11-27-library-work/run5.sh
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$ICD" ] && export VK_DRIVER_FILES=$ICD
B=$PWD/gpu-bin
cd "$B" && xz -d -f ./*.xz && chmod +x ./* && cd - > /dev/null
W=$(mktemp -d)
cd "$W"
export ENERGY_REQUIRE_GPU=1
q() { nvidia-smi --query-gpu=name,uuid,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,pstate --format=csv,noheader; }
echo "name, uuid, pci bus id, driver, sm, max sm, mem, limit, temp, pstate" > gpu.csv
q >> gpu.csv
ref() { "$B/wgpu_reference" --seconds 8 --poll-us 5000 --out "ref-wgpu-$1.json" > "ref-wgpu-$1.log" 2>&1; echo "ref ($1): exit $? $(grep -oE '"(energy|dynamic)_per_call_j": ?[0-9.e-]+' "ref-wgpu-$1.json" | tr -d '\n ')"; }
bench() { CARGO_TARGET_DIR=$W/t-$1 timeout 120 "$B/wgpu_fma" --bench "$2" > "$1.log" 2>&1; echo "$1: exit $? (124: killed at 120 s)"; }
for cycle in 1 2; do
  ref "$cycle-a"; bench "wgpu-$cycle" '^wgpu_fma/'; ref "$cycle-b"
done
bench unwaited 'wgpu_fma_unwaited'
grep -E "^error|energy per launch|dynamic per launch" unwaited.log | head -n 4
q >> gpu.csv
find . -name '*.trace.csv' -exec gzip -9 -n {} +
cp gpu.csv "$OUT/gpu.csv"
tar czf "$OUT/run5.tgz" gpu.csv ./*.log ./*.json $(find . -path '*/energy/new/*' \( -name '*.json' -o -name '*.trace.csv.gz' \))
