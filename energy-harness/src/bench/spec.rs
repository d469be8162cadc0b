//! One benchmark as `#[energy_bench]` declares it: its kernel under test (code, simulated
//! model, baseline, `gpu_only`) and its options.

use criterion::Throughput;

use crate::engine::options::MeasureOptions;
use crate::engine::sweep::SweepPoint;
use crate::kernel::{KernelCode, KernelUnderTest, Role, Subject};
use crate::sim::SimKernel;

/// Why `name` cannot name a benchmark, or `None` when it can. Refused: an empty name; `.`
/// and `..` (criterion makes a folder of the name: `target/criterion/..` is `target/`, where
/// its files would land in the run directory); a name holding a control character or one
/// of the invisible characters [`crate::report::escape::is_invisible`] lists (a name is
/// printed, tabled, plotted and made a file name). Everything else works: `/`, `..` as a
/// path segment, `|`, backticks, markup, any length and any script are escaped where they
/// are written and give short file names inside the run directory
/// ([`crate::report::file_stem`]). `#[energy_bench(name = "…")]` refuses the same at
/// compile time; this catches specs built by hand.
pub fn benchmark_name_problem(name: &str) -> Option<String> {
    use crate::report::escape::{is_invisible, visible};
    if name.trim().is_empty() {
        return Some("the benchmark name is empty".into());
    }
    if name == "." || name == ".." {
        return Some(format!(
            "the benchmark name `{name}` is a folder's name (criterion makes a folder of it under target/criterion/); choose another"
        ));
    }
    if let Some(c) = name.chars().find(|&c| is_invisible(c)) {
        return Some(format!(
            "the benchmark name `{}` holds the control or invisible character U+{:04X}: a name is printed, tabled, plotted and made a file name; write it without",
            energy_results::error::echo(&visible(name)),
            u32::from(c)
        ));
    }
    None
}

/// One benchmark, as `#[energy_bench]` declares it.
pub struct BenchSpec {
    pub(super) location: (&'static str, u32),
    /// The kernel under test (named as the benchmark), its baseline, `gpu_only`.
    pub(super) subject: Subject,
    pub(super) options: MeasureOptions,
    pub(super) time_bench: bool,
    /// How it is shared out by a node's queue ([`Sharing`]).
    pub(super) sharing: Sharing,
    /// Its place in a parameterized benchmark's sweep (`args = [...]`).
    pub(super) sweep: Option<SweepPoint>,
}

/// How a benchmark is shared out between the GPUs of a node's queue (`cargo energy run
/// --gpus`); without a queue every benchmark simply runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Sharing {
    /// Claimed alone: measured on one GPU.
    #[default]
    Alone,
    /// Claimed with every benchmark of the same group (the first one's place in the
    /// queue): measured on one GPU together, e.g. an instruction's kernels and their own
    /// baseline, whose figures are computed against each other.
    Group(String),
    /// Not claimed: every GPU's process measures it, e.g. a baseline many benchmarks'
    /// figures are computed against, which each GPU needs from its own board.
    EveryGpu,
}

impl BenchSpec {
    /// A benchmark named `name`, declared at `file:line`.
    pub fn new(name: &str, file: &'static str, line: u32) -> Self {
        BenchSpec {
            location: (file, line),
            subject: Subject::new(KernelUnderTest::new(name)),
            options: MeasureOptions::DEFAULT,
            time_bench: true,
            sharing: Sharing::Alone,
            sweep: None,
        }
    }

    /// One point of the sweep `sweep` over the parameter `param`: the argument `arg` (the
    /// benchmark is named `sweep/arg`). Its result file says so, and after the sweep's last
    /// point the process prints the sweep's table and verdict.
    pub fn sweep_point(mut self, sweep: &str, param: &str, arg: &str) -> Self {
        self.sweep = Some(SweepPoint { sweep: sweep.into(), param: param.into(), arg: arg.into() });
        self
    }

    /// Its place in a sweep, if it has arguments.
    pub fn sweep(&self) -> Option<&SweepPoint> {
        self.sweep.as_ref()
    }

    /// With a node's queue, claimed together with the benchmarks of `group` ([`Sharing::Group`]).
    pub fn queue_group(mut self, group: &str) -> Self {
        self.sharing = Sharing::Group(group.to_string());
        self
    }

    /// With a node's queue, measured by every GPU's process, not claimed ([`Sharing::EveryGpu`]).
    pub fn on_every_gpu(mut self) -> Self {
        self.sharing = Sharing::EveryGpu;
        self
    }

    /// Declares that its code cannot run on the checked device (raw cudarc, a library with
    /// its own launches): without a GPU it is *not run* (one line, not a failure); with
    /// `ENERGY_REQUIRE_GPU=1` the bench binary fails, as it does for every benchmark without
    /// a GPU. Code that calls [`crate::Stream::cuda`] or [`crate::CudaGpu::cuda_context`] is
    /// found out without it, on the checked device.
    pub fn gpu_only(mut self) -> Self {
        self.subject.gpu_only = true;
        self
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.subject.kernel.name
    }

    /// Whether hash shard `shard` (`ENERGY_SHARD`) runs it: the benchmarks of one group
    /// together (their figures are computed against each other), the points of one sweep
    /// together (its verdict compares them on one board), a benchmark every GPU measures in
    /// every shard (a baseline the others need from their own board), any other by its name.
    pub fn in_shard(&self, shard: &super::run_options::Shard) -> bool {
        match &self.sharing {
            Sharing::EveryGpu => true,
            Sharing::Group(group) => shard.runs(group),
            Sharing::Alone => shard.runs(self.sweep.as_ref().map_or(self.name(), |s| s.sweep.as_str())),
        }
    }

    /// Where it was declared (file, line).
    pub fn location(&self) -> (&'static str, u32) {
        self.location
    }

    /// The kernel's code: measured on a real GPU, checked without one.
    pub fn code(mut self, code: KernelCode) -> Self {
        self.subject.kernel.code = Some(code);
        self
    }

    /// A baseline kernel (the same loop without the work under test) for net energy.
    pub fn baseline(mut self, name: &str, code: KernelCode) -> Self {
        let sim = self.baseline_kernel().and_then(|b| b.sim);
        let kernel = KernelUnderTest { name: name.to_string(), code: Some(code), sim };
        self.subject.companion(Role::Baseline, kernel);
        self
    }

    /// The kernel's model on the simulated GPU: seconds per launch and board power.
    pub fn sim(mut self, seconds: f64, watts: f64) -> Self {
        self.subject.kernel.sim = Some(SimKernel::new(seconds, watts));
        self
    }

    /// The baseline kernel's model on the simulated GPU (named "baseline" until
    /// [`BenchSpec::baseline`] names it and gives its code).
    pub fn baseline_sim(mut self, seconds: f64, watts: f64) -> Self {
        let kernel = match self.subject.companion.take() {
            Some(c) if c.role == Role::Baseline => c.kernel,
            _ => KernelUnderTest::new("baseline"),
        };
        self.subject.companion(Role::Baseline, kernel.sim(seconds, watts));
        self
    }

    /// The measurement options: ops and bytes per launch (the baseline's own in
    /// `baseline_ops`, `baseline_bytes`), the GPU by ordinal or UUID, source, precision,
    /// window length and count (checked when the benchmark runs).
    pub fn options(mut self, options: MeasureOptions) -> Self {
        self.options = options;
        self
    }

    /// Leaves out the `NAME/time` criterion benchmark (the energy windows' CUDA-event
    /// times are still reported): for suites of many short benchmarks.
    pub fn without_time_bench(mut self) -> Self {
        self.time_bench = false;
        self
    }

    /// The baseline kernel, when it has one.
    pub(super) fn baseline_kernel(&self) -> Option<&KernelUnderTest> {
        self.subject.companion_as(Role::Baseline)
    }

    pub(super) fn throughput(options: &MeasureOptions) -> Option<Throughput> {
        match (options.ops, options.bytes) {
            (Some(o), Some(b)) => Some(Throughput::ElementsAndBytes { elements: o as u64, bytes: b as u64 }),
            (Some(o), None) => Some(Throughput::Elements(o as u64)),
            (None, Some(b)) => Some(Throughput::Bytes(b as u64)),
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_names_are_refused_and_awkward_ones_work() {
        for bad in ["", "  ", ".", "..", "a\nb", "tab\there", "\u{1b}[31mred", "rlo\u{202e}x", "nul\u{0}"] {
            assert!(benchmark_name_problem(bad).is_some(), "{bad:?}");
        }
        let message = benchmark_name_problem("a\nb").unwrap();
        assert!(message.contains("`a\\nb`") && message.contains("U+000A"), "{message}");
        for good in ["saxpy", "gemm/fp16", "../../../../tmp/escape", "a|b`c", "<b>&", "能量", "a - b", "..a"] {
            assert_eq!(benchmark_name_problem(good), None, "{good:?}");
        }
        assert_eq!(benchmark_name_problem(&"x".repeat(550)), None);
    }

    /// `#[energy_bench(device = "GPU-…", baseline = base, ops = …, baseline_ops = …)]`
    /// as the macro expands it: the GPU by UUID and the baseline's counts travel in the one
    /// options literal, and resolve as they did beside it (the kernel with its counts, the
    /// baseline with its own, the UUID looked up where a driver is and the ordinal kept
    /// where none is).
    #[test]
    fn a_bench_with_a_gpu_uuid_and_baseline_counts_resolves_as_before() {
        let nothing = || KernelCode::launch(|_stream: &crate::Stream| Ok(()));
        let spec = BenchSpec::new("saxpy", file!(), line!())
            .code(nothing())
            .baseline("base", nothing())
            .sim(1e-3, 300.0)
            .baseline_sim(1e-3, 200.0)
            .options(MeasureOptions {
                ops: Some(1e6),
                baseline_ops: Some(10.0),
                device: Some(0),
                device_uuid: Some("GPU-c744a1b2-0000".into()),
                ..MeasureOptions::DEFAULT
            });
        let min = super::super::criteria::CRITERION_MIN_SAMPLES;
        let kernel = spec.options.resolve(min).unwrap();
        assert_eq!((kernel.ops, kernel.bytes, kernel.device), (Some(1e6), None, 0));
        let baseline = spec.options.baseline().resolve(min).unwrap();
        assert_eq!((baseline.ops, baseline.bytes, baseline.device), (Some(10.0), None, 0));
        let base = spec.baseline_kernel().expect("its baseline");
        assert_eq!((base.name.as_str(), base.code.is_some(), base.sim.is_some()), ("base", true, true));
        match spec.options.cuda_device() {
            Ok(ordinal) => assert_eq!(ordinal, Some(0), "no GPU driver here: the ordinal is kept"),
            Err(e) => assert!(e.message().contains("no CUDA device has the UUID GPU-c744a1b2-0000"), "{e}"),
        }
    }

    #[test]
    fn shards_keep_a_sweep_and_a_group_together_and_give_every_shard_a_shared_baseline() {
        use super::super::run_options::Shard;
        let shards: Vec<Shard> = (1..=4).map(|i| Shard::parse(&format!("{i}/4")).unwrap()).collect();
        let owners = |spec: &BenchSpec| shards.iter().filter(|s| spec.in_shard(s)).count();
        let holder = |spec: &BenchSpec| shards.iter().position(|s| spec.in_shard(s));
        // The points of a sweep: all in one shard, whichever.
        let points: Vec<BenchSpec> = ["16", "64", "256", "1024"]
            .iter()
            .map(|arg| BenchSpec::new(&format!("fma_chain/{arg}"), "b.rs", 1).sweep_point("fma_chain", "iters", arg))
            .collect();
        assert!(points.iter().all(|p| owners(p) == 1));
        assert!(points.iter().all(|p| holder(p) == holder(&points[0])), "one sweep, one shard");
        // A group's benchmarks likewise; a benchmark every GPU needs, in every shard.
        let grouped: Vec<BenchSpec> = ["add_f32", "add_f32_baseline", "mul_f32"]
            .iter()
            .map(|n| BenchSpec::new(n, "b.rs", 2).queue_group("arith"))
            .collect();
        assert!(grouped.iter().all(|g| holder(g) == holder(&grouped[0]) && owners(g) == 1));
        assert_eq!(owners(&BenchSpec::new("empty_kernel", "b.rs", 3).on_every_gpu()), 4);
        // Any other benchmark: by its name, in exactly one shard.
        assert_eq!(owners(&BenchSpec::new("saxpy", "b.rs", 4)), 1);
    }
}
