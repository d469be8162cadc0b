#!/bin/bash
# Issue 61: screenshots of the HTML report before and after, on stored real runs. From the
# repository root on the development machine, with Debian's chromium installed:
#   bash research/results/2026-12-01-report-glance/screenshots.sh BEFORE_COMMIT
# builds cargo-energy at BEFORE_COMMIT (a git worktree) and at the checkout, and renders with
# each: the H100 board-1 repeat against its first run (72 benchmarks, unchanged code), the
# H200 sweep run of 2026-11-29 (20 benchmarks, two sweeps), and `history` over the held-out
# runs of protocols v2 and v3 (nine runs on eight boards: H100 board 3 twice); then headless
# Chromium shoots each page.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../../.."
work=$(mktemp -d)
cd "$root"
cargo build -q -p cargo-energy
after="$root/target/debug/cargo-energy"
git worktree add -q --detach "$work/before-src" "$1"
(cd "$work/before-src" && cargo build -q -p cargo-energy)
before="$work/before-src/target/debug/cargo-energy"
r=research/results
mkdir -p "$work/energy" "$work/sweep" "$work/hist"
cp -r $r/2026-11-26-model-protocol-h100-h200/h100-board1-repeat/run-model "$work/energy/new"
cp -r $r/2026-11-26-model-protocol-h100-h200/h100-board1/run-model "$work/energy/main"
cp -r $r/2026-11-29-parameterized/call2/one "$work/sweep/new"
for b in h100-board6 h100-board7 h100-board8 h100-board9 h200-board1; do
  mkdir -p "$work/hist/$b"; cp -r $r/2026-11-26-model-protocol-v3/$b/run-heldout "$work/hist/$b/"
done
for b in h100-board3 h100-board3-repeat h100-board4 h100-board5; do
  mkdir -p "$work/hist/$b"; cp -r $r/2026-11-26-model-protocol-v2/$b/run-heldout "$work/hist/$b/"
done
for side in before after; do
  exe=${!side}
  "$exe" report --dir "$work/energy" --baseline main --format html -o "$work/$side-compare.html" 2>/dev/null
  "$exe" report --dir "$work/sweep" --format html -o "$work/$side-sweep.html" 2>/dev/null
  "$exe" history "$work/hist" -o "$work/$side-history" > /dev/null 2>&1
done
shot() { # shot PAGE PNG HEIGHT
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$work/chromium-$RANDOM" --hide-scrollbars \
    --window-size=1400,"$3" --screenshot="$2" "file://$1" > /dev/null 2>&1
}
for side in before after; do
  shot "$work/$side-compare.html" "$here/$side-compare.png" 1800
  shot "$work/$side-sweep.html" "$here/$side-sweep.png" 1400
  shot "$work/$side-history/index.html" "$here/$side-history.png" 1400
done
git worktree remove --force "$work/before-src"
rm -rf "$work"
