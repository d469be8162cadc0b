#!/usr/bin/env python3
"""Replays stored gates (raw/callN.tgz) with fewer windows per benchmark in the pairs after the
second: each run's energy per launch made again from its result files' first K windows (the
windows as measured: a prefix, as a shorter run would have kept), its within-run interval from
those windows, then the gate's rule (energy_results::ab: moderated variance with the others'
mean ratio as 2 df, the period effect per benchmark from three pairs on, settling on the target,
a regression, or the one-sided 95 % upper bound below the threshold), pair by pair. GPU time from
a cost model of a run: FIXED_S + per benchmark (BENCH_S + WINDOW_S per window), the same model
for every rule, so the rules compare; the gates' measured times are printed beside. A prototype
(the judgement is prior_replay.py's `mean` rule); its K=6 reproduces the gates' own verdicts.
  late_windows_replay.py CALLS K[,K…]      e.g. late_windows_replay.py 26,27,28 6,4,3,2
"""
import collections
import io
import json
import math
import os
import sys
import tarfile

from prior_replay import RAW, moderated

FIXED_S, BENCH_S, WINDOW_S = 0.5, 0.35, 0.1016


def run_figures(tar, member):
    """{run number: (side, {benchmark: [energy per launch of each window]})} from a gate's logs."""
    inner = tarfile.open(fileobj=io.BytesIO(tar.extractfile(member).read()))
    runs = {}
    for m in inner.getmembers():
        if not (m.name.endswith('_energy.json') and '/energy/new/' in m.name):
            continue
        r = json.load(inner.extractfile(m))
        folder = m.name.split('/')[1]  # run-03-B
        num, side = int(folder.split('-')[1]), folder.split('-')[2]
        runs.setdefault(num, (side, {}))[1][r['id']] = [w['energy_j'] / w['launches'] for w in r['windows']]
    return runs


def energy(windows, k):
    e = windows[:k]
    mean = sum(e) / len(e)
    sd = math.sqrt(sum((x - mean) ** 2 for x in e) / (len(e) - 1))
    return mean, 100 * sd / math.sqrt(len(e)) / mean


def replay(runs, d, k_late, max_pairs=4):
    thr, tgt = d['threshold_pct'], d['target_pct']
    thr_log = 100 * math.log1p(thr / 100)
    pairs = {}  # benchmark -> its pairs' figures, as prior_replay.moderated takes them
    for k in range(1, max_pairs + 1):
        r1, r2 = runs.get(2 * k - 1), runs.get(2 * k)
        if not r1 or not r2:
            break
        a, b = (r1, r2) if r1[0] == 'A' else (r2, r1)
        order = -1 if r1[0] == 'A' else 1
        for bench in set(a[1]) & set(b[1]):
            kw = 6 if k <= 2 else k_late
            (ea, sa), (eb, sb) = energy(a[1][bench], kw), energy(b[1][bench], kw)
            pairs.setdefault(bench, []).append(
                dict(difference_pct=100 * math.log(eb / ea), order='BA' if order > 0 else 'AB',
                     within_run_se_pct=math.hypot(sa, sb)))
    benches = sorted(pairs)
    settled, verdict, cut = {}, {}, 0
    cost = 0.0
    for k in range(1, max_pairs + 1):
        running = [b for b in benches if b not in settled]
        kw = 6 if k <= 2 else k_late
        cost += 2 * (FIXED_S + len(running) * (BENCH_S + WINDOW_S * kw))
        if k < 2:
            continue
        short = [b for b in running if len(pairs[b]) < k]
        cut += len(short)
        for b in short:
            settled[b] = len(pairs[b])
        figs = {b: pairs[b][:settled.get(b, k)] for b in benches}
        res = moderated(figs, thr)
        for b in running:
            verdict[b] = res[b]
            if b in short:
                continue
            r = res[b]
            if r['det'] <= tgt or r['reg'] or r['upper'] < thr_log:
                settled[b] = k
        if all(b in settled for b in benches):
            break
    return verdict, cost, len(benches), cut


def main():
    calls = [int(x) for x in sys.argv[1].split(',')]
    ks = [int(x) for x in sys.argv[2].split(',')]
    gates = []
    for c in calls:
        with tarfile.open(os.path.join(RAW, f'call{c}.tgz')) as tar:
            members = {m.name: m for m in tar.getmembers()}
            for name in sorted(members):
                if name.endswith('.ab.json'):
                    logs = name.replace('.ab.json', '.logs.tgz')
                    if logs not in members:
                        continue
                    d = json.load(tar.extractfile(members[name]))
                    gates.append((name.split('-')[2], d, run_figures(tar, members[logs])))
    for k in ks:
        tally = collections.defaultdict(lambda: [0, 0, 0.0, 0.0, 0, 0])
        for kind, d, runs in gates:
            v, cost, n, cut = replay(runs, d, k)
            t = tally[kind]
            t[0] += sum(r['reg'] for r in v.values())
            t[1] += len(v)
            t[2] += 10 * cost / n
            t[3] += 10 * d['wall_s'] / n
            t[4] += 1
            t[5] += cut
        print(f'K={k}:', '; '.join(f"{kind} {t[0]}/{t[1]} regressions, model {t[2] / t[4]:.0f} s per 10 (measured {t[3] / t[4]:.0f} s), cut {t[5]}"
                                    for kind, t in sorted(tally.items())))


if __name__ == '__main__':
    main()
