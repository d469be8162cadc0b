//! `cargo energy …`: the command-line face of energy-harness, in its own crate so that clap
//! and the CLI stay out of bench binaries.
//!
//! Works as a cargo subcommand (`cargo energy info`, after `cargo install --path
//! cargo-energy`) and called directly (`cargo-energy info`). Exit codes: 0 success,
//! 1 the measurement or device failed, 2 bad arguments or a bad input file.

// The doc comments of the argument structs are clap's `--help` text, where `<target>` is a
// placeholder, not HTML.
#![allow(rustdoc::invalid_html_tags)]

#[cfg(feature = "measure")]
mod ab;
#[cfg(feature = "measure")]
mod analyze;
#[cfg(feature = "measure")]
mod busy;
#[cfg(feature = "measure")]
mod calibrate;
mod explain;
#[cfg(feature = "measure")]
mod gate;
#[cfg(feature = "measure")]
mod gpus;
mod history;
#[cfg(feature = "measure")]
mod info;
mod output;
mod results;
#[cfg(feature = "measure")]
mod selftest;
#[cfg(feature = "measure")]
mod sequence_flags;
#[cfg(feature = "measure")]
mod slurm;
#[cfg(feature = "measure")]
mod thermal;
#[cfg(feature = "measure")]
mod trace;

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use energy_results::{Error, ErrorKind};
#[cfg(feature = "measure")]
use sequence_flags::{parse_seconds, SequenceFlags, AB_DEFAULTS, GATE_DEFAULTS};

/// Measure the energy of GPU kernels.
#[derive(Debug, Parser)]
#[command(name = "cargo energy", version, about, long_about = None)]
#[cfg_attr(
    not(feature = "measure"),
    command(after_help = "Built without the feature `measure` (--no-default-features): info, trace, calibrate, \
                          selftest, analyze, run, ab and gate are not in this build.")
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    #[cfg(feature = "measure")]
    /// Show the GPU's facts and which power/energy sources work on it.
    Info {
        /// The GPU: a CUDA device ordinal, counted as this process sees devices (after
        /// CUDA_VISIBLE_DEVICES), matched to NVML by UUID [default: the GPU ENERGY_DEVICE
        /// names, else 0].
        #[arg(long)]
        device: Option<u32>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    #[cfg(feature = "measure")]
    /// Record a live sensor trace (energy-trace v1 CSV).
    Trace {
        /// How long to record, seconds.
        #[arg(long, value_parser = parse_seconds)]
        seconds: f64,
        /// The GPU: a CUDA device ordinal, counted as this process sees devices (after
        /// CUDA_VISIBLE_DEVICES), matched to NVML by UUID [default: the GPU ENERGY_DEVICE
        /// names, else 0].
        #[arg(long)]
        device: Option<u32>,
        /// Output file (written atomically); standard output when absent.
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
    },
    #[cfg(feature = "measure")]
    /// Energy of each kernel window of a trace file (energy-trace v1).
    Analyze {
        /// The trace file.
        trace: PathBuf,
        /// Source to use, by its name in `cargo energy info` (counter, samples, average, …), or
        /// auto: the most preferred board source the trace holds.
        #[arg(long, default_value = "auto", value_parser = analyze::parse_source)]
        source: analyze::SourceArg,
        /// Sensor model to invert: none, first-order:TAU_S, boxcar:WIDTH_S,
        /// gated:GATE_S/PERIOD_S, default, or calibrated. Without it: the GPU's cached
        /// calibration if there is one, else the source's default.
        #[arg(long = "sensor-model", value_parser = analyze::parse_model)]
        sensor_model: Option<energy_harness::unstable::engine::ModelChoice>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Also draw raw and corrected power, the windows and the idle level as SVG here.
        #[arg(long)]
        plot: Option<PathBuf>,
    },
    /// One table of all benchmarks of a run (target/energy/new), optionally against a baseline.
    ///
    /// Exit 0 when reported, 2 on bad input (a run it cannot trust: no manifest, a failed
    /// run, a stray or altered file, another job's run). A partial run (a bench target that
    /// never finished: interrupted, crashed, killed, or still running) is reported with the
    /// results it committed under a first line `PARTIAL RUN: run … is partial: bench target …
    /// never finished` (JSON: `partial`, with `unfinished_targets`), and the exit status is
    /// then 2, as compare refuses it; bmf and github-action-benchmark refuse it outright.
    Report {
        /// Directory of the runs [default: <target>/energy, the target directory found as
        /// cargo finds it: CARGO_TARGET_DIR, .cargo/config.toml, the workspace's target/].
        /// Repeat it for several (one per GPU or runner): one table per GPU, never merged.
        #[arg(long)]
        dir: Vec<PathBuf>,
        /// The run to report (a saved baseline name, or `new`).
        #[arg(long, default_value = "new")]
        run: String,
        /// A saved baseline to show the change against.
        #[arg(long)]
        baseline: Option<String>,
        /// markdown (for a pull-request comment), json, html (with the power traces), bmf
        /// (Bencher Metric Format) or github-action-benchmark (customSmallerIsBetter).
        #[arg(long, default_value = "markdown", value_parser = clap::value_parser!(energy_report::Format))]
        format: energy_report::Format,
        /// Regression threshold, percent (for the change column).
        #[arg(long, default_value_t = 5.0)]
        threshold: f64,
        /// Write it here instead of standard output.
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
        /// Report only the run that `cargo bench` wrote with ENERGY_RUN_ID=ID; any other run
        /// (another job's, a stale one, one copied in) is refused [default: ENERGY_RUN_ID
        /// when set and not empty].
        #[arg(long = "run-id", value_name = "ID")]
        run_id: Option<String>,
        /// A campaign of `cargo energy slurm` (a --dir holding campaign.json) with shards
        /// missing: report the shards that are complete, naming those missing, instead of
        /// refusing it.
        #[arg(long)]
        partial: bool,
    },
    #[cfg(feature = "measure")]
    /// Run the benches on several GPUs of this node at once, one process per GPU taking
    /// benchmarks from one queue: `cargo energy run --gpus all -- --bench fma -- FILTER`. Results per GPU under
    /// <target>/energy-gpus/; exit 1 when a GPU's run failed (an executable's exit code or
    /// signal, its time limit, or a run that is missing or incomplete) or nothing was
    /// measured on any GPU.
    Run {
        /// The GPUs: all (every GPU CUDA sees), CUDA ordinals (0,2) or UUIDs (GPU-…,GPU-…).
        #[arg(long, default_value = "all")]
        gpus: String,
        /// A bench executable built elsewhere (`cargo bench --no-run` prints their paths), for
        /// a runner without a Rust toolchain; repeat for several. It runs in the current
        /// folder; without it the benches are built here first.
        #[arg(long = "exe")]
        exes: Vec<PathBuf>,
        /// The longest one bench executable may run on one GPU: seconds, or `90m`, `2h`; 0 for
        /// no limit. One still running then is stopped (SIGTERM, SIGKILL 5 s later) and its
        /// GPU's run fails.
        #[arg(long, default_value = gpus::DEFAULT_TIMEOUT, value_parser = gpus::parse_timeout)]
        timeout: gpus::TimeLimit,
        /// How the benchmarks are split between the GPUs: `queue` (each GPU takes the next
        /// when it is done with one, longest first when the last run's durations are known)
        /// or `hash` (hash shards, ENERGY_SHARD: a benchmark on the same GPU run after run,
        /// for `compare` against per-GPU baselines).
        #[arg(long, value_enum, default_value = "queue")]
        split: gpus::Split,
        /// `cargo bench` arguments, then `--` and the bench binaries' own (criterion's filter).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Where a measured kernel's energy goes: its Nsight Compute counts priced with a GPU
    /// model's fitted costs (compute by class, data movement by level), beside the measured
    /// dynamic, static and total energy.
    Explain {
        /// The benchmark (its name, `saxpy`, or id): its result in the run `--run` under
        /// `--dir`; where ncu is installed, its `--test` run is profiled for you.
        #[arg(conflicts_with = "result")]
        name: Option<String>,
        /// A result file (`<target>/energy/<run>/<id>.json`) instead of a benchmark's name.
        #[arg(long)]
        result: Option<PathBuf>,
        /// Directory of the runs [default: <target>/energy, the target directory found as
        /// cargo finds it].
        #[arg(long)]
        dir: Option<PathBuf>,
        /// The run holding the benchmark's result.
        #[arg(long, default_value = "new")]
        run: String,
        /// A model file (`energy-model/1`) [default: the model that ships for the result's
        /// GPU model; a GPU without one is refused].
        #[arg(long)]
        model: Option<PathBuf>,
        /// ncu's CSV export of the kernel's launches (`--csv --page raw`) [default with a
        /// name: profiled with ncu when installed; else the command is printed].
        #[arg(long)]
        ncu: Option<PathBuf>,
        /// The bench executable to profile [default: built by `cargo bench --no-run`].
        #[arg(long)]
        exe: Option<PathBuf>,
        /// The kernel's name in the export (its short name will do) [default: one measured
        /// call: the repeat of launches that lasts about the measured time per call, its
        /// counts summed].
        #[arg(long)]
        kernel: Option<String>,
        /// Print JSON instead of markdown.
        #[arg(long)]
        json: bool,
        /// Also write explain.md, explain.json and explain.svg in this folder.
        #[arg(long)]
        output: Option<PathBuf>,
    },
    #[cfg(feature = "measure")]
    /// Run a baseline's and a candidate's bench executables interleaved on one GPU (A B B A
    /// A B B A …) and judge each benchmark's change from the paired differences, which cancel
    /// the GPU's drift. Exit 1 on a regression, 0 otherwise, 2 when nothing could be decided.
    Ab {
        /// The baseline's bench executable (A); repeat it for each of its bench targets.
        #[arg(long, required = true)]
        baseline: Vec<PathBuf>,
        /// The candidate's bench executable (B); repeat it for each of its bench targets.
        #[arg(long, required = true)]
        candidate: Vec<PathBuf>,
        #[command(flatten)]
        sequence: SequenceFlags,
        /// text, json (energy-ab/1) or markdown.
        #[arg(long, value_enum, default_value = "text")]
        format: ab::AbFormat,
        /// Arguments for both executables (criterion's filter), after `--`.
        #[arg(last = true)]
        args: Vec<String>,
    },
    #[cfg(feature = "measure")]
    /// A pull request's energy gate in one step: build the base revision (a git worktree,
    /// cached per commit) and the checkout, run every bench target of both interleaved on one
    /// GPU (ABBA, as `ab`), print the verdict and the smallest change it could detect, and
    /// write the pull-request comment. `--build-only DIR` then `--prebuilt DIR` split it for a
    /// GPU machine without a toolchain. Exit 1 on a regression, 0 otherwise, 2 when nothing
    /// could be decided.
    Gate {
        /// The base revision to gate against (origin/main, a commit).
        #[arg(long)]
        base: Option<String>,
        /// Only these bench targets (cargo's `--bench NAME`; repeat for several).
        #[arg(long = "bench", value_name = "NAME")]
        benches: Vec<String>,
        /// Only this package of a workspace (cargo's `-p`).
        #[arg(short = 'p', long = "package", value_name = "SPEC")]
        package: Option<String>,
        /// Features for both builds (cargo's `--features`).
        #[arg(long)]
        features: Option<String>,
        /// Build both sides into DIR and stop (copy DIR to the GPU machine).
        #[arg(long = "build-only", value_name = "DIR")]
        build_only: Option<PathBuf>,
        /// Run what `--build-only DIR` built (no cargo, no git needed).
        #[arg(long, value_name = "DIR")]
        prebuilt: Option<PathBuf>,
        /// Also write the pull-request comment (markdown) here.
        #[arg(long)]
        markdown: Option<PathBuf>,
        #[command(flatten)]
        sequence: SequenceFlags,
        /// Arguments for every bench executable (criterion's filter), after `--`.
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// Exit 1 when a benchmark's energy rose by more than the threshold, significantly, on a
    /// basis that holds the drift between runs; 3 when a rise is beyond the threshold but the
    /// drift between runs is unknown (one baseline run: INCONCLUSIVE); 2 on bad input; 0
    /// otherwise.
    Compare {
        /// The saved baseline (under --dir). Repeat it with several saved runs of the
        /// baseline code (CI artifacts of main, say; three or more): the baseline figure is
        /// their mean and the verdict's noise their spread, which holds the drift between
        /// runs that one run's interval does not.
        #[arg(long, required_unless_present = "history")]
        baseline: Vec<String>,
        /// Folders holding saved runs of main (downloaded CI artifacts, `target/energy`): the
        /// newest `--history-runs` complete runs there on the candidate's GPU are the
        /// baseline runs, their spread the noise (instead of `--baseline`).
        #[arg(long, value_name = "DIR", conflicts_with = "baseline")]
        history: Vec<PathBuf>,
        /// How many of the newest runs `--history` takes (2 or more).
        #[arg(long = "history-runs", default_value_t = 5, requires = "history")]
        history_runs: usize,
        /// The candidate run.
        #[arg(long, default_value = "new")]
        candidate: String,
        /// Directory of the runs [default: <target>/energy, as for report]. Repeat it for
        /// several: each directory's candidate is compared with its own baseline (the same
        /// GPU), and the exit status is 1 when any regressed.
        #[arg(long)]
        dir: Vec<PathBuf>,
        /// Regression threshold, percent.
        #[arg(long, default_value_t = 5.0)]
        threshold: f64,
        /// Compare runs made on different boards of one GPU model (CI runners that differ):
        /// dynamic energy only, the threshold at least 15 % (the board-to-board spread);
        /// without it, results of two GPUs are refused.
        #[arg(long)]
        across_boards: bool,
        /// A benchmark of the baseline removed on purpose (repeat for several). Any other
        /// baseline benchmark missing from the candidate fails the comparison (exit 2): a
        /// crashed, interrupted or filtered run is not a pass.
        #[arg(long = "removed", value_name = "ID")]
        removed: Vec<String>,
        /// Judge on the two runs' within-run intervals alone, as if the GPU did not drift
        /// between runs: a drift beyond the threshold is then called a regression (one
        /// baseline run only).
        #[arg(long = "within-run", conflicts_with_all = ["drift", "control"])]
        within_run: bool,
        /// The board's between-run drift, percent: the standard deviation of an unchanged
        /// benchmark's change between two runs (from repeats; `cargo energy ab` of one build
        /// against itself), added to every change's noise (one baseline run only).
        #[arg(long, value_name = "PCT", conflicts_with = "control")]
        drift: Option<f64>,
        /// A control benchmark: unchanged code measured in both runs, whose change is drift
        /// (repeat for two or more: their mean change is taken out of every other change,
        /// their spread is the noise; one baseline run only).
        #[arg(long = "control", value_name = "ID")]
        control: Vec<String>,
        /// Compare only the candidate run that `cargo bench` wrote with ENERGY_RUN_ID=ID; any
        /// other (another job's run, a stale one left when this job's bench could not start,
        /// one copied in) is refused, exit 2 [default: ENERGY_RUN_ID when set and not empty].
        #[arg(long = "run-id", value_name = "ID")]
        run_id: Option<String>,
        /// A campaign of `cargo energy slurm` (a --dir holding campaign.json) with shards
        /// missing: compare the shards that are complete instead of refusing it.
        #[arg(long)]
        partial: bool,
    },
    #[cfg(feature = "measure")]
    /// A benchmark campaign on a Slurm cluster: the benches built here once, copied to a
    /// campaign directory the nodes share, and run as a job array of one-GPU tasks, one hash
    /// shard each: `cargo energy slurm --shards 8 --partition gpu -- --bench fma`. Waits with
    /// progress, gathers every shard's run and prints the report, one table per board. Exit 0
    /// when every shard is complete, 1 when one is missing (failed, cancelled, timed out,
    /// node lost: each named; `--resume DIR` runs them again), 2 on bad input.
    Slurm {
        /// Hash shards, one array task (one GPU) each.
        #[arg(long, default_value_t = 1)]
        shards: u32,
        /// sbatch --partition.
        #[arg(long)]
        partition: Option<String>,
        /// sbatch --gres of each task: one GPU (`gpu:1`, or a typed `gpu:h100:1`).
        #[arg(long, default_value = "gpu:1")]
        gres: String,
        /// sbatch --time of each task (Slurm's form: `30:00`, `2:00:00`).
        #[arg(long, default_value = "1:00:00")]
        time: String,
        /// At most this many shards at once (`--array=…%N`).
        #[arg(long = "max-parallel")]
        max_parallel: Option<u32>,
        /// A further #SBATCH option, as sbatch takes it (`--account=energy`); repeat for several.
        #[arg(long = "sbatch", value_name = "OPTION", allow_hyphen_values = true)]
        sbatch: Vec<String>,
        /// The campaign directory [default: <target>/energy-campaigns/<id>]: every node must
        /// see it at the same path.
        #[arg(long, conflicts_with = "resume")]
        dir: Option<PathBuf>,
        /// Wait for the jobs of the campaign in DIR, gather them, and run again the shards
        /// that are missing (its executables, options and arguments as first submitted).
        #[arg(long, value_name = "DIR")]
        resume: Option<PathBuf>,
        /// `sim` or `sim:PRESET`: every task on the simulated GPU, one board per node and GPU
        /// index (a cluster without GPUs, a test); without it each task measures its GPU.
        #[arg(long)]
        device: Option<String>,
        /// A bench executable built elsewhere (repeat for several), instead of building here.
        #[arg(long = "exe")]
        exes: Vec<PathBuf>,
        /// Print the batch script; build nothing into the campaign, submit nothing.
        #[arg(long = "dry-run")]
        dry_run: bool,
        /// Submit and return; `--resume DIR` waits and gathers later.
        #[arg(long = "no-wait")]
        no_wait: bool,
        /// Seconds between squeue queries while waiting.
        #[arg(long, default_value_t = 10.0, value_parser = parse_seconds)]
        poll: f64,
        /// The longest to wait for the shards (`90m`, `12h`, seconds); shards still pending or
        /// running then are named, and go on: `--resume DIR` gathers them later [default: no
        /// limit].
        #[arg(long = "max-wait", value_parser = gpus::parse_timeout)]
        max_wait: Option<gpus::TimeLimit>,
        /// `cargo bench` arguments, then `--` and the bench binaries' own (criterion's filter).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    #[cfg(feature = "measure")]
    /// One shard of a campaign, inside its Slurm array task (what `cargo energy slurm`'s batch
    /// script runs).
    #[command(name = "slurm-shard", hide = true)]
    SlurmShard {
        /// The campaign directory.
        #[arg(long)]
        campaign: PathBuf,
        /// The shard (SLURM_ARRAY_TASK_ID).
        #[arg(long)]
        shard: u32,
    },
    /// Energy per launch of each benchmark across saved runs (commits), with its 95 %
    /// interval: an SVG per benchmark and index.html in --output, a table on standard output.
    /// Runs are ordered by commit time when their results know it, else by start; each GPU
    /// is its own series; a point is marked when its change from the previous run on that
    /// GPU is a regression by `compare`'s rule.
    History {
        /// Run directories (target/energy/main) or folders holding them at any depth
        /// (downloaded CI artifacts): every directory with a run.json is a run.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Regression threshold, percent (as for compare).
        #[arg(long, default_value_t = 5.0)]
        threshold: f64,
        /// Where the SVGs and index.html go [default: <target>/energy/history].
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
        /// Only the results of the GPU whose UUID starts with this (`GPU-8e3995bd`): one
        /// board's history where the runs hold several.
        #[arg(long)]
        gpu: Option<String>,
    },
    #[cfg(feature = "measure")]
    /// Check this GPU's sensors against physics (linearity in launch count and in duty,
    /// agreement of independent sources): a verdict per source, in under a minute. Exit 1
    /// when the source the harness measures with fails a check.
    Selftest {
        /// The GPU: a CUDA device ordinal, counted as this process sees devices (after
        /// CUDA_VISIBLE_DEVICES), matched to NVML by UUID [default: the GPU ENERGY_DEVICE
        /// names, else 0].
        #[arg(long)]
        device: Option<u32>,
        /// Print the report as JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Also write the JSON report here (atomically).
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
    },
    #[cfg(feature = "measure")]
    /// Run a step response on the GPU and fit each source's sensor model; cached per GPU UUID.
    Calibrate {
        /// The GPU: a CUDA device ordinal, counted as this process sees devices (after
        /// CUDA_VISIBLE_DEVICES), matched to NVML by UUID [default: the GPU ENERGY_DEVICE
        /// names, else 0].
        #[arg(long)]
        device: Option<u32>,
        /// Length of the busy step, seconds.
        #[arg(long = "busy-seconds", default_value_t = 3.0, value_parser = parse_seconds)]
        busy_seconds: f64,
        /// Print the calibration as JSON.
        #[arg(long)]
        json: bool,
        /// Also write the step-response trace here.
        #[arg(long = "trace")]
        trace: Option<PathBuf>,
        /// Do not save it in the calibration cache.
        #[arg(long = "no-save")]
        no_save: bool,
        /// Fit the board's load power against its die temperature (dP/dT) instead: a busy
        /// kernel measured back to back for --thermal-seconds from a cold board (idle a
        /// minute or more); later results also carry their energy at 50 °C, which compare
        /// uses when both runs have it.
        #[arg(long)]
        thermal: bool,
        /// How long the thermal calibration runs, seconds.
        #[arg(long = "thermal-seconds", default_value_t = 90.0, value_parser = parse_seconds)]
        thermal_seconds: f64,
    },
}

/// The run a reader must find: `--run-id`, else `ENERGY_RUN_ID` from the environment
/// (unset or empty: any run).
fn run_pin(flag: Option<String>) -> energy_results::Result<Option<energy_results::RunPin>> {
    use energy_results::RunPin;
    match flag {
        Some(id) if id.trim().is_empty() => Err(Error::new(
            ErrorKind::InvalidInput,
            "--run-id is empty: give the ENERGY_RUN_ID your `cargo bench` ran with",
        )),
        Some(id) => Ok(Some(RunPin { id: id.trim().to_string(), given_by: "--run-id".into() })),
        None => Ok(std::env::var("ENERGY_RUN_ID").ok().filter(|v| !v.trim().is_empty()).map(|id| RunPin {
            id: id.trim().to_string(),
            given_by: "ENERGY_RUN_ID (set in this environment; unset it to compare any run)".into(),
        })),
    }
}

/// The `--dir` values, or the one directory found as cargo finds it.
fn dirs_or_default(dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    if dirs.is_empty() {
        vec![energy_results::energy_dir()]
    } else {
        dirs
    }
}

fn main() -> ExitCode {
    run(std::env::args_os())
}

impl Command {
    /// Whether everything the command can fail on is its input (files, their contents, the
    /// options): exit 2, not 1.
    fn reads_input_only(&self) -> bool {
        #[allow(unreachable_patterns)]
        match self {
            Command::Report { .. } | Command::Compare { .. } | Command::Explain { .. } | Command::History { .. } => {
                true
            }
            #[cfg(feature = "measure")]
            Command::Analyze { .. } | Command::Ab { .. } | Command::Gate { .. } => true,
            _ => false,
        }
    }
}

/// The commands a build without the feature `measure` lacks.
#[cfg(not(feature = "measure"))]
const MEASURING_COMMANDS: &[&str] =
    &["info", "trace", "analyze", "run", "ab", "gate", "selftest", "calibrate", "slurm", "slurm-shard"];

/// Runs the command line `args` (the program name first).
fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let mut args: Vec<OsString> = args.into_iter().collect();
    // `cargo energy info` runs `cargo-energy energy info`.
    if args.get(1).is_some_and(|a| a == "energy") {
        args.remove(1);
    }
    #[cfg(not(feature = "measure"))]
    if let Some(name) = args.get(1).and_then(|a| a.to_str()).filter(|a| MEASURING_COMMANDS.contains(a)) {
        eprintln!(
            "error: `cargo energy {name}` needs the feature `measure`: this cargo-energy was built with \
             --no-default-features and reads results only (report, compare, history, explain); install it \
             again without --no-default-features"
        );
        return ExitCode::from(2);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    // Everything `analyze` can fail on is its input (the file, its contents, the options).
    let input_only = cli.command.reads_input_only();
    let result = match cli.command {
        #[cfg(feature = "measure")]
        Command::Info { device, json } => info::run(device, json),
        #[cfg(feature = "measure")]
        Command::Trace { seconds, device, output } => trace::run(seconds, device, output.as_deref()),
        #[cfg(feature = "measure")]
        Command::Analyze { trace, source, sensor_model, json, plot } => {
            analyze::run(&trace, source.0, sensor_model, json, plot.as_deref())
        }
        #[cfg(feature = "measure")]
        Command::Calibrate { device, thermal: true, thermal_seconds, json, no_save, .. } => {
            thermal::run(device, thermal_seconds, json, !no_save)
        }
        #[cfg(feature = "measure")]
        Command::Calibrate { device, busy_seconds, json, trace, no_save, .. } => {
            calibrate::run(device, busy_seconds, json, trace.as_deref(), !no_save)
        }
        #[cfg(feature = "measure")]
        Command::Selftest { device, json, output } => match selftest::run(device, json, output.as_deref()) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::from(1),
            Err(e) => Err(e),
        },
        Command::Report { dir, run, baseline, format, threshold, output, run_id, partial } => {
            run_pin(run_id).and_then(|pin| {
                let dirs = dirs_or_default(dir);
                match dirs.as_slice() {
                    [one] if results::is_campaign(one) && baseline.is_none() && run == "new" => {
                        let campaign = energy_results::campaign::CampaignManifest::read(one)?;
                        let output = output.as_deref();
                        results::report_campaign(one, &campaign, partial, pin.as_ref(), format, threshold, output)
                    }
                    _ => {
                        let runs = results::Runs { dirs: results::expand_campaigns(dirs, partial)?, pin };
                        results::report(&runs, &run, baseline.as_deref(), format, threshold, output.as_deref())
                    }
                }
            })
        }
        Command::History { dirs, threshold, output, gpu } => {
            let output = output.unwrap_or_else(|| energy_results::energy_dir().join("history"));
            history::run(&dirs, threshold, gpu.as_deref(), &output)
        }
        Command::Explain { name, result, dir, run, model, ncu, exe, kernel, json, output } => {
            let dir = dir.unwrap_or_else(energy_results::energy_dir);
            explain::run(&explain::Asked {
                name: name.as_deref(),
                result: result.as_deref(),
                dir: &dir,
                run: &run,
                model: model.as_deref(),
                ncu: ncu.as_deref(),
                exe: exe.as_deref(),
                kernel: kernel.as_deref(),
                json,
                output: output.as_deref(),
            })
        }
        #[cfg(feature = "measure")]
        Command::Run { gpus, exes, timeout, split, args } => match gpus::run(&gpus, &exes, timeout.0, split, &args) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::from(1),
            Err(e) => Err(e),
        },
        #[cfg(feature = "measure")]
        Command::Slurm {
            shards,
            partition,
            gres,
            time,
            max_parallel,
            sbatch,
            dir,
            resume,
            device,
            exes,
            dry_run,
            no_wait,
            poll,
            max_wait,
            args,
        } => {
            let request = slurm::SlurmRequest {
                dir,
                resume,
                shards,
                slurm: energy_results::campaign::SlurmOptions { partition, gres, time, max_parallel, extra: sbatch },
                device,
                exes,
                dry_run,
                no_wait,
                poll: std::time::Duration::from_secs_f64(poll),
                max_wait: max_wait.and_then(|m| m.0),
                args,
            };
            match slurm::run(&request) {
                Ok(true) => Ok(()),
                Ok(false) => return ExitCode::from(1),
                Err(e) => Err(e),
            }
        }
        #[cfg(feature = "measure")]
        Command::SlurmShard { campaign, shard } => {
            match slurm::shard::TaskEnv::from_env().and_then(|task| slurm::shard::run_shard(&campaign, shard, &task)) {
                Ok(true) => Ok(()),
                Ok(false) => return ExitCode::from(1),
                Err(e) => Err(e),
            }
        }
        #[cfg(feature = "measure")]
        Command::Ab { baseline, candidate, sequence, format, args } => {
            let asked = ab::AbArgs { baseline, candidate, sequence: sequence.into_args(&AB_DEFAULTS, args), format };
            match ab::run(&asked) {
                Ok(false) => Ok(()),
                Ok(true) => return ExitCode::from(1),
                Err(e) => Err(e),
            }
        }
        #[cfg(feature = "measure")]
        Command::Gate { base, benches, package, features, build_only, prebuilt, markdown, sequence, args } => {
            let mut cargo_args: Vec<String> = benches.iter().flat_map(|b| ["--bench".to_string(), b.clone()]).collect();
            cargo_args.extend(package.into_iter().flat_map(|p| ["--package".to_string(), p]));
            cargo_args.extend(features.into_iter().flat_map(|f| ["--features".to_string(), f]));
            let asked = gate::GateArgs {
                base,
                cargo_args,
                build_only,
                prebuilt,
                markdown,
                sequence: sequence.into_args(&GATE_DEFAULTS, args),
            };
            match gate::run(&asked) {
                Ok(false) => Ok(()),
                Ok(true) => return ExitCode::from(1),
                Err(e) => Err(e),
            }
        }
        Command::Compare {
            baseline,
            candidate,
            dir,
            threshold,
            across_boards,
            removed,
            history,
            history_runs,
            within_run,
            drift,
            control,
            run_id,
            partial,
        } => {
            let drift = match (within_run, drift, control.is_empty()) {
                (true, _, _) => energy_report::DriftBasis::WithinRunOnly,
                (false, Some(pct), _) => energy_report::DriftBasis::Stated(pct),
                (false, None, false) => energy_report::DriftBasis::Controls(control),
                (false, None, true) => energy_report::DriftBasis::Unknown,
            };
            let compared = run_pin(run_id).and_then(|pin| {
                let runs = results::Runs { dirs: results::expand_campaigns(dirs_or_default(dir), partial)?, pin };
                let options =
                    results::CompareOptions { threshold, across_boards, removed, drift, history, history_runs };
                results::compare(&runs, &baseline, &candidate, &options)
            });
            match compared {
                Ok(results::Outcome { regressed: true, .. }) => return ExitCode::from(1),
                Ok(results::Outcome { inconclusive: true, .. }) => return ExitCode::from(3),
                Ok(_) => Ok(()),
                Err(e) => Err(e),
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::from(if input_only { 2 } else { output::exit_code(&e) })
        }
    }
}
