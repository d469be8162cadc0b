//! Kernel records saved the moment each kernel is measured, and the table published from the records of one GPU and the current PTX.

use super::*;

/// The schema tag of a [`KernelRecord`] file.
pub const RECORD_SCHEMA: &str = "energy-instruction-kernel/2";

/// One measured kernel as saved on disk, the moment it was measured: the table is built
/// from these, so runs of parts of the suite (criterion filters) add up to one table and
/// an interrupted run keeps what it measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelRecord {
    /// [`RECORD_SCHEMA`].
    pub format: String,
    /// The GPU.
    pub device: DeviceFacts,
    /// Hash of the PTX file the kernel came from: a record of an older kernel is not used.
    pub ptx_hash: String,
    /// `full` or `one`.
    pub threads_mode: String,
    /// When it was measured (RFC 3339).
    pub timestamp: String,
    /// The measurement.
    pub run: KernelRun,
}

pub(super) fn records_dir(dir: &Path) -> PathBuf {
    dir.join("instructions")
}

/// FNV-1a of an instruction's generated PTX, in hex.
pub fn ptx_hash(instruction: &Instruction) -> String {
    energy_results::hash::content_hash(generate(instruction).as_bytes())
}

/// Saves a record under `dir` (written whole or not at all).
pub fn save_record(dir: &Path, record: &KernelRecord) -> Result<PathBuf> {
    // The two thread modes measure kernels of the same names: their records stay apart.
    let mode = if record.threads_mode == "one" { ".one" } else { "" };
    let path = records_dir(dir).join(format!("{}{mode}.json", file_stem(&record.run.name)));
    write_json(&path, "a kernel record", record)?;
    Ok(path)
}

/// The records under `dir`; a file that is not a record is reported on stderr and skipped.
pub fn load_records(dir: &Path) -> Vec<KernelRecord> {
    let records = records_dir(dir);
    let Ok(entries) = std::fs::read_dir(&records) else { return Vec::new() };
    let mut out = Vec::new();
    let mut paths: Vec<PathBuf> =
        entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    paths.sort();
    for path in paths {
        let parsed = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str::<KernelRecord>(&text).map_err(|e| e.to_string()));
        match parsed {
            Ok(r) if r.format == RECORD_SCHEMA => out.push(r),
            Ok(r) => {
                eprintln!("warning: skipping {}: format `{}`, expected `{RECORD_SCHEMA}`", path.display(), r.format)
            }
            Err(e) => eprintln!("warning: skipping {}: not a kernel record ({e})", path.display()),
        }
    }
    out
}

/// The table from the records of one GPU (`uuid`) and thread mode whose kernels are the
/// current ones (same PTX); `None` when no record qualifies.
pub fn table_from_records(records: &[KernelRecord], options: &SuiteOptions, uuid: &str) -> Option<InstructionTable> {
    let threads_mode = if options.one_thread { "one" } else { "full" };
    let kernels = plan(options, &catalog());
    let mut chosen: BTreeMap<String, &KernelRecord> = BTreeMap::new();
    for record in records {
        if record.device.uuid != uuid || record.threads_mode != threads_mode {
            continue;
        }
        let Some(planned) = kernels.iter().find(|k| k.name == record.run.name) else { continue };
        if record.ptx_hash != ptx_hash(&planned.instruction) {
            continue;
        }
        let newer = chosen.get(&record.run.name).is_none_or(|old| old.timestamp <= record.timestamp);
        if newer {
            chosen.insert(record.run.name.clone(), record);
        }
    }
    let latest = chosen.values().max_by(|a, b| a.timestamp.cmp(&b.timestamp))?;
    let device = latest.device.clone();
    let timestamp = latest.timestamp.clone();
    let runs: BTreeMap<String, KernelRun> = chosen.iter().map(|(n, r)| (n.clone(), r.run.clone())).collect();
    let (rows, checks, missing) = build_table(&kernels, &runs, options);
    Some(InstructionTable {
        format: TABLE_SCHEMA.into(),
        simulated: device.simulated,
        device: Some(device),
        timestamp,
        threads_mode: threads_mode.into(),
        k_values: options.k_values.clone(),
        rows,
        checks,
        kernels: runs.into_values().collect(),
        missing,
    })
}

/// Builds the table of GPU `uuid` (default: the GPU of the newest record) from the records
/// under `dir`, prints it and writes `instructions.{json,md}` there.
pub fn publish_table(dir: &Path, options: &SuiteOptions, uuid: Option<&str>) -> Result<InstructionTable> {
    let records = load_records(dir);
    let newest = records.iter().max_by(|a, b| a.timestamp.cmp(&b.timestamp));
    let uuid = match (uuid, newest) {
        (Some(u), _) => u.to_string(),
        (None, Some(r)) => r.device.uuid.clone(),
        (None, None) => {
            return Err(Error::new(
                ErrorKind::Analysis,
                format!(
                    "no kernel records under {}: run `cargo bench --bench instructions` first",
                    records_dir(dir).display()
                ),
            ))
        }
    };
    let table = table_from_records(&records, options, &uuid).ok_or_else(|| {
        Error::new(
            ErrorKind::Analysis,
            format!("no record of the current kernels for GPU {uuid} under {}", records_dir(dir).display()),
        )
    })?;
    println!("\n{}", render_markdown(&table));
    let (json, md) = write_table(&table, dir)?;
    println!("instructions: wrote {} and {}", json.display(), md.display());
    Ok(table)
}

/// The table rebuilt from its own kernels (the raw measurements it carries): the options
/// from its thread mode, chain lengths and levels, the rows, checks and missing kernels
/// computed again by [`build_table`]. What a published table must equal to be reproducible.
pub fn rebuild_table(table: &InstructionTable) -> Result<InstructionTable> {
    let mut levels = Vec::new();
    for row in &table.rows {
        let level = super::plan::parse_level(&row.level)?;
        if !levels.contains(&level) {
            levels.push(level);
        }
    }
    let options = SuiteOptions {
        levels,
        k_values: table.k_values.clone(),
        one_thread: table.threads_mode == "one",
        ..SuiteOptions::default()
    };
    let kernels = plan(&options, &catalog());
    let runs: BTreeMap<String, KernelRun> = table.kernels.iter().map(|r| (r.name.clone(), r.clone())).collect();
    let (rows, checks, missing) = build_table(&kernels, &runs, &options);
    Ok(InstructionTable { rows, checks, missing, ..table.clone() })
}
