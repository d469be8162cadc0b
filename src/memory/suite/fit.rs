//! Measured points and the fits over them: energy per sector (slope), offset and latency per configuration; the DIV reference from the instruction suite.

use super::*;

/// What the setup of a point found: its size and verification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointFacts {
    /// The layout.
    pub layout: Layout,
    /// Iteration unit of its configuration.
    pub unit: u32,
    /// Measurement-loop iterations of this point.
    pub iterations: u32,
    /// Threads whose results were checked against the host.
    pub verified_threads: usize,
}

/// One measured point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointRun {
    /// Benchmark name.
    pub name: String,
    /// Its configuration.
    pub config: Config,
    /// Point, in units.
    pub p: u32,
    /// Setup facts.
    pub facts: PointFacts,
    /// Sectors the measurement part accesses per launch.
    pub sectors: f64,
    /// Dependent accesses each thread makes in the measurement part.
    pub thread_accesses: f64,
    /// Energy per launch, J.
    pub energy_j: Estimate,
    /// Energy above active idle per launch, J.
    pub dynamic_j: Estimate,
    /// GPU time per launch, s.
    pub time_s: Estimate,
    /// Mean power, W.
    pub power_w: Estimate,
    /// Active idle, W.
    pub idle_w: f64,
    /// SM clock in the windows, MHz.
    pub sm_clock_mhz: Option<f64>,
    /// The engine's warnings.
    pub warnings: Vec<String>,
    /// The GPU-memory rail's energy per launch over the same windows, J (absent where the
    /// board has no memory rail and in points of older runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rail_j: Option<Estimate>,
    /// The same above the rail's own active idle, J.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rail_dynamic_j: Option<Estimate>,
}

impl PointRun {
    /// From a measurement.
    pub fn new(name: &str, config: &Config, p: u32, facts: PointFacts, m: &Measurement) -> PointRun {
        let (per_thread, sectors) = facts.layout.measured_accesses(config.kernel, facts.iterations);
        let clocks: Vec<f64> = m.windows.iter().filter_map(|w| w.sm_clock_mhz.map(f64::from)).collect();
        PointRun {
            name: name.to_string(),
            config: config.clone(),
            p,
            facts,
            sectors,
            thread_accesses: per_thread,
            energy_j: m.energy_j,
            dynamic_j: m.dynamic_j,
            time_s: m.time_s,
            power_w: m.power_w,
            idle_w: m.idle_w,
            sm_clock_mhz: (!clocks.is_empty()).then(|| clocks.iter().sum::<f64>() / clocks.len() as f64),
            warnings: m.warnings.iter().map(|w| w.message.clone()).collect(),
            rail_j: memory_rail(m).map(|r| r.energy_j),
            rail_dynamic_j: memory_rail(m).and_then(|r| r.dynamic_j),
        }
    }
}

/// The points file: every point measured so far, with the GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointsFile {
    /// [`POINTS_SCHEMA`].
    pub format: String,
    /// The GPU.
    pub device: DeviceFacts,
    /// Whether simulated.
    pub simulated: bool,
    /// The points, in the order measured.
    pub points: Vec<PointRun>,
    /// The revision of the plan the run followed ([`PLAN_REVISION`]; 1 in files written
    /// before it was recorded): the configurations its table lists as not measured.
    #[serde(default = "first_plan")]
    pub plan: u32,
}

fn first_plan() -> u32 {
    1
}

/// The fit of one configuration's points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigFit {
    /// The configuration.
    pub config: Config,
    /// `load/l2/1024t_sm`.
    pub key: String,
    /// Its layout.
    pub layout: Layout,
    /// Energy per launch against sectors: slope J/sector, intercept J.
    pub energy: Option<LineFit>,
    /// Dynamic energy per launch against sectors.
    pub dynamic: Option<LineFit>,
    /// GPU time per launch against a thread's dependent accesses: slope s/access.
    pub time: Option<LineFit>,
    /// Energy of the warm-up alone (point 0), J.
    pub warm_only_j: Option<f64>,
    /// Delestrac's offset: intercept less the warm-up alone, J.
    pub offset_j: Option<f64>,
    /// Points fitted.
    pub points: usize,
    /// The memory rail's energy per launch against sectors, when every point has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rail: Option<LineFit>,
    /// The same above the rail's active idle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rail_dynamic: Option<LineFit>,
}

impl ConfigFit {
    /// Energy per sector, pJ, with its interval.
    pub fn pj_per_sector(&self) -> Option<(f64, f64, f64)> {
        self.energy.map(|f| (f.slope * 1e12, f.slope_ci.0 * 1e12, f.slope_ci.1 * 1e12))
    }

    /// Per-access latency, ns.
    pub fn latency_ns(&self) -> Option<f64> {
        self.time.map(|f| f.slope * 1e9)
    }
}

/// Fits each configuration that has at least three measured points.
pub fn fit_configs(points: &[PointRun]) -> Vec<ConfigFit> {
    let mut by_key: BTreeMap<String, Vec<&PointRun>> = BTreeMap::new();
    let mut order = Vec::new();
    for point in points {
        let key = point.config.key();
        if !by_key.contains_key(&key) {
            order.push(key.clone());
        }
        by_key.entry(key).or_default().push(point);
    }
    order
        .into_iter()
        .map(|key| {
            let mut list = by_key.remove(&key).unwrap_or_default();
            list.sort_by_key(|p| p.p);
            list.dedup_by_key(|p| p.p);
            let energy = fit_line(&list.iter().map(|p| (p.sectors, p.energy_j.mean)).collect::<Vec<_>>());
            let dynamic = fit_line(&list.iter().map(|p| (p.sectors, p.dynamic_j.mean)).collect::<Vec<_>>());
            let time = fit_line(&list.iter().map(|p| (p.thread_accesses, p.time_s.mean)).collect::<Vec<_>>());
            let warm_only_j = list.iter().find(|p| p.p == 0).map(|p| p.energy_j.mean);
            let offset_j = energy.zip(warm_only_j).map(|(f, w)| f.intercept - w);
            ConfigFit {
                config: list[0].config.clone(),
                key,
                layout: list[0].facts.layout,
                energy,
                dynamic,
                time,
                warm_only_j,
                offset_j,
                points: list.len(),
                rail: rail_fit(&list, |p| p.rail_j),
                rail_dynamic: rail_fit(&list, |p| p.rail_dynamic_j),
            }
        })
        .collect()
}

/// The instruction suite's figures the DIV cross-check compares with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DivReference {
    /// The instruction table it came from.
    pub source: String,
    /// Its GPU.
    pub uuid: String,
    /// `div.u32` + `xor.b32`, net energy per thread-instruction at JIT O4, J.
    pub net_j: f64,
    /// The same, dynamic, J.
    pub dynamic_j: f64,
}

/// Reads `div.u32` and `xor.b32` (JIT O4) from an instruction table: the slope figures of
/// a table of format 2, Arafa's net figures of format 1 (the first H100 run).
pub fn div_reference(path: &Path) -> Result<DivReference> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "read the instruction table", e))?;
    let bad = |why: String| Error::new(ErrorKind::Format, format!("{}: {why}", path.display()));
    let table: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not an instruction table ({e})")))?;
    let format = table.get("format").and_then(|f| f.as_str()).unwrap_or("");
    if !format.starts_with("energy-instructions/") {
        return Err(bad(format!(
            "format `{format}`, expected an instruction table (`{}`)",
            crate::instructions::suite::TABLE_SCHEMA
        )));
    }
    let rows = table.get("rows").and_then(|r| r.as_array()).ok_or_else(|| bad("no rows".into()))?;
    let figure = |label: &str, field: &str| -> Result<f64> {
        let row = rows
            .iter()
            .find(|r| r["label"] == label && r["level"] == "O4")
            .ok_or_else(|| Error::new(ErrorKind::InvalidInput, format!("{} has no {label} at O4", path.display())))?;
        let from = if row["slope"].is_object() { &row["slope"] } else { &row["net"] };
        from[field]["mean"].as_f64().ok_or_else(|| bad(format!("{label} has no {field}")))
    };
    Ok(DivReference {
        source: path.display().to_string(),
        uuid: table["device"]["uuid"].as_str().unwrap_or_default().to_string(),
        net_j: figure("div.u32", "thread_j")? + figure("xor.b32", "thread_j")?,
        dynamic_j: figure("div.u32", "dynamic_thread_j")? + figure("xor.b32", "dynamic_thread_j")?,
    })
}

/// The instruction table used for the DIV cross-check: `$ENERGY_MEMORY_INSTRUCTIONS`, else
/// this GPU's own (`target/energy/suites/instructions.json`), else the H100 table committed
/// under `research/results/`.
pub fn div_reference_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ENERGY_MEMORY_INSTRUCTIONS") {
        return Some(PathBuf::from(p));
    }
    let own = suite_dir().join("instructions.json");
    if own.is_file() {
        return Some(own);
    }
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("research/results/instructions-h100.json");
    committed.is_file().then_some(committed)
}
