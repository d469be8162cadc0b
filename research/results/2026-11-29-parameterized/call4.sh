#!/bin/bash
# Fourth device call of 2026-11-29 (issue 47): `cargo energy explain` on the repository's saxpy
# and on the newcomer's stencil3, the same binaries as call3.sh, asked in the hope of an H100
# (the device tool chooses the board; every earlier call of the day got an H200). Clocks are
# read, never set.
set -u
B=$(cd "$(dirname "$0")" && pwd)
cd "$B" && for f in *.xz; do xz -dkf "$f"; done && chmod +x saxpy stencil3 cargo-energy
W=/tmp/w4; rm -rf $W; mkdir -p $W; cd $W
q() { nvidia-smi --query-gpu=index,name,uuid,driver_version,pstate,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv,noheader; }
{ date -u +%FT%TZ; q; } > $OUT/gpus-before.csv
cat $OUT/gpus-before.csv
export ENERGY_REQUIRE_GPU=1
for n in saxpy stencil3; do
  CARGO_TARGET_DIR=$W/x-$n $B/$n --bench "^$n/energy" > $W/x-$n-bench.log 2>&1; echo "$n bench exit $?"
  $B/cargo-energy explain $n --exe $B/$n --dir $W/x-$n/energy --output $W/x-$n/explain > $W/x-$n-explain.md 2> $W/x-$n-explain.err
  echo "$n explain exit $?"; head -n 6 $W/x-$n-explain.md; head -n 2 $W/x-$n-explain.err
done
{ date -u +%FT%TZ; q; } > $OUT/gpus-after.csv
cd $W && find . \( -name '*.json' -o -name '*.log' -o -name '*.md' -o -name '*.err' -o -name '*.svg' -o -name '*-ncu.csv' \) | tar -cJf $OUT/call4.tar.xz -T -
