#!/bin/bash
# Issue 61: the cubecl and burn benchmarks a newcomer wrote from the README and the book alone
# (docs/book/library-examples/, TRIAL.md), measured on a GPU. On the GPU machine, beside the
# two stripped bench binaries (built on the development machine with `cargo bench --no-run` in
# each crate, carried xz-compressed):
#   bash run.sh [TAG]        (the archive: newcomer-libraries[-TAG].tgz)
# Each binary runs its benchmarks once (`--bench`); cubecl compiles its kernels with NVRTC at
# run time and needs the CUDA headers (CUDA_PATH). Clocks are read, never set.
set -u
cd "$(dirname "$0")"
export ENERGY_REQUIRE_GPU=1
export CUDA_PATH="${CUDA_PATH:-/usr/local/cuda}"
q=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu
nvidia-smi --query-gpu=$q --format=csv > gpu-before.csv
{ echo "CUDA_PATH=$CUDA_PATH"; ls -d /usr/local/cuda* 2>&1; command -v nvcc; } > cuda.txt
for b in cube_fma burn_matmul; do
  [ -f "$b.xz" ] && xz -d "$b.xz" && chmod +x "$b"
  start=$(date +%s)
  CARGO_TARGET_DIR="$PWD/t-$b" timeout 280 "./$b" --bench > "$b.log" 2>&1
  echo "$b exit $? after $(( $(date +%s) - start )) s" | tee -a summary.txt
  find "t-$b/energy" -name '*.trace.csv' -exec gzip -9 -n {} + 2>/dev/null
done
nvidia-smi --query-gpu=$q --format=csv > gpu-after.csv
tar czf "$OUT/newcomer-libraries${1:+-$1}.tgz" ./*.log summary.txt gpu-before.csv gpu-after.csv cuda.txt t-*/energy
