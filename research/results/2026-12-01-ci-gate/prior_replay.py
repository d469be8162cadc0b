#!/usr/bin/env python3
"""Replays the gate study's stored gates (raw/callN.tgz) with another estimate of the prior
in the moderated variance (energy_results::ab::paired_changes_weighted): 'mean' (the gate's
rule: the others' df-weighted mean ratio of spread to within-run variance), 'median',
'logmean' (geometric mean, biased low), 'logc' (geometric mean corrected by E[log(chi2_d/d)],
Smyth 2004's way), 'trim' (the largest left out); or 'common': the mean prior, but one period
effect for every benchmark of the gate (weighted by 1 / within-run variance; each benchmark's
df less its share of that fit) instead of one per benchmark. Each gate is judged again pair by pair with
settling as the gate does (target, regression, one-sided 95 % upper bound below the threshold);
where a replay wants a pair the gate did not run, the benchmark is judged on what it ran and
counted as cut. A prototype in Python, not the page's Rust: the t quantiles by bisection.
  prior_replay.py CALLS ESTIMATES     e.g. prior_replay.py 26,27,28 mean,logc,logmean
  prior_replay.py CALLS looks         every gate judged after each pair (no settling), 'mean'
                                      against 'common': A/A false alarms, +2 % caught, by look
Gates whose pairs lack within-run intervals (before call 4's harness) are left out.
"""
import json,math,collections,statistics,sys,os,tarfile
def betacf(a,b,x):
    MAXIT=300;EPS=3e-14;FPMIN=1e-300
    qab=a+b;qap=a+1;qam=a-1;c=1;d=1-qab*x/qap
    if abs(d)<FPMIN:d=FPMIN
    d=1/d;h=d
    for m in range(1,MAXIT+1):
        m2=2*m;aa=m*(b-m)*x/((qam+m2)*(a+m2))
        d=1+aa*d; d=FPMIN if abs(d)<FPMIN else d
        c=1+aa/c; c=FPMIN if abs(c)<FPMIN else c
        d=1/d;h*=d*c
        aa=-(a+m)*(qab+m)*x/((a+m2)*(qap+m2))
        d=1+aa*d; d=FPMIN if abs(d)<FPMIN else d
        c=1+aa/c; c=FPMIN if abs(c)<FPMIN else c
        d=1/d;de=d*c;h*=de
        if abs(de-1)<EPS:break
    return h
def ibeta(a,b,x):
    if x<=0:return 0
    if x>=1:return 1
    bt=math.exp(math.lgamma(a+b)-math.lgamma(a)-math.lgamma(b)+a*math.log(x)+b*math.log(1-x))
    if x<(a+1)/(a+b+2): return bt*betacf(a,b,x)/a
    return 1-bt*betacf(b,a,1-x)/b
def tcdf(t,df):
    x=df/(df+t*t); p=0.5*ibeta(df/2,0.5,x)
    return 1-p if t>0 else p
_q={}
def tq(p,df):
    key=(p,round(df,6))
    if key in _q:return _q[key]
    lo,hi=0,1000
    for _ in range(200):
        mid=(lo+hi)/2
        if tcdf(mid,df)<p: lo=mid
        else: hi=mid
    _q[key]=(lo+hi)/2; return _q[key]

def digamma(x):
    r=0
    while x<6: r-=1/x; x+=1
    f=1/(x*x)
    return r+math.log(x)-0.5/x-f*(1/12-f*(1/120-f*(1/252-f*(1/240-f/132))))
def dig_bias(d):
    # E[log(chi2_d/d)]
    return digamma(d/2)-math.log(d/2)
def period_fit(d,orders):
    n=len(d);mean=sum(d)/n
    both=any(s>0 for s in orders) and any(s<0 for s in orders)
    if n<3 or not both:
        var=sum((x-mean)**2 for x in d)/(n-1); return mean,var,n-1,n
    ss=sum(orders); sd=sum(s*x for s,x in zip(orders,d)); sumd=mean*n; det=n*n-ss*ss
    ch=(n*sumd-ss*sd)/det; per=(n*sd-ss*sumd)/det
    rss=sum((x-ch-s*per)**2 for x,s in zip(d,orders))
    return ch,rss/(n-2),n-2,det/n

def common_fit(figs):
    # one period effect for every benchmark, from those with both orders and 3 pairs or more,
    # each weighted by 1 / its within-run variance of a difference
    num=den=0.0; wsum=0
    for b,pairs in figs.items():
        d=[p['difference_pct'] for p in pairs]; o=[1 if p['order']=='BA' else -1 for p in pairs]
        if len(d)<3 or not(any(x>0 for x in o) and any(x<0 for x in o)): continue
        w=1/(sum(p['within_run_se_pct']**2 for p in pairs)/len(pairs))
        sb=sum(o)/len(o); db=sum(d)/len(d)
        num+=w*sum((x-sb)*(y-db) for x,y in zip(o,d)); den+=w*sum((x-sb)**2 for x in o)
    return (num/den) if den>0 else None, den

DEN=[0.0]
def moderated(figs,thr,prior_df=2.0,est='mean'):
    sp={}
    delta=None
    if est=='common': delta,DEN[0]=common_fit(figs)
    tau2=None
    if est=='shrink':
        ests=[]
        for b,pairs in figs.items():
            d=[p['difference_pct'] for p in pairs]; o=[1 if p['order']=='BA' else -1 for p in pairs]
            n=len(d)
            if n<3 or not(any(x>0 for x in o) and any(x<0 for x in o)): continue
            ch,var,df,eff=period_fit(d,o)
            ss=sum(o); sd_=sum(x*y for x,y in zip(o,d)); det=n*n-ss*ss
            per=(n*sd_-ss*sum(d))/det
            ests.append((per, var*n/det))
        if ests:
            tau2=max(0.0, sum(p*p-v for p,v in ests)/len(ests))
    for b,pairs in figs.items():
        d=[p['difference_pct'] for p in pairs]; o=[1 if p['order']=='BA' else -1 for p in pairs]
        w=sum(p['within_run_se_pct']**2 for p in pairs)/len(pairs)
        n=len(d)
        if est=='shrink' and tau2 is not None and n>=3 and any(x>0 for x in o) and any(x<0 for x in o):
            ss=sum(o); sd_=sum(x*y for x,y in zip(o,d)); det=n*n-ss*ss
            mean=sum(d)/n
            per=(n*sd_-ss*sum(d))/det
            _,v0,_,_=period_fit(d,o)
            vdel=v0*n/det
            h=tau2/(tau2+vdel) if tau2+vdel>0 else 0.0
            per*=h
            sb=ss/n; ch=mean-sb*per
            rss=sum((y-ch-x*per)**2 for x,y in zip(o,d))
            df=n-1-h; var=rss/df; eff=n/(1+h*(n*n/det-1))
        elif est=='shrink':
            mean=sum(d)/n; var=sum((x-mean)**2 for x in d)/(n-1); ch,df,eff=mean,n-1,n
        elif est=='common' and delta is not None and n>=3:
            sb=sum(o)/n; ch=sum(d)/n-sb*delta
            rss=sum((y-ch-x*delta)**2 for x,y in zip(o,d))
            lev=sum((x-sb)**2 for x in o)/w/DEN[0] if DEN[0]>0 else 0  # this benchmark's share of the period's fit
            df=n-1-lev; var=rss/df; eff=n
        elif est=='common':
            mean=sum(d)/n; var=sum((x-mean)**2 for x in d)/(n-1); ch,df,eff=mean,n-1,n
        else:
            ch,var,df,eff=period_fit(d,o)
        sp[b]=(ch,var,df,eff,w)
    out={}
    tot=sum(s[2] for s in sp.values())
    for b,(ch,var,df,eff,w) in sp.items():
        others=[(s[2],s[1]/s[4]) for k,s in sp.items() if k!=b]
        odf=tot-df; pdf=min(prior_df,odf)
        if est in ('mean','common','shrink'): r=sum(a*e for a,e in others)/odf
        elif est=='median':
            r=statistics.median([e for a,e in others])
        elif est=='logmean':
            r=math.exp(sum(a*math.log(max(e,1e-12)) for a,e in others)/odf)
        elif est=='logc':
            r=math.exp(sum(a*(math.log(max(e,1e-12))-dig_bias(a)) for a,e in others)/odf)
        elif est=='trim':  # drop largest then mean
            o2=sorted(others,key=lambda x:x[1])[:-1] if len(others)>2 else others
            r=sum(a*e for a,e in o2)/sum(a for a,e in o2)
        prior=r*w
        v=(pdf*prior+df*var)/(pdf+df); dfm=pdf+df
        se=math.sqrt(v/eff)
        det=(tq(0.99,dfm)+tq(0.95,dfm))*se
        change=100*(math.exp(ch/100)-1)
        lower=ch-tq(0.99,dfm)*se
        reg= lower>0 and change>thr
        upper=ch+tq(0.95,dfm)*se
        out[b]=dict(ch=change,det=det,reg=reg,upper=upper,se=se,df=dfm,lower=lower)
    return out

RAW=os.path.join(os.path.dirname(os.path.abspath(__file__)),'raw')
def gates(calls):
    for c in calls:
        with tarfile.open(os.path.join(RAW,f'call{c}.tgz')) as tar:
            for m in sorted(tar.getmembers(),key=lambda m:m.name):
                if m.name.startswith('study/gates/') and m.name.endswith('.ab.json'):
                    d=json.load(tar.extractfile(m))
                    if any('within_run_se_pct' not in p or p['within_run_se_pct'] is None for ch in d['changes'] for p in ch['pairs']):
                        continue
                    yield c,m.name.split('/')[-1].split('-')[2],d

def replay(d,est,min_pairs=2,max_pairs=4):
    thr=d['threshold_pct'];tgt=d['target_pct'];thr_log=100*math.log1p(thr/100)
    full={ch['id']:ch['pairs'] for ch in d['changes']}
    ran={b:len(p) for b,p in full.items()}
    settled={};verd={};cut=0
    for k in range(2,max_pairs+1):
        figs={b:(p[:settled[b]] if b in settled else p[:k]) for b,p in full.items()}
        # data missing? a running benchmark with fewer than k pairs as run
        short=[b for b in full if b not in settled and ran[b]<k]
        if short:
            cut+=len(short)
            # judge them at what they have: freeze
            for b in short: settled[b]=ran[b]
            figs={b:(p[:settled[b]] if b in settled else p[:k]) for b,p in full.items()}
        res=moderated(figs,thr,est=est)
        for b,r in res.items():
            if b in settled and b not in short: continue
            verd[b]=r
            if b in short: continue
            if r['det']<=tgt or r['reg'] or r['upper']<thr_log:
                settled[b]=k
        if all(b in settled for b in full): break
    pairs_run=max(settled.get(b,max_pairs) for b in full)
    bench_pairs=sum(settled.get(b,max_pairs) for b in full)
    return verd,pairs_run,bench_pairs,cut

calls=[int(x) for x in sys.argv[1].split(',')]
if sys.argv[2]=='looks':
    for est in ['mean','common','shrink']:
        fa=collections.Counter(); nn=collections.Counter(); p2=collections.Counter(); n2=collections.Counter()
        for c,kind,d in gates(calls):
            full={ch['id']:ch['pairs'] for ch in d['changes']}
            kmax=max(len(p) for p in full.values())
            for k in range(2,kmax+1):
                figs={b:p[:k] for b,p in full.items() if len(p)>=2}
                res=moderated(figs,d['threshold_pct'],est=est)
                for b,r in res.items():
                    if len(full[b])<k: continue
                    if kind=='aa': fa[k]+=r['reg']; nn[k]+=1
                    if kind=='p2': p2[k]+=r['reg']; n2[k]+=1
        print(est,'A/A false alarms by look',{k:f"{fa[k]}/{nn[k]}" for k in sorted(nn)},'+2 % caught',{k:f"{p2[k]}/{n2[k]}" for k in sorted(n2)})
    sys.exit()
for est in sys.argv[2].split(','):
    tally=collections.defaultdict(lambda:[0,0,0,0,0])
    for c,kind,d in gates(calls):
        v,pr,bp,cut=replay(d,est)
        t=tally[kind]; t[0]+=sum(r['reg'] for r in v.values()); t[1]+=len(v); t[2]+=bp; t[3]+=pr; t[4]+=cut
    print(est,{k:f"reg {t[0]}/{t[1]} benchpairs/bench {t[2]/t[1]:.2f} cut {t[4]}" for k,t in sorted(tally.items())})
