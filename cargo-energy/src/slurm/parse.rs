//! What Slurm's commands print, read: `sbatch --parsable`, `squeue -h -r -o '%i|%T|%r|%N'`
//! and `scontrol show job -o`. No accounting storage (`sacct` needs slurmdbd, which many
//! clusters have and a test machine has not): a task's end comes from its own state file
//! first, then from `scontrol` while Slurm still holds the job's record (`MinJobAge`,
//! 300 s by default).

/// The job id in `sbatch --parsable`'s output (`1234`, or `1234;cluster` on a federation).
pub(crate) fn sbatch_job_id(stdout: &str) -> Option<String> {
    let line = stdout.lines().map(str::trim).find(|l| !l.is_empty())?;
    let id = line.split(';').next()?.trim();
    (!id.is_empty() && id.chars().all(|c| c.is_ascii_digit())).then(|| id.to_string())
}

/// One array task as `squeue -h -r -o '%i|%T|%r|%N'` lists it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct QueuedTask {
    /// The array index (the shard).
    pub index: u32,
    /// Slurm's state (`PENDING`, `RUNNING`, `COMPLETING`, …).
    pub state: String,
    /// Why it waits (`Resources`, `Priority`; `None` when running).
    pub reason: String,
    /// Its node, once it has one.
    pub node: Option<String>,
}

/// The squeue format string [`squeue_tasks`] reads.
pub(crate) const SQUEUE_FORMAT: &str = "%i|%T|%r|%N";

/// The tasks of array job `job` in squeue's output (other lines, and the array's
/// not-yet-split `job_[3-5]` form, which `-r` avoids, are passed over).
pub(crate) fn squeue_tasks(stdout: &str, job: &str) -> Vec<QueuedTask> {
    stdout
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|line| {
            let mut fields = line.trim().split('|');
            let id = fields.next()?;
            let (array, index) = id.split_once('_')?;
            if array != job {
                return None;
            }
            let index: u32 = index.parse().ok()?;
            let state = fields.next()?.trim().to_string();
            let reason = fields.next().unwrap_or("").trim().to_string();
            let node = fields.next().map(str::trim).filter(|n| !n.is_empty()).map(str::to_string);
            Some(QueuedTask { index, state, reason, node })
        })
        .collect()
}

/// An ended task as `scontrol show job -o JOB_INDEX` describes it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TaskRecord {
    /// The array index.
    pub index: u32,
    /// `JobState` (`COMPLETED`, `FAILED`, `CANCELLED`, `TIMEOUT`, `NODE_FAIL`, …).
    pub state: String,
    /// `Reason`.
    pub reason: String,
    /// `ExitCode` (`3:0`: code 3; `0:15`: signal 15).
    pub exit_code: String,
    /// `NodeList`.
    pub node: Option<String>,
}

/// The records in `scontrol show job -o`'s output (one line per task; a job Slurm no longer
/// knows prints `slurm_load_jobs error: Invalid job id specified` and gives none).
pub(crate) fn scontrol_records(stdout: &str) -> Vec<TaskRecord> {
    stdout
        .lines()
        .filter(|l| l.starts_with("JobId="))
        .filter_map(|line| {
            let field = |name: &str| {
                line.split_whitespace().find_map(|kv| kv.strip_prefix(name).and_then(|r| r.strip_prefix('=')))
            };
            Some(TaskRecord {
                index: field("ArrayTaskId")?.parse().ok()?,
                state: field("JobState")?.to_string(),
                reason: field("Reason").unwrap_or("None").to_string(),
                exit_code: field("ExitCode").unwrap_or("").to_string(),
                node: field("NodeList").filter(|n| *n != "(null)" && !n.is_empty()).map(str::to_string),
            })
        })
        .collect()
}

impl TaskRecord {
    /// Whether Slurm still counts the task as alive.
    pub(crate) fn is_active(&self) -> bool {
        matches!(
            self.state.as_str(),
            "PENDING" | "RUNNING" | "CONFIGURING" | "COMPLETING" | "SUSPENDED" | "REQUEUED" | "RESIZING"
        )
    }

    /// Why the task ended without success, in words a cluster user knows.
    pub(crate) fn why(&self) -> String {
        let code = exit_code_words(&self.exit_code);
        match self.state.as_str() {
            "CANCELLED" => format!("cancelled (scancel or an administrator; {code})"),
            "TIMEOUT" => "reached its time limit (--time): stopped by Slurm".to_string(),
            "NODE_FAIL" => "its node failed (Slurm's NODE_FAIL)".to_string(),
            "OUT_OF_MEMORY" => "ran out of memory (Slurm's OUT_OF_MEMORY)".to_string(),
            "PREEMPTED" => "was preempted".to_string(),
            "BOOT_FAIL" => "its node failed to boot (BOOT_FAIL)".to_string(),
            "FAILED" => format!("failed ({code}; Reason={})", self.reason),
            state => format!("ended {state} ({code}; Reason={})", self.reason),
        }
    }
}

/// `ExitCode=3:0` as words: "exit code 3"; `0:15`: "signal 15 (SIGTERM)".
fn exit_code_words(exit_code: &str) -> String {
    let (code, signal) = exit_code.split_once(':').unwrap_or((exit_code, "0"));
    match (code.parse::<i32>(), signal.parse::<i32>()) {
        (_, Ok(signal)) if signal != 0 => {
            format!("signal {signal} ({})", crate::gpus::signal_name(signal))
        }
        (Ok(code), _) => format!("exit code {code}"),
        _ => format!("ExitCode={exit_code}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbatch_parsable_gives_the_job_id() {
        assert_eq!(sbatch_job_id("6\n").as_deref(), Some("6"));
        assert_eq!(sbatch_job_id("1234;cluster\n").as_deref(), Some("1234"));
        assert_eq!(sbatch_job_id("sbatch: error: Batch job submission failed"), None);
        assert_eq!(sbatch_job_id(""), None);
    }

    #[test]
    fn squeue_as_recorded_lists_each_task_of_the_array() {
        let recorded = include_str!("recorded/squeue-running.txt");
        let tasks = squeue_tasks(recorded, "6");
        assert_eq!(tasks.len(), 5, "{tasks:?}");
        let t2 = tasks.iter().find(|t| t.index == 2).unwrap();
        assert_eq!((t2.state.as_str(), t2.node.as_deref()), ("RUNNING", Some("n2")));
        let t4 = tasks.iter().find(|t| t.index == 4).unwrap();
        assert_eq!((t4.state.as_str(), t4.reason.as_str(), t4.node.as_deref()), ("PENDING", "Resources", None));
        assert!(squeue_tasks(recorded, "7").is_empty(), "another job's tasks are not this one's");
        assert!(squeue_tasks("slurm_load_jobs error: Invalid job id specified\n", "6").is_empty());
    }

    #[test]
    fn scontrol_as_recorded_says_how_each_task_ended() {
        let records = scontrol_records(include_str!("recorded/scontrol-ended.txt"));
        assert_eq!(records.len(), 3);
        assert!(records[0].is_active() && records[0].node.as_deref() == Some("n1"));
        assert_eq!(records[1].state, "CANCELLED");
        assert!(!records[1].is_active());
        assert_eq!(records[1].why(), "cancelled (scancel or an administrator; signal 15 (SIGTERM))");
        assert_eq!(records[2].why(), "failed (exit code 3; Reason=NonZeroExitCode)");
        assert!(scontrol_records(include_str!("recorded/scontrol-gone.txt")).is_empty());
        let timeout = scontrol_records(include_str!("recorded/scontrol-timeout.txt"));
        assert_eq!((timeout.len(), timeout[0].state.as_str()), (1, "TIMEOUT"));
        assert_eq!(timeout[0].why(), "reached its time limit (--time): stopped by Slurm");
    }
}
