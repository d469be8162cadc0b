#!/usr/bin/env python3
"""Replays stored gates (raw/callN.tgz) with fewer windows per benchmark in the pairs after the
second: each run's energy per launch made again from its result files' first K windows (the
windows as measured: a prefix, as a shorter run would have kept), its within-run interval from
those windows, then the gate's rule (energy_results::ab: moderated variance with the others'
mean ratio as 2 df, the period effect per benchmark from three pairs on, settling on the target,
a regression, or the one-sided 95 % upper bound below the threshold), pair by pair. GPU time from
a cost model of a run: FIXED_S + per benchmark (BENCH_S + WINDOW_S per window), the same model
for every rule, so the rules compare; the gates' measured times are printed beside. A prototype
(the t quantiles by bisection); its K=6 reproduces the gates' own verdicts.
  late_windows_replay.py CALLS K[,K…]      e.g. late_windows_replay.py 26,27,28 6,4,3,2
"""
import io, json, math, os, sys, tarfile, collections

FIXED_S, BENCH_S, WINDOW_S = 0.5, 0.35, 0.1016
RAW = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'raw')


def betacf(a, b, x):
    qab, qap, qam = a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > 1e-300 else 1e-300)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1 + aa * d
            d = 1 / (d if abs(d) > 1e-300 else 1e-300)
            c = 1 + aa / c
            c = c if abs(c) > 1e-300 else 1e-300
            h *= d * c
        if abs(d * c - 1) < 3e-14:
            break
    return h


def ibeta(a, b, x):
    if x <= 0 or x >= 1:
        return max(0.0, min(1.0, x))
    bt = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x))
    return bt * betacf(a, b, x) / a if x < (a + 1) / (a + b + 2) else 1 - bt * betacf(b, a, 1 - x) / b


_q = {}


def tq(p, df):
    key = (p, round(df, 6))
    if key not in _q:
        lo, hi = 0.0, 1000.0
        for _ in range(200):
            mid = (lo + hi) / 2
            x = df / (df + mid * mid)
            if 1 - 0.5 * ibeta(df / 2, 0.5, x) < p:
                lo = mid
            else:
                hi = mid
        _q[key] = (lo + hi) / 2
    return _q[key]


def period_fit(d, o):
    n = len(d)
    mean = sum(d) / n
    if n < 3 or not (any(s > 0 for s in o) and any(s < 0 for s in o)):
        return mean, sum((x - mean) ** 2 for x in d) / (n - 1), n - 1, n
    ss, sd = sum(o), sum(s * x for s, x in zip(o, d))
    det = n * n - ss * ss
    ch = (n * mean * n - ss * sd) / det
    per = (n * sd - ss * mean * n) / det
    rss = sum((x - ch - s * per) ** 2 for x, s in zip(d, o))
    return ch, rss / (n - 2), n - 2, det / n


def judge(figs, thr, prior_df=2.0):
    sp = {}
    for b, pairs in figs.items():
        d = [p[0] for p in pairs]
        o = [p[1] for p in pairs]
        ch, var, df, eff = period_fit(d, o)
        sp[b] = (ch, var, df, eff, sum(p[2] ** 2 for p in pairs) / len(pairs))
    tot = sum(s[2] for s in sp.values())
    weighted = sum(s[2] * s[1] / s[4] for s in sp.values())
    out = {}
    for b, (ch, var, df, eff, w) in sp.items():
        odf = tot - df
        pdf = min(prior_df, odf)
        prior = (weighted - df * var / w) / odf * w if odf > 0 else 0
        v = (pdf * max(prior, 0) + df * var) / (pdf + df)
        dfm = pdf + df
        se = math.sqrt(v / eff)
        out[b] = dict(det=(tq(0.99, dfm) + tq(0.95, dfm)) * se,
                      reg=ch - tq(0.99, dfm) * se > 0 and 100 * math.expm1(ch / 100) > thr,
                      upper=ch + tq(0.95, dfm) * se)
    return out


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
    pairs = {}  # benchmark -> list of (difference, order, se) by pair
    for k in range(1, max_pairs + 1):
        r1, r2 = runs.get(2 * k - 1), runs.get(2 * k)
        if not r1 or not r2:
            break
        a, b = (r1, r2) if r1[0] == 'A' else (r2, r1)
        order = -1 if r1[0] == 'A' else 1
        for bench in set(a[1]) & set(b[1]):
            kw = 6 if k <= 2 else k_late
            (ea, sa), (eb, sb) = energy(a[1][bench], kw), energy(b[1][bench], kw)
            pairs.setdefault(bench, []).append((k, 100 * math.log(eb / ea), order, math.hypot(sa, sb)))
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
        figs = {b: [p[1:] for p in pairs[b][:settled.get(b, k)]] for b in benches}
        res = judge(figs, thr)
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
