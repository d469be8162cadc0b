//! The queue's tests: claims are atomic across threads and processes, the claim order,
//! release, and the durations carried from one run to the next.

use super::*;
use std::collections::BTreeSet;

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("bench{i}")).collect()
}

fn fresh(expected: &[(&str, f64)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let expected = expected.iter().map(|(k, s)| (k.to_string(), *s)).collect();
    WorkQueue::create(dir.path(), "test-run", expected).unwrap();
    dir
}

/// Claims until the queue of `exe` is empty; the names claimed, in order.
fn drain(q: &WorkQueue) -> Vec<String> {
    let mut got = Vec::new();
    while let Some(name) = q.claim_next().unwrap() {
        q.finish(&name, true).unwrap();
        got.push(name);
    }
    got
}

#[test]
fn threads_claiming_from_one_queue_never_take_one_benchmark_twice() {
    let dir = fresh(&[]);
    let all = names(120);
    let claimed: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6)
            .map(|t| {
                let (dir, all) = (dir.path(), &all);
                s.spawn(move || {
                    let q = WorkQueue::join(dir, "exe-1", "exe", &format!("worker{t}"));
                    q.register(all).unwrap();
                    drain(&q)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let flat: Vec<&String> = claimed.iter().flatten().collect();
    let unique: BTreeSet<&String> = flat.iter().copied().collect();
    assert_eq!(flat.len(), all.len(), "each benchmark claimed once: {claimed:?}");
    assert_eq!(unique.len(), all.len());
    let state = WorkQueue::read(dir.path()).unwrap();
    assert_eq!(state.items.len(), all.len(), "six registrations, one set of items");
    assert!(state.items.iter().all(|i| i.status == ItemStatus::Done && i.worker.is_some() && i.ran_s().is_some()));
}

/// The child of `processes_claiming_from_one_queue_never_take_one_benchmark_twice`:
/// claims from `QUEUE_CHILD_DIR` until it is empty, writing each name to its own file.
#[test]
#[ignore = "a helper process of processes_claiming_from_one_queue_never_take_one_benchmark_twice"]
fn claimer_child() {
    let Some(dir) = std::env::var_os("QUEUE_CHILD_DIR") else { return };
    let dir = PathBuf::from(dir);
    let me = std::env::var("QUEUE_CHILD_NAME").unwrap();
    let q = WorkQueue::join(&dir, "exe-1", "exe", &me);
    q.register(&names(60)).unwrap();
    let got = drain(&q);
    std::fs::write(dir.join(format!("{me}.claimed")), got.join("\n")).unwrap();
}

#[cfg(unix)]
#[test]
fn processes_claiming_from_one_queue_never_take_one_benchmark_twice() {
    let dir = fresh(&[]);
    let children: Vec<_> = (0..4)
        .map(|i| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "bench::queue::tests::claimer_child", "--ignored", "--nocapture"])
                .env("QUEUE_CHILD_DIR", dir.path())
                .env("QUEUE_CHILD_NAME", format!("child{i}"))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let mut all = Vec::new();
    for i in 0..4 {
        let text = std::fs::read_to_string(dir.path().join(format!("child{i}.claimed"))).unwrap();
        all.extend(text.lines().filter(|l| !l.is_empty()).map(str::to_string));
    }
    let unique: BTreeSet<&String> = all.iter().collect();
    assert_eq!(all.len(), 60, "{all:?}");
    assert_eq!(unique.len(), 60, "no benchmark claimed by two processes");
    let state = WorkQueue::read(dir.path()).unwrap();
    let workers: BTreeSet<&str> = state.items.iter().filter_map(|i| i.worker.as_deref()).collect();
    assert!(state.items.iter().all(|i| i.status == ItemStatus::Done), "{state:?}");
    assert!(!workers.is_empty());
}

#[test]
fn unknown_durations_come_first_then_the_longest() {
    let dir = fresh(&[("exe::a", 1.0), ("exe::b", 5.0), ("exe::d", 3.0), ("exe::e", 5.0)]);
    let q = WorkQueue::join(dir.path(), "exe-1", "exe", "w");
    let order: Vec<String> = ["a", "b", "c", "d", "e", "f"].iter().map(|s| s.to_string()).collect();
    q.register(&order).unwrap();
    // c and f have no duration: first, as declared; then 5 s (b before e, as declared), 3 s, 1 s.
    assert_eq!(drain(&q), ["c", "f", "b", "e", "d", "a"]);
    // Without any duration: declaration order.
    let dir = fresh(&[]);
    let q = WorkQueue::join(dir.path(), "exe-1", "exe", "w");
    q.register(&order).unwrap();
    assert_eq!(drain(&q), order);
}

#[test]
fn each_executable_claims_only_its_own_benchmarks() {
    let dir = fresh(&[]);
    let alpha = WorkQueue::join(dir.path(), "alpha-1", "alpha", "gpu0");
    let beta = WorkQueue::join(dir.path(), "beta-1", "beta", "gpu0");
    alpha.register(&names(2)).unwrap();
    beta.register(&names(3)).unwrap();
    assert_eq!(drain(&alpha).len(), 2);
    assert_eq!(drain(&beta).len(), 3, "the same names in another executable are other benchmarks");
}

#[test]
fn a_released_benchmark_goes_to_the_next_claimer_and_a_lost_one_stays_claimed() {
    let dir = fresh(&[]);
    let broken = WorkQueue::join(dir.path(), "exe-1", "exe", "gpu1");
    let good = WorkQueue::join(dir.path(), "exe-1", "exe", "gpu0");
    broken.register(&names(3)).unwrap();
    let first = broken.claim_next().unwrap().unwrap();
    broken.release(&first).unwrap();
    let lost = broken.claim_next().unwrap().unwrap();
    assert_eq!(first, lost, "released: claimable again, first in line");
    // `broken` dies holding it: the others take the rest, and it stays claimed for `run`.
    let rest = drain(&good);
    assert_eq!(rest, ["bench1", "bench2"]);
    let state = WorkQueue::read(dir.path()).unwrap();
    let item = state.items.iter().find(|i| i.name == lost).unwrap();
    assert_eq!((item.status, item.worker.as_deref()), (ItemStatus::Claimed, Some("gpu1")));
    assert_eq!(item.pid, Some(std::process::id()));
}

#[test]
fn durations_carry_from_one_run_to_the_next() {
    let dir = fresh(&[]);
    let q = WorkQueue::join(dir.path(), "exe-1", "exe", "w");
    q.register(&names(2)).unwrap();
    let name = q.claim_next().unwrap().unwrap();
    q.finish(&name, false).unwrap();
    let state = WorkQueue::read(dir.path()).unwrap();
    let path = dir.path().join("durations.json");
    assert_eq!(Durations::read_json(&path).unwrap(), Durations::default(), "none yet");
    let old = Durations { schema: DURATIONS_SCHEMA.into(), seconds: [("exe::old".to_string(), 9.0)].into() };
    old.updated(&state).write_json(&path).unwrap();
    let read = Durations::read_json(&path).unwrap();
    assert_eq!(read.seconds.len(), 2, "the old one kept, the failed one recorded, the pending one not: {read:?}");
    assert!(read.seconds["exe::bench0"] >= 0.0 && read.seconds["exe::old"] == 9.0);
    // The next queue starts with them.
    let next = tempfile::tempdir().unwrap();
    WorkQueue::create(next.path(), "next", read.seconds).unwrap();
    let q = WorkQueue::join(next.path(), "exe-2", "exe", "w");
    q.register(&names(2)).unwrap();
    let state = WorkQueue::read(next.path()).unwrap();
    assert!(state.items[0].expected_s.is_some() && state.items[1].expected_s.is_none());
    // A corrupt file, or a folder without a queue, says what is wrong.
    std::fs::write(&path, "{").unwrap();
    assert_eq!(Durations::read_json(&path).unwrap_err().kind(), ErrorKind::Format);
    assert!(WorkQueue::read(&dir.path().join("nothing")).is_err());
}
