#!/usr/bin/env bash
# `cargo energy slurm` against a real Slurm on this machine (cargo-energy/tests/slurm_cluster.rs:
# three nodes, gres GPUs, simulated boards; a campaign gathered and checked against a local run;
# a shard cancelled, refused, reported with --partial and run again). Outside CI's budget: the
# example benches' optimized build and the campaigns in real time take several minutes. Needs
# root (slurmd, mknod); installs Debian's slurm-wlm when missing. The last log is kept:
# research/results/slurm-test/last.log (written whole at the end), with the second campaign's
# manifest, its reports (partial, then complete) and its directory's layout beside it.
#
#   bash scripts/slurm-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
LOG=research/results/slurm-test/last.log
mkdir -p "$(dirname "$LOG")"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm >/dev/null
fi
exec > >(tee "$LOG.partial") 2>&1
echo "# scripts/slurm-test.sh"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "commit: $(git rev-parse --short HEAD)$([ -z "$(git status --porcelain -- cargo-energy energy-results energy-harness)" ] || echo ' (with uncommitted changes)')"
echo "machine: $(nproc) cores, $(uname -sm); $(slurmctld -V); $(munge --version 2>&1 | head -n 1)"
start=$SECONDS
SLURM_TEST_KEEP="$PWD/$(dirname "$LOG")" cargo test -p cargo-energy --test slurm_cluster -- --ignored --nocapture --test-threads 1
echo "slurm test: $((SECONDS - start)) s in all (the build included)"
mv "$LOG.partial" "$LOG"
