#!/bin/bash
# Issue 35's GPU runs, in the protocol's order (docs/results/model-protocol.md). Prepared on
# 2026-11-25, NOT YET RUN. On the GPU machine, beside the two bench binaries
# (`cargo bench --no-run --bench model --bench heldout`, copied as ./model and ./heldout)
# and ncu-metrics.txt (docs/results/2026-11-24-model-h100-h200/ncu-metrics.txt):
#   bash model-protocol-run.sh model-energy | model-ncu      (training: both regimes)
#   bash model-protocol-run.sh heldout-energy | heldout-ncu  (only after the protocol is frozen and committed)
# Each phase writes one tarball under $OUT. Clocks are read, never set.
set -u
cd "$(dirname "$0")"
export ENERGY_REQUIRE_GPU=1 CARGO_TARGET_DIR=$PWD/target
phase=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv > "$OUT/gpu-$phase.csv"
# The held-out profiles also count the work the model has no term for (the protocol's
# candidate terms = energy_harness::unstable::explain::UNPRICED_WORK).
CANDIDATES=smsp__inst_executed_pipe_tensor_op_gmma.sum,l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum,smsp__inst_executed_pipe_tensor_op_dmma.sum
profile() { # profile BINARY METRICS: each benchmark under ncu, its --test launches
  local bin=$1 metrics=$2 n s
  mkdir -p ncu
  for n in $(./$bin --bench --list 2>/dev/null | grep ': benchmark' | grep '/energy' | cut -d/ -f1); do
    s=$(date +%s)
    timeout 100 ncu --clock-control none --cache-control none --csv --page raw --print-units base \
      --metrics "$metrics" ./$bin --bench --test --exact "$n/energy" > ncu/$n.csv 2> ncu/$n.err
    echo "$n rc=$? $(( $(date +%s) - s )) s $(grep -c '^"' ncu/$n.csv) rows" | tee -a ncu/summary.txt
  done
}
start=$(date +%s)
case $phase in
  model-energy)   ./model --bench > model.log 2>&1; echo "exit $? after $(( $(date +%s) - start )) s" >> model.log
                  tar czf "$OUT/model-energy.tgz" model.log target/energy ;;
  model-ncu)      profile model "$(paste -sd, ncu-metrics.txt)"; tar czf "$OUT/model-ncu.tgz" ncu ;;
  heldout-energy) ./heldout --bench > heldout.log 2>&1; echo "exit $? after $(( $(date +%s) - start )) s" >> heldout.log
                  tar czf "$OUT/heldout-energy.tgz" heldout.log target/energy ;;
  heldout-ncu)    profile heldout "$(paste -sd, ncu-metrics.txt),$CANDIDATES"; tar czf "$OUT/heldout-ncu.tgz" ncu ;;
  *) echo "unknown phase $phase" >&2; exit 2 ;;
esac
