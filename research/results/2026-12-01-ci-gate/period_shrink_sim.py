#!/usr/bin/env python3
"""Simulated gates with a known truth, judged by prior_replay.py's `mean` rule (the gate's: a
period effect fitted per benchmark from three pairs on) and its `shrink` rule (each benchmark's
period estimate shrunk towards zero by tau2 / (tau2 + its variance), tau2 the benchmarks' excess
of squared period estimates over their variances; df less the share fitted). Nine benchmarks a
gate, pair sd drawn from 0.2-1.0 %, runs differing 1-3 times their windows; scenarios: no period
effect, a period of 0.7-1.5 % in three benchmarks (call 10's board), 0.4 % in all. Prints the
share of benchmark-looks called significant rises under no change (nominal 1 %) and of +2 %
changes called regressions at a 1 % threshold, after 2, 3 and 4 pairs (ABAB orders).
  period_shrink_sim.py [SEED]
"""
import math
import random
import sys

from prior_replay import moderated


def simulate(scenario, truth=0.0, gates=3000, benchmarks=9, pairs=4):
    """Per rule, the share of benchmark-looks after 2, 3 and 4 pairs called significant rises
    (truth 0) or regressions (a true change)."""
    hits = {'mean': [0, 0, 0], 'shrink': [0, 0, 0]}
    looked = [0, 0, 0]
    orders = [-1, 1, -1, 1][:pairs]
    for _ in range(gates):
        sig = [random.choice([0.2, 0.3, 0.4, 0.6, 1.0]) for _ in range(benchmarks)]
        within = [s / random.uniform(1, 3) for s in sig]  # runs differ 1-3 times their windows
        period = [0.0] * benchmarks
        if scenario == 'period3':
            for b in range(3):
                period[b] = random.choice([0.7, 1.0, 1.5])
        if scenario == 'periodall':
            period = [0.4] * benchmarks
        data = {
            f'b{b}': [dict(difference_pct=truth + orders[k] * period[b] + random.gauss(0, sig[b]),
                           order='BA' if orders[k] > 0 else 'AB', within_run_se_pct=within[b]) for k in range(pairs)]
            for b in range(benchmarks)
        }
        for look in (2, 3, 4):
            figs = {b: p[:look] for b, p in data.items()}
            for rule in hits:
                res = moderated(figs, 1.0, est=rule)
                hits[rule][look - 2] += sum((r['lower'] > 0) if truth == 0 else r['reg'] for r in res.values())
            looked[look - 2] += benchmarks
    return {rule: [f"{h / n * 100:.2f}%" for h, n in zip(v, looked)] for rule, v in hits.items()}


def main():
    random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
    for scenario in ['none', 'period3', 'periodall']:
        print(scenario, 'A/A significant rises (lower bound > 0, 1 % nominal) by look 2,3,4:', simulate(scenario))
    for scenario in ['none', 'period3']:
        print(scenario, '+2 % caught by look 2,3,4:', simulate(scenario, truth=100 * math.log(1.02), gates=1500))


if __name__ == '__main__':
    main()
