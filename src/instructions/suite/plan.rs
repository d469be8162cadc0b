//! The plan of the instruction suite: options (levels, thread mode), the kernels of each instruction (K and 2K steps) and their baselines.

use super::*;

/// Threads per block at full occupancy.
pub const THREADS_PER_BLOCK: u32 = 256;
/// Blocks per SM at full occupancy (2048 threads per SM).
pub const BLOCKS_PER_SM: u32 = 8;
/// Threads per warp.
pub const WARP: f64 = 32.0;
/// Least r² of the energy-over-K fit that the check accepts: energy per iteration must
/// grow in a straight line with the chain's length.
pub const MIN_R2: f64 = 0.995;
/// "div/rem >> add": each division or remainder must cost at least this many additions.
pub const DIVISION_OVER_ADD: f64 = 5.0;

/// How the suite runs, from the environment.
#[derive(Clone, Debug, PartialEq)]
pub struct SuiteOptions {
    /// JIT optimization levels measured (`ENERGY_INSTRUCTIONS_LEVELS`, default `O4,O0`).
    pub levels: Vec<JitOptLevel>,
    /// Chain lengths measured (`ENERGY_INSTRUCTIONS_K`, default all of [`K_SWEEP`] at full
    /// occupancy, `128` in the one-thread mode): the slope needs at least three.
    pub k_values: Vec<u32>,
    /// One thread instead of a full GPU (`ENERGY_INSTRUCTIONS_THREADS=one`).
    pub one_thread: bool,
    /// GPU time per launch the loop count is sized for, s.
    pub launch_s: f64,
    /// How each kernel is measured (precision, window length and count).
    pub measure: MeasureOptions,
    /// Loop iterations of the verification launch of exactly specified instructions
    /// (approximate ones are checked after one iteration, where their error bound holds).
    pub verify_iterations: u32,
}

impl Default for SuiteOptions {
    fn default() -> Self {
        SuiteOptions {
            levels: vec![JitOptLevel::O4, JitOptLevel::O0],
            k_values: K_SWEEP.to_vec(),
            one_thread: false,
            launch_s: 0.010,
            measure: suite_measure_options(),
            verify_iterations: 64,
        }
    }
}

pub(super) fn parse_level(text: &str) -> Result<JitOptLevel> {
    Ok(match text.trim().to_ascii_uppercase().as_str() {
        "O0" => JitOptLevel::O0,
        "O1" => JitOptLevel::O1,
        "O2" => JitOptLevel::O2,
        "O3" => JitOptLevel::O3,
        "O4" => JitOptLevel::O4,
        other => {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("ENERGY_INSTRUCTIONS_LEVELS: `{other}` is not a JIT level (O0 to O4, e.g. `O4,O0`)"),
            ))
        }
    })
}

/// The short name of a level (`O4`).
pub fn level_name(level: JitOptLevel) -> String {
    format!("{level:?}")
}

impl SuiteOptions {
    /// The options, with `ENERGY_INSTRUCTIONS_LEVELS` (`O4,O0`) and
    /// `ENERGY_INSTRUCTIONS_THREADS` (`full` or `one`) applied.
    pub fn from_env() -> Result<SuiteOptions> {
        let mut options = SuiteOptions::default();
        if let Ok(text) = std::env::var("ENERGY_INSTRUCTIONS_LEVELS") {
            let levels =
                text.split(',').filter(|s| !s.trim().is_empty()).map(parse_level).collect::<Result<Vec<_>>>()?;
            if levels.is_empty() {
                return Err(Error::new(ErrorKind::InvalidInput, "ENERGY_INSTRUCTIONS_LEVELS is empty (e.g. `O4,O0`)"));
            }
            options.levels = levels;
        }
        if let Ok(text) = std::env::var("ENERGY_INSTRUCTIONS_THREADS") {
            options.one_thread = match text.trim() {
                "full" | "" => false,
                "one" | "1" => true,
                other => {
                    return Err(Error::new(
                        ErrorKind::InvalidInput,
                        format!("ENERGY_INSTRUCTIONS_THREADS: `{other}` is neither `full` nor `one`"),
                    ))
                }
            };
        }
        if options.one_thread {
            options.k_values = vec![*K_SWEEP.last().unwrap_or(&K_NET)];
        }
        if let Ok(text) = std::env::var("ENERGY_INSTRUCTIONS_K") {
            let mut ks = Vec::new();
            for part in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                match part.parse::<u32>() {
                    Ok(k) if K_SWEEP.contains(&k) => ks.push(k),
                    _ => {
                        return Err(Error::new(
                            ErrorKind::InvalidInput,
                            format!("ENERGY_INSTRUCTIONS_K: `{part}` is not one of the chain lengths {K_SWEEP:?}"),
                        ))
                    }
                }
            }
            ks.sort_unstable();
            ks.dedup();
            if ks.is_empty() {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    "ENERGY_INSTRUCTIONS_K is empty (e.g. `8,16,32,64,128`)",
                ));
            }
            options.k_values = ks;
        }
        Ok(options)
    }

    /// The chain length of the net figure and of the launch shown: [`K_NET`] when measured,
    /// else the longest measured.
    pub fn net_k(&self) -> u32 {
        if self.k_values.contains(&K_NET) {
            K_NET
        } else {
            self.k_values.iter().copied().max().unwrap_or(K_NET)
        }
    }

    /// The lengths at which a chain's helpers are measured alone: the shortest, the net
    /// one and the longest (three points of the helper's own slope).
    pub fn helper_k_values(&self) -> Vec<u32> {
        let mut ks: Vec<u32> = [self.k_values.first().copied(), Some(self.net_k()), self.k_values.last().copied()]
            .into_iter()
            .flatten()
            .collect();
        ks.sort_unstable();
        ks.dedup();
        ks
    }
}

/// What a kernel's setup found on the GPU: its size and the verification of its result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaunchFacts {
    /// Loop iterations per launch.
    pub iterations: u32,
    /// Blocks.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Blocks of this kernel that fit on one SM (the driver's occupancy calculator).
    pub resident_blocks_per_sm: u32,
    /// Threads whose stored result was checked against the host's.
    pub verified_threads: usize,
    /// Loop iterations of the verification launch.
    pub verify_iterations: u32,
    /// Mean bits flipped in the destination of each measured instruction (host, thread 0).
    pub toggles_per_instruction: f64,
    /// SMs of the GPU.
    #[serde(default)]
    pub sm_count: u32,
    /// The machine code that ran, as read back from the module.
    #[serde(default)]
    pub machine_code: MachineCode,
}

impl LaunchFacts {
    /// Threads per launch.
    pub fn threads(&self) -> f64 {
        self.blocks as f64 * self.threads_per_block as f64
    }
}

/// One kernel the suite measures.
#[derive(Clone, Debug)]
pub struct PlannedKernel {
    /// The benchmark's name (criterion group), see [`kernel_name`].
    pub name: String,
    /// The instruction whose file holds the kernel.
    pub instruction: Instruction,
    /// Which kernel of the file.
    pub variant: Variant,
    /// JIT level.
    pub level: JitOptLevel,
}

/// The benchmark name of one of an instruction's kernels:
/// `instructions/<category>/<stem>/<level>/<kernel>`.
pub fn kernel_name(instruction: &Instruction, variant: Variant, level: JitOptLevel) -> String {
    format!(
        "instructions/{}/{}/{}/{}",
        instruction.category.short(),
        instruction.stem,
        level_name(level),
        variant.suffix()
    )
}

/// Name of a baseline benchmark: the loop alone is the same for every instruction of a
/// register width (`instructions/base/w32/O4`); a chain's helpers alone are its own.
pub(super) fn baseline_name(instruction: &Instruction, variant: Variant, level: JitOptLevel) -> String {
    match variant {
        Variant::Base => format!("instructions/base/w{}/{}", instruction.width.bits(), level_name(level)),
        other => kernel_name(instruction, other, level),
    }
}

/// The benchmark a kernel's figures are subtracted against.
pub fn baseline_of(instruction: &Instruction, variant: Variant, level: JitOptLevel) -> String {
    baseline_name(instruction, variant.baseline(instruction), level)
}

/// The kernels to measure, in order: per level, each instruction's chain at every K (and
/// its helpers alone where it has a helper), and each distinct baseline once, where it is
/// first needed.
pub fn plan(options: &SuiteOptions, instructions: &[Instruction]) -> Vec<PlannedKernel> {
    let mut kernels: Vec<PlannedKernel> = Vec::new();
    let mut push = |name: String, instruction: &Instruction, variant: Variant, level: JitOptLevel| {
        if !kernels.iter().any(|k| k.name == name) {
            kernels.push(PlannedKernel { name, instruction: instruction.clone(), variant, level });
        }
    };
    for &level in &options.levels {
        for instruction in instructions {
            push(baseline_name(instruction, Variant::Base, level), instruction, Variant::Base, level);
            if instruction.helper.is_some() {
                for k in options.helper_k_values() {
                    push(kernel_name(instruction, Variant::Helpers(k), level), instruction, Variant::Helpers(k), level);
                }
            }
            for &k in &options.k_values {
                push(kernel_name(instruction, Variant::Chain(k), level), instruction, Variant::Chain(k), level);
            }
        }
    }
    kernels
}
