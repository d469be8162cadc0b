#!/bin/bash
# Second device call of 2026-11-29 (issues 48, 46 and 47), on one GPU, binaries built on the
# development machine and carried xz-compressed beside this script:
#   reduce_sweep  reduce-sweep/'s bench (every sweep point with a plain twin), cargo bench --no-run
#   saxpy         the repository's example bench (energy-examples), from a fresh clone
#   stencil3      a crate written outside the repository by a newcomer (README only)
#   cargo-energy  from the same fresh clone (the H100 and H200 models embedded)
# 1. the 20 energy benchmarks of reduce_sweep in one process (the sweeps and their twins);
# 2. each of them in a process of its own (issue 46: one process against one each);
# 3. `cargo energy explain NAME --exe …` on saxpy and stencil3 (ncu run for you; shipped model).
# Clocks are read, never set.
set -u
B=$(cd "$(dirname "$0")" && pwd)
cd "$B" && for f in *.xz; do xz -dkf "$f"; done && chmod +x reduce_sweep saxpy stencil3 cargo-energy
W=/tmp/w2; rm -rf $W; mkdir -p $W; cd $W
q() { nvidia-smi --query-gpu=index,name,uuid,driver_version,pstate,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv,noheader; }
{ date -u +%FT%TZ; q; } > $OUT/gpus-before.csv
export ENERGY_REQUIRE_GPU=1
now() { date +%s.%N; }
IDS=$($B/reduce_sweep --bench --list 2>/dev/null | grep '/energy.*: benchmark' | sed 's/ (simulated)//; s/: benchmark//')
{
  echo "mode,filter,start_s,end_s,exit"
  s=$(now); CARGO_TARGET_DIR=$W/one $B/reduce_sweep --bench '/energy' > $W/one.log 2>&1; e=$?; echo "one-process,/energy,$s,$(now),$e"
  for id in $IDS; do
    d=$(echo "$id" | tr '/' '_')
    s=$(now); CARGO_TARGET_DIR=$W/each/$d $B/reduce_sweep --bench "^$id" > $W/each-$d.log 2>&1; e=$?; echo "one-per-process,^$id,$s,$(now),$e"
  done
} > $W/processes.csv
cat $W/processes.csv
for n in saxpy stencil3; do
  CARGO_TARGET_DIR=$W/x-$n $B/$n --bench "^$n/energy" > $W/x-$n-bench.log 2>&1; echo "$n bench exit $?"
  $B/cargo-energy explain $n --exe $B/$n --dir $W/x-$n/energy --output $W/x-$n/explain > $W/x-$n-explain.md 2> $W/x-$n-explain.err
  echo "$n explain exit $?"; head -n 12 $W/x-$n-explain.md; cat $W/x-$n-explain.err
done
{ date -u +%FT%TZ; q; } > $OUT/gpus-after.csv
cp $W/processes.csv $OUT/
cd $W && { find . \( -name '*.json' -o -name '*.log' -o -name '*.md' -o -name '*.err' -o -name '*.svg' -o -name '*-ncu.csv' \) ; find one -name '*.trace.csv'; } | tar -cJf $OUT/call2.tar.xz -T -
