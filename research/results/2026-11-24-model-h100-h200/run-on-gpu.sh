#!/bin/bash
# Model suite on the GPU: phase "energy" measures every kernel; phase "ncu" profiles each.
set -u
cd "$(dirname "$0")"
export CARGO_TARGET_DIR=$PWD/target
phase=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $OUT/gpu-$phase.csv
if [ "$phase" = energy ]; then
  start=$(date +%s)
  ./model --bench > model.log 2>&1
  echo "exit $? after $(( $(date +%s) - start )) s" >> model.log
  tail -5 model.log
  tar czf $OUT/model-energy.tgz model.log target/energy
else
  M=$(paste -sd, model-metrics.txt)
  mkdir -p ncu
  names=$(./model --bench --list 2>/dev/null | grep ': benchmark' | cut -d/ -f1)
  for n in $names; do
    s=$(date +%s)
    timeout 100 ncu --clock-control none --cache-control none --csv --page raw --print-units base --metrics $M ./model --bench --test --exact "$n/energy" > ncu/$n.csv 2> ncu/$n.err
    echo "$n rc=$? $(( $(date +%s) - s )) s $(grep -c '^"' ncu/$n.csv) rows" | tee -a ncu/summary.txt
  done
  tar czf $OUT/model-ncu.tgz ncu
fi
