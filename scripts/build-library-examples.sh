#!/usr/bin/env bash
# Builds the book's library examples (docs/book/library-examples/*/: candle, burn, cubecl, wgpu)
# as a user's crates outside the workspace, against this checkout's harness (each names it by
# path), and runs each once without a GPU. CI does not: their cold builds take 10-25 minutes
# each on 2 cores. The last log is kept: docs/book/library-examples/build.log (written whole at
# the end; a run that fails leaves build.log.partial beside the kept one).
#
#   bash scripts/build-library-examples.sh [CRATE...]    # default: every crate there
#
# What it does per crate: `cargo bench --no-run --locked` (timed; the lock file is the crate's
# own, committed), then `cargo bench` on this machine, where library work is not run and
# passes ("not run: needs a GPU"). candle's CUDA backend needs nvcc and CUDA's headers and
# libraries at build time: NVIDIA's CUDA 13.0 wheels from PyPI serve, installed under
# $LIBRARY_EXAMPLES_TOOLS (default /tmp/kernel-energy-library-tools); to link, it needs libcuda
# too (see candle_env below).
#
# Environment: LIBRARY_EXAMPLES_TARGET (the shared target directory, default
# target/library-examples), LIBRARY_EXAMPLES_TOOLS.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
EXAMPLES=docs/book/library-examples
LOG=$EXAMPLES/build.log
TARGET=${LIBRARY_EXAMPLES_TARGET:-$REPO/target/library-examples}
TOOLS=${LIBRARY_EXAMPLES_TOOLS:-${TMPDIR:-/tmp}/kernel-energy-library-tools}
export CARGO_TARGET_DIR=$TARGET CARGO_TERM_COLOR=never

if [ $# -gt 0 ]; then CRATES=("$@"); else
    CRATES=()
    for manifest in "$EXAMPLES"/*/Cargo.toml; do CRATES+=("$(basename "$(dirname "$manifest")")"); done
fi
for crate in "${CRATES[@]}"; do
    [ -f "$EXAMPLES/$crate/Cargo.toml" ] || { echo "no crate $crate under $EXAMPLES (have: $(ls "$EXAMPLES"))" >&2; exit 2; }
done

exec > >(tee "$LOG.partial") 2>&1
echo "# scripts/build-library-examples.sh ${*:-(every crate)}"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "commit: $(git rev-parse --short HEAD)$([ -z "$(git status --porcelain -- energy-harness energy-macros energy-results energy-units "$EXAMPLES")" ] || echo ' (with uncommitted changes)')"
echo "machine: $(nproc) cores, $(uname -sm), $(nvidia-smi -L 2>/dev/null | head -n 1 || echo 'no NVIDIA GPU')"
echo "$(cargo --version); $(rustc --version)"
echo "target directory: $TARGET (shared: a crate after the first reuses what they have in common)"

# candle: nvcc and CUDA 13.0's headers and libraries, from NVIDIA's wheels. Its binary links
# libcuda (cudarc's dynamic linking) and the toolkit's libraries by their unversioned names.
# The wheels carry neither libcuda nor those names: the names are linked here, and libcuda
# must come from an NVIDIA driver or a CUDA toolkit's stub ($CUDA_STUBS, a folder holding
# libcuda.so). Without one, candle is compiled (its kernels by nvcc, the bench file by rustc:
# `cargo check`), not linked nor run; the log says which.
CANDLE_LINKS=true
candle_env() {
    python3 -m pip install --quiet --disable-pip-version-check --target "$TOOLS" \
        'nvidia-cuda-nvcc==13.0.*' 'nvidia-nvvm==13.0.*' 'nvidia-cuda-crt==13.0.*' \
        'nvidia-cuda-runtime==13.0.*' 'nvidia-cuda-cccl==13.0.*' 'nvidia-cublas==13.*' 'nvidia-curand==10.4.*'
    export CUDA_HOME=$TOOLS/nvidia/cu13
    [ -x "$CUDA_HOME/bin/nvcc" ] || { echo "nvcc is missing under $CUDA_HOME after pip install" >&2; exit 1; }
    export PATH=$CUDA_HOME/bin:$PATH CUDA_COMPUTE_CAP=90
    local names=$TOOLS/link-names
    mkdir -p "$names"
    for lib in "$CUDA_HOME"/lib/lib*.so.*; do
        ln -sf "$lib" "$names/$(basename "$lib" | sed 's/\.so\..*/.so/')"
    done
    local libcuda
    libcuda=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so /{print $NF; exit}')
    [ -z "$libcuda" ] && [ -f "${CUDA_STUBS:-/nonexistent}/libcuda.so" ] && libcuda=$CUDA_STUBS/libcuda.so
    if [ -n "$libcuda" ]; then
        ln -sf "$libcuda" "$names/libcuda.so"
        ln -sf "$libcuda" "$names/libcuda.so.1"
    else
        CANDLE_LINKS=false
    fi
    # The linker's search path (cargo does not fingerprint it: nothing is rebuilt for it).
    export LIBRARY_PATH=$names${LIBRARY_PATH:+:$LIBRARY_PATH}
    export LD_LIBRARY_PATH=$names:$CUDA_HOME/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    echo "candle: $(nvcc --version | tail -n 1), CUDA_HOME=$CUDA_HOME, CUDA_COMPUTE_CAP=$CUDA_COMPUTE_CAP," \
        "libcuda: ${libcuda:-none (no driver, no \$CUDA_STUBS): compiled with cargo check, not linked nor run}"
}

failed=()
for crate in "${CRATES[@]}"; do
    echo
    echo "## $crate"
    dir=$EXAMPLES/$crate
    (
        [ "$crate" = candle-bench ] && candle_env
        cd "$dir"
        start=$SECONDS
        if [ "$CANDLE_LINKS" = true ]; then
            cargo bench --no-run --locked
            echo "$crate: built in $(( (SECONDS - start) / 60 )) min $(( (SECONDS - start) % 60 )) s"
        else
            cargo check --benches --locked
            echo "$crate: compiled (cargo check: no libcuda to link against) in $(( (SECONDS - start) / 60 )) min $(( (SECONDS - start) % 60 )) s"
        fi
        # What the crate resolved: the library and the harness's cudarc, one version each.
        cargo tree --locked -e normal,dev --depth 1 | sed -n '2,$p'
        cargo tree --locked -i cudarc -e normal,dev 2>/dev/null | head -n 1 || echo "(no cudarc in the graph)"
        if [ "$CANDLE_LINKS" = true ]; then cargo bench --locked; else echo "$crate: not run (not linked)"; fi
    ) || failed+=("$crate")
done

echo
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]} (the log of this run: $LOG.partial; the last complete one is kept in $LOG)"
    exit 1
fi
echo "every crate built and ran: ${CRATES[*]}"
mv "$LOG.partial" "$LOG"
