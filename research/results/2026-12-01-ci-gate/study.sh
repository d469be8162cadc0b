#!/usr/bin/env bash
# The gate study's GPU phase (issue 58), on the GPU machine, in the repository's root:
#   study.sh STATE OUT LIMIT_S WINDOWS FIRST [workflow]
# (PLAN="p1:default p2:4 …" in the environment: the gates in that order, KIND:WINDOWS each,
# instead of aa, p1 and p2 at WINDOWS; PAIRS=N: N pairs per gate instead of three; PAIRS=auto:
# the gate's own stop rule, at most MAX_PAIRS (4) pairs. WINDOWS `gate`: the gate's default.)
# STATE is run_workflow.py's folder, with study/{aa,p1,p2} built by `cargo energy gate
# --build-only` (A/A: main against main; +1 %: 101 calls per launch against 100; +2 %: 102)
# and study/cargo-energy. With `workflow`, the workflow's gate job runs first
# (run_workflow.py gate). Then gates of aa, p1 and p2 in turn, numbered from FIRST, each
# three ABBA pairs at threshold 1 % (WINDOWS windows per benchmark and run, or `default`),
# until the next would end after LIMIT_S seconds. Everything comes back in OUT/study.tgz
# (each gate's ab.json, output and timing) with the GPU's state before and after.
set -uo pipefail
STATE=$(cd "$1" && pwd); OUT=$2; LIMIT=$3; WINDOWS=$4; FIRST=$5; WORKFLOW=${6:-}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT/study/gates"
gpu_state() {
    nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,power.draw,temperature.gpu,pstate --format=csv
}
gpu_state > "$OUT/study/gpu-before.csv"
date -u +%FT%TZ > "$OUT/study/started.txt"
start=$SECONDS
if [ "$WORKFLOW" = workflow ]; then
    python3 "$HERE/run_workflow.py" gate --state "$STATE" > "$OUT/study/workflow-gate.out" 2>&1
    echo "workflow gate job exit $? after $((SECONDS - start)) s" >> "$OUT/study/index.txt"
    cp "$STATE/gate.log" "$OUT/study/gate.log"
    cp "$STATE/work/gate/energy.md" "$OUT/study/energy.md" 2>/dev/null
    cp "$STATE"/work/gate/target/energy/ab/*/ab.json "$OUT/study/workflow-ab.json" 2>/dev/null
fi
[ -d "$STATE/study/p2" ] || cp -r "$STATE/artifacts/energy-gate" "$STATE/study/p2"
CE="$STATE/study/cargo-energy"
chmod +x "$CE" "$STATE"/study/*/base/* "$STATE"/study/*/candidate/*
i=$FIRST
last=0
PLAN=${PLAN:-"aa:$WINDOWS p1:$WINDOWS p2:$WINDOWS"}
while :; do
    for item in $PLAN; do
        kind=${item%%:*}
        WINDOWS=${item##*:}
        elapsed=$((SECONDS - start))
        if [ $((elapsed + last)) -ge "$LIMIT" ]; then
            break 2
        fi
        name=$(printf 'gate-%02d-%s-w%s' "$i" "$kind" "$WINDOWS")
        args=(gate --prebuilt "$STATE/study/$kind" --threshold 1 --output-dir "/tmp/gate-runs/$name")
        if [ "${PAIRS:-3}" = auto ]; then
            args+=(--max-pairs "${MAX_PAIRS:-4}")
        else
            args+=(--min-pairs "${PAIRS:-3}" --max-pairs "${PAIRS:-3}")
        fi
        case $WINDOWS in default | gate) ;; *) args+=(--windows "$WINDOWS") ;; esac
        t0=$SECONDS
        (cd "$STATE/checkout" && ENERGY_REQUIRE_GPU=1 "$CE" "${args[@]}" > "$OUT/study/gates/$name.txt" 2> "$OUT/study/gates/$name.err")
        code=$?
        last=$((SECONDS - t0))
        echo "$name exit $code ${last} s" >> "$OUT/study/index.txt"
        cp "/tmp/gate-runs/$name/ab.json" "$OUT/study/gates/$name.ab.json" 2>/dev/null
        # Each run's bench log (per benchmark: windows, launches, seconds): where a gate's time goes;
        # and its result files (each window's energy and marks), without traces and plots.
        (cd "/tmp/gate-runs/$name" && find . \( -name bench.log -o -path '*/energy/new/*.json' \) -print0 \
            | tar czf "$OUT/study/gates/$name.logs.tgz" --null -T -)
        i=$((i + 1))
    done
done
gpu_state > "$OUT/study/gpu-after.csv"
tar czf "$OUT/study.tgz" -C "$OUT" study && rm -rf "$OUT/study"
cat "$OUT/../index.txt" 2>/dev/null
tar xzf "$OUT/study.tgz" -O study/index.txt
