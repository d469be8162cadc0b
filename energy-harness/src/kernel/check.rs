//! What becomes of a kernel under test on a device before anything is measured: on the
//! simulated GPU its code runs on the checked device first ([`CodeCheck`]); then it is
//! measured, *checked, not measured* (no simulated model), or *not run: needs a GPU*
//! ([`Readiness`]).

use std::sync::atomic::{AtomicBool, Ordering};

use super::code::CodeCheck;
use super::rig::Rig;
use super::subject::{Part, Role, Subject};
use crate::cuda::checked::PTXAS_HOWTO;
use crate::cuda::checked::{NOT_COMPILED, NO_PTXAS};
use crate::device::Device;
use energy_results::error::{Error, ErrorKind, Result};

/// What becomes of a [`Subject`] on a device, before anything is measured.
#[derive(Clone, Debug)]
pub enum Readiness {
    /// Measure it: on a real GPU (nothing checked), or on the simulated one from its model
    /// after its code was checked. `companion`: whether the kernel beside it is measured
    /// too (not a baseline without a model on the simulated GPU, nor a companion that is
    /// not there).
    Measure {
        /// The checks of its code (none on a real GPU).
        checks: Checks,
        /// Whether the kernel beside it is measured too.
        companion: bool,
    },
    /// Its code ran on the checked device, but nothing is measured: `unmodelled` has no
    /// model on the simulated GPU.
    CheckedNotMeasured {
        /// The checks of its code.
        checks: Checks,
        /// The kernel without a model.
        unmodelled: Part,
    },
    /// Neither checked nor measured: its code needs a GPU and this one is simulated. Why,
    /// as "needs a GPU (declared gpu_only)".
    NotRun(String),
}

impl Subject {
    /// What becomes of it on `device`. On a real GPU: measure it (the measurement runs the
    /// code). On the simulated GPU: not run when declared `gpu_only` or when its code asks
    /// for raw cudarc; otherwise each kernel's code runs on the checked device (an error
    /// names the code that failed) and it is measured from its models, or checked, not
    /// measured where a model it needs is missing.
    pub fn check(&self, device: &Device, rig: &mut Rig) -> Result<Readiness> {
        let Some(sim) = device.sim() else {
            return Ok(Readiness::Measure { checks: Checks::default(), companion: self.companion.is_some() });
        };
        if self.gpu_only {
            return Ok(Readiness::NotRun("needs a GPU (declared gpu_only)".into()));
        }
        if self.labelled().any(|(_, _, k)| k.code.as_ref().is_some_and(|c| c.is_library_work())) {
            return Ok(Readiness::NotRun(
                "needs a GPU (library work, waited for with any_stream or wait: the checked device runs no library)"
                    .into(),
            ));
        }
        let mut checks = Checks::default();
        for (part, what, kernel) in self.labelled() {
            let Some(code) = &kernel.code else { continue };
            match code.check(rig.checked(sim)) {
                Ok(check) => checks.entries.push((part, what, check)),
                // Raw cudarc exists only on a GPU: the code is not wrong, it cannot be checked.
                Err(e) if e.kind() == ErrorKind::NeedsGpu => {
                    let reason = needs_gpu_reason(&e);
                    if strict_mode() {
                        return Err(Error::new(
                            ErrorKind::NotChecked,
                            format!(
                                "{STRICT_ENV}=1: its {what} was not checked: it {reason}, which exists only on a GPU; \
                                 declare it `gpu_only` to run it on GPUs only, or launch through the harness's \
                                 `Kernel` on the stream it hands in"
                            ),
                        ));
                    }
                    return Ok(Readiness::NotRun(format!("needs a GPU ({reason})")));
                }
                Err(e) => {
                    return Err(e.context(format!(
                        "its {what} failed on the checked device (no GPU here; the same code fails on a GPU)"
                    )))
                }
            }
        }
        if strict_mode() {
            refuse_unchecked(&checks)?;
        }
        if self.kernel.sim.is_none() {
            return Ok(Readiness::CheckedNotMeasured { checks, unmodelled: Part::Kernel });
        }
        Ok(match &self.companion {
            None => Readiness::Measure { checks, companion: false },
            Some(c) if c.kernel.sim.is_some() => Readiness::Measure { checks, companion: true },
            Some(c) if c.role == Role::Baseline => Readiness::Measure { checks, companion: false },
            Some(_) => Readiness::CheckedNotMeasured { checks, unmodelled: Part::Companion },
        })
    }
}

/// The environment variable of strict mode: `ENERGY_STRICT=1` makes a run without a GPU
/// fail where a kernel's code could not be checked in full (CUDA C not compiled for want of
/// NVRTC, PTX not assembled for want of ptxas, raw cudarc not declared `gpu_only`), and
/// where a budget not declared `gpu_only` would be checked but not measured (no simulated
/// model), instead of saying so in a line. For CI, beside NVIDIA's wheels.
pub const STRICT_ENV: &str = "ENERGY_STRICT";

/// Whether [`STRICT_ENV`] is `1`.
pub fn strict_mode() -> bool {
    std::env::var(STRICT_ENV).is_ok_and(|v| v.trim() == "1")
}

/// Says on stderr (straight to the terminal: a test harness captures `eprintln!` of passing
/// tests) when `checks` left a module not compiled or assembled, so that a budget measured on
/// the simulated GPU never passes with part of its code unchecked and no line said.
pub fn note_unchecked(who: &str, checks: &Checks) {
    if !checks.iter().all(CodeCheck::fully_checked) {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr().lock(),
            "note: {who}: not everything was checked without a GPU ({STRICT_ENV}=1 makes this an error): {}",
            checks.line(false)
        );
    }
}

/// In strict mode: an error naming the first module of `checks` that was not compiled or
/// assembled, the tool missing and the wheel that installs it.
fn refuse_unchecked(checks: &Checks) -> Result<()> {
    for (part, what, check) in &checks.entries {
        if check.fully_checked() {
            continue;
        }
        let a = &check.activity;
        let reason = a.not_assembled_reason.as_deref().unwrap_or("no reason recorded");
        let tool = if reason.starts_with(NO_PTXAS) {
            "ptxas (to assemble PTX)"
        } else if reason.contains(NOT_COMPILED) {
            "NVRTC (to compile CUDA C)"
        } else {
            "a tool of the checked device"
        };
        let whose = match part {
            Part::Kernel => "its kernel's code".to_string(),
            Part::Companion => what.clone(),
        };
        return Err(Error::new(
            ErrorKind::NotChecked,
            format!(
                "{STRICT_ENV}=1: {whose} was not fully checked: {} of {} module(s) not compiled and assembled for {}, \
                 missing {tool}: {reason}. Strict mode needs every kernel compiled and assembled without a GPU; \
                 install the tool, or unset {STRICT_ENV}",
                a.modules - a.assembled,
                a.modules,
                check.arch
            ),
        ));
    }
    Ok(())
}

/// The checks of a subject's code on the checked device, the kernel's first, each with
/// the part it checked and that part's code in words ("baseline NAME's code").
#[derive(Clone, Debug, Default)]
pub struct Checks {
    entries: Vec<(Part, String, CodeCheck)>,
}

impl Checks {
    /// Whether nothing was checked (a real GPU, or no code given).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The checks in one line, `; `-separated, each but the kernel's after the code it
    /// checked ("baseline base's code: setup and 3 launches ran …"); `brief` says a missing
    /// `ptxas` in three words ([`CodeCheck::brief`]) instead of how to get one.
    pub fn line(&self, brief: bool) -> String {
        if self.entries.is_empty() {
            return "no kernel code to check".into();
        }
        let lines: Vec<String> = self
            .entries
            .iter()
            .map(|(part, what, check)| {
                let text = if brief { check.brief() } else { check.to_string() };
                match part {
                    Part::Kernel => text,
                    Part::Companion => format!("{what}: {text}"),
                }
            })
            .collect();
        lines.join("; ")
    }

    /// Each check.
    pub fn iter(&self) -> impl Iterator<Item = &CodeCheck> {
        self.entries.iter().map(|(_, _, check)| check)
    }

    /// The checks, without what each checked.
    pub fn into_vec(self) -> Vec<CodeCheck> {
        self.entries.into_iter().map(|(_, _, check)| check).collect()
    }
}

/// Says once per process that no `ptxas` was found and how to get one, when `checks`
/// lack one (every check after it says "no ptxas found" in three words).
pub fn note_missing_ptxas(checks: &Checks) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if let Some(check) = checks.iter().find(|c| c.lacks_ptxas()) {
        if !SAID.swap(true, Ordering::Relaxed) {
            eprintln!(
                "note: no ptxas found: PTX is read and its kernels, arguments and launches checked, but not \
                 assembled for {} (an error only the JIT would find goes unseen); to assemble it: {PTXAS_HOWTO}",
                check.arch
            );
        }
    }
}

/// What a [`ErrorKind::NeedsGpu`] error says the code asked for, in a few words.
fn needs_gpu_reason(e: &Error) -> String {
    let message = e.message();
    match message.find(" (raw cudarc) exists only on a real GPU") {
        Some(end) => {
            let api = message[..end].rsplit(' ').next().unwrap_or_default();
            format!("uses raw cudarc: {api}")
        }
        None => "uses raw cudarc".to_string(),
    }
}
