//! A benchmark campaign on a batch scheduler (`cargo energy slurm`): one set of bench
//! executables, split into hash shards (`ENERGY_SHARD=k/N`), each shard a task of one GPU;
//! the manifest `campaign.json` (`energy-campaign/1`) at the campaign directory's root says
//! what was submitted, where each shard ran and which run holds its results.
//!
//! The layout of a campaign directory:
//!
//! ```text
//! campaign.json                  this manifest
//! bin/                           the bench executables (and cargo-energy), copied once
//! job-<n>.sbatch                 each submission's batch script, as submitted
//! shards/<k>/<job>/              one attempt at shard k by Slurm job <job> (`1234_2`):
//!     energy/new/                  its run (`CARGO_TARGET_DIR` = this folder)
//!     state.json                   what the task itself says: running, complete, failed, stopped
//!     bench.log, slurm.out         the executables' and the batch script's output
//! ```
//!
//! A shard is complete when one of its attempts wrote a complete run of the campaign's
//! executables with its own run id ([`CampaignManifest::run_id`]); a report or a comparison of
//! a campaign with a shard that is not refuses it unless told to report what is there
//! (`--partial`), and a re-submission runs only those shards. Nothing of two attempts is ever
//! mixed: each is its own folder and run.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Result};

/// The `schema` tag of a campaign manifest.
pub const CAMPAIGN_SCHEMA: &str = "energy-campaign/1";
/// The manifest's file name in a campaign directory.
pub const CAMPAIGN_FILE: &str = "campaign.json";
/// The file a shard's task writes in its attempt folder.
pub const SHARD_STATE_FILE: &str = "state.json";

/// A campaign's manifest (`campaign.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CampaignManifest {
    /// Always `energy-campaign/1`.
    pub schema: String,
    /// The campaign's id (`campaign-<UTC time>-<pid>`): every shard's run id starts with it.
    pub id: String,
    /// When it was made (RFC 3339, UTC).
    pub created: String,
    /// The number of hash shards (`ENERGY_SHARD=k/shards`), one Slurm array task each.
    pub shards: u32,
    /// The bench executables' own arguments (criterion's filter), passed to every one.
    pub bench_args: Vec<String>,
    /// `ENERGY_DEVICE` in the tasks: absent for the GPU Slurm gave the task; `sim` or
    /// `sim:PRESET` for the simulated GPU, one simulated board per node and GPU index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The executables under `bin/`, in the order each task runs them.
    pub executables: Vec<CampaignExecutable>,
    /// The folder the executables run in (their package's, as `cargo bench` runs them), when
    /// the nodes see it; else they run in the campaign directory.
    pub working_dir: String,
    /// The Slurm options every submission used.
    pub slurm: SlurmOptions,
    /// Each submission, in order.
    pub submissions: Vec<Submission>,
    /// Each shard's state, as last gathered (`cargo energy slurm` after the jobs ended).
    pub shard_states: Vec<ShardState>,
}

/// One bench executable of a campaign.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CampaignExecutable {
    /// Its file name under `bin/`.
    pub file: String,
    /// Its bench target (`fma` of `fma-0123abcd`).
    pub target: String,
    /// Its content hash (FNV-1a, 16 hex digits): a copy altered since is refused.
    pub hash: String,
}

/// The options of `sbatch` a campaign's submissions share.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SlurmOptions {
    /// `--partition`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// `--gres` of each task (one GPU: `gpu:1`, or a typed `gpu:h100:1`).
    pub gres: String,
    /// `--time` of each task (Slurm's form: `30:00`, `2:00:00`).
    pub time: String,
    /// `--array`'s limit on tasks at once (`%N`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_parallel: Option<u32>,
    /// Further `#SBATCH` options, each as given (`--account=gpu-energy`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra: Vec<String>,
}

/// One `sbatch` of a campaign: a job array over some of its shards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Submission {
    /// Slurm's job id of the array.
    pub job_id: String,
    /// The shards it runs (its array indices).
    pub shards: Vec<u32>,
    /// When it was submitted (RFC 3339, UTC).
    pub submitted: String,
    /// Its batch script, relative to the campaign directory.
    pub script: String,
}

/// Where a shard stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ShardStatus {
    /// Not submitted yet.
    NotSubmitted,
    /// Waiting in Slurm's queue.
    Pending,
    /// Running.
    Running,
    /// A complete run of this campaign's, with its results.
    Complete,
    /// Ended without a complete run: it failed, was cancelled, timed out, its node died, or
    /// its run is missing or broken (`reason` says which).
    Missing,
}

/// One shard's state in the manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ShardState {
    /// The shard, 1 ..= shards.
    pub index: u32,
    /// Where it stands.
    pub status: ShardStatus,
    /// Slurm's id of its last task (`1234_2`), once submitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// The node it ran on, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The GPU's UUID its run measured, when complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_uuid: Option<String>,
    /// Its complete run (`shards/<k>/<job>/energy/new`), relative to the campaign directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_dir: Option<String>,
    /// How many results that run holds.
    #[serde(default)]
    pub results: usize,
    /// Why it is missing (or what it waits for), in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What a shard's task writes in its attempt folder (`state.json`): once when it starts,
/// again when it ends (a task killed outright, by SIGKILL or with its node, never writes the
/// second).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskState {
    /// `running`, `complete`, `failed` or `stopped` (SIGTERM: `scancel`, the time limit).
    pub state: String,
    /// The node (`SLURMD_NODENAME`).
    pub node: String,
    /// Slurm's task id (`<array job>_<index>`).
    pub job: String,
    /// `CUDA_VISIBLE_DEVICES` as Slurm set it.
    pub cuda_visible_devices: String,
    /// When it started (RFC 3339).
    pub started: String,
    /// When it ended (RFC 3339), once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// Why it failed or was stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A complete shard's index and the folder of its run (`…/energy/new`).
pub type ShardRun = (u32, PathBuf);

impl ShardState {
    /// Shard `index` with `status` and, once submitted, Slurm's id of its task: nothing known
    /// yet of where it ran or what it measured.
    pub fn new(index: u32, status: ShardStatus, job: Option<String>) -> ShardState {
        ShardState { index, status, job, node: None, gpu_uuid: None, run_dir: None, results: 0, reason: None }
    }
}

impl CampaignManifest {
    /// The run id (`ENERGY_RUN_ID`) of shard `index`'s attempt by Slurm task `job`.
    pub fn run_id(&self, index: u32, job: &str) -> String {
        format!("{}-shard{index}-{job}", self.id)
    }

    /// The attempt folder of shard `index` by Slurm task `job`, relative to the campaign.
    pub fn attempt_dir(index: u32, job: &str) -> PathBuf {
        Path::new("shards").join(index.to_string()).join(job)
    }

    /// The shards that are not complete, in order.
    pub fn incomplete(&self) -> Vec<&ShardState> {
        self.shard_states.iter().filter(|s| s.status != ShardStatus::Complete).collect()
    }

    /// Reads and checks `dir/campaign.json`: its schema, one state per shard 1 ..= shards.
    pub fn read(dir: &Path) -> Result<CampaignManifest> {
        let path = dir.join(CAMPAIGN_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "{} has no {CAMPAIGN_FILE}: not a campaign directory of `cargo energy slurm`",
                        dir.display()
                    ),
                )
            } else {
                Error::io(&path, "read", e)
            }
        })?;
        let manifest: CampaignManifest = serde_json::from_str(&text).map_err(|e| {
            Error::new(ErrorKind::InvalidInput, format!("{} is not a campaign manifest: {e}", path.display()))
        })?;
        if manifest.schema != CAMPAIGN_SCHEMA {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "{}: schema `{}` is not {CAMPAIGN_SCHEMA} (written by another version of cargo-energy?)",
                    path.display(),
                    manifest.schema
                ),
            ));
        }
        let indices: Vec<u32> = manifest.shard_states.iter().map(|s| s.index).collect();
        if manifest.shards == 0 || indices != (1..=manifest.shards).collect::<Vec<_>>() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "{}: {} shard(s), but states for shards {indices:?}: the manifest was altered",
                    path.display(),
                    manifest.shards
                ),
            ));
        }
        Ok(manifest)
    }

    /// Writes `dir/campaign.json` atomically.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| Error::new(ErrorKind::Io, format!("could not write the campaign manifest: {e}")))?;
        crate::trace::format::write_atomically(&dir.join(CAMPAIGN_FILE), format!("{text}\n").as_bytes())
    }

    /// The runs of a report or a comparison of the campaign in `dir`: every complete shard's
    /// index and run folder. A shard that is not complete refuses it (naming each and why,
    /// and what to do) unless `partial`, when the complete ones are returned with one line per
    /// shard left out.
    pub fn runs_to_report(&self, dir: &Path, partial: bool) -> Result<(Vec<ShardRun>, Vec<String>)> {
        let missing: Vec<String> = self.incomplete().iter().map(|s| shard_line(s, self.shards)).collect();
        if !missing.is_empty() && !partial {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "campaign {} in {} is incomplete: {} of {} shard(s) hold no complete run:\n  {}\nrun the missing \
                     shards again (`cargo energy slurm --resume {}`), or report what is there with --partial",
                    self.id,
                    dir.display(),
                    missing.len(),
                    self.shards,
                    missing.join("\n  "),
                    dir.display()
                ),
            ));
        }
        let runs = self
            .shard_states
            .iter()
            .filter(|s| s.status == ShardStatus::Complete)
            .filter_map(|s| s.run_dir.as_ref().map(|r| (s.index, dir.join(r))))
            .collect();
        Ok((runs, missing))
    }
}

/// A shard's line in a refusal or a partial report: `shard 2/3 (job 17_2 on n2): missing:
/// stopped by SIGTERM …`.
pub fn shard_line(s: &ShardState, shards: u32) -> String {
    let mut where_ = Vec::new();
    if let Some(job) = &s.job {
        where_.push(format!("job {job}"));
    }
    if let Some(node) = &s.node {
        where_.push(format!("on {node}"));
    }
    let at = if where_.is_empty() { String::new() } else { format!(" ({})", where_.join(" ")) };
    let status = match s.status {
        ShardStatus::NotSubmitted => "not submitted",
        ShardStatus::Pending => "pending",
        ShardStatus::Running => "running",
        ShardStatus::Complete => "complete",
        ShardStatus::Missing => "missing",
    };
    let why = s.reason.as_ref().map_or(String::new(), |r| format!(": {r}"));
    format!("shard {}/{shards}{at}: {status}{why}", s.index)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(states: Vec<ShardStatus>) -> CampaignManifest {
        CampaignManifest {
            schema: CAMPAIGN_SCHEMA.into(),
            id: "campaign-x".into(),
            created: "2026-12-02T00:00:00Z".into(),
            shards: states.len() as u32,
            bench_args: vec![],
            device: Some("sim".into()),
            executables: vec![CampaignExecutable { file: "fma-1".into(), target: "fma".into(), hash: "00".into() }],
            working_dir: "/w".into(),
            slurm: SlurmOptions { gres: "gpu:1".into(), time: "30:00".into(), ..SlurmOptions::default() },
            submissions: vec![],
            shard_states: states
                .into_iter()
                .enumerate()
                .map(|(i, status)| ShardState {
                    index: i as u32 + 1,
                    status,
                    job: Some(format!("7_{}", i + 1)),
                    node: Some(format!("n{}", i + 1)),
                    gpu_uuid: None,
                    run_dir: (status == ShardStatus::Complete)
                        .then(|| format!("shards/{}/7_{}/energy/new", i + 1, i + 1)),
                    results: 0,
                    reason: (status == ShardStatus::Missing).then(|| "stopped by SIGTERM".into()),
                })
                .collect(),
        }
    }

    #[test]
    fn a_campaign_with_a_missing_shard_is_refused_unless_partial() {
        let m = manifest(vec![ShardStatus::Complete, ShardStatus::Missing, ShardStatus::Complete]);
        let err = m.runs_to_report(Path::new("/c"), false).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        let text = err.to_string();
        assert!(
            text.contains("1 of 3 shard(s)") && text.contains("shard 2/3 (job 7_2 on n2): missing: stopped by SIGTERM")
        );
        assert!(text.contains("--resume /c") && text.contains("--partial"), "{text}");
        let (runs, left_out) = m.runs_to_report(Path::new("/c"), true).unwrap();
        assert_eq!(
            runs,
            vec![(1, PathBuf::from("/c/shards/1/7_1/energy/new")), (3, PathBuf::from("/c/shards/3/7_3/energy/new"))]
        );
        assert_eq!(left_out.len(), 1);
        let whole = manifest(vec![ShardStatus::Complete; 3]);
        assert_eq!(whole.runs_to_report(Path::new("/c"), false).unwrap().0.len(), 3);
    }

    #[test]
    fn manifests_round_trip_and_bad_ones_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let m = manifest(vec![ShardStatus::Complete, ShardStatus::Pending]);
        m.write(dir.path()).unwrap();
        assert_eq!(CampaignManifest::read(dir.path()).unwrap(), m);
        let mut altered = m.clone();
        altered.shard_states.pop();
        altered.write(dir.path()).unwrap();
        assert!(CampaignManifest::read(dir.path()).unwrap_err().to_string().contains("the manifest was altered"));
        let mut foreign = m.clone();
        foreign.schema = "energy-campaign/9".into();
        foreign.write(dir.path()).unwrap();
        assert!(CampaignManifest::read(dir.path()).unwrap_err().to_string().contains("is not energy-campaign/1"));
        std::fs::write(dir.path().join(CAMPAIGN_FILE), "{").unwrap();
        assert!(CampaignManifest::read(dir.path()).unwrap_err().to_string().contains("is not a campaign manifest"));
        let empty = tempfile::tempdir().unwrap();
        assert!(CampaignManifest::read(empty.path()).unwrap_err().to_string().contains("not a campaign directory"));
    }

    #[test]
    fn run_ids_and_attempt_folders_name_the_shard_and_the_task() {
        let m = manifest(vec![ShardStatus::Pending]);
        assert_eq!(m.run_id(2, "17_2"), "campaign-x-shard2-17_2");
        assert_eq!(CampaignManifest::attempt_dir(2, "17_2"), Path::new("shards/2/17_2"));
    }
}
