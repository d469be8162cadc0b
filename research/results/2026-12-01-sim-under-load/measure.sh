#!/bin/bash
# Issue 60 item 1: a simulated figure must not follow the host's load. On the development
# machine (no GPU), from the repository root:
#   bash research/results/2026-12-01-sim-under-load/measure.sh [BEFORE]
# builds the saxpy bench and cargo-energy, then runs, on a quiet machine and beside 2 x nproc
# busy loops (a CPU hog): the simulated `saxpy/energy` three times each, and an A/A
# `cargo energy ab` (the same executable as both sides, three pairs) once each. With BEFORE (a
# commit), the saxpy bench built at that commit (in a git worktree) runs the same way first.
# Each run's result file goes to raw/ (raw.tgz); table.py writes table.md from them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../../.."
export ENERGY_DEVICE=sim
bench=$(cargo bench --no-run --bench saxpy 2>&1 | grep -o 'target/release/deps/saxpy-[0-9a-f]*' | head -n 1)
cargo build --release -q -p cargo-energy
energy=target/release/cargo-energy
work=$(mktemp -d)
raw="$work/raw"
mkdir -p "$raw"
before=""
if [ -n "${1:-}" ]; then
  git worktree add -q --detach "$work/before-src" "$1"
  before="$work/before-src/$( cd "$work/before-src" && CARGO_TARGET_DIR=target cargo bench --no-run --bench saxpy 2>&1 | grep -o 'target/release/deps/saxpy-[0-9a-f]*' | head -n 1)"
  echo "$1 $(git rev-parse "$1")" > "$raw/before.txt"
fi
hog() { # hog CMD...: CMD beside 2 x nproc busy loops
  local pids=() i
  for i in $(seq $((2 * $(nproc)))); do ( while :; do :; done ) & pids+=($!); done
  "$@"; local rc=$?
  kill "${pids[@]}"; wait "${pids[@]}" 2>/dev/null || true
  return $rc
}
{
  echo "commit $(git rev-parse HEAD) $(date -u +%FT%TZ) nproc $(nproc) $(uname -sr)"
  grep -m1 'model name' /proc/cpuinfo
} > "$raw/host.txt"
for load in quiet hog; do
  prefix=""; [ $load = hog ] && prefix=hog
  for i in 1 2 3; do
    if [ -n "$before" ]; then
      rm -rf "$work/t"
      CARGO_TARGET_DIR="$work/t" $prefix "$before" --bench saxpy/energy > "$raw/before-saxpy-$load-$i.log" 2>&1
      cp "$work/t/energy/new/saxpy_energy__simulated_.json" "$raw/before-saxpy-$load-$i.json"
    fi
    rm -rf "$work/t"
    CARGO_TARGET_DIR="$work/t" $prefix "$bench" --bench saxpy/energy > "$raw/saxpy-$load-$i.log" 2>&1
    cp "$work/t/energy/new/saxpy_energy__simulated_.json" "$raw/saxpy-$load-$i.json"
    echo "saxpy $load $i: $(grep 'energy per launch' "$raw/saxpy-$load-$i.log")"
  done
  $prefix "$energy" energy ab --baseline "$bench" --candidate "$bench" --min-pairs 3 --max-pairs 3 \
    --output-dir "$work/ab-$load" -- saxpy/energy > "$raw/ab-$load.log" 2>&1 || true
  cp "$work/ab-$load/ab.json" "$raw/ab-$load.json"
  echo "ab $load: $(grep -m1 'saxpy/energy' "$raw/ab-$load.log" | tr -s ' ')"
done
tar czf "$here/raw.tgz" -C "$work" raw
python3 "$here/table.py" "$here/raw.tgz" > "$here/table.md"
[ -n "$before" ] && git worktree remove --force "$work/before-src"
rm -rf "$work"
cat "$here/table.md"
