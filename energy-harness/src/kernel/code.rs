//! A kernel's code: a setup function that makes its state on a [`CudaGpu`]
//! and a launch function that enqueues one launch on a [`Stream`]. On a real GPU the code
//! is measured; without one it runs on the checked device ([`crate::cuda::checked`]):
//! setup once and [`CHECK_LAUNCHES`] launches, every PTX module, kernel name, argument list
//! and launch configuration checked, while the energy figures (if any) come from the
//! declared simulated model.
//!
//! `#[energy_bench]` and `#[energy_test]` build one from their function and `setup = …`;
//! a budget written by hand ([`crate::assert_energy!`]) builds it with
//! [`KernelCode::with_setup`] or [`KernelCode::launch`]:
//!
//! ```no_run
//! use energy_harness::prelude::*;
//!
//! struct Saxpy { kernel: Kernel, args: KernelArgs, _x: DeviceBuffer<f32>, _y: DeviceBuffer<f32> }
//!
//! fn setup(gpu: &CudaGpu) -> Result<Saxpy> {
//!     let kernel = gpu.load_ptx_file("ptx/examples/saxpy.ptx".as_ref(), JitOptLevel::O4)?.kernel("saxpy")?;
//!     let (x, y) = (gpu.upload(&vec![1.0f32; 1 << 20])?, gpu.upload(&vec![2.0f32; 1 << 20])?);
//!     let args = KernelArgs::new().u32(1 << 20).f32(2.0).buffer(&x).buffer(&y);
//!     Ok(Saxpy { kernel, args, _x: x, _y: y })
//! }
//!
//! fn launch(s: &mut Saxpy, stream: &Stream) -> Result<()> {
//!     s.kernel.launch(stream, LaunchConfig::linear(4096, 256), &s.args)
//! }
//!
//! let kernel = KernelUnderTest::new("saxpy").code(KernelCode::with_setup(setup, launch)).sim(5e-6, 400.0);
//! assert_energy!(EnergyBudget::new(kernel, Limit::PerLaunch(Joules(5e-3))));
//! ```

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use crate::cuda::checked::NO_PTXAS;
use crate::cuda::{CheckedActivity, CudaGpu, CudaWorkload, LibraryWorkload, Stream};
use crate::workload::Workload;
use energy_results::error::{Error, ErrorKind, Result};

/// Launches the checked device runs of each kernel's code (after its setup).
pub const CHECK_LAUNCHES: u32 = 3;

/// One launch of a kernel with its state, on the stream it is given.
pub type Launcher = Box<dyn FnMut(&Stream) -> Result<()>>;

/// A library's wait for the work its calls enqueued (its own synchronize), with the state
/// the calls use.
type Waiter = Box<dyn FnMut() -> Result<()>>;

/// What a kernel's code becomes on a device: its launcher, and its library's wait if it has one.
struct Made {
    launch: Launcher,
    wait: Option<Waiter>,
}

type Make = dyn Fn(&Arc<CudaGpu>) -> Result<Made> + Send + Sync;

/// A kernel's code: what makes its launcher on a device, and how its GPU work is waited
/// for: on the harness's stream (the default), or, for work a library enqueues elsewhere,
/// by the library's wait and a context-wide synchronize ([`KernelCode::any_stream`],
/// [`KernelCode::with_wait`]).
///
/// # Examples
///
/// A launch without state, a setup with a launch, CUDA work on any stream of the GPU's
/// context, and library work with its wait (here a stand-in library whose calls queue work
/// and whose `sync` runs it):
///
/// ```
/// use energy_harness::prelude::*;
///
/// fn launch(_stream: &Stream) -> Result<()> {
///     Ok(()) // enqueue one launch
/// }
/// let stateless = KernelCode::launch(launch);
/// let on_any_stream = KernelCode::launch(launch).any_stream();
///
/// struct Buffers { x: DeviceBuffer<f32> }
/// fn setup(gpu: &CudaGpu) -> Result<Buffers> {
///     Ok(Buffers { x: gpu.alloc_zeros(1 << 20)? })
/// }
/// fn launch_on(s: &mut Buffers, _stream: &Stream) -> Result<()> {
///     let _ = &s.x; // enqueue one launch using the state
///     Ok(())
/// }
/// let with_state = KernelCode::with_setup(setup, launch_on);
///
/// struct Library { queued: usize }
/// impl Library {
///     fn call(&mut self) { self.queued += 1 }
///     fn sync(&mut self) -> std::result::Result<(), String> { self.queued = 0; Ok(()) }
/// }
/// let library_work = KernelCode::with_wait(
///     |_gpu: &CudaGpu| Ok(Library { queued: 0 }),
///     |lib: &mut Library, _stream: &Stream| { lib.call(); Ok(()) },
///     |lib: &mut Library| lib.sync().map_err(|e| Error::library("library sync", e)),
/// );
/// assert!(library_work.is_library_work() && on_any_stream.is_library_work());
/// assert!(!stateless.is_library_work() && !with_state.is_library_work());
/// ```
#[derive(Clone)]
pub struct KernelCode {
    make: Arc<Make>,
    any_stream: bool,
    /// Launches captured into a CUDA graph, replayed per batch ([`KernelCode::graph`]).
    graph: Option<u32>,
}

impl KernelCode {
    /// Code with state: `setup` runs once per measurement (loads PTX, uploads buffers,
    /// builds arguments); `launch` enqueues one launch using that state.
    pub fn with_setup<S, Setup, Launch>(setup: Setup, launch: Launch) -> Self
    where
        S: 'static,
        Setup: Fn(&CudaGpu) -> Result<S> + Send + Sync + 'static,
        Launch: Fn(&mut S, &Stream) -> Result<()> + Send + Sync + 'static,
    {
        let launch = Arc::new(launch);
        KernelCode::from_fn(move |gpu: &Arc<CudaGpu>| {
            let mut state = setup(gpu)?;
            let launch = launch.clone();
            Ok(Box::new(move |stream: &Stream| launch(&mut state, stream)) as Launcher)
        })
    }

    /// Code whose GPU work a library enqueues where the harness does not launch (its own
    /// streams, a queue, another API): `setup` as in [`KernelCode::with_setup`], `launch`
    /// makes one call (it may ignore the stream it is given), and `wait` waits for the
    /// library (candle's `device.synchronize()`, burn's `B::sync`, cubecl's
    /// `client.sync()`, wgpu's `device.poll`). Each batch of calls ends with `wait` and a
    /// context-wide synchronize, and is timed on the host clock.
    pub fn with_wait<S, Setup, Launch, Wait>(setup: Setup, launch: Launch, wait: Wait) -> Self
    where
        S: 'static,
        Setup: Fn(&CudaGpu) -> Result<S> + Send + Sync + 'static,
        Launch: Fn(&mut S, &Stream) -> Result<()> + Send + Sync + 'static,
        Wait: Fn(&mut S) -> Result<()> + Send + Sync + 'static,
    {
        let (launch, wait) = (Arc::new(launch), Arc::new(wait));
        let make = move |gpu: &Arc<CudaGpu>| {
            let state = Rc::new(RefCell::new(setup(gpu)?));
            let (launch, wait, shared) = (launch.clone(), wait.clone(), state.clone());
            Ok(Made {
                launch: Box::new(move |stream: &Stream| launch(&mut state.borrow_mut(), stream)),
                wait: Some(Box::new(move || wait(&mut shared.borrow_mut()))),
            })
        };
        KernelCode { make: Arc::new(make), any_stream: true, graph: None }
    }

    /// The same code, its GPU work on any stream of the GPU's CUDA context (a library's
    /// own stream, a stream of its own): each batch of calls ends with a context-wide
    /// synchronize and is timed on the host clock. For work the library only enqueues when
    /// asked (a lazy queue) or outside CUDA, give its wait ([`KernelCode::with_wait`]).
    pub fn any_stream(mut self) -> Self {
        self.any_stream = true;
        self
    }

    /// The same code launched through a CUDA graph: `launches` calls of the launch function
    /// are captured into a graph once, on a real GPU, before anything is measured, and each
    /// batch replays it, so the GPU runs the launches back to back without waiting for the
    /// host between them. For kernels shorter than the host's time per launch (a few µs), whose
    /// figures otherwise follow the host's launch rate (the `launch-bound` warning). Energy
    /// and time are still per launch of the kernel, not per replay.
    ///
    /// The launch function then runs only while the graph is captured: it must enqueue its
    /// work on the stream it is given and nothing else (no synchronize, no allocation, no
    /// host copy; those belong in the setup). Every replay repeats the captured launches
    /// exactly, with the arguments they had. Library work ([`KernelCode::any_stream`],
    /// [`KernelCode::with_wait`]) cannot be captured and is refused when measured; `launches`
    /// is 1 to [`GRAPH_LAUNCHES_MAX`](energy_units::bounds::GRAPH_LAUNCHES_MAX). On the
    /// checked device (no GPU) the launches run as the capture would run them: a synchronize
    /// in the launch function is refused there too.
    ///
    /// ```
    /// use energy_harness::prelude::*;
    ///
    /// fn launch(_stream: &Stream) -> Result<()> {
    ///     Ok(()) // enqueue one launch of a 2 µs kernel
    /// }
    /// let code = KernelCode::launch(launch).graph(100);
    /// assert_eq!(code.graph_launches(), Some(100));
    /// ```
    pub fn graph(mut self, launches: u32) -> Self {
        self.graph = Some(launches);
        self
    }

    /// The launches each replay of its CUDA graph holds ([`KernelCode::graph`]); `None`
    /// when it is launched directly.
    pub fn graph_launches(&self) -> Option<u32> {
        self.graph
    }

    /// [`KernelCode::graph_launches`], refused when no graph can be: out of bounds, or of
    /// library work, whose work a capture of the harness's stream does not hold. What a real
    /// GPU and the simulated one both ask before they replay a graph.
    pub(crate) fn checked_graph(&self) -> Result<Option<u32>> {
        use energy_units::bounds::{graph_launches_allowed, GRAPH_LAUNCHES_MAX};
        let Some(launches) = self.graph else { return Ok(None) };
        if !graph_launches_allowed(u64::from(launches)) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("`graph = {launches}`: a CUDA graph captures 1 to {GRAPH_LAUNCHES_MAX} launches"),
            ));
        }
        if self.any_stream {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "`graph = {launches}` with library work (`any_stream`, `wait`): a CUDA graph holds what is enqueued on \
                     the harness's stream, and a library's work goes to its own streams or queue; remove `graph` (or launch \
                     the kernels yourself on the stream given)"
                ),
            ));
        }
        Ok(Some(launches))
    }

    /// Whether its GPU work is waited for context-wide (a library's work:
    /// [`KernelCode::any_stream`], [`KernelCode::with_wait`]). Such code cannot run on the
    /// checked device: without a GPU it is *not run*.
    pub fn is_library_work(&self) -> bool {
        self.any_stream
    }

    /// Code without state: `launch` enqueues one launch.
    pub fn launch<Launch>(launch: Launch) -> Self
    where
        Launch: Fn(&Stream) -> Result<()> + Send + Sync + 'static,
    {
        let launch = Arc::new(launch);
        KernelCode::from_fn(move |_gpu: &Arc<CudaGpu>| {
            let launch = launch.clone();
            Ok(Box::new(move |stream: &Stream| launch(stream)) as Launcher)
        })
    }

    /// Code from a function that makes the launcher on a device (for launchers that are
    /// neither of the two shapes above).
    pub fn from_fn(make: impl Fn(&Arc<CudaGpu>) -> Result<Launcher> + Send + Sync + 'static) -> Self {
        let make = move |gpu: &Arc<CudaGpu>| Ok(Made { launch: make(gpu)?, wait: None });
        KernelCode { make: Arc::new(make), any_stream: false, graph: None }
    }

    /// The workload measured on a real GPU: setup, then launches timed with CUDA events on
    /// the harness's stream, or, for library work, batches closed by the library's wait and
    /// a context-wide synchronize and timed on the host clock.
    pub fn workload(&self, gpu: &Arc<CudaGpu>) -> Result<Box<dyn Workload>> {
        let graph = self.checked_graph()?;
        let Made { launch, wait } = (self.make)(gpu)?;
        if self.any_stream {
            let wait = wait.unwrap_or_else(|| Box::new(|| Ok(())));
            return Ok(Box::new(LibraryWorkload::new(gpu.clone(), launch, wait)));
        }
        match graph {
            Some(launches) => Ok(Box::new(CudaWorkload::with_graph(gpu.clone(), launch, u64::from(launches))?)),
            None => Ok(Box::new(CudaWorkload::new(gpu.clone(), launch)?)),
        }
    }

    /// Runs the code on `gpu` without measuring: setup once, then [`CHECK_LAUNCHES`]
    /// launches and a synchronize. On the checked device this is what a machine without a
    /// GPU can check; the result is what the checked device saw.
    pub fn check(&self, gpu: &Arc<CudaGpu>) -> Result<CodeCheck> {
        let before = gpu.checked_activity().unwrap_or_default();
        let Made { launch: mut launcher, wait } = (self.make)(gpu).map_err(|e| e.context("its setup failed"))?;
        // With a CUDA graph the launches run as its capture would: what a capture cannot
        // hold (a synchronize) is refused here too.
        let capture = self.graph.is_some();
        gpu.stream().set_checked_capture(capture);
        let launched = (1..=CHECK_LAUNCHES).try_for_each(|launch| {
            launcher(gpu.stream()).map_err(|e| e.context(format!("launch {launch} of {CHECK_LAUNCHES} failed")))
        });
        gpu.stream().set_checked_capture(false);
        launched?;
        if let Some(mut wait) = wait {
            wait().map_err(|e| e.context("its wait function failed"))?;
        }
        gpu.synchronize()?;
        drop(launcher);
        let after = gpu.checked_activity().unwrap_or_default();
        let properties = gpu.properties()?;
        Ok(CodeCheck {
            graph: self.graph,
            arch: properties.arch(),
            device: properties.name,
            activity: CheckedActivity {
                modules: after.modules - before.modules,
                assembled: after.assembled - before.assembled,
                compiled_by_nvrtc: after.compiled_by_nvrtc - before.compiled_by_nvrtc,
                cuda_c_not_compiled: after.cuda_c_not_compiled - before.cuda_c_not_compiled,
                launches: after.launches - before.launches,
                buffers: after.buffers - before.buffers,
                buffer_bytes: after.buffer_bytes - before.buffer_bytes,
                not_assembled_reason: after
                    .not_assembled_reason
                    .filter(|_| after.assembled - before.assembled < after.modules - before.modules),
            },
        })
    }
}

/// What a check of a kernel's code saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeCheck {
    /// The launches of its CUDA graph (`graph = N`), whose capture the launches ran as.
    pub graph: Option<u32>,
    /// The device it ran on.
    pub device: String,
    /// Its architecture (`sm_90`).
    pub arch: String,
    /// Modules, launches and buffers the checked device saw during the check.
    pub activity: CheckedActivity,
}

impl CodeCheck {
    /// Whether modules went unassembled because no `ptxas` was found (the fix: `pip install
    /// nvidia-cuda-nvcc-cu12`, then `PTXAS` set to the ptxas it installs, or ptxas on `PATH`).
    pub fn lacks_ptxas(&self) -> bool {
        let a = &self.activity;
        a.assembled < a.modules && a.not_assembled_reason.as_deref().is_some_and(|r| r.starts_with(NO_PTXAS))
    }

    /// Whether every module it read was compiled and assembled (none went unassembled for
    /// want of ptxas, nor uncompiled for want of NVRTC).
    pub fn fully_checked(&self) -> bool {
        self.activity.assembled >= self.activity.modules
    }

    /// The check in one line as its `Display` gives it, but a missing `ptxas` said in three
    /// words, not with how to get one: for runners that say that once (a bench binary
    /// checks hundreds of kernels).
    pub fn brief(&self) -> String {
        let mut line = String::new();
        let _ = self.write(&mut line, self.lacks_ptxas());
        line
    }

    fn write(&self, f: &mut impl std::fmt::Write, brief_ptxas: bool) -> std::fmt::Result {
        let a = &self.activity;
        let reason = if brief_ptxas { Some(NO_PTXAS) } else { a.not_assembled_reason.as_deref() };
        let assembly = if a.modules == 0 {
            String::new()
        } else if a.assembled == a.modules {
            format!(", assembled by ptxas for {}", self.arch)
        } else if a.assembled == 0 && a.cuda_c_not_compiled == a.modules {
            format!(" ({})", reason.unwrap_or(crate::cuda::checked::NOT_COMPILED))
        } else if a.assembled == 0 && brief_ptxas {
            format!(", not assembled ({NO_PTXAS})")
        } else {
            format!(
                ", {} of them assembled by ptxas for {} (not the rest: {})",
                a.assembled,
                self.arch,
                reason.unwrap_or("no ptxas")
            )
        };
        write!(
            f,
            "setup and {CHECK_LAUNCHES} launches ran on the checked {} (nothing executes){}: {}{assembly}, {} launch(es) checked, {} buffer(s) of {:.1} MiB",
            self.device.trim_end_matches(" (simulated)"),
            match self.graph {
                Some(n) => format!(" as a capture of a CUDA graph of {n} would run them (no synchronize)"),
                None => String::new(),
            },
            match (a.compiled_by_nvrtc, a.cuda_c_not_compiled) {
                (0, 0) => format!("{} PTX module(s) read", a.modules),
                (n, 0) if n == a.modules => format!("{n} CUDA C module(s) compiled by NVRTC"),
                (0, m) if m == a.modules => format!("{m} CUDA C module(s) read"),
                (n, m) => format!(
                    "{} module(s) read ({n} of them CUDA C compiled by NVRTC, {m} CUDA C not compiled)",
                    a.modules
                ),
            },
            a.launches,
            a.buffers,
            a.buffer_bytes as f64 / (1u64 << 20) as f64
        )
    }
}

impl std::fmt::Display for CodeCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.write(f, false)
    }
}
