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
import random, math, sys, os
os.chdir(os.path.dirname(os.path.abspath(__file__)))
src=open('prior_replay.py').read().split("calls=[int(x)")[0]
ns={'__file__':'prior_replay.py'}; exec(src, ns)
moderated=ns['moderated']
random.seed(int(sys.argv[1]) if len(sys.argv)>1 else 1)
def sim(scenario, truth=0.0, G=3000, B=9, K=4):
    fa={'mean':[0,0,0],'shrink':[0,0,0]}  # looks 2,3,4 counts
    n={2:0,3:0,4:0}
    for g in range(G):
        sig=[random.choice([0.2,0.3,0.4,0.6,1.0]) for _ in range(B)]
        within=[s/random.uniform(1,3) for s in sig]   # runs differ 1-3x their windows
        per=[0.0]*B
        if scenario=='period3': 
            for b in range(3): per[b]=random.choice([0.7,1.0,1.5])
        if scenario=='periodall': per=[0.4]*B
        orders=[-1,1,-1,1][:K]
        data={f'b{b}':[dict(difference_pct=truth+orders[k]*per[b]+random.gauss(0,sig[b]), order='BA' if orders[k]>0 else 'AB', within_run_se_pct=within[b]) for k in range(K)] for b in range(B)}
        for k in (2,3,4):
            figs={b:p[:k] for b,p in data.items()}
            for est in ('mean','shrink'):
                res=moderated(figs,1.0,est=est)
                fa[est][k-2]+=sum((r['lower']>0) if truth==0 else r['reg'] for r in res.values())
            n[k]+=B
    return {e:[f"{v[i]/n[i+2]*100:.2f}%" for i in range(3)] for e,v in fa.items()}
for sc in ['none','period3','periodall']:
    print(sc,'A/A significant rises (lower bound > 0, 1 % nominal) by look 2,3,4:',sim(sc))
for sc in ['none','period3']:
    print(sc,'+2 % caught by look 2,3,4:',sim(sc,truth=100*math.log(1.02),G=1500))
