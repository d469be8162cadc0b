//! The batch script of a submission: a Slurm job array, one task per shard, each task one
//! GPU (`--gres`), running the shard with the campaign's own copy of cargo-energy.

use std::fmt::Write as _;
use std::path::Path;

use energy_results::campaign::CampaignManifest;

/// `--array`'s value for `shards` (`1-3`, `2,5`, `1-3,7`), with `%N` when at most `N` run at once.
pub(crate) fn array_spec(shards: &[u32], max_parallel: Option<u32>) -> String {
    let mut sorted = shards.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if end > start { format!("{start}-{end}") } else { start.to_string() });
        i += 1;
    }
    let limit = max_parallel.map_or(String::new(), |n| format!("%{n}"));
    format!("{}{limit}", parts.join(","))
}

/// `text` quoted for bash (single quotes; a `'` inside closed, escaped and reopened).
pub(crate) fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The batch script that runs `shards` of the campaign in `dir` (an absolute path every node
/// sees), as `sbatch` takes it.
pub(crate) fn batch_script(campaign: &CampaignManifest, dir: &Path, shards: &[u32]) -> String {
    let dir_text = dir.display().to_string();
    let options = &campaign.slurm;
    let mut s = String::new();
    let _ = writeln!(s, "#!/bin/bash");
    let _ = writeln!(
        s,
        "# cargo energy slurm: campaign {}, shard(s) {} of {}; written by cargo-energy {}.",
        campaign.id,
        array_spec(shards, None),
        campaign.shards,
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(s, "# Each array task is one shard (ENERGY_SHARD=k/{}) on one GPU.", campaign.shards);
    let short = campaign.id.trim_start_matches("campaign-");
    let _ = writeln!(s, "#SBATCH --job-name=energy-{short}");
    let _ = writeln!(s, "#SBATCH --array={}", array_spec(shards, options.max_parallel));
    let _ = writeln!(s, "#SBATCH --ntasks=1");
    let _ = writeln!(s, "#SBATCH --gres={}", options.gres);
    let _ = writeln!(s, "#SBATCH --time={}", options.time);
    if let Some(partition) = &options.partition {
        let _ = writeln!(s, "#SBATCH --partition={partition}");
    }
    // Slurm does not create the output's folder: `cargo energy slurm` made shards/<k>/.
    let _ = writeln!(s, "#SBATCH --output={dir_text}/shards/%a/slurm-%A_%a.out");
    // SIGTERM reaches the task's processes on scancel and at the time limit; the shard
    // passes it on to the bench executable and writes why it stopped before SIGKILL comes.
    for extra in &options.extra {
        let _ = writeln!(s, "#SBATCH {extra}");
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "exec {} energy slurm-shard --campaign {} --shard \"$SLURM_ARRAY_TASK_ID\"",
        shell_quote(&format!("{dir_text}/bin/cargo-energy")),
        shell_quote(&dir_text)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use energy_results::campaign::{CampaignExecutable, SlurmOptions, CAMPAIGN_SCHEMA};

    #[test]
    fn arrays_name_ranges_and_lists_with_a_limit() {
        assert_eq!(array_spec(&[1, 2, 3], None), "1-3");
        assert_eq!(array_spec(&[5, 2], None), "2,5");
        assert_eq!(array_spec(&[7, 1, 2, 3, 3], Some(2)), "1-3,7%2");
        assert_eq!(array_spec(&[4], None), "4");
    }

    #[test]
    fn quoting_survives_quotes_and_spaces() {
        assert_eq!(shell_quote("/a b/c"), "'/a b/c'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn the_script_asks_for_one_gpu_per_shard_and_runs_the_campaigns_copy() {
        let campaign = CampaignManifest {
            schema: CAMPAIGN_SCHEMA.into(),
            id: "campaign-20261202T0100Z-42".into(),
            created: "2026-12-02T01:00:00Z".into(),
            shards: 3,
            bench_args: vec![],
            device: None,
            executables: vec![CampaignExecutable { file: "fma-1".into(), target: "fma".into(), hash: "0".into() }],
            working_dir: "/w".into(),
            slurm: SlurmOptions {
                partition: Some("gpu".into()),
                gres: "gpu:h100:1".into(),
                time: "1:00:00".into(),
                max_parallel: Some(2),
                extra: vec!["--account=energy".into()],
            },
            submissions: vec![],
            shard_states: vec![],
        };
        let script = batch_script(&campaign, Path::new("/scratch/it's/c1"), &[2, 3]);
        for line in [
            "#!/bin/bash\n",
            "#SBATCH --array=2-3%2\n",
            "#SBATCH --gres=gpu:h100:1\n",
            "#SBATCH --time=1:00:00\n",
            "#SBATCH --partition=gpu\n",
            "#SBATCH --output=/scratch/it's/c1/shards/%a/slurm-%A_%a.out\n",
            "#SBATCH --account=energy\n",
            "#SBATCH --job-name=energy-20261202T0100Z-42\n",
            "exec '/scratch/it'\\''s/c1/bin/cargo-energy' energy slurm-shard --campaign '/scratch/it'\\''s/c1' --shard \"$SLURM_ARRAY_TASK_ID\"\n",
        ] {
            assert!(script.contains(line), "{line}: {script}");
        }
        // sbatch reads #SBATCH lines only before the first command.
        let first_command = script.lines().position(|l| l.starts_with("exec")).unwrap();
        assert!(script.lines().skip(first_command + 1).all(|l| !l.starts_with("#SBATCH")));
    }
}
