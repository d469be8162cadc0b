//! One benchmark's result file (`energy-result/1`): what it holds, how it is read (the
//! schema and every figure checked) and written (atomically).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{echo, Error, ErrorKind, Result};
use crate::measured::{CrossCheck, Drift, NetEnergy, PerUnit, RailEnergy, ThermalNormalized, WindowResult};
use crate::options::ResolvedOptions;
use crate::provenance::{Provenance, TemperatureRange};
use crate::source::{SensorModel, SourceKind};
use crate::stats::Estimate;
use crate::trace::format::write_atomically;
use crate::warning::Warning;

/// The most any single GPU board draws, W, used when its limit is unknown (the largest
/// boards are rated ~1.2 kW).
pub const GENERIC_POWER_CEILING_W: f64 = 5000.0;

/// The schema tag of result files.
pub const RESULT_SCHEMA: &str = "energy-result/1";

/// The device as a result file names it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ResultDevice {
    /// GPU name.
    pub name: String,
    /// GPU UUID.
    pub uuid: String,
    /// Driver version.
    pub driver: Option<String>,
    /// Whether the figures are simulated.
    pub simulated: bool,
    /// The board's enforced power limit during the run, W (NVML's; absent in files of older
    /// versions and where the GPU does not report one): what bounds the energy a launch can
    /// draw (`explain`'s power bound).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_limit_w: Option<f64>,
}

/// One benchmark's result, as written to `target/energy/<run>/<id>.json`. Unknown fields
/// are ignored on read, so later versions may add more.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ResultFile {
    /// Always [`RESULT_SCHEMA`].
    pub schema: String,
    /// Benchmark id.
    pub id: String,
    /// The device.
    pub device: ResultDevice,
    /// Launches measured in all windows together.
    pub launches: u64,
    /// Net energy against a baseline kernel, when one was given.
    #[serde(default)]
    pub net: Option<NetEnergy>,
    /// Where the result came from: commit, branch, dirty tree, host (absent in files of
    /// older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// The lowest and highest die temperature of the windows (absent in files of older
    /// versions, and when no window recorded one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_range_c: Option<TemperatureRange>,
    /// Where the benchmark stands in a parameterized benchmark's sweep (`args = [...]`): the
    /// sweep, the parameter, the argument. Absent for a benchmark without arguments (and in
    /// files of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<crate::sweep::SweepPoint>,
    /// What was measured: every figure the harness's `Measurement` holds too (one
    /// definition), written inline in the file (`serde(flatten)`).
    #[serde(flatten)]
    pub figures: Figures,
}

/// What a measurement found, as both the harness's `Measurement` and the result file hold
/// it (one definition of each field): estimates per launch, the source and sensor model,
/// the windows, the warnings and the checks. A [`ResultFile`] reads them as its own fields
/// (`Deref`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Figures {
    /// Energy per launch, J.
    pub energy_j: Estimate,
    /// Dynamic energy per launch (above active idle), J.
    pub dynamic_j: Estimate,
    /// GPU time per launch, s.
    pub time_s: Estimate,
    /// Mean board power in the windows, W.
    pub power_w: Estimate,
    /// Active idle power, W.
    pub idle_w: f64,
    /// Source of the energies.
    pub source: SourceKind,
    /// Sensor model inverted.
    pub sensor_model: SensorModel,
    /// Launches per window.
    #[serde(default)]
    pub launches_per_window: u64,
    /// Warnings.
    pub warnings: Vec<Warning>,
    /// When the measurement began (RFC 3339).
    pub timestamp: String,
    /// Energy per operation, when given.
    #[serde(default)]
    pub per_op: Option<PerUnit>,
    /// Energy per byte, when given.
    #[serde(default)]
    pub per_byte: Option<PerUnit>,
    /// Where the sensor model came from.
    #[serde(default)]
    pub model_origin: String,
    /// Counter ticks (or updates) per window, mean.
    #[serde(default)]
    pub ticks_per_window: f64,
    /// The sample buffer's figure for the same windows.
    #[serde(default)]
    pub cross_check: Option<CrossCheck>,
    /// The rails recorded beside the board's source (the GPU's memory, say), each with its
    /// energy per launch over the same windows: reported beside the board's figures, never
    /// subtracted from them. Absent when the GPU offers none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rails: Vec<RailEnergy>,
    /// Wall time of the measurement, s.
    #[serde(default)]
    pub wall_time_s: f64,
    /// Every window.
    #[serde(default)]
    pub windows: Vec<WindowResult>,
    /// The options the measurement ran with, resolved (precision asked, window limits).
    #[serde(default)]
    pub options: Option<ResolvedOptions>,
    /// Why the measurement stopped adding windows.
    #[serde(default)]
    pub stop: Option<String>,
    /// How the windows moved from the first to the last (energy, temperature, SM clock).
    #[serde(default)]
    pub drift: Option<Drift>,
    /// The energy per launch at the reference temperature (absent without a thermal
    /// calibration of the board, and in files of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thermal: Option<ThermalNormalized>,
    /// What the time per launch was read from: CUDA events on the harness's stream (the
    /// default, and files of older versions), or the host clock (library work).
    #[serde(default, skip_serializing_if = "crate::measured::TimeBasis::is_cuda_events")]
    pub time_basis: crate::measured::TimeBasis,
    /// The time per launch with the launches run back to back, no wait for the host between
    /// them (the launch-bound probe, s): below `time_s`, the GPU waited between launches in
    /// the windows (a warning `launch_bound` says so past a tenth). Absent where it was not
    /// measured (library work, launches of 200 µs or more) and in files of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub back_to_back_s: Option<f64>,
    /// The launches of each replay when the kernel ran as a CUDA graph (`graph = N`): the
    /// host launched the graph, the GPU ran its launches back to back. Every figure is still
    /// per launch of the kernel. Absent when the host launched each kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_launches: Option<u64>,
}

/// A GPU's UUID in short, as tables and legends name a board: `GPU-5ca491d2` (NVML's UUID
/// to its first group), `SIM-h100-0123abcd` (a simulated board: its seed's first 8 digits, so
/// that two simulated boards stay apart).
pub fn short_uuid(uuid: &str) -> String {
    let groups: Vec<&str> = uuid.split('-').collect();
    let keep = if groups.first() == Some(&"SIM") { 3 } else { 2 };
    groups
        .iter()
        .take(keep)
        .enumerate()
        .map(|(i, g)| if i + 1 == keep { g.chars().take(8).collect() } else { g.to_string() })
        .collect::<Vec<String>>()
        .join("-")
}

impl ResultDevice {
    /// [`short_uuid`] of this device.
    pub fn short_uuid(&self) -> String {
        short_uuid(&self.uuid)
    }
}

impl std::ops::Deref for ResultFile {
    type Target = Figures;

    fn deref(&self) -> &Figures {
        &self.figures
    }
}

impl std::ops::DerefMut for ResultFile {
    fn deref_mut(&mut self) -> &mut Figures {
        &mut self.figures
    }
}

impl ResultFile {
    /// Mean die temperature over the windows, °C (`None` when no window recorded one).
    pub fn mean_temperature_c(&self) -> Option<f64> {
        let t: Vec<f64> = self.windows.iter().filter_map(|w| w.temperature_c.map(f64::from)).collect();
        (!t.is_empty()).then(|| t.iter().sum::<f64>() / t.len() as f64)
    }

    /// Reads a result file, checking its schema and every figure ([`ResultFile::parse`]).
    pub fn read_json(path: &Path) -> Result<ResultFile> {
        // A result archived gzipped (`<id>.json.gz` under `research/results/`) is read as written.
        let bytes = crate::archive::read_archived(path).map_err(|e| Error::io(path, "read the result", e))?;
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::new(ErrorKind::Format, format!("{}: not UTF-8 text, so not a result", path.display()))
        })?;
        ResultFile::parse(&text, path)
    }

    /// Parses a result from text (`path` names it in errors): the schema checked, missing
    /// standard deviations derived from the intervals, every figure validated
    /// ([`ResultFile::validate`]).
    pub fn parse(text: &str, path: &Path) -> Result<ResultFile> {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| Error::new(ErrorKind::Format, format!("{}: not JSON ({e})", path.display())))?;
        match value.get("schema").and_then(|s| s.as_str()) {
            Some(RESULT_SCHEMA) => {}
            Some(other) => {
                return Err(Error::new(
                    ErrorKind::Format,
                    format!("{}: schema `{}`, expected `{RESULT_SCHEMA}`", path.display(), echo(other)),
                ))
            }
            None => {
                return Err(Error::new(
                    ErrorKind::Format,
                    format!("{}: no `schema` field: not an energy result file", path.display()),
                ))
            }
        }
        let mut result: ResultFile = serde_json::from_value(value).map_err(|e| {
            Error::new(
                ErrorKind::Format,
                format!("{}: malformed energy result ({})", path.display(), echo(&e.to_string())),
            )
        })?;
        for e in result.estimates_mut() {
            *e = e.with_implied_std_dev();
        }
        result.validate().map_err(|problem| {
            Error::new(
                ErrorKind::Format,
                format!("{}: {problem}: not a result that can be reported or compared", path.display()),
            )
        })?;
        Ok(result)
    }

    /// Every energy figure per launch (per unit too), named by its field.
    fn energies(&self) -> Vec<(String, &Estimate)> {
        let mut all = vec![("energy_j".to_string(), &self.energy_j), ("dynamic_j".to_string(), &self.dynamic_j)];
        for u in self.per_op.iter().chain(&self.per_byte) {
            all.push((format!("per_{}.energy_j", u.unit), &u.energy_j));
            all.push((format!("per_{}.dynamic_j", u.unit), &u.dynamic_j));
        }
        all.extend(self.net.iter().map(|n| ("net.energy_j".to_string(), &n.energy_j)));
        all.extend(self.cross_check.iter().map(|c| ("cross_check.energy_j".to_string(), &c.energy_j)));
        for r in &self.rails {
            all.push((format!("rails.{}.energy_j", r.source.name()), &r.energy_j));
            all.extend(r.dynamic_j.iter().map(|d| (format!("rails.{}.dynamic_j", r.source.name()), d)));
        }
        all
    }

    fn estimates_mut(&mut self) -> impl Iterator<Item = &mut Estimate> {
        let f = &mut self.figures;
        [&mut f.energy_j, &mut f.dynamic_j, &mut f.time_s, &mut f.power_w]
            .into_iter()
            .chain(f.per_op.iter_mut().flat_map(|u| [&mut u.energy_j, &mut u.dynamic_j]))
            .chain(f.per_byte.iter_mut().flat_map(|u| [&mut u.energy_j, &mut u.dynamic_j]))
            .chain(self.net.iter_mut().map(|n| &mut n.energy_j))
            .chain(f.cross_check.iter_mut().map(|c| &mut c.energy_j))
            .chain(f.rails.iter_mut().flat_map(|r| std::iter::once(&mut r.energy_j).chain(r.dynamic_j.as_mut())))
    }

    /// Checks every figure: energy, time and power per launch positive with intervals
    /// that hold their means over at least two windows; dynamic and net energies finite
    /// with ordered intervals (they may be negative: a kernel below idle, a cheaper
    /// variant), a dynamic energy no larger than the total (idle power is never negative);
    /// idle power finite and non-negative; the provenance's commit a full hash and the
    /// temperature range ordered and sane ([`Provenance::validate`],
    /// [`TemperatureRange::validate`]). The error names the field. A comparison checks
    /// the figure it compares further (`energy_report::check_comparable_figure`).
    pub fn validate(&self) -> std::result::Result<(), String> {
        let field = |name: &str, e: &Estimate, positive: bool| {
            e.validate(positive).map_err(|problem| format!("`{}` {name}: {problem}", echo(&self.id)))
        };
        let within_total = |name: &str, dynamic: &Estimate, total: &Estimate| {
            if dynamic.mean <= total.mean + 1e-9 * total.mean.abs() {
                Ok(())
            } else {
                Err(format!(
                    "`{}` {name}: mean {} is above the total energy {}: the energy above active idle cannot exceed the whole (idle power is never negative)",
                    echo(&self.id),
                    dynamic.mean,
                    total.mean
                ))
            }
        };
        for (name, e) in self.energies() {
            let largest = [e.mean, e.ci_low, e.ci_high].into_iter().map(f64::abs).fold(0.0, f64::max);
            if largest > MAX_ENERGY_PER_LAUNCH_J {
                return Err(format!(
                    "`{}` {name}: {largest:e} J per launch is beyond any GPU (at most {MAX_ENERGY_PER_LAUNCH_J:e} J: \
                     {} W for {:.0} days)",
                    echo(&self.id),
                    GENERIC_POWER_CEILING_W,
                    MAX_ENERGY_PER_LAUNCH_J / GENERIC_POWER_CEILING_W / 86_400.0
                ));
            }
        }
        for w in &self.windows {
            validate_window(w)
                .map_err(|problem| format!("`{}` windows[{}]: {problem}", echo(&self.id), w.energy.index))?;
        }
        self.sensor_model.validate().map_err(|problem| format!("`{}` sensor_model: {problem}", echo(&self.id)))?;
        field("energy_j", &self.energy_j, true)?;
        field("time_s", &self.time_s, true)?;
        field("power_w", &self.power_w, true)?;
        field("dynamic_j", &self.dynamic_j, false)?;
        within_total("dynamic_j", &self.dynamic_j, &self.energy_j)?;
        if let Some(limit) = self.device.power_limit_w {
            if !(limit.is_finite() && limit > 0.0 && limit <= GENERIC_POWER_CEILING_W) {
                return Err(format!(
                    "`{}` device.power_limit_w: {limit} W is not a board's power limit (above 0, at most {} W)",
                    echo(&self.id),
                    GENERIC_POWER_CEILING_W
                ));
            }
        }
        for unit in [&self.per_op, &self.per_byte].into_iter().flatten() {
            if !(unit.units_per_launch.is_finite() && unit.units_per_launch > 0.0) {
                return Err(format!(
                    "`{}` per_{}: {} units per launch",
                    echo(&self.id),
                    unit.unit,
                    unit.units_per_launch
                ));
            }
            field(&format!("per_{}.energy_j", unit.unit), &unit.energy_j, true)?;
            field(&format!("per_{}.dynamic_j", unit.unit), &unit.dynamic_j, false)?;
            within_total(&format!("per_{}.dynamic_j", unit.unit), &unit.dynamic_j, &unit.energy_j)?;
        }
        if let Some(net) = &self.net {
            field("net.energy_j", &net.energy_j, false)?;
        }
        for rail in &self.rails {
            let name = rail.source.name();
            if rail.source.measures_board() {
                return Err(format!("`{}` rails: {name} measures the whole board, not a rail", echo(&self.id)));
            }
            field(&format!("rails.{name}.energy_j"), &rail.energy_j, true)?;
            if let Some(dynamic) = &rail.dynamic_j {
                field(&format!("rails.{name}.dynamic_j"), dynamic, false)?;
                within_total(&format!("rails.{name}.dynamic_j"), dynamic, &rail.energy_j)?;
            }
            if let Some(idle) = rail.idle_w.filter(|w| !(w.is_finite() && *w >= 0.0)) {
                return Err(format!("`{}` rails.{name}.idle_w: {idle} is not a power", echo(&self.id)));
            }
        }
        if !(self.idle_w.is_finite() && self.idle_w >= 0.0) {
            return Err(format!("`{}` idle_w: {} is not a power", echo(&self.id), self.idle_w));
        }
        if let Some(p) = &self.provenance {
            p.validate().map_err(|problem| format!("`{}` {problem}", echo(&self.id)))?;
        }
        if let Some(t) = &self.temperature_range_c {
            t.validate().map_err(|problem| format!("`{}` {problem}", echo(&self.id)))?;
        }
        if let Some(t) = &self.thermal {
            crate::measured::validate_normalized(t).map_err(|problem| format!("`{}` {problem}", echo(&self.id)))?;
        }
        Ok(())
    }

    /// The file's text, after [`ResultFile::validate`]: a figure that cannot be reported
    /// is an error, never a file.
    pub fn to_json(&self) -> Result<String> {
        self.validate()
            .map_err(|problem| Error::new(ErrorKind::Analysis, format!("the result is not written: {problem}")))?;
        serde_json::to_string_pretty(self)
            .map_err(|e| Error::new(ErrorKind::Io, format!("could not encode the result: {e}")))
    }

    /// Writes it atomically ([`ResultFile::to_json`]). Bench results go through a run
    /// instead: `write_outputs`.
    pub fn write(&self, path: &Path) -> Result<()> {
        write_atomically(path, self.to_json()?.as_bytes())
    }
}

/// The largest energy per launch a result may hold, J: a launch at the generic power ceiling
/// ([`GENERIC_POWER_CEILING_W`]) for over two days. A figure beyond it
/// is beyond any GPU, and is refused on read rather than carried to a page (where, in µJ, a
/// figure near the largest double would print as `inf`).
pub const MAX_ENERGY_PER_LAUNCH_J: f64 = 1e9;

/// One window's figures: its span, energies and powers finite, none negative that cannot be
/// (the board's energy, the idle and busy powers, the GPU time), and its energy above
/// active idle no larger than the whole.
fn validate_window(w: &WindowResult) -> std::result::Result<(), String> {
    let e = &w.energy;
    if !(e.start_s.is_finite() && e.end_s.is_finite() && e.end_s > e.start_s) {
        return Err(format!("it spans [{}, {}] s, not a window", e.start_s, e.end_s));
    }
    let non_negative = [("energy_j", Some(e.energy_j)), ("gpu_time_s", Some(w.gpu_time_s)), ("idle_w", Some(e.idle_w))]
        .into_iter()
        .chain([("idle_before_w", e.idle_before_w), ("idle_after_w", e.idle_after_w), ("busy_w", e.busy_w)]);
    for (name, value) in non_negative {
        if let Some(v) = value.filter(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(format!("{name} {v} is not finite and non-negative"));
        }
    }
    if !(e.dynamic_j.is_finite() && e.edge_energy_j.is_finite()) {
        return Err(format!("dynamic_j {} or edge_energy_j {} is not finite", e.dynamic_j, e.edge_energy_j));
    }
    if e.dynamic_j > e.energy_j * (1.0 + 1e-9) + 1e-15 {
        return Err(format!(
            "dynamic_j {} is above energy_j {}: the energy above active idle cannot exceed the whole",
            e.dynamic_j, e.energy_j
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::short_uuid;

    #[test]
    fn short_uuids_keep_boards_apart() {
        assert_eq!(short_uuid("GPU-5ca491d2-0f1e-6a2b-9c3d-4e5f60718293"), "GPU-5ca491d2");
        assert_eq!(short_uuid("SIM-h100-0123456789abcdef"), "SIM-h100-01234567");
        assert_ne!(short_uuid("SIM-h100-0123456789abcdef"), short_uuid("SIM-h100-fedcba9876543210"));
        assert_eq!(short_uuid("MIG-abc"), "MIG-abc");
        assert_eq!(short_uuid(""), "");
    }
}
