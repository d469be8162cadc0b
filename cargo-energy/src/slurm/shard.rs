//! One shard, inside its Slurm array task (`cargo-energy energy slurm-shard`, what the batch
//! script runs): every executable of the campaign on the task's GPU, with `ENERGY_SHARD=k/N`
//! and the shard's own run id, into the task's own attempt folder; `state.json` there says
//! that it started and, unless it was killed outright, how it ended.

use std::path::{Path, PathBuf};

use energy_harness::{Error, ErrorKind, Result};
use energy_results::campaign::{CampaignManifest, TaskState, SHARD_STATE_FILE};
use energy_results::run::EXPECTED_TARGETS_ENV;

use crate::gpus::{catch_interrupts, check_run, run_executable, BenchExe, ExeEnd, Launch};

/// The environment of a Slurm array task that [`run_shard`] reads.
pub(crate) struct TaskEnv {
    /// `SLURM_ARRAY_JOB_ID`.
    pub array_job: String,
    /// `SLURM_ARRAY_TASK_ID`.
    pub array_task: String,
    /// `SLURMD_NODENAME`.
    pub node: String,
    /// `CUDA_VISIBLE_DEVICES`, as Slurm set it for the task's GPU.
    pub cuda_visible_devices: String,
}

impl TaskEnv {
    /// Reads it, or says that this runs only inside a Slurm array task.
    pub(crate) fn from_env() -> Result<TaskEnv> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let (Some(array_job), Some(array_task)) = (var("SLURM_ARRAY_JOB_ID"), var("SLURM_ARRAY_TASK_ID")) else {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "`cargo energy slurm-shard` runs inside a Slurm array task (the batch script of `cargo energy slurm` \
                 runs it); SLURM_ARRAY_JOB_ID or SLURM_ARRAY_TASK_ID is not set here",
            ));
        };
        Ok(TaskEnv {
            array_job,
            array_task,
            node: var("SLURMD_NODENAME").unwrap_or_else(|| "unknown-node".into()),
            cuda_visible_devices: var("CUDA_VISIBLE_DEVICES").unwrap_or_default(),
        })
    }

    /// Slurm's id of the task: `<array job>_<index>`.
    pub(crate) fn job(&self) -> String {
        format!("{}_{}", self.array_job, self.array_task)
    }
}

/// `ENERGY_DEVICE` of the task: the campaign's simulated model, as one board per node and
/// GPU index (`sim:h100@n2-gpu0`); `None` for the GPU Slurm gave the task.
pub(crate) fn task_device(device: Option<&str>, task: &TaskEnv) -> Option<String> {
    let device = device?;
    let gpu = task.cuda_visible_devices.split(',').next().unwrap_or("").trim();
    let gpu = if gpu.is_empty() { "none".to_string() } else { gpu.replace(|c: char| !c.is_ascii_alphanumeric(), "") };
    Some(format!("{device}@{}-gpu{gpu}", task.node.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "")))
}

fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// Checks that each executable under `bin/` is the one the campaign copied (its content
/// hash): a campaign never mixes the runs of two builds.
pub(crate) fn check_executables(campaign: &CampaignManifest, dir: &Path) -> Result<Vec<PathBuf>> {
    campaign
        .executables
        .iter()
        .map(|e| {
            let path = dir.join("bin").join(&e.file);
            let bytes = std::fs::read(&path).map_err(|err| Error::io(&path, "read the campaign's executable", err))?;
            let hash = energy_results::hash::content_hash(&bytes);
            if hash != e.hash {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "{} is not the executable campaign {} copied (content hash {hash}, manifest {}): its shards \
                         would mix two builds; start a new campaign",
                        path.display(),
                        campaign.id,
                        e.hash
                    ),
                ));
            }
            Ok(path)
        })
        .collect()
}

/// Runs shard `index` of the campaign in `dir` as the Slurm task `task`: `Ok(true)` when its
/// run is complete.
pub(crate) fn run_shard(dir: &Path, index: u32, task: &TaskEnv) -> Result<bool> {
    let campaign = CampaignManifest::read(dir)?;
    if index == 0 || index > campaign.shards {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("--shard {index}: campaign {} has shards 1 to {}", campaign.id, campaign.shards),
        ));
    }
    let job = task.job();
    let attempt = dir.join(CampaignManifest::attempt_dir(index, &job));
    std::fs::create_dir_all(&attempt).map_err(|e| Error::io(&attempt, "create the shard's folder", e))?;
    let mut state = TaskState {
        state: "running".into(),
        node: task.node.clone(),
        job: job.clone(),
        cuda_visible_devices: task.cuda_visible_devices.clone(),
        started: now(),
        ended: None,
        reason: None,
    };
    write_state(&attempt, &state)?;
    catch_interrupts();
    let outcome = run_executables(&campaign, dir, index, task, &attempt);
    state.ended = Some(now());
    let complete = match outcome {
        Ok(Ok(results)) => {
            state.state = "complete".into();
            state.reason = Some(format!("{results} result(s)"));
            true
        }
        Ok(Err((stopped, why))) => {
            state.state = if stopped { "stopped" } else { "failed" }.into();
            state.reason = Some(why);
            false
        }
        Err(e) => {
            state.state = "failed".into();
            state.reason = Some(e.to_string());
            false
        }
    };
    write_state(&attempt, &state)?;
    eprintln!(
        "energy slurm: shard {index}/{} ({job} on {}): {}{}",
        campaign.shards,
        task.node,
        state.state,
        state.reason.as_ref().map_or(String::new(), |r| format!(": {r}"))
    );
    Ok(complete)
}

/// Every executable on this task's GPU; the results of the run, or whether it was stopped
/// (SIGTERM: scancel, the time limit) and why it failed.
type ShardOutcome = std::result::Result<usize, (bool, String)>;

fn run_executables(
    campaign: &CampaignManifest,
    dir: &Path,
    index: u32,
    task: &TaskEnv,
    attempt: &Path,
) -> Result<ShardOutcome> {
    let paths = check_executables(campaign, dir)?;
    let working = PathBuf::from(&campaign.working_dir);
    let package_dir = if working.is_dir() { working } else { dir.to_path_buf() };
    let exes: Vec<BenchExe> =
        paths.into_iter().map(|path| BenchExe { path, package_dir: package_dir.clone() }).collect();
    let expected = crate::gpus::expected_targets(&exes);
    let run_id = campaign.run_id(index, &task.job());
    let shard = format!("{index}/{}", campaign.shards);
    let device = task_device(campaign.device.as_deref(), task);
    let log_path = attempt.join("bench.log");
    let log = std::fs::File::create(&log_path).map_err(|e| Error::io(&log_path, "create the log", e))?;
    let label = format!("shard{index}");
    for exe in &exes {
        let signal = crate::gpus::INTERRUPT.load(std::sync::atomic::Ordering::SeqCst);
        if signal != 0 {
            let why = format!(
                "the task received {} (scancel, or Slurm's time limit: --time)",
                crate::gpus::signal_name(signal)
            );
            return Ok(Err((true, why)));
        }
        let mut env = vec![
            ("ENERGY_RUN_ID", run_id.as_str()),
            ("ENERGY_SHARD", shard.as_str()),
            (EXPECTED_TARGETS_ENV, expected.as_str()),
        ];
        if let Some(device) = &device {
            env.push(("ENERGY_DEVICE", device.as_str()));
        }
        let launch = Launch {
            exe,
            bench_args: &campaign.bench_args,
            env: &env,
            target_dir: attempt,
            log: &log,
            log_path: &log_path,
            limit: None,
            label: &label,
            command: "the shard's Slurm task",
        };
        let end = run_executable(&launch)?;
        // Slurm signals every process of the task (scancel, the time limit): the executable
        // may end of SIGTERM before this process has passed it on.
        let signal = crate::gpus::INTERRUPT.load(std::sync::atomic::Ordering::SeqCst);
        if signal != 0 && !matches!(end, ExeEnd::Succeeded) {
            let name = exe.path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            return Ok(Err((
                true,
                format!(
                    "the task received {} while {name} ran (scancel, or Slurm's time limit: --time)",
                    crate::gpus::signal_name(signal)
                ),
            )));
        }
        match end {
            ExeEnd::Succeeded => {}
            ExeEnd::Failed(why) | ExeEnd::Interrupted(why) => return Ok(Err((false, why))),
        }
    }
    Ok(check_run(&attempt.join("energy").join("new"), &run_id).map_err(|why| (false, why)))
}

fn write_state(attempt: &Path, state: &TaskState) -> Result<()> {
    let text = serde_json::to_string_pretty(state)
        .map_err(|e| Error::new(ErrorKind::Io, format!("could not write the shard's state: {e}")))?;
    energy_results::trace::format::write_atomically(&attempt.join(SHARD_STATE_FILE), format!("{text}\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(node: &str, cvd: &str) -> TaskEnv {
        TaskEnv { array_job: "7".into(), array_task: "2".into(), node: node.into(), cuda_visible_devices: cvd.into() }
    }

    #[test]
    fn a_simulated_task_is_a_board_named_after_its_node_and_gpu() {
        assert_eq!(task_device(Some("sim"), &task("n2", "1")).as_deref(), Some("sim@n2-gpu1"));
        assert_eq!(task_device(Some("sim:h100"), &task("node-07", "0,1")).as_deref(), Some("sim:h100@node-07-gpu0"));
        assert_eq!(task_device(Some("sim"), &task("n1", "")).as_deref(), Some("sim@n1-gpunone"));
        assert_eq!(task_device(None, &task("n1", "0")), None, "a real GPU: the one Slurm gave the task");
        assert_eq!(task("n1", "0").job(), "7_2");
    }
}
