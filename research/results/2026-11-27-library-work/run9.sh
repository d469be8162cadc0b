#!/bin/bash
# Issue 43's ninth GPU run: the references wait at the harness's cadence. Run 8 showed a
# candle call 6 % slower when waited for every 50 ms than every 150 ms (one window), and
# burn's references of runs 6 and 8 waited every 50 ms. Here burn (and, with `candle`,
# candle) against references waiting every 150 ms (--sync-ms 150), interleaved ref / harness /
# ref, twice, with one reference every 50 ms before; then burn with `any_stream` alone, which
# run 8 measured with exit 0 and a CV of 340 % (now refused: the windows disagree).
# Binaries in gpu-bin/ (stripped, xz): burn_matmul, burn_reference [candle_matmul,
# candle_reference]. Clocks read, never set.
#   bash docs/results/2026-11-27-library-work/run9.sh burn [candle]
set -u
B=$PWD/gpu-bin
cd "$B" && xz -d -f ./*.xz && chmod +x ./* && cd - > /dev/null
CU13=$(dirname "$(find / -name 'libcublas.so.13*' -path '*cu13*' 2>/dev/null | head -n 1)")
export LD_LIBRARY_PATH="$CU13${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
W=$(mktemp -d)
cd "$W"
export ENERGY_REQUIRE_GPU=1
q() { nvidia-smi --query-gpu=name,uuid,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,pstate --format=csv,noheader; }
echo "name, uuid, pci bus id, driver, sm, max sm, mem, limit, temp, pstate" > gpu.csv
q >> gpu.csv
ref() { timeout 60 "$B/$1_reference" --seconds 8 --poll-us 5000 --sync-ms "$2" --out "ref-$1-$2ms-$3.json" > "ref-$1-$2ms-$3.log" 2>&1; echo "ref $1 every $2 ms ($3): exit $? $(grep -oE '"(energy|dynamic|time)_per_call_[js]": ?[0-9.e-]+' "ref-$1-$2ms-$3.json" | tr -d '\n ')"; }
bench() { CARGO_TARGET_DIR=$W/t-$2 timeout 150 "$B/$1" --bench "$3" > "$2.log" 2>&1; echo "$2: exit $?"; grep -E "^error|time per launch|energy per launch|dynamic per launch" "$2.log" | head -n 4; }
save() { find . -name '*.trace.csv' -exec gzip -9 -n {} +; cp gpu.csv "$OUT/gpu.csv"; tar czf "$OUT/run9.tgz" gpu.csv ./*.log ./*.json $(find . -path '*/energy/new/*' \( -name '*.json' -o -name '*.trace.csv.gz' \)); }
for lib in "$@"; do
  case $lib in burn) filter='^burn_matmul/' ;; candle) filter='^candle_matmul_wait/' ;; *) continue ;; esac
  ref "$lib" 50 0
  for cycle in 1 2; do
    ref "$lib" 150 "$cycle-a"; bench "${lib}_matmul" "$lib-$cycle" "$filter"; ref "$lib" 150 "$cycle-b"
  done
  [ "$lib" = burn ] && bench burn_matmul burn-any-stream 'burn_matmul_any_stream'
  save
done
q >> gpu.csv
save
