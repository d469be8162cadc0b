//! `cargo energy slurm` against a real Slurm (Debian's slurm-wlm 22.05: slurmctld, slurmd,
//! munge), started by this test on this machine and stopped by it: three nodes (several
//! slurmd on one host, `slurmd -N NAME`, each its own port), `gres` GPUs declared with device
//! files (character devices made with mknod, as `/dev/nvidia*` are) so that tasks ask for
//! `--gres=gpu:1` as on a cluster and Slurm sets `CUDA_VISIBLE_DEVICES`; node n1 has two GPUs,
//! n2 and n3 one each. Each task runs on the simulated GPU (`--device sim`) as the board named
//! after its node and GPU index, in real time.
//!
//! It builds the repository's example benches, runs them locally, then as a campaign of four
//! shards (each its own board, over the three nodes) and checks the gathered report against
//! the local run: the same benchmark ids, four boards, one table each. Then a second campaign
//! whose shard 2 is cancelled (`scancel`) while it runs: gathered, it names the shard and
//! why; `report` refuses the campaign (exit 2), `report --partial` reports the rest; `slurm
//! --resume` runs shard 2 alone and the campaign is then complete. Then a campaign whose
//! executables fail (each shard missing, with the exit code) and one still pending when
//! `--max-wait` runs out (named pending, with Slurm's reason).
//!
//! Needs root (slurmd, mknod) and slurm-wlm: `bash scripts/slurm-test.sh` installs it and runs
//! this test, keeping its last log; `cargo test` lists it as ignored.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

const NODES: [(&str, u32); 3] = [("n1", 2), ("n2", 1), ("n3", 1)];
/// The example benches the campaigns run (the root package's).
const BENCHES: [&str; 4] = ["saxpy", "fma", "launch_sizes", "saxpy_blocks"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// A Slurm cluster of its own: the daemons it started, stopped on drop.
struct Cluster {
    dir: tempfile::TempDir,
    conf: PathBuf,
    daemons: Vec<Child>,
    munged: Option<Child>,
}

impl Cluster {
    fn start() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for sub in ["state", "log", "spool"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        let port = 17000 + (std::process::id() % 500) * 8;
        let mut nodes = String::new();
        let mut gres = String::new();
        for (i, (name, gpus)) in NODES.iter().enumerate() {
            let devs = d.join("dev").join(name);
            std::fs::create_dir_all(&devs).unwrap();
            for g in 0..*gpus {
                // A character device (that of /dev/null): Slurm takes only such files as GPUs.
                let path = devs.join(format!("gpu{g}"));
                let made = Command::new("mknod").arg(&path).args(["c", "1", "3"]).status().unwrap();
                assert!(made.success(), "mknod {}: run as root", path.display());
            }
            nodes.push_str(&format!(
                "NodeName={name} NodeHostname=localhost Port={} CPUs={} Gres=gpu:{gpus} State=UNKNOWN\n",
                port + 2 + i as u32,
                std::thread::available_parallelism().map_or(2, |n| n.get())
            ));
            let files = if *gpus == 1 { "gpu0".to_string() } else { format!("gpu[0-{}]", gpus - 1) };
            gres.push_str(&format!("NodeName={name} Name=gpu File={}\n", devs.join(files).display()));
        }
        let names: Vec<&str> = NODES.iter().map(|n| n.0).collect();
        let conf = format!(
            "ClusterName=energytest\nSlurmctldHost=localhost\nSlurmctldPort={port}\nSlurmUser=root\n\
             AuthType=auth/munge\nStateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool/%n\n\
             SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd-%n.pid\n\
             SlurmctldLogFile={d}/log/slurmctld.log\nSlurmdLogFile={d}/log/slurmd-%n.log\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nMpiDefault=none\nMailProg=/bin/true\n\
             SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
             GresTypes=gpu\nReturnToService=2\nSchedulerParameters=sched_interval=1\n\
             {nodes}PartitionName=gpu Nodes={} Default=YES MaxTime=INFINITE State=UP\n",
            names.join(","),
            d = d.display()
        );
        let conf_path = d.join("slurm.conf");
        std::fs::write(&conf_path, conf).unwrap();
        std::fs::write(d.join("gres.conf"), gres).unwrap();
        // munge: the machine's own daemon when it runs, else one started here.
        let munged = if Command::new("munge").arg("-n").output().is_ok_and(|o| o.status.success()) {
            None
        } else {
            let _ = std::fs::create_dir_all("/run/munge");
            let _ = Command::new("chown").args(["munge:munge", "/run/munge"]).status();
            Some(Command::new("runuser").args(["-u", "munge", "--", "/usr/sbin/munged", "-F"]).spawn().unwrap())
        };
        let mut cluster = Cluster { dir, conf: conf_path, daemons: Vec::new(), munged };
        // In the foreground (-D) so that drop stops them; their logs are under log/.
        let quiet = |c: &mut Command| {
            c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
        };
        let mut ctld = Command::new("slurmctld");
        ctld.args(["-D", "-f"]).arg(&cluster.conf);
        quiet(&mut ctld);
        let ctld = ctld.spawn().unwrap();
        cluster.daemons.push(ctld);
        std::thread::sleep(Duration::from_secs(1));
        for (name, _) in NODES {
            let mut slurmd = Command::new("slurmd");
            slurmd.args(["-D", "-f"]).arg(&cluster.conf).args(["-N", name]);
            quiet(&mut slurmd);
            cluster.daemons.push(slurmd.spawn().unwrap());
        }
        // Every node idle before any job.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let out = cluster.command("sinfo").args(["-h", "-N", "-o", "%N %T"]).output().unwrap();
            let listing = text(&out);
            if listing.lines().filter(|l| l.ends_with("idle")).count() == NODES.len() {
                break;
            }
            assert!(Instant::now() < deadline, "the nodes did not come up: {listing}\n{}", cluster.logs());
            std::thread::sleep(Duration::from_millis(500));
        }
        cluster
    }

    /// A Slurm (or cargo-energy) command of this cluster.
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    fn cargo_energy(&self, args: &[&str]) -> Output {
        let out = self
            .command(env!("CARGO_BIN_EXE_cargo-energy"))
            .args(args)
            .current_dir(repo())
            .env_remove("ENERGY_RUN_ID")
            .env_remove("ENERGY_DEVICE")
            .output()
            .unwrap();
        println!("$ cargo energy {}\n  exit {:?}\n{}", args.join(" "), out.status.code(), indent(&text(&out)));
        out
    }

    fn logs(&self) -> String {
        let mut out = String::new();
        for entry in std::fs::read_dir(self.dir.path().join("log")).unwrap() {
            let path = entry.unwrap().path();
            let log = std::fs::read_to_string(&path).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(15).collect();
            out.push_str(&format!(
                "--- {}\n{}\n",
                path.display(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ));
        }
        out
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for child in self.daemons.iter_mut().chain(self.munged.iter_mut()) {
            // SAFETY: kill(2) of a child this test started.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        }
        for child in self.daemons.iter_mut().chain(self.munged.iter_mut()) {
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The files and folders under `dir`, to `depth`, one relative path a line (a folder's name
/// ends with `/`; the run folders' contents are summed up).
fn layout(dir: &Path, depth: usize) -> String {
    fn walk(root: &Path, dir: &Path, depth: usize, out: &mut Vec<String>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            if path.is_dir() && path.file_name().is_some_and(|n| n == "new") {
                let files = std::fs::read_dir(&path).unwrap().count();
                out.push(format!("{rel}/  ({files} files: run.json, results, traces, plots)"));
            } else if path.is_dir() {
                out.push(format!("{rel}/"));
                if depth > 1 {
                    walk(root, &path, depth - 1, out);
                }
            } else {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, depth + 1, &mut out);
    out.join("\n")
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}\n")).collect()
}

/// The benchmark ids of a markdown report's tables (first cells of rows after a header).
fn report_ids(markdown: &str) -> Vec<String> {
    let mut ids: Vec<String> = markdown
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| benchmark"))
        .filter_map(|l| l.trim_start_matches("| ").split(" |").next().map(|c| c.trim().trim_matches('`').to_string()))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

fn campaign_args<'a>(dir: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["slurm", "--shards", "4", "--device", "sim", "--poll", "1", "--time", "20:00", "--dir", dir];
    args.extend_from_slice(extra);
    args.push("--");
    for bench in BENCHES {
        args.extend(["--bench", bench]);
    }
    args
}

#[test]
#[ignore = "needs root and Slurm (slurm-wlm): bash scripts/slurm-test.sh"]
fn a_campaign_on_a_real_slurm_gathers_every_board_and_reruns_a_cancelled_shard() {
    let started = Instant::now();
    let cluster = Cluster::start();
    println!("cluster up: {} nodes ({:.0} s)", NODES.len(), started.elapsed().as_secs_f64());
    let work = tempfile::tempdir().unwrap();

    // The same benchmarks run locally on the simulated GPU: the bench executables cargo
    // builds (as the campaign will), one after the other, as one run in a folder of their own.
    let mut build = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    build.args(["bench", "--no-run", "--message-format=json"]).current_dir(repo());
    for bench in BENCHES {
        build.args(["--bench", bench]);
    }
    let built = build.output().unwrap();
    assert!(built.status.success(), "cargo bench --no-run: {}", text(&built));
    let exes: Vec<String> = String::from_utf8_lossy(&built.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|m| m["executable"].as_str().map(str::to_string))
        .collect();
    assert_eq!(exes.len(), BENCHES.len(), "{exes:?}");
    let local_target = work.path().join("local");
    for exe in &exes {
        let out = Command::new(exe)
            .arg("--bench")
            .current_dir(repo())
            .env("ENERGY_DEVICE", "sim")
            .env("ENERGY_RUN_ID", "local")
            .env("ENERGY_EXPECTED_TARGETS", BENCHES.join(","))
            .env("CARGO_TARGET_DIR", &local_target)
            .output()
            .unwrap();
        assert!(out.status.success(), "{exe}: {}", text(&out));
    }
    let local_target = local_target.join("energy");
    let local_report = cluster.cargo_energy(&["report", "--dir", local_target.to_str().unwrap()]);
    let local_ids = report_ids(&String::from_utf8_lossy(&local_report.stdout));
    assert!(local_ids.len() >= 4, "local run: {local_ids:?}");
    println!("local run: {} benchmark(s) ({:.0} s)", local_ids.len(), started.elapsed().as_secs_f64());

    // Campaign 1: every shard completes; four boards over three nodes.
    let one = work.path().join("campaign-1");
    let one_s = one.to_str().unwrap();
    let dry = cluster.cargo_energy(&campaign_args(one_s, &["--dry-run"]));
    assert!(dry.status.success() && String::from_utf8_lossy(&dry.stdout).contains("#SBATCH --array=1-4"));
    assert!(!one.exists(), "--dry-run made the campaign directory");
    let run = cluster.cargo_energy(&campaign_args(one_s, &[]));
    assert!(run.status.success(), "campaign 1 failed:\n{}\n{}", text(&run), cluster.logs());
    let report = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(report.contains("## Campaign campaign-") && report.contains("4 shard(s) of 4, on 4 board(s)"), "{report}");
    assert_eq!(report.matches("\n### ").count() + usize::from(report.starts_with("### ")), 4, "one table per board");
    assert_eq!(report_ids(&report), local_ids, "the campaign measured what the local run measured");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(one.join("campaign.json")).unwrap()).unwrap();
    let nodes: std::collections::BTreeSet<&str> =
        manifest["shard_states"].as_array().unwrap().iter().filter_map(|s| s["node"].as_str()).collect();
    assert_eq!(nodes.len(), 3, "over the three nodes: {manifest}");
    let boards: std::collections::BTreeSet<&str> =
        manifest["shard_states"].as_array().unwrap().iter().filter_map(|s| s["gpu_uuid"].as_str()).collect();
    assert_eq!(boards.len(), 4, "a board per node and GPU: {manifest}");
    println!("campaign 1 complete ({:.0} s)", started.elapsed().as_secs_f64());

    // Campaign 2: shard 2 cancelled while it runs.
    let two = work.path().join("campaign-2");
    let two_s = two.to_str().unwrap();
    let submitted = cluster.cargo_energy(&campaign_args(two_s, &["--no-wait"]));
    assert!(submitted.status.success(), "{}", text(&submitted));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(two.join("campaign.json")).unwrap()).unwrap();
    let job = manifest["submissions"][0]["job_id"].as_str().unwrap().to_string();
    let task = format!("{job}_2");
    // Until it runs and has started its benches (its state file says running).
    let deadline = Instant::now() + Duration::from_secs(120);
    while !two.join("shards/2").join(&task).join("state.json").exists() {
        assert!(Instant::now() < deadline, "shard 2 never started:\n{}", cluster.logs());
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(2));
    let cancel = cluster.command("scancel").arg(&task).output().unwrap();
    assert!(cancel.status.success(), "scancel: {}", text(&cancel));
    println!("$ scancel {task}");
    // Waited for and gathered, nothing submitted (--dry-run): exit 1, shard 2 named.
    let status = cluster.cargo_energy(&["slurm", "--resume", two_s, "--poll", "1", "--dry-run"]);
    let said = text(&status);
    assert_eq!(status.status.code(), Some(1), "{said}");
    assert!(said.contains("shard 2/4") && (said.contains("stopped") || said.contains("cancelled")), "{said}");
    let refused = cluster.cargo_energy(&["report", "--dir", two_s]);
    let refusal = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{refusal}");
    assert!(refusal.contains("is incomplete: 1 of 4 shard(s)") && refusal.contains("--partial"), "{refusal}");
    let partial = cluster.cargo_energy(&["report", "--dir", two_s, "--partial"]);
    let partial_text = String::from_utf8_lossy(&partial.stdout).into_owned();
    assert!(partial.status.success(), "{}", text(&partial));
    assert!(
        partial_text.contains("> **MISSING:** shard 2/4") && partial_text.contains("3 shard(s) of 4"),
        "{partial_text}"
    );
    let compare = cluster.cargo_energy(&["compare", "--dir", two_s, "--baseline", "main"]);
    assert_eq!(compare.status.code(), Some(2), "compare refuses it too: {}", text(&compare));
    // The missing shard alone runs again.
    let resumed = cluster.cargo_energy(&["slurm", "--resume", two_s, "--poll", "1"]);
    assert!(resumed.status.success(), "resume: {}\n{}", text(&resumed), cluster.logs());
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(two.join("campaign.json")).unwrap()).unwrap();
    assert_eq!(manifest["submissions"].as_array().unwrap().len(), 2);
    assert_eq!(manifest["submissions"][1]["shards"], serde_json::json!([2]), "{manifest}");
    assert_eq!(report_ids(&String::from_utf8_lossy(&resumed.stdout)), local_ids);
    let attempts =
        std::fs::read_dir(two.join("shards/2")).unwrap().filter(|e| e.as_ref().unwrap().path().is_dir()).count();
    assert_eq!(attempts, 2, "the cancelled attempt is kept apart from the new one");
    let whole = cluster.cargo_energy(&["report", "--dir", two_s]);
    assert!(whole.status.success());
    println!("the campaign directory, complete:\n{}", indent(&layout(&two, 4)));
    // Kept where the script asks: the manifest, the reports and the layout.
    if let Some(keep) = std::env::var_os("SLURM_TEST_KEEP").map(PathBuf::from) {
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::copy(two.join("campaign.json"), keep.join("campaign.json")).unwrap();
        std::fs::write(keep.join("report-partial.md"), partial_text.as_bytes()).unwrap();
        std::fs::write(keep.join("report.md"), &whole.stdout).unwrap();
        std::fs::write(keep.join("layout.txt"), layout(&two, 4) + "\n").unwrap();
    }
    println!("campaign 2: cancelled, refused, partial, resumed, complete ({:.0} s)", started.elapsed().as_secs_f64());

    // Campaign 3: the bench executables fail (an option criterion does not know): each shard
    // is missing, with the executable's exit code and the end of its stderr.
    let three = work.path().join("campaign-3");
    let failing = ["slurm", "--shards", "2", "--device", "sim", "--poll", "1", "--dir", three.to_str().unwrap()];
    let failed = cluster.cargo_energy(&[&failing[..], &["--", "--bench", "saxpy", "--", "--no-such-option"]].concat());
    let said = text(&failed);
    assert_eq!(failed.status.code(), Some(1), "{said}");
    assert!(
        said.contains("shard 1/2") && said.contains("missing: failed: saxpy-") && said.contains("exited with code"),
        "{said}"
    );

    // Campaign 4: still pending when --max-wait runs out (it may start in an hour only).
    let four = work.path().join("campaign-4");
    let pending = cluster.cargo_energy(&[
        "slurm",
        "--shards",
        "1",
        "--device",
        "sim",
        "--poll",
        "1",
        "--max-wait",
        "4",
        "--sbatch=--begin=now+3600",
        "--dir",
        four.to_str().unwrap(),
        "--",
        "--bench",
        "saxpy",
    ]);
    let said = text(&pending);
    assert_eq!(pending.status.code(), Some(1), "{said}");
    assert!(
        said.contains("--max-wait reached")
            && said.contains("shard 1/1")
            && said.contains("pending: Slurm's reason: BeginTime"),
        "{said}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(four.join("campaign.json")).unwrap()).unwrap();
    let job = manifest["submissions"][0]["job_id"].as_str().unwrap().to_string();
    assert!(cluster.command("scancel").arg(&job).status().unwrap().success());
    println!(
        "campaigns 3 and 4: failed shards and a shard pending at --max-wait named ({:.0} s)",
        started.elapsed().as_secs_f64()
    );
    drop(cluster);
    println!("every daemon stopped; total {:.0} s", started.elapsed().as_secs_f64());
}
