#!/bin/bash
# Third device call of 2026-11-29, after windows were made never shorter than their length
# (launches per window rounded up, 5e8d2e6). Binaries built on the development machine from
# main at the commit named in README.md, stripped, xz-compressed, carried beside this script:
#   validation    research/examples/validation.rs (docs/VALIDATION.md's reference check)
#   heldout       research/benches/heldout.rs
#   reduce_sweep  reduce-sweep/'s bench;  saxpy, stencil3, cargo-energy as in call2.sh
# 1. the reference check, as issue 46's call 5 ran it (three repeats of three sizes);
# 2. the five protocol-v3 held-out calls whose windows spanned less than one tick on the H200
#    of 2026-11-29 (ticks per window now, not a protocol result: v3's runs are done);
# 3. reduce_sweep's 20 energy benchmarks in one process (issue 46's per-benchmark time);
# 4. `cargo energy explain` on saxpy and stencil3 (issue 47), on whatever GPU this call got.
# Clocks are read, never set.
set -u
B=$(cd "$(dirname "$0")" && pwd)
cd "$B" && for f in *.xz; do xz -dkf "$f"; done && chmod +x validation heldout reduce_sweep saxpy stencil3 cargo-energy
W=/tmp/w3; rm -rf $W; mkdir -p $W; cd $W
q() { nvidia-smi --query-gpu=index,name,uuid,driver_version,pstate,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv,noheader; }
{ date -u +%FT%TZ; q; } > $OUT/gpus-before.csv
export ENERGY_REQUIRE_GPU=1
now() { date +%s.%N; }
{
  echo "mode,filter,start_s,end_s,exit"
  s=$(now); $B/validation --repeats 3 --sizes 0.00002,0.001,0.01 --out $W/validation > $W/validation.log 2>&1; e=$?; echo "validation,,$s,$(now),$e"
  f='^heldout_cublas_(cgemm_own|cgemm_constant|zgemm_constant|strmm_own|strmm_constant)/energy'
  s=$(now); CARGO_TARGET_DIR=$W/heldout $B/heldout --bench "$f" > $W/heldout.log 2>&1; e=$?; echo "heldout-five,$f,$s,$(now),$e"
  s=$(now); CARGO_TARGET_DIR=$W/one $B/reduce_sweep --bench '/energy' > $W/one.log 2>&1; e=$?; echo "one-process,/energy,$s,$(now),$e"
} > $W/processes.csv
cat $W/processes.csv
for n in saxpy stencil3; do
  CARGO_TARGET_DIR=$W/x-$n $B/$n --bench "^$n/energy" > $W/x-$n-bench.log 2>&1; echo "$n bench exit $?"
  $B/cargo-energy explain $n --exe $B/$n --dir $W/x-$n/energy --output $W/x-$n/explain > $W/x-$n-explain.md 2> $W/x-$n-explain.err
  echo "$n explain exit $?"; head -n 6 $W/x-$n-explain.md; head -n 2 $W/x-$n-explain.err
done
{ date -u +%FT%TZ; q; } > $OUT/gpus-after.csv
cp $W/processes.csv $OUT/
grep -h 'ticks per window\|energy per launch' $W/heldout.log | head -20
tail -n 12 $W/validation.log
cd $W && { find . \( -name '*.json' -o -name '*.log' -o -name '*.md' -o -name '*.err' -o -name '*.svg' -o -name '*-ncu.csv' \) ; find one heldout -name '*.trace.csv'; } | tar -cJf $OUT/call3.tar.xz -T -
