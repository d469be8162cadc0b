//! Building blocks of `cargo energy`, the suites and the harness's own tests: the engine,
//! sensors and sampler, the simulated GPU, the runs' writer. What the files hold and what
//! reading needs is the contract crate `energy-results`, not here. **Not part of the stable API:** any release
//! may change them. A bench or test file needs only the crate root and
//! [`prelude`](crate::prelude).

/// The criterion runner behind `energy_main!()`, and the same by hand.
pub mod bench {
    pub use crate::bench::pipeline::PAIRED_WINDOWS_ENV;
    pub use crate::bench::queue::{
        claim_order, duration_key, Durations, ItemStatus, QueueItem, QueueState, WorkQueue, DURATIONS_SCHEMA,
        QUEUE_ENV, QUEUE_SCHEMA, QUEUE_WORKER_ENV,
    };
    pub use crate::bench::{
        run_collect, run_registered, BenchSpec, Collected, CollectedBench, Energy, EnergyFormatter, RunSettings,
        Sharing,
    };
    pub use crate::budget::assert_budget;
}
/// The CUDA layer's tools: the checked device's ptxas, NVRTC, the FMA loop.
pub mod cuda {
    pub use crate::cuda::checked::find_ptxas;

    pub use crate::cuda::{fma_busy_workload, FmaLoop, FMA_LOOP_PTX};
}
/// A kernel under test: what benchmarks and budgets put under test, its checks on the
/// checked device and their outcome, the GPU it runs on.
pub mod kernel {
    pub use crate::kernel::{
        open_device, Checks, CodeCheck, Companion, Part, Readiness, Rig, Role, Subject, CHECK_LAUNCHES,
    };
}
/// The measurement engine: sessions, analysis, statistics, calibration.
pub mod engine {
    pub use crate::engine::analyze::{analyze_windows, ENERGY_RESOLUTION_J, IDLE_NOISE_FRACTION, POWER_CEILING_FACTOR};
    pub use crate::engine::calibration::{
        busy_intervals, calibrate, default_calibration_dir, fit_calibration, Calibration, StepPlan, CALIBRATION_SCHEMA,
        MAX_DELAY_S,
    };
    pub use crate::engine::clean::{clean_buffered, clean_polled, sorted_finite};
    pub use crate::engine::counter::{counter_ticks, interpolated_energy_j};
    pub use crate::engine::curve::{counter_curve, power_curve};

    pub use crate::engine::run::{record, virtual_sim_device};

    pub use crate::engine::thermal::{
        calibrate_thermal, fit_thermal, normalize, ThermalCalibration, ThermalFit, ThermalPoint, MIN_FIT_SPAN_C,
        MIN_FIT_WINDOWS, REFERENCE_TEMPERATURE_C, THERMAL_SCHEMA,
    };
    pub use crate::engine::{
        analyze_trace, difference, measure, net_energy, net_per_op, per_unit, AnalysisOptions, MeasureRequest,
        Measurement, ModelChoice, Session, SimLibraryWait, SimLibraryWorkload, SimWorkload, TraceAnalysis,
    };
    pub use crate::workload::{Batch, Workload, UNAWAITED_FLOOR_S, UNAWAITED_SHARE};
}
/// Devices, clocks, sensors, the sampler and the simulated GPU.
pub mod device {
    pub use crate::clock::{Clock, MonotonicClock, SharedClock, VirtualClock};
    pub use crate::device::{Device, DeviceRequest, GpuChoice};
    pub use crate::gpu::{gpu_count, list_gpus, DeviceFacts, GpuListing, NO_GPU_HINT, REQUIRE_GPU_ENV};
    pub use crate::sampling::{record_until, Sampler, SamplerConfig, WindowMarker, STATE_TEMPERATURE};
    pub use crate::sensors::replay::ReplaySource;
    pub use crate::sensors::{SensorSource, SourceError};
    pub use crate::sim::{
        ActiveIdleTail, RailTruth, SensorFault, SimGpu, SimKernel, SimPreset, SimThermal, ThermalState,
    };

    pub use energy_results::source::Role;
}
/// Result files, run manifests and their writer, what the reading side
/// (`energy-report`) takes from them.
pub mod report {

    pub use crate::report::render_summary;
    pub use crate::report::run::{
        bench_artifacts, current_target_name, is_energy_bench, mark_energy_bench, source_state_of, target_name_of,
        BenchArtifact, RunStart, RunWriter,
    };
    pub use crate::report::svg::power_plot;
}
/// The selftest: does this GPU's sensor deliver what the harness assumes?
pub mod selftest {
    pub use crate::selftest::checks;
    pub use crate::selftest::{
        render, run_selftest, HarnessFigure, SelftestPlan, SelftestReport, SelftestWindow, SourceVerdict,
        SELFTEST_SCHEMA,
    };
}
