#!/usr/bin/env python3
"""Replays the gate study's stored gates (raw/callN.tgz) with another estimate of the prior
in the moderated variance (energy_results::ab::paired_changes_weighted): 'mean' (the gate's
rule: the others' df-weighted mean ratio of spread to within-run variance), 'median',
'logmean' (geometric mean, biased low), 'logc' (geometric mean corrected by E[log(chi2_d/d)],
Smyth 2004's way), 'trim' (the largest left out); or 'common': the mean prior, but one period
effect for every benchmark of the gate (weighted by 1 / within-run variance; each benchmark's
df less its share of that fit) instead of one per benchmark; or 'shrink': the mean prior, each
benchmark's period estimate shrunk towards zero by tau2 / (tau2 + its variance), tau2 the
benchmarks' mean excess of squared estimates over their variances (df less the share fitted).
Each gate is judged again pair by pair with settling as the gate does (target, regression, one-sided 95 % upper bound below the threshold);
where a replay wants a pair the gate did not run, the benchmark is judged on what it ran and
counted as cut. A prototype in Python, not the page's Rust: the t quantiles by bisection.
  prior_replay.py CALLS ESTIMATES     e.g. prior_replay.py 26,27,28 mean,logc,logmean
  prior_replay.py CALLS looks         every gate judged after each pair (no settling), 'mean',
                                      'common', 'shrink': A/A false alarms, +2 % caught, by look
Imported by late_windows_replay.py and period_shrink_sim.py for its t quantiles and judgement.
Gates whose pairs lack within-run intervals (before call 4's harness) are left out.
"""
import collections
import json
import math
import os
import statistics
import sys
import tarfile


def betacf(a, b, x):
    qab, qap, qam = a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > 1e-300 else 1e-300)
    h = d
    for m in range(1, 301):
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
    """The regularized incomplete beta function I_x(a, b) (Numerical Recipes' continued fraction)."""
    if x <= 0 or x >= 1:
        return max(0.0, min(1.0, x))
    bt = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x))
    return bt * betacf(a, b, x) / a if x < (a + 1) / (a + b + 2) else 1 - bt * betacf(b, a, 1 - x) / b


_quantiles = {}


def tq(p, df):
    """Student's t quantile p (above 0.5) on df degrees of freedom, by bisection of its CDF."""
    key = (p, round(df, 6))
    if key not in _quantiles:
        lo, hi = 0.0, 1000.0
        for _ in range(200):
            mid = (lo + hi) / 2
            if 1 - 0.5 * ibeta(df / 2, 0.5, df / (df + mid * mid)) < p:
                lo = mid
            else:
                hi = mid
        _quantiles[key] = (lo + hi) / 2
    return _quantiles[key]


def digamma(x):
    r = 0.0
    while x < 6:
        r -= 1 / x
        x += 1
    f = 1 / (x * x)
    return r + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))


def dig_bias(d):
    """E[log(chi2_d / d)]."""
    return digamma(d / 2) - math.log(d / 2)


def series(pairs):
    """A benchmark's differences, orders (-1 AB, +1 BA) and mean within-run variance of a difference."""
    d = [p['difference_pct'] for p in pairs]
    o = [1 if p['order'] == 'BA' else -1 for p in pairs]
    return d, o, sum(p['within_run_se_pct'] ** 2 for p in pairs) / len(pairs)


def fits_period(o):
    return len(o) >= 3 and any(s > 0 for s in o) and any(s < 0 for s in o)


def period_fit(d, o):
    """energy_results::ab::period_fit: (change, variance, df, effective pairs, period, det), the
    period and det None without a fit (fewer than three pairs or one order only)."""
    n = len(d)
    mean = sum(d) / n
    if not fits_period(o):
        return mean, sum((x - mean) ** 2 for x in d) / (n - 1), n - 1, n, None, None
    ss, sd = sum(o), sum(s * x for s, x in zip(o, d))
    det = n * n - ss * ss
    ch = (n * mean * n - ss * sd) / det
    per = (n * sd - ss * mean * n) / det
    rss = sum((x - ch - s * per) ** 2 for x, s in zip(d, o))
    return ch, rss / (n - 2), n - 2, det / n, per, det


def common_fit(series_by_id):
    """One period effect for every benchmark with both orders and 3 pairs or more, each weighted by
    1 / its within-run variance of a difference: (period, the fit's weighted sum of squares)."""
    num = den = 0.0
    for d, o, w in series_by_id.values():
        if not fits_period(o):
            continue
        sb, db = sum(o) / len(o), sum(d) / len(d)
        num += sum((x - sb) * (y - db) for x, y in zip(o, d)) / w
        den += sum((x - sb) ** 2 for x in o) / w
    return (num / den if den > 0 else None), den


def shrink_tau2(series_by_id):
    """The spread of true period effects among the benchmarks: their mean excess of squared period
    estimates over those estimates' variances (at least 0), None without an estimate."""
    estimates = []
    for d, o, _ in series_by_id.values():
        _, var, _, _, per, det = period_fit(d, o)
        if per is not None:
            estimates.append((per, var * len(d) / det))
    return max(0.0, sum(p * p - v for p, v in estimates) / len(estimates)) if estimates else None


def spread(d, o, w, est, delta, den, tau2):
    """(change, variance, df, effective pairs) of one benchmark by rule `est`."""
    n = len(d)
    mean = sum(d) / n
    plain = (mean, sum((x - mean) ** 2 for x in d) / (n - 1), n - 1, n)
    if est == 'shrink':
        if tau2 is None or not fits_period(o):
            return plain
        _, v0, _, _, per, det = period_fit(d, o)
        vdel = v0 * n / det
        h = tau2 / (tau2 + vdel) if tau2 + vdel > 0 else 0.0
        per *= h
        ch = mean - sum(o) / n * per
        df = n - 1 - h
        return ch, sum((y - ch - x * per) ** 2 for x, y in zip(o, d)) / df, df, n / (1 + h * (n * n / det - 1))
    if est == 'common':
        if delta is None or n < 3:
            return plain
        sb = sum(o) / n
        ch = mean - sb * delta
        lev = sum((x - sb) ** 2 for x in o) / w / den if den > 0 else 0  # its share of the period's fit
        df = n - 1 - lev
        return ch, sum((y - ch - x * delta) ** 2 for x, y in zip(o, d)) / df, df, n
    return period_fit(d, o)[:4]


def moderated(figs, thr, prior_df=2.0, est='mean'):
    """Every benchmark's judgement: {id: dict(ch, det, reg, upper, se, df, lower)}."""
    by_id = {b: series(pairs) for b, pairs in figs.items()}
    delta, den = common_fit(by_id) if est == 'common' else (None, 0.0)
    tau2 = shrink_tau2(by_id) if est == 'shrink' else None
    sp = {b: spread(d, o, w, est, delta, den, tau2) + (w,) for b, (d, o, w) in by_id.items()}
    tot = sum(s[2] for s in sp.values())
    out = {}
    for b, (ch, var, df, eff, w) in sp.items():
        others = [(s[2], s[1] / s[4]) for k, s in sp.items() if k != b]
        odf = tot - df
        pdf = min(prior_df, odf)
        if est == 'median':
            r = statistics.median([e for _, e in others])
        elif est == 'logmean':
            r = math.exp(sum(a * math.log(max(e, 1e-12)) for a, e in others) / odf)
        elif est == 'logc':
            r = math.exp(sum(a * (math.log(max(e, 1e-12)) - dig_bias(a)) for a, e in others) / odf)
        elif est == 'trim':  # the largest left out, then the mean
            kept = sorted(others, key=lambda x: x[1])[:-1] if len(others) > 2 else others
            r = sum(a * e for a, e in kept) / sum(a for a, _ in kept)
        else:  # 'mean', 'common', 'shrink'
            r = sum(a * e for a, e in others) / odf
        v = (pdf * r * w + df * var) / (pdf + df)
        dfm = pdf + df
        se = math.sqrt(v / eff)
        lower = ch - tq(0.99, dfm) * se
        out[b] = dict(ch=100 * math.expm1(ch / 100), det=(tq(0.99, dfm) + tq(0.95, dfm)) * se,
                      reg=lower > 0 and 100 * math.expm1(ch / 100) > thr, upper=ch + tq(0.95, dfm) * se, se=se,
                      df=dfm, lower=lower)
    return out


RAW = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'raw')


def gates(calls):
    """(call, kind, ab.json) of every stored gate of `calls` whose pairs have within-run intervals."""
    for c in calls:
        with tarfile.open(os.path.join(RAW, f'call{c}.tgz')) as tar:
            for m in sorted(tar.getmembers(), key=lambda m: m.name):
                if m.name.startswith('study/gates/') and m.name.endswith('.ab.json'):
                    d = json.load(tar.extractfile(m))
                    if any(p.get('within_run_se_pct') is None for ch in d['changes'] for p in ch['pairs']):
                        continue
                    yield c, m.name.split('/')[-1].split('-')[2], d


def replay(d, est, max_pairs=4):
    """One gate judged again pair by pair with settling: (verdicts, pairs run, benchmark-pairs, cut)."""
    thr, tgt = d['threshold_pct'], d['target_pct']
    thr_log = 100 * math.log1p(thr / 100)
    full = {ch['id']: ch['pairs'] for ch in d['changes']}
    settled, verdicts, cut = {}, {}, 0
    for k in range(2, max_pairs + 1):
        # A running benchmark the gate ran fewer than k pairs: judged on what it ran, counted as cut.
        short = [b for b in full if b not in settled and len(full[b]) < k]
        cut += len(short)
        for b in short:
            settled[b] = len(full[b])
        figs = {b: p[:settled.get(b, k)] for b, p in full.items()}
        for b, r in moderated(figs, thr, est=est).items():
            if b in settled and b not in short:
                continue
            verdicts[b] = r
            if b not in short and (r['det'] <= tgt or r['reg'] or r['upper'] < thr_log):
                settled[b] = k
        if all(b in settled for b in full):
            break
    return verdicts, max(settled.get(b, max_pairs) for b in full), sum(settled.get(b, max_pairs) for b in full), cut


def looks(calls):
    for est in ['mean', 'common', 'shrink']:
        fa, nn, p2, n2 = (collections.Counter() for _ in range(4))
        for _, kind, d in gates(calls):
            full = {ch['id']: ch['pairs'] for ch in d['changes']}
            for k in range(2, max(len(p) for p in full.values()) + 1):
                figs = {b: p[:k] for b, p in full.items() if len(p) >= 2}
                for b, r in moderated(figs, d['threshold_pct'], est=est).items():
                    if len(full[b]) < k:
                        continue
                    if kind == 'aa':
                        fa[k] += r['reg']
                        nn[k] += 1
                    if kind == 'p2':
                        p2[k] += r['reg']
                        n2[k] += 1
        print(est, 'A/A false alarms by look', {k: f"{fa[k]}/{nn[k]}" for k in sorted(nn)},
              '+2 % caught', {k: f"{p2[k]}/{n2[k]}" for k in sorted(n2)})


def main():
    calls = [int(x) for x in sys.argv[1].split(',')]
    if sys.argv[2] == 'looks':
        looks(calls)
        return
    for est in sys.argv[2].split(','):
        tally = collections.defaultdict(lambda: [0, 0, 0, 0, 0])
        for _, kind, d in gates(calls):
            v, pairs_run, bench_pairs, cut = replay(d, est)
            t = tally[kind]
            t[0] += sum(r['reg'] for r in v.values())
            t[1] += len(v)
            t[2] += bench_pairs
            t[3] += pairs_run
            t[4] += cut
        print(est, {k: f"reg {t[0]}/{t[1]} benchpairs/bench {t[2] / t[1]:.2f} cut {t[4]}" for k, t in sorted(tally.items())})


if __name__ == '__main__':
    main()
