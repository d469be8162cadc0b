#!/usr/bin/env bash
# Every trace of the two calls analyzed again by `cargo energy analyze --json` of the
# checkout (today's counter curve: ticks read far from their update are not used), into
# reanalysis.tgz beside this script; table.py reads it beside the runs as they were measured.
# Run from the repository root: bash research/results/2026-12-02-graphs/reanalyze.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cargo build --release -q -p cargo-energy
energy=$PWD/target/release/cargo-energy
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for call in 1 2; do
    mkdir -p "$tmp/call$call" "$tmp/reanalysis/call$call"
    tar xzf "$here/raw$call.tgz" -C "$tmp/call$call"
    for trace in "$tmp"/call$call/raw/h-*/energy/new/*.trace.csv; do
        run=$(basename "$(dirname "$(dirname "$(dirname "$trace")")")")
        "$energy" energy analyze "$trace" --json > "$tmp/reanalysis/call$call/$run--$(basename "$trace" .trace.csv).json"
    done
done
tar czf "$here/reanalysis.tgz" -C "$tmp" reanalysis
echo "wrote $here/reanalysis.tgz"
