//! Nsight Compute's CSV export, read back: one [`NcuKernel`] per profiled launch with its
//! metrics in base units.
//!
//! Both of `ncu --csv`'s layouts are read:
//! - `--page raw` (one row per launch, one column per metric, a units row under the header);
//! - `--page details` (the default: one row per launch and metric, with `Metric Name`,
//!   `Metric Unit` and `Metric Value` columns).
//!
//! Lines before the header (`==PROF==` messages, the program's own output) are skipped.
//! Values may carry thousands separators (`1,234,567`). Units are brought to base units:
//! a `K`, `M`, `G` or `T` prefix on `byte`, `sector`, `cycle`, `inst`, `request`, `warp`,
//! `wavefront` or `thread` multiplies by 10³ … 10¹² (ncu scales with powers of 1000);
//! `--print-units base` avoids the question. A value ncu could not collect (`n/a`) is left
//! out of that launch's metrics rather than read as zero; a text value (the raw page's device
//! attributes) is kept apart, and asking for it as a metric says so.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, ErrorKind, Result};

/// One profiled kernel launch.
#[derive(Clone, Debug, PartialEq)]
pub struct NcuKernel {
    /// ncu's launch ID (its order in the profiled process).
    pub id: u64,
    /// The kernel's name as ncu prints it (mangled or demangled, as exported).
    pub name: String,
    /// `Block Size` as printed (`(1024, 1, 1)`), empty when the export has no such column.
    pub block: String,
    /// `Grid Size` as printed, empty when absent.
    pub grid: String,
    /// Metric name → value in base units.
    pub metrics: BTreeMap<String, f64>,
    /// Columns whose value is text (the raw page's device attributes: `No-CC`, the GPU's
    /// name), by name.
    pub text: BTreeMap<String, String>,
}

impl NcuKernel {
    /// The kernel's name without a demangled signature (`saxpy` of `saxpy(int, float)`).
    pub fn base_name(&self) -> &str {
        self.name.split(['(', ' ']).next().unwrap_or("")
    }

    /// The metric `name`, or an error naming the metric, the launch and how to collect it.
    pub fn metric(&self, name: &str) -> Result<f64> {
        if let Some(text) = self.text.get(name) {
            return Err(Error::new(
                ErrorKind::Format,
                format!("ncu launch {} ({}): `{name}` is `{text}`, not a number", self.id, self.name),
            ));
        }
        self.metrics.get(name).copied().ok_or_else(|| {
            Error::new(
                ErrorKind::Format,
                format!(
                    "ncu launch {} ({}) has no metric `{name}`: profile with `ncu --metrics {name} ...`",
                    self.id, self.name
                ),
            )
        })
    }
}

/// Reads an ncu CSV export from `path`.
pub fn read_ncu_csv(path: &Path) -> Result<Vec<NcuKernel>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "read the ncu CSV export", e))?;
    parse_ncu_csv(&text).map_err(|e| e.context(path.display()))
}

/// Parses the text of an ncu CSV export (see the module's documentation).
pub fn parse_ncu_csv(text: &str) -> Result<Vec<NcuKernel>> {
    let mut lines = text.lines().enumerate().skip_while(|(_, l)| !l.trim_start().starts_with("\"ID\""));
    let Some((_, header)) = lines.next() else {
        return Err(Error::new(
            ErrorKind::Format,
            "no ncu CSV header (a line starting with \"ID\"): export with `ncu --csv --page raw --metrics ... > file.csv`",
        ));
    };
    let header = split_csv_line(header)?;
    let column = |name: &str| header.iter().position(|h| h == name);
    let id_col = column("ID").unwrap_or(0);
    let name_col = column("Kernel Name")
        .ok_or_else(|| Error::new(ErrorKind::Format, "the ncu CSV header has no `Kernel Name` column"))?;
    let (block_col, grid_col) = (column("Block Size"), column("Grid Size"));
    let long = (column("Metric Name"), column("Metric Unit"), column("Metric Value"));
    let mut kernels: Vec<NcuKernel> = Vec::new();
    let mut units: Option<Vec<String>> = None;
    // The raw page's metric columns: everything after the fixed launch columns.
    let first_metric = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream"]
        .iter()
        .chain(&["Block Size", "Grid Size", "Device", "CC"])
        .filter_map(|c| column(c))
        .max()
        .map_or(0, |c| c + 1);
    for (number, line) in lines {
        if line.trim().is_empty() || line.starts_with("==") {
            continue;
        }
        let fields = split_csv_line(line).map_err(|e| e.context(format!("line {}", number + 1)))?;
        let field = |c: usize| fields.get(c).map(String::as_str).unwrap_or("");
        let bad = |what: String| Error::new(ErrorKind::Format, format!("line {}: {what}", number + 1));
        if fields.len() != header.len() {
            return Err(bad(format!("{} fields where the header has {}", fields.len(), header.len())));
        }
        if field(id_col).is_empty() {
            // The raw page's units row.
            units = Some(fields.clone());
            continue;
        }
        let id: u64 =
            field(id_col).parse().map_err(|_| bad(format!("launch ID `{}` is not a number", field(id_col))))?;
        let index = match kernels.iter().position(|k| k.id == id) {
            Some(i) => i,
            None => {
                kernels.push(NcuKernel {
                    id,
                    name: field(name_col).to_string(),
                    block: block_col.map(|c| field(c).to_string()).unwrap_or_default(),
                    grid: grid_col.map(|c| field(c).to_string()).unwrap_or_default(),
                    metrics: BTreeMap::new(),
                    text: BTreeMap::new(),
                });
                kernels.len() - 1
            }
        };
        match long {
            (Some(name), unit, Some(value)) => {
                let unit = unit.map(field).unwrap_or("");
                kernels[index].insert(field(name), field(value), unit);
            }
            _ => {
                for (c, metric) in header.iter().enumerate().skip(first_metric) {
                    let unit = units.as_ref().and_then(|u| u.get(c)).map(String::as_str).unwrap_or("");
                    kernels[index].insert(metric, field(c), unit);
                }
            }
        }
    }
    if kernels.is_empty() {
        return Err(Error::new(ErrorKind::Format, "the ncu CSV export holds no profiled launch"));
    }
    Ok(kernels)
}

impl NcuKernel {
    /// Files one exported value: a number (in base units) among the metrics, other text
    /// apart; what ncu could not collect (`n/a`, empty) nowhere.
    fn insert(&mut self, name: &str, value: &str, unit: &str) {
        let value = value.trim();
        if value.is_empty() || value.eq_ignore_ascii_case("n/a") {
            return;
        }
        let plain: String = value.chars().filter(|c| *c != ',').collect();
        match plain.parse::<f64>() {
            Ok(v) if v.is_finite() => {
                self.metrics.insert(name.to_string(), v * unit_scale(unit.trim()));
            }
            _ => {
                self.text.insert(name.to_string(), value.to_string());
            }
        }
    }
}

/// The factor from `unit` to its base unit (1 for base and unknown units).
fn unit_scale(unit: &str) -> f64 {
    const BASES: [&str; 8] = ["byte", "sector", "cycle", "inst", "request", "warp", "wavefront", "thread"];
    let mut chars = unit.chars();
    let factor = match chars.next() {
        Some('K') => 1e3,
        Some('M') => 1e6,
        Some('G') => 1e9,
        Some('T') => 1e12,
        _ => return 1.0,
    };
    let rest = chars.as_str();
    if BASES.iter().any(|b| rest == *b || rest.strip_suffix('s') == Some(b)) {
        factor
    } else {
        1.0
    }
}

/// Splits one CSV line (fields quoted with `"`, `""` inside a quoted field).
fn split_csv_line(line: &str) -> Result<Vec<String>> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.trim_end_matches('\r').chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    if quoted {
        return Err(Error::new(ErrorKind::Format, "a quoted CSV field is not closed"));
    }
    fields.push(field);
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RAW: &str = "==PROF== Connected to process 7 (/tmp/memory)
memory: profile 2 launches
\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"dram__bytes_read.sum\",\"lts__t_sector_hit_rate.pct\"
\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"Mbyte\",\"%\"
\"0\",\"7\",\"memory\",\"h\",\"load_cg\",\"1\",\"7\",\"(1024, 1, 1)\",\"(132, 1, 1)\",\"0\",\"9.0\",\"1,234.5\",\"99.5\"
\"1\",\"7\",\"memory\",\"h\",\"load_cg\",\"1\",\"7\",\"(1024, 1, 1)\",\"(132, 1, 1)\",\"0\",\"9.0\",\"n/a\",\"0\"
==PROF== Disconnected from process 7
";

    const DETAILS: &str = "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"
\"3\",\"7\",\"saxpy\",\"h\",\"saxpy\",\"1\",\"7\",\"(256, 1, 1)\",\"(65536, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"dram__bytes_read.sum\",\"Kbyte\",\"2.5\"
\"3\",\"7\",\"saxpy\",\"h\",\"saxpy\",\"1\",\"7\",\"(256, 1, 1)\",\"(65536, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"lts__t_sectors.sum\",\"sector\",\"1,048,576\"
";

    #[test]
    fn the_raw_page_reads_one_launch_per_row_in_base_units() {
        let k = parse_ncu_csv(RAW).unwrap();
        assert_eq!(k.len(), 2);
        assert_eq!((k[0].id, k[0].name.as_str(), k[0].grid.as_str()), (0, "load_cg", "(132, 1, 1)"));
        assert_eq!(k[0].metric("dram__bytes_read.sum").unwrap(), 1_234.5e6);
        assert_eq!(k[0].metric("lts__t_sector_hit_rate.pct").unwrap(), 99.5);
        assert_eq!(k[0].base_name(), "load_cg");
        // n/a is missing, not zero; the error names the metric and how to collect it.
        let e = k[1].metric("dram__bytes_read.sum").unwrap_err().to_string();
        assert!(e.contains("dram__bytes_read.sum") && e.contains("--metrics"), "{e}");
        assert_eq!(k[1].metric("lts__t_sector_hit_rate.pct").unwrap(), 0.0);
    }

    #[test]
    fn the_details_page_gathers_a_launchs_rows() {
        let k = parse_ncu_csv(DETAILS).unwrap();
        assert_eq!(k.len(), 1);
        assert_eq!(k[0].metric("dram__bytes_read.sum").unwrap(), 2500.0);
        assert_eq!(k[0].metric("lts__t_sectors.sum").unwrap(), 1_048_576.0);
        assert_eq!(k[0].block, "(256, 1, 1)");
    }

    #[test]
    fn malformed_exports_are_refused_with_the_reason() {
        let e = parse_ncu_csv("hello\n").unwrap_err().to_string();
        assert!(e.contains("no ncu CSV header"), "{e}");
        let short = RAW.replace(",\"99.5\"", "");
        let e = parse_ncu_csv(&short).unwrap_err().to_string();
        assert!(e.contains("line 5") && e.contains("fields"), "{e}");
        // Text where a number is asked for (the raw page's device attributes) is named, not read as zero.
        let k = parse_ncu_csv(&RAW.replace("\"1,234.5\"", "\"No-CC\"")).unwrap();
        let e = k[0].metric("dram__bytes_read.sum").unwrap_err().to_string();
        assert!(e.contains("dram__bytes_read.sum") && e.contains("No-CC") && e.contains("not a number"), "{e}");
        let header_only = RAW.lines().take(4).collect::<Vec<_>>().join("\n");
        assert!(parse_ncu_csv(&header_only).unwrap_err().to_string().contains("no profiled launch"));
        assert!(split_csv_line("\"open").is_err());
    }
}
