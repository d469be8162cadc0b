#!/usr/bin/env bash
# The GPU phase of issue 63's graph validation: the independent reference (graph replayed
# back to back; launch by launch from the host, with and without cudarc's event tracking)
# interleaved with the harness's short_kernels bench (each FMA loop launched directly and as
# a CUDA graph of 100), then launch_sizes of the commit before the graph option and of this
# one, interleaved. Clocks read by nvidia-smi, never set.
#
#   bash run.sh BIN_DIR OUT_DIR [SECONDS_LEFT]
#
# BIN_DIR holds graph_reference, short_kernels, launch_sizes_new, launch_sizes_old.
set -u
bin=$(cd "$1" && pwd); out=$2; budget=${3:-540}
raw=$out/raw; mkdir -p "$raw"
start=$(date +%s)
left() { echo $(( budget - ($(date +%s) - start) )); }
smi() { nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,power.draw,temperature.gpu,pstate --format=csv,noheader >> "$raw/gpu.csv"; }
step=0
log() { echo "$(date -u +%FT%TZ) step $step: $*" | tee -a "$raw/steps.log"; }
ref() { # NAME ARGS...
    local name=$1; shift; step=$((step + 1))
    [ "$(left)" -gt 20 ] || { log "skipped ref $name (time)"; return; }
    log "ref $name $*"
    "$bin/graph_reference" "$@" --out "$raw/ref-$step-$name.json" > "$raw/ref-$step-$name.log" 2>&1
    log "ref $name exit $?"
}
harness() { # NAME BIN FILTER
    local name=$1 exe=$2 filter=$3; step=$((step + 1))
    [ "$(left)" -gt 40 ] || { log "skipped harness $name (time)"; return; }
    log "harness $name $exe $filter"
    mkdir -p "$raw/h-$step-$name"
    CARGO_TARGET_DIR="$raw/h-$step-$name" "$bin/$exe" --bench $filter > "$raw/h-$step-$name/bench.log" 2>&1
    log "harness $name exit $?"
}
smi
if [ "${PLAN:-1}" = 2 ]; then
    # Second call: ~2 and ~5 µs kernels, raw cudarc captured into a graph, and the 20 µs
    # gap again with the reference's energy per launch by half second (the board warming).
    for iters in 5 27; do
        ref "g$iters" --iters "$iters" --graph 100 --seconds 4
        harness "i$iters" short_kernels "fma_${iters}_iterations"
        ref "g$iters" --iters "$iters" --graph 100 --seconds 4
        harness "i$iters" short_kernels "fma_${iters}_iterations"
        ref "g$iters" --iters "$iters" --graph 100 --seconds 4
        harness cudarc short_kernels cudarc_graph
        smi
    done
    for round in 1 2 3; do
        ref g143 --iters 143 --graph 100 --seconds 4
        ref p143 --iters 143 --graph 0 --seconds 4
        [ "$round" = 3 ] || harness i143 short_kernels fma_143_iterations
    done
    smi
    log "done, $(left) s left"
    exit 0
fi
for iters in 1 16 57; do
    ref "g$iters" --iters "$iters" --graph 100 --seconds 4
    harness "i$iters" short_kernels "fma_${iters}_iteration"
    ref "g$iters" --iters "$iters" --graph 100 --seconds 4
    harness "i$iters" short_kernels "fma_${iters}_iteration"
    ref "g$iters" --iters "$iters" --graph 100 --seconds 4
    smi
done
# 20 µs: the graph, and the host's launches with and without event tracking (the gap of
# the table).
for round in 1 2 3; do
    ref g143 --iters 143 --graph 100 --seconds 4
    ref p143 --iters 143 --graph 0 --seconds 4
    ref t143 --iters 143 --graph 0 --seconds 4 --tracking
    [ "$round" = 3 ] || harness i143 short_kernels fma_143_iterations
done
smi
# The graph option's change left launches from the host as they were: launch_sizes before
# it and with it, interleaved.
for round in 1 2; do
    harness old launch_sizes_old fma_
    harness new launch_sizes_new fma_
done
smi
log "done, $(left) s left"
