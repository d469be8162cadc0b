#!/usr/bin/env bash
# Issue 32 experiment driver (runs on the GPU machine). Usage:
#   exp.sh CALL_TAG SECONDS [calib|calibk] [zeus|cold|coldab]
# Runs cycles of: a fixed cool-down (COOL_S, 30 s), then three blocks
# A B B A A B B A, one per knob level (0, +1, +2 % FMA loop iterations), the first block of
# a cycle from a cooled board. With `calib`, first a 60 s busy step from the current state
# (the -O0 FMA loop back to back, role K), a cool-down and 60 s of fma_loop back to back (role V). With `zeus`, Zeus-style trials
# instead of cycles: cool 20 s, A, cool 20 s, B. With `calibk`, only the 60 s busy step (a
# board already checked cold -> hot). With `coldab`, cold starts only: a 20 s cool-down, then
# one `cargo energy ab` (levels rotating), whose first A and first B results are kept beside
# its report (the plain and normalized comparisons of a cold start). Stops starting work at SECONDS.
# Every process writes its own result directory; a TSV line per process records what ran.
set -u
cd "$(dirname "$0")"
TAG=$1; BUDGET=$2; shift 2
MODE_CALIB=0; MODE_ZEUS=0
MODE_AB=0
# A file mode-<TAG> beside this script may name more modes for that call (e.g. `ab`).
EXTRA=""; [ -f "mode-$TAG" ] && EXTRA=$(cat "mode-$TAG")
MODE_COLD=0; MODE_CALIBK=0; MODE_COLDAB=0
for a in "$@" $EXTRA; do case $a in calib) MODE_CALIB=1;; calibk) MODE_CALIBK=1;; zeus) MODE_ZEUS=1;; ab) MODE_AB=1;; cold) MODE_COLD=1;; coldab) MODE_COLDAB=1;; esac; done
START=$(date +%s)
W=/tmp/exp-work/$TAG; rm -rf "$W"; mkdir -p "$W/res"
STATE=/tmp/exp-state; mkdir -p "$STATE"
export ENERGY_REQUIRE_GPU=1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit,persistence_mode --format=csv > "$W/gpu.csv" 2>&1
nvidia-smi --query-gpu=timestamp,temperature.gpu,clocks.sm,power.draw --format=csv,noheader,nounits -lms 500 > "$W/temp.csv" 2>/dev/null &
SMI=$!
temp() { nvidia-smi --query-gpu=temperature.gpu --format=csv,noheader,nounits 2>/dev/null | head -1 | tr -d ' '; }
# The idle temperature: read once per machine, at the first call's start (fresh, idle board).
[ -f "$STATE/idle_c" ] || temp > "$STATE/idle_c"
IDLE_C=$(cat "$STATE/idle_c")
echo "tag=$TAG idle_c=$IDLE_C start=$(date -u +%FT%TZ)" > "$W/env.txt"
elapsed() { echo $(( $(date +%s) - START )); }
COOL_S=${COOL_S:-30}
cool() { # cool [s]: idle a fixed time (the die reads near idle within 2 s on an H100, the
  # board does not: b1c1 showed it), recording the temperature before and after
  local s=${1:-$COOL_S} before; before=$(temp)
  sleep "$s"
  echo "cool $s s: $before -> $(temp) C" >> "$W/env.txt"
}
N=0
printf 'n\ttag\tcycle\tblock\tlevel\trole\tpair\tcold_block\tstart_ns\tend_ns\ttemp_before_c\texit\n' > "$W/runs.tsv"
one() { # one LEVEL ROLE CYCLE BLOCK PAIR COLD
  local level=$1 role=$2 exe t0 t1 tb rc filter='^fma_loop/energy'
  if [ "$role" = B ]; then exe=./fma$level; else exe=./fma0; fi
  [ "$role" = K ] && filter='^fma_loop_o0/energy' 
  N=$((N+1)); tb=$(temp); t0=$(date +%s%N)
  rm -rf "$W/t"; CARGO_TARGET_DIR="$W/t" $exe --bench "$filter" > "$W/last.log" 2>&1; rc=$?
  t1=$(date +%s%N)
  local f; f=$(ls "$W"/t/energy/new/fma_loop*_energy*.json 2>/dev/null | head -1)
  if [ $rc -eq 0 ] && [ -n "$f" ]; then
    cp "$f" "$W/res/$(printf %04d $N).json"; rm -f "$f"
  else tail -5 "$W/last.log" >> "$W/errors.txt"; fi
  printf '%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' $N "$TAG" "$3" "$4" "$level" "$role" "$5" "$6" $t0 $t1 "$tb" $rc >> "$W/runs.tsv"
}
if [ $MODE_CALIB = 1 ]; then
  # Thermal calibration data: the -O0 FMA loop back to back for CALIB_S from the current
  # (cold) state; then a cool-down and the cold -> hot check on fma_loop (another kernel).
  CALIB_S=${CALIB_S:-60}
  echo "calib from $(temp) C" >> "$W/env.txt"
  t0=$(date +%s); while [ $(( $(date +%s) - t0 )) -lt "$CALIB_S" ]; do one 0 K calib calib 0 1; done
  cool 90
  echo "cold-hot check from $(temp) C" >> "$W/env.txt"
  t0=$(date +%s); while [ $(( $(date +%s) - t0 )) -lt "$CALIB_S" ]; do one 0 V coldhot coldhot 0 1; done
fi
if [ $MODE_CALIBK = 1 ]; then
  CALIB_S=${CALIB_S:-60}
  echo "calib from $(temp) C" >> "$W/env.txt"
  t0=$(date +%s); while [ $(( $(date +%s) - t0 )) -lt "$CALIB_S" ]; do one 0 K calib calib 0 1; done
fi
CYCLE=0; BLOCK=0
if [ $MODE_COLDAB = 1 ]; then
  # LEVEL_OFFSET (0-2) picks the level the rotation starts at.
  mkdir -p "$W/ab"
  while [ "$(elapsed)" -lt "$BUDGET" ]; do
    level=$(( (CYCLE + ${LEVEL_OFFSET:-0}) % 3 )); CYCLE=$((CYCLE+1))
    cool 20
    name="$CYCLE-cold-level$level"; D="$W/ab/$name"
    ./cargo-energy ab --baseline ./fma0 --candidate ./fma$level --min-pairs 3 --max-pairs 12 --target 1.0 \
      --threshold 0.5 --output-dir "$D" --format json -- '^fma_loop/energy' \
      > "$W/ab/$name.json" 2> "$W/ab/$name.log"
    echo "ab $CYCLE level $level exit $? after $(temp) C" >> "$W/env.txt"
    find "$D" -name ab.json -exec cp {} "$W/ab/$name.ab.json" \;
    f=$(ls "$D"/run-01-A/energy/new/fma_loop*_energy*.json 2>/dev/null | head -1); [ -n "$f" ] && cp "$f" "$W/ab/$name.run1.json"
    f=$(ls "$D"/run-02-B/energy/new/fma_loop*_energy*.json 2>/dev/null | head -1); [ -n "$f" ] && cp "$f" "$W/ab/$name.run2.json"
    rm -rf "$D"
  done
elif [ $MODE_COLD = 1 ]; then
  # Cold starts only: each comparison after a fixed cool-down; a plain pair (A then B) and a
  # `cargo energy ab` sequence alternate, the levels rotating.
  mkdir -p "$W/ab"
  while [ "$(elapsed)" -lt "$BUDGET" ]; do
    level=$(( CYCLE % 3 )); CYCLE=$((CYCLE+1))
    cool; BLOCK=$((BLOCK+1))
    one "$level" A "c$CYCLE" "$BLOCK" 1 1; one "$level" B "c$CYCLE" "$BLOCK" 1 1
    [ "$(elapsed)" -lt "$BUDGET" ] || break
    cool
    ./cargo-energy ab --baseline ./fma0 --candidate ./fma$level --min-pairs 3 --max-pairs 12 --target 1.0 \
      --threshold 0.5 --output-dir "$W/ab/$CYCLE-cold-level$level" --format json -- '^fma_loop/energy' \
      > "$W/ab/$CYCLE-cold-level$level.json" 2> "$W/ab/$CYCLE-cold-level$level.log"
    echo "ab $CYCLE level $level exit $?" >> "$W/env.txt"
    find "$W/ab/$CYCLE-cold-level$level" -name ab.json -exec cp {} "$W/ab/$CYCLE-cold-level$level.ab.json" \;
    rm -rf "$W/ab/$CYCLE-cold-level$level"
  done
elif [ $MODE_AB = 1 ]; then
  # Real `cargo energy ab` invocations, levels rotating, each its own output folder.
  mkdir -p "$W/ab"
  while [ "$(elapsed)" -lt "$BUDGET" ]; do
    level=$(( CYCLE % 3 )); CYCLE=$((CYCLE+1))
    t0=$(date +%s%N)
    ./cargo-energy ab --baseline ./fma0 --candidate ./fma$level --min-pairs 3 --max-pairs 12 --target 1.0 \
      --threshold 0.5 --output-dir "$W/ab/$CYCLE-level$level" --format json -- '^fma_loop/energy' \
      > "$W/ab/$CYCLE-level$level.json" 2> "$W/ab/$CYCLE-level$level.log"
    echo "ab $CYCLE level $level exit $? $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$W/env.txt"
    find "$W/ab/$CYCLE-level$level" -name ab.json -exec cp {} "$W/ab/$CYCLE-level$level.ab.json" \;
    rm -rf "$W/ab/$CYCLE-level$level"
  done
elif [ $MODE_ZEUS = 1 ]; then
  while [ "$(elapsed)" -lt "$BUDGET" ]; do
    level=$(( CYCLE % 3 )); CYCLE=$((CYCLE+1))
    cool 20; one "$level" A z$CYCLE z$CYCLE 1 zeus
    cool 20; one "$level" B z$CYCLE z$CYCLE 1 zeus
  done
else
  while [ "$(elapsed)" -lt "$BUDGET" ]; do
    CYCLE=$((CYCLE+1)); cool
    for j in 0 1 2; do
      [ "$(elapsed)" -lt "$BUDGET" ] || break
      level=$(( (CYCLE + j) % 3 )); BLOCK=$((BLOCK+1)); cold=$([ $j = 0 ] && echo 1 || echo 0)
      p=0
      for role in A B B A A B B A; do p=$((p+1)); one "$level" $role "$CYCLE" "$BLOCK" $(( (p+1)/2 )) "$cold"; done
    done
  done
fi
kill $SMI 2>/dev/null
cp "$W"/runs.tsv "$W"/env.txt "$W"/gpu.csv "$OUT"/ 2>/dev/null
tar czf "$OUT/$TAG.tgz" -C "$W" res runs.tsv $( [ -d "$W/ab" ] && echo ab ) env.txt gpu.csv temp.csv $( [ -f "$W/errors.txt" ] && echo errors.txt )
echo "done $TAG: $N processes in $(elapsed) s"
