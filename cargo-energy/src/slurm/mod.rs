//! `cargo energy slurm`: a benchmark campaign on a Slurm cluster, with Slurm's own tools
//! (`sbatch`, `squeue`, `scontrol`, `scancel`) and no scheduler of ours.
//!
//! The design: the bench executables are built once, here (`cargo bench --no-run`, or given
//! with `--exe`), and copied with this cargo-energy into the campaign directory, which every
//! node must see (a shared filesystem). One job array is submitted: task k is hash shard k of N
//! (`ENERGY_SHARD=k/N`: a benchmark is in the same shard run after run, so a shard that failed
//! is run again alone, exactly) on one GPU (`--gres`, Slurm sets `CUDA_VISIBLE_DEVICES`). Why
//! not `cargo bench` on the nodes: compute nodes often have no Rust toolchain and no network,
//! a build there costs GPU time, and each node would build a different binary, where a
//! campaign's shards must be one build (the copies' content hashes are checked before every
//! task runs). Why tasks of one GPU rather than one job per node with `cargo energy run --gpus
//! all` in it: Slurm places each task where a GPU is free, a task that fails loses one shard
//! only, and a re-submission asks for as many GPUs as shards are missing.
//!
//! Then it waits (the shards done, running and pending, as they change), gathers each shard's
//! run, writes the campaign manifest (`campaign.json`, `energy-campaign/1`) and prints the
//! report: one table per board (GPU UUID), each board's shards side by side in it. A shard
//! whose task failed, was cancelled, timed out or lost its node is missing, with why (its own
//! `state.json`, then `scontrol` while Slurm keeps the job's record); `report` and `compare`
//! refuse the campaign unless `--partial`, and `--resume DIR` runs the missing shards only.

pub(crate) mod parse;
pub(crate) mod script;
pub(crate) mod shard;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use energy_harness::{Error, ErrorKind, Result};
use energy_results::campaign::{
    shard_line, CampaignExecutable, CampaignManifest, ShardState, ShardStatus, SlurmOptions, Submission, TaskState,
    CAMPAIGN_SCHEMA, SHARD_STATE_FILE,
};

use crate::gpus::{BenchExe, INTERRUPT};

/// What `cargo energy slurm` was asked.
pub(crate) struct SlurmRequest {
    /// `--dir`: the campaign directory (new), on a filesystem the nodes share.
    pub dir: Option<PathBuf>,
    /// `--resume DIR`: wait for, gather and re-run the missing shards of that campaign.
    pub resume: Option<PathBuf>,
    /// `--shards N`.
    pub shards: u32,
    /// The sbatch options.
    pub slurm: SlurmOptions,
    /// `--device sim[:PRESET]`: the simulated GPU in every task, one board per node and GPU.
    pub device: Option<String>,
    /// `--exe`: prebuilt bench executables.
    pub exes: Vec<PathBuf>,
    /// `--dry-run`: print the batch script, submit nothing.
    pub dry_run: bool,
    /// `--no-wait`: submit and return.
    pub no_wait: bool,
    /// How often squeue is asked.
    pub poll: Duration,
    /// `--max-wait`: the longest it waits for the shards (then they go on, and `--resume`
    /// gathers them later).
    pub max_wait: Option<Duration>,
    /// cargo's arguments, then `--` and the bench executables'.
    pub args: Vec<String>,
}

/// The exit of `cargo energy slurm`: every shard complete (true) or not.
pub(crate) fn run(request: &SlurmRequest) -> Result<bool> {
    match &request.resume {
        Some(dir) => resume(request, dir),
        None => start(request),
    }
}

fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A new campaign: build, copy, submit every shard, wait, gather, report.
fn start(request: &SlurmRequest) -> Result<bool> {
    if request.shards == 0 {
        return Err(Error::new(ErrorKind::InvalidInput, "--shards 0: give at least 1 (one GPU each)"));
    }
    if let Some(device) = &request.device {
        let ok = device == "sim" || device.strip_prefix("sim:").is_some_and(|p| !p.is_empty() && !p.contains('@'));
        if !ok {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "--device `{device}`: give sim or sim:PRESET (each task then runs on a simulated board named \
                     after its node and GPU); without --device each task measures the GPU Slurm gives it"
                ),
            ));
        }
    }
    let (cargo_args, bench_args) = match request.args.iter().position(|a| a == "--") {
        Some(i) => (&request.args[..i], &request.args[i + 1..]),
        None => (&request.args[..], &[][..]),
    };
    if !request.dry_run {
        require_tool("sbatch")?;
    }
    let exes = if request.exes.is_empty() {
        crate::gpus::build(cargo_args)?
    } else {
        let here = std::env::current_dir().map_err(|e| Error::io(Path::new("."), "read the current folder", e))?;
        request.exes.iter().map(|p| crate::gpus::check_executable("--exe", p, &here)).collect::<Result<_>>()?
    };
    let stamp = now().replace([':', '-'], "");
    let id = format!("campaign-{}-{}", stamp.trim_end_matches('Z'), std::process::id());
    let dir = absolute(&request.dir.clone().unwrap_or_else(|| {
        let energy = energy_results::dirs::energy_dir();
        energy.parent().unwrap_or(Path::new("target")).join("energy-campaigns").join(&id)
    }));
    let mut campaign = CampaignManifest {
        schema: CAMPAIGN_SCHEMA.into(),
        id,
        created: now(),
        shards: request.shards,
        bench_args: bench_args.to_vec(),
        device: request.device.clone(),
        executables: Vec::new(),
        working_dir: exes.first().map(|e| e.package_dir.display().to_string()).unwrap_or_default(),
        slurm: request.slurm.clone(),
        submissions: Vec::new(),
        shard_states: (1..=request.shards)
            .map(|index| ShardState::new(index, ShardStatus::NotSubmitted, None))
            .collect(),
    };
    let all: Vec<u32> = (1..=request.shards).collect();
    if request.dry_run {
        println!("{}", script::batch_script(&campaign, &dir, &all));
        eprintln!(
            "energy slurm: --dry-run: nothing copied or submitted; the campaign would be {} ({} executable(s), {} \
             shard(s) of one GPU each)",
            dir.display(),
            exes.len(),
            request.shards
        );
        return Ok(true);
    }
    if dir.join(energy_results::campaign::CAMPAIGN_FILE).exists() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{} holds a campaign already: `cargo energy slurm --resume {}` runs its missing shards; give another \
                 --dir for a new one",
                dir.display(),
                dir.display()
            ),
        ));
    }
    campaign.executables = copy_executables(&exes, &dir)?;
    for index in &all {
        let shard_dir = dir.join("shards").join(index.to_string());
        std::fs::create_dir_all(&shard_dir).map_err(|e| Error::io(&shard_dir, "create the shard's folder", e))?;
    }
    campaign.write(&dir)?;
    eprintln!(
        "energy slurm: campaign {} in {} ({} executable(s), {} shard(s) of one GPU each; the nodes must see this \
         folder)",
        campaign.id,
        dir.display(),
        campaign.executables.len(),
        campaign.shards
    );
    submit(&mut campaign, &dir, &all)?;
    finish(request, &mut campaign, &dir)
}

/// An existing campaign: wait for its jobs still in Slurm, gather, submit its missing shards
/// again, wait, gather, report.
fn resume(request: &SlurmRequest, dir: &Path) -> Result<bool> {
    let dir = absolute(dir);
    let mut campaign = CampaignManifest::read(&dir)?;
    require_tool("squeue")?;
    if wait(&mut campaign, &dir, request.poll, request.max_wait)? {
        gather(&mut campaign, &dir)?;
    }
    let missing: Vec<u32> = campaign.incomplete().iter().map(|s| s.index).collect();
    if missing.is_empty() {
        eprintln!("energy slurm: campaign {}: every shard is complete; nothing to run again", campaign.id);
        return report(&campaign, &dir);
    }
    if request.dry_run {
        println!("{}", script::batch_script(&campaign, &dir, &missing));
        eprintln!("energy slurm: --dry-run: shard(s) {} would run again", script::array_spec(&missing, None));
        return Ok(false);
    }
    require_tool("sbatch")?;
    shard::check_executables(&campaign, &dir)?;
    for s in campaign.incomplete() {
        eprintln!("energy slurm: running again: {}", shard_line(s, campaign.shards));
    }
    submit(&mut campaign, &dir, &missing)?;
    finish(request, &mut campaign, &dir)
}

/// After a submission: return at once (`--no-wait`), or wait, gather and report.
fn finish(request: &SlurmRequest, campaign: &mut CampaignManifest, dir: &Path) -> Result<bool> {
    if request.no_wait {
        eprintln!(
            "energy slurm: submitted; `cargo energy slurm --resume {}` waits for the shards, gathers them and runs \
             again those that failed",
            dir.display()
        );
        return Ok(true);
    }
    if !wait(campaign, dir, request.poll, request.max_wait)? {
        return Ok(false);
    }
    gather(campaign, dir)?;
    report(campaign, dir)
}

fn require_tool(tool: &str) -> Result<()> {
    match Command::new(tool).arg("--version").output() {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "`{tool}` could not be run ({e}): `cargo energy slurm` submits with Slurm's own commands; run it on \
                 the cluster's login node (`module load slurm` where modules provide it)"
            ),
        )),
    }
}

/// Copies the executables and this cargo-energy into `dir/bin/`; their manifest entries.
fn copy_executables(exes: &[BenchExe], dir: &Path) -> Result<Vec<CampaignExecutable>> {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| Error::io(&bin, "create the campaign's bin folder", e))?;
    let me = std::env::current_exe().map_err(|e| Error::io(Path::new("cargo-energy"), "find this executable", e))?;
    std::fs::copy(&me, bin.join("cargo-energy"))
        .map_err(|e| Error::io(&me, "copy cargo-energy into the campaign", e))?;
    let mut copied = Vec::new();
    for exe in exes {
        let file = exe.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if copied.iter().any(|c: &CampaignExecutable| c.file == file) {
            continue;
        }
        let to = bin.join(&file);
        std::fs::copy(&exe.path, &to).map_err(|e| Error::io(&exe.path, "copy the bench executable", e))?;
        let bytes = std::fs::read(&to).map_err(|e| Error::io(&to, "read the copy", e))?;
        copied.push(CampaignExecutable {
            target: energy_harness::unstable::report::target_name_of(&exe.path),
            hash: energy_results::hash::content_hash(&bytes),
            file,
        });
    }
    Ok(copied)
}

/// Writes the batch script of `shards`, submits it, and records the submission.
fn submit(campaign: &mut CampaignManifest, dir: &Path, shards: &[u32]) -> Result<()> {
    let n = campaign.submissions.len() + 1;
    let script_name = format!("job-{n}.sbatch");
    let script_path = dir.join(&script_name);
    energy_results::trace::format::write_atomically(
        &script_path,
        script::batch_script(campaign, dir, shards).as_bytes(),
    )?;
    let out = Command::new("sbatch")
        .arg("--parsable")
        .arg(&script_path)
        .current_dir(dir)
        .output()
        .map_err(|e| Error::new(ErrorKind::Io, format!("could not run sbatch: {e}")))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let job = match parse::sbatch_job_id(&stdout) {
        Some(job) if out.status.success() => job,
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "sbatch refused {} ({}): {}{}",
                    script_path.display(),
                    crate::gpus::process::exit_reason(out.status),
                    String::from_utf8_lossy(&out.stderr).trim(),
                    stdout.trim()
                ),
            ))
        }
    };
    campaign.submissions.push(Submission {
        job_id: job.clone(),
        shards: shards.to_vec(),
        submitted: now(),
        script: script_name,
    });
    for state in campaign.shard_states.iter_mut().filter(|s| shards.contains(&s.index)) {
        *state = ShardState::new(state.index, ShardStatus::Pending, Some(format!("{job}_{}", state.index)));
    }
    campaign.write(dir)?;
    eprintln!("energy slurm: submitted job array {job} (shard(s) {})", script::array_spec(shards, None));
    Ok(())
}

/// The array job and index of a task id `1234_2`.
fn split_task(task: &str) -> Option<(&str, u32)> {
    let (job, index) = task.split_once('_')?;
    Some((job, index.parse().ok()?))
}

/// Waits until no shard of the campaign is pending or running in Slurm, saying how many are
/// done, running and pending as that changes. `Ok(false)` when interrupted (the jobs go on).
fn wait(campaign: &mut CampaignManifest, dir: &Path, poll: Duration, max_wait: Option<Duration>) -> Result<bool> {
    crate::gpus::catch_interrupts();
    let start = Instant::now();
    let mut last = String::new();
    loop {
        let waiting: Vec<(String, u32)> = campaign
            .shard_states
            .iter()
            .filter(|s| matches!(s.status, ShardStatus::Pending | ShardStatus::Running))
            .filter_map(|s| s.job.as_deref().and_then(split_task).map(|(j, i)| (j.to_string(), i)))
            .collect();
        let mut jobs: Vec<&str> = waiting.iter().map(|(j, _)| j.as_str()).collect();
        jobs.sort_unstable();
        jobs.dedup();
        let mut queued: BTreeMap<u32, parse::QueuedTask> = BTreeMap::new();
        for job in &jobs {
            let out = Command::new("squeue")
                .args(["-h", "-r", "-j", job, "-o", parse::SQUEUE_FORMAT])
                .output()
                .map_err(|e| Error::new(ErrorKind::Io, format!("could not run squeue: {e}")))?;
            for task in parse::squeue_tasks(&String::from_utf8_lossy(&out.stdout), job) {
                if waiting.iter().any(|(j, i)| j == job && *i == task.index) {
                    queued.insert(task.index, task);
                }
            }
        }
        for state in campaign.shard_states.iter_mut() {
            if !matches!(state.status, ShardStatus::Pending | ShardStatus::Running) {
                continue;
            }
            match queued.get(&state.index) {
                Some(task) if task.state == "PENDING" => {
                    state.status = ShardStatus::Pending;
                    state.reason = Some(format!("Slurm's reason: {}", task.reason));
                }
                Some(task) => {
                    state.status = ShardStatus::Running;
                    state.node = task.node.clone().or(state.node.take());
                    state.reason = None;
                }
                // Out of squeue's listing: ended (gather says how), unless Slurm's own record
                // still has it alive (a listing taken as the job moved between states).
                None => {
                    let alive = state.job.as_deref().and_then(scontrol_record).filter(parse::TaskRecord::is_active);
                    if alive.is_none() {
                        state.status = ShardStatus::Missing;
                        state.reason = Some("ended; not gathered yet".into());
                    }
                }
            }
        }
        let count = |s: ShardStatus| campaign.shard_states.iter().filter(|x| x.status == s).count();
        let (pending, running) = (count(ShardStatus::Pending), count(ShardStatus::Running));
        let ended = campaign.shards as usize - pending - running - count(ShardStatus::NotSubmitted);
        let line = format!("{ended} ended, {running} running, {pending} pending of {} shard(s)", campaign.shards);
        if line != last {
            eprintln!("energy slurm: [{:>4.0} s] {line}", start.elapsed().as_secs_f64());
            last = line;
        }
        if pending + running == 0 {
            return Ok(true);
        }
        if max_wait.is_some_and(|limit| start.elapsed() >= limit) {
            let waiting: Vec<String> = campaign
                .shard_states
                .iter()
                .filter(|s| matches!(s.status, ShardStatus::Pending | ShardStatus::Running))
                .map(|s| shard_line(s, campaign.shards))
                .collect();
            eprintln!(
                "energy slurm: --max-wait reached: stopped waiting; the jobs go on:\n  {}\n`cargo energy slurm --resume \
                 {}` waits again and gathers; `scancel` stops them",
                waiting.join("\n  "),
                dir.display()
            );
            campaign.write(dir)?;
            return Ok(false);
        }
        let signal = INTERRUPT.load(Ordering::SeqCst);
        if signal != 0 {
            let jobs: Vec<String> = campaign.submissions.iter().map(|s| s.job_id.clone()).collect();
            eprintln!(
                "energy slurm: interrupted ({}): stopped waiting; the jobs go on (`scancel {}` stops them); `cargo \
                 energy slurm --resume {}` waits again and gathers",
                crate::gpus::signal_name(signal),
                jobs.join(" "),
                dir.display()
            );
            campaign.write(dir)?;
            return Ok(false);
        }
        let until = Instant::now() + poll;
        while Instant::now() < until && INTERRUPT.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Each ended shard's state: complete when its task's run is (this campaign's run id,
/// complete and intact), else missing with why.
fn gather(campaign: &mut CampaignManifest, dir: &Path) -> Result<()> {
    let shards = campaign.shards;
    for i in 0..campaign.shard_states.len() {
        let state = &campaign.shard_states[i];
        if matches!(state.status, ShardStatus::Complete | ShardStatus::NotSubmitted) {
            continue;
        }
        let Some(job) = state.job.clone() else { continue };
        let index = state.index;
        let attempt = dir.join(CampaignManifest::attempt_dir(index, &job));
        let run_dir = attempt.join("energy").join("new");
        let task: Option<TaskState> =
            std::fs::read_to_string(attempt.join(SHARD_STATE_FILE)).ok().and_then(|t| serde_json::from_str(&t).ok());
        let run = crate::gpus::check_run(&run_dir, &campaign.run_id(index, &job));
        let state = &mut campaign.shard_states[i];
        if let Some(task) = &task {
            state.node = Some(task.node.clone());
        }
        match (&task, run) {
            (Some(t), Ok(results)) if t.state == "complete" => {
                state.status = ShardStatus::Complete;
                state.results = results;
                state.run_dir =
                    Some(CampaignManifest::attempt_dir(index, &job).join("energy/new").display().to_string());
                state.gpu_uuid = board_of(&run_dir);
                state.reason = None;
            }
            (Some(t), _) if t.state != "running" => {
                state.status = ShardStatus::Missing;
                state.reason = Some(format!("{}: {}", t.state, t.reason.clone().unwrap_or_default()));
            }
            (task, _) => {
                // No end written: killed outright (SIGKILL), its node lost, or it never
                // started. Slurm may still hold the record.
                let record = scontrol_record(&job);
                let started = if task.is_some() { "it started, but wrote no end" } else { "it never started" };
                state.status = ShardStatus::Missing;
                state.reason = Some(match record {
                    Some(r) if r.is_active() => {
                        format!("{started}; Slurm still lists it {}: gather it later (`--resume`)", r.state)
                    }
                    Some(r) => {
                        state.node = state.node.take().or(r.node.clone());
                        format!("{started}; Slurm: {}", r.why())
                    }
                    None => format!(
                        "{started} (killed outright, or its node was lost), and Slurm no longer holds the job's \
                         record; see {}",
                        dir.join("shards").join(index.to_string()).join(format!("slurm-{job}.out")).display()
                    ),
                });
            }
        }
        eprintln!("energy slurm: {}", shard_line(&campaign.shard_states[i], shards));
    }
    campaign.write(dir)
}

/// Slurm's record of the task `job` (`1234_2`), while it still holds one.
fn scontrol_record(job: &str) -> Option<parse::TaskRecord> {
    let out = Command::new("scontrol").args(["show", "job", "-o", job]).output().ok()?;
    parse::scontrol_records(&String::from_utf8_lossy(&out.stdout)).into_iter().next()
}

/// The GPU UUID the run in `run_dir` measured (its first result's).
fn board_of(run_dir: &Path) -> Option<String> {
    let set = energy_report::ResultSet::read_run(run_dir).ok()?;
    set.results.values().next().map(|r| r.device.uuid.clone())
}

/// Prints the campaign's report (markdown, one table per board) and says whether every shard
/// is complete; a campaign with missing shards is reported with what is there, after the
/// lines saying which are missing.
fn report(campaign: &CampaignManifest, dir: &Path) -> Result<bool> {
    let (runs, missing) = campaign.runs_to_report(dir, true)?;
    let complete = missing.is_empty();
    if !complete {
        eprintln!(
            "energy slurm: campaign {} is incomplete ({} of {} shard(s) missing): `cargo energy slurm --resume {}` \
             runs them again",
            campaign.id,
            missing.len(),
            campaign.shards,
            dir.display()
        );
    }
    if runs.is_empty() {
        eprintln!("energy slurm: no shard holds a complete run: there is no report to show");
        return Ok(false);
    }
    let format = energy_report::Format::named("markdown").expect("markdown is a format");
    crate::results::report_campaign(dir, campaign, true, None, format, 5.0, None)?;
    Ok(complete)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_split_into_job_and_index() {
        assert_eq!(split_task("17_3"), Some(("17", 3)));
        assert_eq!(split_task("17"), None);
        assert_eq!(split_task("17_x"), None);
    }
}
