//! From a trace to the energy of each of its windows: choose a source, clean it,
//! correct it with its sensor model, integrate, split over the windows.

use serde::{Deserialize, Serialize};

use super::calibration::Calibration;
use super::clean::{clean_buffered, clean_polled, median_change_interval_s, sorted_finite};
use super::curve::{counter_curve, power_curve, EnergyCurve, TickFit};
use super::warning::{Warning, WarningKind};
use super::windows::{window_energies, SplitOptions, WindowEnergy, BACK_TO_BACK_GAP_S};
use crate::sensors::{Delivery, Quantity, SensorModel, SourceKind};
use energy_results::error::{Error, ErrorKind, Result};
use energy_results::trace::{is_auxiliary_window, Channel, Reading, Trace, Window};

mod physical;

pub use physical::{
    check_physical, check_time_steps, ENERGY_RESOLUTION_J, GENERIC_POWER_CEILING_W, IDLE_NOISE_FRACTION,
    POWER_CEILING_FACTOR,
};

/// Which sensor model to invert.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ModelChoice {
    /// The GPU's calibration when one is given for it, else the source's default.
    #[default]
    Auto,
    /// The source's default (what the H100 measurements in DESIGN.md §1 showed).
    Default,
    /// The calibration given; an error without one.
    Calibrated,
    /// This model.
    Explicit(SensorModel),
}

/// How to analyze a trace.
#[derive(Clone, Debug, Default)]
pub struct AnalysisOptions {
    /// The source to use; `None` picks the best one present.
    pub source: Option<SourceKind>,
    /// The sensor model.
    pub model: ModelChoice,
    /// The GPU's calibration, if any.
    pub calibration: Option<Calibration>,
    /// Window splitting.
    pub split: SplitOptions,
    /// The GPU's power limit, W, when known: a window averaging more than
    /// [`POWER_CEILING_FACTOR`] times it is corrupt data, not a measurement. Without it
    /// (and without `power_limit_w` in the trace's metadata) [`GENERIC_POWER_CEILING_W`] applies.
    pub power_limit_w: Option<f64>,
    /// The active idle measured earlier in the same recording, for a trace that holds none
    /// of its own (a lean run of a paired sequence); `None` otherwise.
    pub carried_idle: Option<CarriedIdle>,
}

/// An active idle measured by an earlier benchmark of the same recording, taken by a
/// measurement that measured none of its own: a lean run of a paired sequence measures idle
/// only before its process's first benchmark. The dynamic figures rest on it (with an
/// [`WarningKind::IdleCarried`] warning); the total energy does not.
#[derive(Clone, Debug, PartialEq)]
pub struct CarriedIdle {
    /// The active idle, W.
    pub watts: f64,
    /// The benchmark that measured it.
    pub from_id: String,
    /// When its measurement ended, s (the recording's clock).
    pub measured_at_s: f64,
}

/// The analysis of a trace.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TraceAnalysis {
    /// The source the energies come from.
    pub source: SourceKind,
    /// The sensor model inverted.
    pub sensor_model: SensorModel,
    /// Where the model came from.
    pub model_origin: String,
    /// Reporting delay removed, s.
    pub delay_s: f64,
    /// The counter's tick grid (counter source only).
    pub tick_fit: Option<TickFit>,
    /// Per-window energies.
    pub windows: Vec<WindowEnergy>,
    /// Mean active idle over the windows, W.
    pub idle_w: f64,
    /// Warnings.
    pub warnings: Vec<Warning>,
    /// The corrected cumulative energy curve.
    #[serde(skip)]
    pub curve: EnergyCurve,
}

/// Picks the most preferred board source ([`SourceKind::PREFERENCE`]) the trace holds
/// enough readings of: two changes of an energy counter, two power readings.
pub fn choose_source(trace: &Trace) -> Result<SourceKind> {
    for kind in SourceKind::PREFERENCE.into_iter().filter(|k| k.measures_board()) {
        let readings = trace.series(&Channel::Source(kind));
        let usable = match kind.quantity() {
            Quantity::Energy => readings.windows(2).filter(|w| w[1].value != w[0].value).count() >= 2,
            Quantity::Power => readings.len() >= 2,
        };
        if usable {
            return Ok(kind);
        }
    }
    let channels: Vec<&str> =
        SourceKind::PREFERENCE.into_iter().filter(|k| k.measures_board()).map(|k| k.channel_name()).collect();
    Err(Error::new(
        ErrorKind::Analysis,
        format!("the trace holds no usable power or energy readings ({})", channels.join(", ")),
    ))
}

fn resolve_model(kind: SourceKind, options: &AnalysisOptions) -> Result<(SensorModel, f64, String)> {
    let calibrated = options.calibration.as_ref().and_then(|c| c.model_for(kind).map(|(m, d)| (m, d, c)));
    match &options.model {
        ModelChoice::Explicit(model) => {
            model.validate().map_err(|e| Error::new(ErrorKind::InvalidInput, format!("sensor model `{model}`: {e}")))?;
            Ok((*model, 0.0, "given".into()))
        }
        ModelChoice::Default => Ok((kind.default_model(), kind.default_delay_s(), "default for the source (H100 measurements)".into())),
        ModelChoice::Calibrated => match calibrated {
            Some((m, d, c)) => Ok((m, d, format!("calibrated for {} ({})", c.uuid, c.created_at))),
            None => Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "no calibration of the {kind} source for this GPU: run `cargo energy calibrate` on it, or choose a model with --sensor-model"
                ),
            )),
        },
        ModelChoice::Auto => Ok(match calibrated {
            Some((m, d, c)) => (m, d, format!("calibrated for {} ({})", c.uuid, c.created_at)),
            None => (kind.default_model(), kind.default_delay_s(), "default for the source (H100 measurements)".into()),
        }),
    }
}

/// The reporting delay the analysis takes for `kind` under `options` (its sensor model's, or
/// the source's default when the model cannot be resolved): a reading at `t` describes the
/// update the sensor made at `t −` this.
pub fn reporting_delay_s(kind: SourceKind, options: &AnalysisOptions) -> f64 {
    resolve_model(kind, options).map_or(kind.default_delay_s(), |(_, delay_s, _)| delay_s)
}

/// The sensor model the analysis takes for `kind` under `options` (or the source's default
/// when it cannot be resolved: the analysis then stops with the reason): what a measurement
/// plans its idle and guards for.
pub(crate) fn sensor_model_for(kind: SourceKind, options: &AnalysisOptions) -> SensorModel {
    resolve_model(kind, options).map_or(kind.default_model(), |(model, _, _)| model)
}

/// Where the analysis's energy curve of the counter `source` ends in `trace`, s: its last tick
/// placed as [`analyze_windows`] places it (on the fitted grid, less the reporting delay), so
/// that a window ending before it is covered. `None` before two ticks, for a power source, or
/// when the model cannot be resolved.
pub(crate) fn counter_curve_end_s(trace: &Trace, source: SourceKind, options: &AnalysisOptions) -> Option<f64> {
    if source.quantity() != Quantity::Energy {
        return None;
    }
    let (_, delay_s, _) = resolve_model(source, options).ok()?;
    let (curve, _) = counter_curve(&sorted_finite(trace.series(&Channel::Source(source)))).ok()?;
    curve.shifted(-delay_s).span_s().map(|(_, end_s)| end_s)
}

/// Analyzes the windows of `trace`.
pub fn analyze_trace(trace: &Trace, options: &AnalysisOptions) -> Result<TraceAnalysis> {
    let windows = trace.windows()?;
    analyze_windows(trace, &windows, options)
}

/// Analyzes the given windows of `trace` (the windows may come from elsewhere than its marks).
pub fn analyze_windows(trace: &Trace, windows: &[Window], options: &AnalysisOptions) -> Result<TraceAnalysis> {
    if windows.is_empty() {
        return Err(Error::new(
            ErrorKind::Analysis,
            "the trace has no kernel windows (window_start/window_end marks): nothing to measure",
        ));
    }
    let source = match options.source {
        Some(kind) => kind,
        None => choose_source(trace)?,
    };
    let raw = trace.series(&Channel::Source(source));
    if raw.is_empty() {
        return Err(Error::new(
            ErrorKind::Analysis,
            format!("the trace has no {} readings (source {source})", source.channel_name()),
        ));
    }
    let (model, delay_s, model_origin) = resolve_model(source, options)?;
    check_time_steps(&sorted_finite(raw), windows, source)?;
    let mut warnings = Vec::new();
    let energy_source = source.quantity() == Quantity::Energy;
    let (curve, tick_fit, sensor_model) = if energy_source {
        // The counter is an energy integral: `none` (nothing to invert) and `counter:P` mean the same.
        if !matches!(model, SensorModel::Counter { .. } | SensorModel::Identity) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "the counter is an energy integral: it takes no sensor model to invert (`{model}` given; use none)"
                ),
            ));
        }
        let (curve, fit) = counter_curve(&sorted_finite(raw))?;
        let period = fit.as_ref().map_or(0.1, |f| f.period_s);
        (curve.shifted(-delay_s), fit, SensorModel::Counter { period_s: period })
    } else {
        if matches!(model, SensorModel::Counter { .. }) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("the counter model does not apply to the {source} power source"),
            ));
        }
        let clean = match source.delivery() {
            Delivery::Buffered => clean_buffered(raw),
            Delivery::Polled => clean_polled(raw),
        };
        let aligned: Vec<Reading> =
            clean.iter().map(|r| Reading { time_s: r.time_s - delay_s, value: r.value }).collect();
        if let SensorModel::Gated { gate_s, period_s } = model {
            warnings.push(Warning::new(
                WarningKind::GatedSource,
                format!(
                    "the {source} source averages only {:.0} ms of every {:.0} ms: its energy is not reliable; prefer the counter or the sample buffer",
                    gate_s * 1e3,
                    period_s * 1e3
                ),
            ));
        }
        if let SensorModel::Boxcar { width_s } = model {
            let first_window = windows.iter().map(|w| w.start_s).fold(f64::INFINITY, f64::min);
            if let Some(first) = aligned.first() {
                if first_window - first.time_s < width_s {
                    warnings.push(Warning::new(
                        WarningKind::ShortLeadIn,
                        format!(
                            "only {:.2} s of readings before the first window; the {width_s} s boxcar inversion assumes steady power for {width_s} s before it",
                            first_window - first.time_s
                        ),
                    ));
                }
            }
        }
        let mut transitions: Vec<f64> = windows.iter().flat_map(|w| [w.start_s, w.end_s]).collect();
        transitions.sort_by(f64::total_cmp);
        (power_curve(&aligned, &model, &transitions)?, None, model)
    };
    let split = SplitOptions { carried_idle_w: options.carried_idle.as_ref().map(|c| c.watts), ..options.split };
    let energies = window_energies(&curve, windows, split)?;
    let limit_w = options
        .power_limit_w
        .or_else(|| trace.metadata("power_limit_w").and_then(|v| v.parse::<f64>().ok()))
        .filter(|w| w.is_finite() && *w > 0.0);
    let ceiling_w =
        limit_w.map_or(GENERIC_POWER_CEILING_W, |w| (w * POWER_CEILING_FACTOR).min(GENERIC_POWER_CEILING_W));
    check_physical(&energies, ceiling_w, source).map_err(|e| {
        if matches!(options.model, ModelChoice::Explicit(_)) {
            Error::new(
                e.kind(),
                format!(
                    "{}; the sensor model `{sensor_model}` was given: try the source's default (--sensor-model \
                     default) or calibrate the GPU (cargo energy calibrate)",
                    e.message()
                ),
            )
        } else {
            e
        }
    })?;
    if !curve.gaps().is_empty() {
        let at: Vec<String> = curve.gaps().iter().map(|g| format!("{:.3}-{:.3} s", g.0, g.1)).collect();
        warnings.push(Warning::new(
            WarningKind::CounterReset,
            format!(
                "the energy counter was reset or wrapped {} time(s) ({}); no window overlaps it, but the energy drawn across it is unknown",
                at.len(),
                at.join(", ")
            ),
        ));
    }
    let min_points = if energy_source { 2 } else { 3 };
    let update_period = if energy_source {
        tick_fit.as_ref().map(|f| f.period_s)
    } else {
        median_change_interval_s(&sorted_finite(raw))
    };
    // One warning per kind, naming the windows it concerns (auxiliary stretches aside).
    let energies_all = energies;
    let energies: Vec<WindowEnergy> = energies_all.iter().filter(|w| !is_auxiliary_window(w.index)).cloned().collect();
    let indices = |ws: &[&WindowEnergy]| ws.iter().map(|w| w.index.to_string()).collect::<Vec<_>>().join(", ");
    // A window inside a back-to-back stretch has its inner edges where power is steady:
    // what needs ticks is the stretch (its outer edges), not each window of it. One pass
    // over the windows in time order sums the points of each stretch's measured windows: an
    // auxiliary window (the warm-up) joins the stretch, but its ticks resolve none of the
    // measured windows (a warm-up whose first launch carried 323 ms of a library's
    // initialization once hid twelve 1 ms windows lying between two ticks).
    let mut order: Vec<usize> = (0..energies_all.len()).collect();
    order.sort_by(|&a, &b| energies_all[a].start_s.total_cmp(&energies_all[b].start_s));
    let mut stretch_of = vec![0usize; energies_all.len()];
    let mut stretch_sums: Vec<usize> = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        let joins = k > 0 && energies_all[i].start_s - energies_all[order[k - 1]].end_s < BACK_TO_BACK_GAP_S;
        if !joins {
            stretch_sums.push(0);
        }
        let stretch = stretch_sums.len() - 1;
        if !is_auxiliary_window(energies_all[i].index) {
            stretch_sums[stretch] += energies_all[i].points_inside;
        }
        stretch_of[i] = stretch;
    }
    let short: Vec<&WindowEnergy> = energies_all
        .iter()
        .enumerate()
        .filter(|(i, w)| !is_auxiliary_window(w.index) && stretch_sums[stretch_of[*i]] < min_points)
        .map(|(_, w)| w)
        .collect();
    if !short.is_empty() {
        let shortest = short.iter().map(|w| w.duration_s()).fold(f64::INFINITY, f64::min);
        warnings.push(Warning::new(
            WarningKind::TooFewTicks,
            format!(
                "{} of {} windows (shortest {:.1} ms; windows {}) span fewer than {min_points} {} updates{}: their edges carry most of their energy; lengthen the windows",
                short.len(),
                energies.len(),
                shortest * 1e3,
                indices(&short),
                source,
                update_period.map(|p| format!(" (one every {:.0} ms)", p * 1e3)).unwrap_or_default()
            ),
        ));
    }
    let shifted: Vec<&WindowEnergy> = energies
        .iter()
        .filter(|w| match (w.idle_before_w, w.idle_after_w) {
            (Some(b), Some(a)) => (a - b).abs() > 1.0 && (a - b).abs() > 0.02 * b.abs(),
            _ => false,
        })
        .collect();
    if !shifted.is_empty() {
        let largest = shifted
            .iter()
            .filter_map(|w| Some((w.idle_after_w? - w.idle_before_w?, w.idle_before_w?, w.idle_after_w?)))
            .fold((0.0f64, 0.0f64, 0.0f64), |acc, x| if x.0.abs() > acc.0.abs() { x } else { acc });
        warnings.push(Warning::new(
            WarningKind::IdleShift,
            format!(
                "active idle moved across {} of {} windows (windows {}), by up to {:+.1} W ({:.1} W before, {:.1} W after); dynamic energy uses the mean of the two",
                shifted.len(),
                energies.len(),
                indices(&shifted),
                largest.0,
                largest.1,
                largest.2
            ),
        ));
    }
    let negative: Vec<&WindowEnergy> = energies.iter().filter(|w| w.dynamic_j < 0.0).collect();
    if !negative.is_empty() {
        warnings.push(Warning::new(
            WarningKind::NegativeDynamic,
            format!("windows {} drew less than active idle: the idle level or the split is off", indices(&negative)),
        ));
    }
    if let Some(dropped) = trace.metadata("dropped_readings") {
        warnings.push(Warning::new(
            WarningKind::DroppedReadings,
            format!("the sampler dropped {dropped} old readings to bound its memory"),
        ));
    }
    if energies.is_empty() {
        return Err(Error::new(ErrorKind::Analysis, "the trace marks no measured window (only auxiliary stretches)"));
    }
    // The split takes the carried idle, or else 0 W, when the trace holds no idle interval.
    let no_idle_of_its_own = energies.iter().all(|w| w.idle_before_w.is_none() && w.idle_after_w.is_none());
    if let (true, Some(carried)) = (no_idle_of_its_own, &options.carried_idle) {
        let first_window = energies.iter().map(|w| w.start_s).fold(f64::INFINITY, f64::min);
        warnings.push(Warning::new(
            WarningKind::IdleCarried,
            format!(
                "no idle of its own: the active idle ({:.1} W), and the dynamic figures with it, are the idle \
                 measured with {}, whose measurement ended {:.1} s before this one's first window (a lean run of a \
                 paired sequence measures idle before its process's first benchmark only); the total energy stands",
                carried.watts,
                carried.from_id,
                (first_window - carried.measured_at_s).max(0.0)
            ),
        ));
    } else if no_idle_of_its_own && energies.iter().all(|w| w.idle_w == 0.0) {
        warnings.push(Warning::new(
            WarningKind::NoIdle,
            format!(
                "no whole {source} interval of idle lies in the trace: the active idle (shown as 0 W) and the dynamic \
                 figures are unknown; the total energy stands. Record longer idle around the windows"
            ),
        ));
    }
    let idle_w = energies.iter().map(|w| w.idle_w).sum::<f64>() / energies.len() as f64;
    Ok(TraceAnalysis {
        source,
        sensor_model,
        model_origin,
        delay_s,
        tick_fit,
        windows: energies,
        idle_w,
        warnings,
        curve,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A counter read every 2 ms that ticks every 100 ms (at 5 ms past each tenth of a second),
    /// each tick read at its next read, except the tick at 1.005 s: the driver held that read
    /// back to 1.035 s.
    fn counter_with_a_late_read() -> Trace {
        let mut trace = Trace::new();
        let mut t: f64 = 0.0;
        while t < 1.06 {
            let held_back = (1.0..1.035).contains(&t);
            if !held_back {
                let ticks = ((t - 0.005) / 0.1).floor() + 1.0;
                trace.push(Channel::Source(SourceKind::Counter), Reading { time_s: t, value: 1e6 + 30_000.0 * ticks });
            }
            t += 0.002;
        }
        trace
    }

    #[test]
    fn the_counters_curve_ends_where_the_analysis_places_its_last_tick_not_at_its_read() {
        let trace = counter_with_a_late_read();
        let options = AnalysisOptions::default();
        let end = counter_curve_end_s(&trace, SourceKind::Counter, &options).unwrap();
        // The late tick goes on the grid the others fit (1.005 s), less the reporting delay:
        // a window ending at 1.0 s is not covered by it, though the tick was read 35 ms after.
        let delay = SourceKind::Counter.default_delay_s();
        assert!((end - (1.005 - delay)).abs() < 0.002, "curve ends at {end:.4} s");
        assert!(end < 1.0 && 1.035 - delay > 1.0 + 0.005);
        // Power sources have no such curve.
        assert_eq!(counter_curve_end_s(&trace, SourceKind::PowerUsage, &options), None);
    }
}
