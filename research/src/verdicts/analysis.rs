//! The experiment analyzed ([`analyze`]): each board's thermal fits, its cold→hot check and
//! its baseline figures, and every comparison of its runs.

use std::collections::BTreeMap;

use energy_harness::unstable::engine::{fit_thermal, normalize, ThermalCalibration, ThermalPoint, THERMAL_SCHEMA};
use energy_harness::{Error, ErrorKind, Result, ResultFile};

use super::modes::Outcome;
use super::outcomes::board_outcomes;
use super::read::Run;

/// A board's thermal fits: on the calibration kernel (used) and on the measured kernel
/// (a check that dP/dT is the board's, not the kernel's).
#[derive(Clone, Debug)]
pub struct BoardFit {
    /// The board.
    pub uuid: String,
    /// GPU name.
    pub name: String,
    /// The fit on the calibration runs (role K), applied to every result.
    pub calibration: ThermalCalibration,
    /// The same fit on the cold→hot runs of the measured kernel (role V), when they span enough.
    pub check: Option<ThermalCalibration>,
}

fn fit_board(uuid: &str, name: &str, kernel: &str, runs: &[&Run]) -> Result<ThermalCalibration> {
    let points: Vec<ThermalPoint> =
        runs.iter().filter_map(|r| r.result.as_ref()).flat_map(|r| ThermalPoint::of_windows(&r.windows)).collect();
    let fit = fit_thermal(&points)?;
    let first = runs.iter().find_map(|r| r.result.as_ref().map(|x| x.timestamp.clone())).unwrap_or_default();
    Ok(ThermalCalibration {
        schema: THERMAL_SCHEMA.into(),
        device_name: name.into(),
        uuid: uuid.into(),
        simulated: runs.iter().any(|r| r.result.as_ref().is_some_and(|x| x.device.simulated)),
        created_at: first,
        watts_per_c: fit.watts_per_c,
        std_error_w_per_c: fit.std_error_w_per_c,
        sm_clock_mhz: fit.sm_clock_mhz,
        temperature_range_c: fit.temperature_range_c,
        windows: fit.windows,
        mean_power_w: fit.mean_power_w,
        kernel: kernel.into(),
    })
}

/// The cold→hot check on one board: the measured kernel back to back from a cooled board.
#[derive(Clone, Debug)]
pub struct ColdHot {
    /// The board.
    pub uuid: String,
    /// Runs.
    pub runs: usize,
    /// Mean window temperature of the first and the last run, °C.
    pub temperature_c: (f64, f64),
    /// Raw energy per launch of the last run over the first, percent.
    pub raw_change_pct: f64,
    /// Largest deviation of a run's raw figure from the runs' mean, percent.
    pub raw_spread_pct: f64,
    /// Normalized figure of the last run over the first, percent.
    pub normalized_change_pct: f64,
    /// Largest deviation of a run's normalized figure from the runs' mean, percent.
    pub normalized_spread_pct: f64,
    /// The raw figure's least-squares trend over the sequence (first to last run), percent,
    /// with the half-width of its 95 % interval.
    pub raw_trend_pct: (f64, f64),
    /// The normalized figure's trend, percent, with its half-width.
    pub normalized_trend_pct: (f64, f64),
}

/// The least-squares trend of `values` against `times_s` over their span, as a percentage
/// of their mean, with the half-width of its 95 % interval.
fn trend_pct(times_s: &[f64], values: &[f64]) -> (f64, f64) {
    let points: Vec<(f64, f64)> = times_s.iter().copied().zip(values.iter().copied()).collect();
    let Some(fit) = energy_results::stats::linear_fit(&points) else { return (f64::NAN, f64::NAN) };
    let span = times_s.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        - times_s.iter().copied().fold(f64::INFINITY, f64::min);
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let t = energy_results::stats::student_t_975(values.len().saturating_sub(2));
    (100.0 * fit.slope * span / mean, 100.0 * t * fit.slope_std_err * span / mean)
}

/// One board's figures of the baseline kernel (every A and V run): what boards of one
/// model differ by.
#[derive(Clone, Debug)]
pub struct BoardFigures {
    /// The board.
    pub uuid: String,
    /// Runs.
    pub runs: usize,
    /// Mean energy per launch, J.
    pub energy_j: f64,
    /// Mean energy per launch at 50 °C, J.
    pub normalized_j: f64,
    /// Mean dynamic energy per launch (above active idle), J.
    pub dynamic_j: f64,
    /// Mean active idle, W.
    pub idle_w: f64,
    /// Mean window temperature, °C.
    pub temperature_c: f64,
}

/// Everything the experiment shows.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// Per board: the baseline kernel's figures.
    pub board_figures: Vec<BoardFigures>,
    /// Per board: its fits.
    pub boards: Vec<BoardFit>,
    /// Per board: the cold→hot check.
    pub cold_hot: Vec<ColdHot>,
    /// Every comparison.
    pub outcomes: Vec<Outcome>,
    /// Processes that failed (tag, n).
    pub failed: Vec<(String, u32)>,
    /// Wall time of one process, s: median.
    pub process_s: f64,
}

/// Mean die temperature of a result's windows, °C (NaN when none recorded one: the table
/// test refuses any NaN).
fn mean_temp(r: &ResultFile) -> f64 {
    r.mean_temperature_c().unwrap_or(f64::NAN)
}

pub(super) fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Analyzes every run of the experiment (all calls together).
pub fn analyze(runs: &[Run]) -> Result<Analysis> {
    let failed: Vec<(String, u32)> = runs.iter().filter(|r| r.result.is_none()).map(|r| (r.tag.clone(), r.n)).collect();
    // Boards, by the UUID their results name; a call belongs to one board.
    let mut by_board: BTreeMap<String, Vec<Run>> = BTreeMap::new();
    for r in runs {
        if let Some(res) = &r.result {
            by_board.entry(res.device.uuid.clone()).or_default().push(r.clone());
        }
    }
    let mut boards = Vec::new();
    let mut board_figures = Vec::new();
    let mut cold_hot = Vec::new();
    let mut outcomes = Vec::new();
    for (uuid, mut runs) in by_board {
        let name = runs[0].result.as_ref().map(|r| r.device.name.clone()).unwrap_or_default();
        let calib: Vec<&Run> = runs.iter().filter(|r| r.role == 'K').collect();
        if calib.is_empty() {
            return Err(Error::new(ErrorKind::InvalidInput, format!("board {uuid} has no calibration runs (role K)")));
        }
        let calibration = fit_board(&uuid, &name, "FMA loop -O0 (fma_loop_o0), back to back for 60 s", &calib)?;
        let checks: Vec<&Run> = runs.iter().filter(|r| r.role == 'V').collect();
        let check = fit_board(&uuid, &name, "FMA loop (fma_loop)", &checks).ok();
        // Every result of the measured kernel gets its energy at 50 °C.
        for r in runs.iter_mut().filter(|r| r.role != 'K') {
            if let Some(res) = r.result.as_mut() {
                res.thermal = normalize(&uuid, &res.windows, &calibration);
            }
        }
        let v: Vec<&ResultFile> = runs.iter().filter(|r| r.role == 'V').filter_map(|r| r.result.as_ref()).collect();
        let v_times: Vec<f64> =
            runs.iter().filter(|r| r.role == 'V' && r.result.is_some()).map(|r| r.start_ns as f64 * 1e-9).collect();
        if v.len() >= 2 {
            let raw: Vec<f64> = v.iter().map(|r| r.energy_j.mean).collect();
            let norm: Vec<f64> = v.iter().filter_map(|r| r.thermal.as_ref().map(|t| t.energy_j.mean)).collect();
            let spread = |x: &[f64]| {
                let m = x.iter().sum::<f64>() / x.len() as f64;
                x.iter().map(|v| (v / m - 1.0).abs() * 100.0).fold(0.0, f64::max)
            };
            if norm.len() == raw.len() {
                cold_hot.push(ColdHot {
                    uuid: uuid.clone(),
                    runs: v.len(),
                    temperature_c: (mean_temp(v[0]), mean_temp(v[v.len() - 1])),
                    raw_change_pct: (raw[raw.len() - 1] / raw[0] - 1.0) * 100.0,
                    raw_spread_pct: spread(&raw),
                    normalized_change_pct: (norm[norm.len() - 1] / norm[0] - 1.0) * 100.0,
                    normalized_spread_pct: spread(&norm),
                    raw_trend_pct: trend_pct(&v_times, &raw),
                    normalized_trend_pct: trend_pct(&v_times, &norm),
                });
            }
        }
        let base: Vec<&ResultFile> =
            runs.iter().filter(|r| matches!(r.role, 'A' | 'V')).filter_map(|r| r.result.as_ref()).collect();
        if !base.is_empty() {
            let n = base.len() as f64;
            let mean = |f: &dyn Fn(&ResultFile) -> f64| base.iter().map(|r| f(r)).sum::<f64>() / n;
            board_figures.push(BoardFigures {
                uuid: uuid.clone(),
                runs: base.len(),
                energy_j: mean(&|r| r.energy_j.mean),
                normalized_j: mean(&|r| r.thermal.as_ref().map_or(f64::NAN, |t| t.energy_j.mean)),
                dynamic_j: mean(&|r| r.dynamic_j.mean),
                idle_w: mean(&|r| r.idle_w),
                temperature_c: mean(&mean_temp),
            });
        }
        outcomes.extend(board_outcomes(&uuid, &runs)?);
        boards.push(BoardFit { uuid, name, calibration, check });
    }
    let process_s = median(runs.iter().filter(|r| r.result.is_some()).map(Run::wall_s).collect());
    Ok(Analysis { board_figures, boards, cold_hot, outcomes, failed, process_s })
}
