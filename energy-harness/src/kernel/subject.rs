//! What benchmarks, budgets and the suites put under test: a kernel ([`KernelUnderTest`])
//! and the kernel measured beside it, as one [`Subject`].

use super::code::KernelCode;
use crate::sim::SimKernel;

/// A kernel as a benchmark or a budget runs it: its code (measured on a real GPU, checked
/// without one) and/or a simulated model.
///
/// # Examples
///
/// ```no_run
/// use energy_harness::prelude::*;
///
/// fn launch(_stream: &Stream) -> Result<()> {
///     Ok(()) // enqueue one launch of the kernel
/// }
///
/// // Code and a model: measured on a GPU; without one, the code runs on the checked device
/// // and the simulated GPU runs 80 µs launches at 350 W.
/// let kernel = KernelUnderTest::new("stencil").code(KernelCode::launch(launch)).sim(80e-6, 350.0);
/// assert_energy!(EnergyBudget::new(kernel, Limit::PerLaunch(Joules(0.05))));
/// ```
pub struct KernelUnderTest {
    /// Name used in messages and file names.
    pub name: String,
    /// Its code: setup and launch ([`KernelCode::with_setup`]).
    pub code: Option<KernelCode>,
    /// The model on the simulated GPU.
    pub sim: Option<SimKernel>,
}

impl KernelUnderTest {
    /// A kernel named `name`.
    pub fn new(name: &str) -> Self {
        KernelUnderTest { name: name.to_string(), code: None, sim: None }
    }

    /// Its code: measured on a real GPU; without one, run on the checked device.
    pub fn code(mut self, code: KernelCode) -> Self {
        self.code = Some(code);
        self
    }

    /// Its model on the simulated GPU: seconds per launch, board power.
    pub fn sim(mut self, seconds: f64, watts: f64) -> Self {
        self.sim = Some(SimKernel::new(seconds, watts));
        self
    }
}

/// What a benchmark or a budget puts under test: the kernel, the kernel measured beside
/// it, and whether their code can run on the checked device.
pub struct Subject {
    /// The kernel under test.
    pub kernel: KernelUnderTest,
    /// The kernel measured beside it, if any.
    pub companion: Option<Companion>,
    /// Whether the code cannot run on the checked device (raw cudarc, a library with its
    /// own launches): without a GPU it is *not run* instead of checked.
    pub gpu_only: bool,
}

/// The kernel measured beside a kernel under test, and what it is there for.
pub struct Companion {
    /// What it is there for.
    pub role: Role,
    /// The kernel.
    pub kernel: KernelUnderTest,
}

/// What the kernel beside a kernel under test is there for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A benchmark's baseline (the same loop without the work under test, for net
    /// energy): on the simulated GPU without a model of its own it is skipped, and the
    /// kernel is measured all the same.
    Baseline,
    /// A relative budget's reference: on the simulated GPU without a model of its own,
    /// the budget is checked, not measured.
    Reference,
}

impl Subject {
    /// `kernel` alone, its code able to run on the checked device.
    pub fn new(kernel: KernelUnderTest) -> Self {
        Subject { kernel, companion: None, gpu_only: false }
    }

    /// The kernel beside it, as `role`.
    pub fn companion(&mut self, role: Role, kernel: KernelUnderTest) {
        self.companion = Some(Companion { role, kernel });
    }

    /// The kernel beside it when it has that role.
    pub fn companion_as(&self, role: Role) -> Option<&KernelUnderTest> {
        self.companion.as_ref().filter(|c| c.role == role).map(|c| &c.kernel)
    }

    /// Its kernels, the kernel under test first, each with the part it plays and what its
    /// code is called in messages ("kernel code", "baseline NAME's code").
    pub(super) fn labelled(&self) -> impl Iterator<Item = (Part, String, &KernelUnderTest)> {
        let companion = self.companion.iter().map(|c| {
            let role = match c.role {
                Role::Baseline => "baseline",
                Role::Reference => "reference",
            };
            (Part::Companion, format!("{role} {}'s code", c.kernel.name), &c.kernel)
        });
        std::iter::once((Part::Kernel, "kernel code".to_string(), &self.kernel)).chain(companion)
    }
}

/// One kernel of a [`Subject`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The kernel under test.
    Kernel,
    /// The kernel beside it.
    Companion,
}
