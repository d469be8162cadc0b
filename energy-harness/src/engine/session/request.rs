//! What to measure and how ([`MeasureRequest`]), and the sources and sensor model chosen
//! for it on a device.

use crate::device::Device;
use crate::engine::analyze::{sensor_model_for, AnalysisOptions, ModelChoice};
use crate::engine::calibration::Calibration;
use crate::engine::options::{MeasureOptions, ResolvedOptions};
use crate::engine::thermal::ThermalCalibration;
use crate::sensors::{SensorModel, SourceKind};

/// Whole counter intervals of idle after a busy stretch, by default.
pub const DEFAULT_TAIL_INTERVALS: usize = 2;

/// What to measure and how: the options (resolved by the session) and what the caller
/// knows of the GPU.
#[derive(Clone, Debug)]
pub struct MeasureRequest {
    /// Benchmark id (goes into the result).
    pub id: String,
    /// The options asked for.
    pub options: MeasureOptions,
    /// The caller's floor on the window count (criterion needs 10 samples).
    pub min_windows: usize,
    /// Sensor model choice.
    pub model: ModelChoice,
    /// The GPU's calibration, if any.
    pub calibration: Option<Calibration>,
    /// Sources recorded besides the measured one (for comparisons).
    pub record_also: Vec<SourceKind>,
    /// The GPU's thermal calibration, if any: the result then carries its energy at the
    /// reference temperature too.
    pub thermal: Option<ThermalCalibration>,
    /// Whole counter intervals of idle the session measures after its busy stretch, on an
    /// energy counter: 2 by default; 1 in a run of a paired sequence ([`MeasureRequest::paired`]),
    /// 0 in a lean one ([`MeasureRequest::lean`]).
    pub tail_intervals: usize,
}

impl MeasureRequest {
    /// A request for `id` with `options`, the default model and no calibration.
    pub fn new(id: impl Into<String>, options: MeasureOptions) -> Self {
        MeasureRequest {
            id: id.into(),
            options,
            min_windows: MeasureOptions::MIN_WINDOWS,
            model: ModelChoice::Auto,
            calibration: None,
            record_also: Vec::new(),
            thermal: None,
            tail_intervals: DEFAULT_TAIL_INTERVALS,
        }
    }

    /// A run of a paired sequence (`cargo energy gate`, `cargo energy ab`) when `paired`:
    /// the idle tail measures one counter interval instead of two. The sequence's verdict
    /// rests on the total energy, which the windows hold whatever the idle; the dynamic
    /// figures take the active idle from that one interval and the one before the stretch
    /// (the previous benchmark's tail, when handed over), and the trace says so.
    pub fn paired(mut self, paired: bool) -> Self {
        self.tail_intervals = if paired { 1 } else { DEFAULT_TAIL_INTERVALS };
        self
    }

    /// A lean run of a paired sequence (its runs after the first pair): no idle tail at all.
    /// The session waits only for the counter's curve to reach past its last window (the guard
    /// after it runs until then: through the interval holding that window's end), and its
    /// dynamic figures take the active idle
    /// the recording measured last, before its process's first benchmark
    /// (carried, with a warning); the total energy, on which the sequence's
    /// verdict rests, does not use the idle. Nothing after the windows is measured, so work
    /// that outlives them goes unseen here: the first pair's runs measure a tail and refuse it.
    pub fn lean(mut self) -> Self {
        self.tail_intervals = 0;
        self
    }

    /// Whether this is a lean run of a paired sequence ([`MeasureRequest::lean`]).
    pub fn is_lean(&self) -> bool {
        self.tail_intervals == 0
    }

    /// Whether this is a run of a paired sequence ([`MeasureRequest::paired`],
    /// [`MeasureRequest::lean`]).
    pub fn is_paired(&self) -> bool {
        self.tail_intervals < DEFAULT_TAIL_INTERVALS
    }

    /// The GPU's thermal calibration.
    pub fn thermal(mut self, thermal: Option<ThermalCalibration>) -> Self {
        self.thermal = thermal;
        self
    }

    /// At least `windows` windows (unless the kernel is too long for them, see the plan).
    pub fn min_windows(mut self, windows: usize) -> Self {
        self.min_windows = windows;
        self
    }

    /// The GPU's calibration.
    pub fn calibration(mut self, calibration: Option<Calibration>) -> Self {
        self.calibration = calibration;
        self
    }

    /// The sensor model.
    pub fn model(mut self, model: ModelChoice) -> Self {
        self.model = model;
        self
    }

    /// Sources recorded besides the measured one.
    pub fn record_also(mut self, sources: Vec<SourceKind>) -> Self {
        self.record_also = sources;
        self
    }
}

/// The sources to record, the analysis options, the primary source and its model.
pub(super) fn choose(
    device: &Device,
    request: &MeasureRequest,
    options: &ResolvedOptions,
) -> (Vec<SourceKind>, AnalysisOptions, SourceKind, SensorModel) {
    // The source asked for with its check; else the best board source the GPU has with its
    // check, or (when that one has none) every board source it has, for analysis to choose.
    let with_check = |kind: SourceKind| [Some(kind), kind.cross_check()].into_iter().flatten().collect::<Vec<_>>();
    let mut sources = match options.source {
        Some(kind) => with_check(kind),
        None => {
            let available: Vec<SourceKind> = SourceKind::boards().filter(|&k| device.open_source(k).is_ok()).collect();
            match SourceKind::preferred(&available) {
                Some(best) if best.cross_check().is_some() => {
                    with_check(best).into_iter().filter(|k| available.contains(k)).collect()
                }
                _ => available,
            }
        }
    };
    // Every rail the GPU offers is recorded beside them, to be reported with its own energy;
    // not in a run of a paired sequence, which reads the board's total energy only: a rail's
    // averaging sensor (the memory rail's 1 s boxcar) needs more idle around the windows than
    // such a run measures, and its reads would only load the driver beside the benchmark.
    let rails = SourceKind::rails().filter(|_| !request.is_paired());
    for extra in request.record_also.iter().copied().chain(rails) {
        if !sources.contains(&extra) && device.open_source(extra).is_ok() {
            sources.push(extra);
        }
    }
    // The source analysis will read the trace with (the same one preference order), so the
    // windows are planned for the source that measures them.
    let primary = options.source.or_else(|| SourceKind::preferred(&sources)).unwrap_or(SourceKind::PowerUsage);
    let analysis = AnalysisOptions {
        source: options.source,
        model: request.model.clone(),
        calibration: request.calibration.clone(),
        power_limit_w: device.facts().power_limit_w,
        ..AnalysisOptions::default()
    };
    // The model the analysis will invert with (one rule: `--sensor-model default` ignores a
    // calibration here too), so the idle and guards are planned for it.
    let model = sensor_model_for(primary, &analysis);
    (sources, analysis, primary, model)
}
