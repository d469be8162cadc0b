//! One pass over an ncu CSV export: the header, each line's launch and values (checked
//! and brought to base units), and the CSV fields themselves.

use std::collections::{BTreeMap, HashMap};

use super::names::no_launch_of;
use super::{KernelChoice, NcuKernel};
use energy_results::echo;
use energy_results::{Error, ErrorKind, Result};

/// The header of an export: where each launch column is.
struct Header {
    fields: Vec<String>,
    id: usize,
    name: usize,
    block: Option<usize>,
    grid: Option<usize>,
    /// The details page's `Metric Name`, `Metric Unit`, `Metric Value` columns.
    long: (Option<usize>, Option<usize>, Option<usize>),
    /// The raw page's first metric column.
    first_metric: usize,
}

impl Header {
    fn parse(line: &str) -> Result<Header> {
        let fields = split_csv_line(line)?;
        let column = |name: &str| fields.iter().position(|h| h == name);
        let name = column("Kernel Name")
            .ok_or_else(|| Error::new(ErrorKind::Format, "the ncu CSV header has no `Kernel Name` column"))?;
        // The raw page's metric columns: everything after the fixed launch columns.
        let first_metric = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream"]
            .iter()
            .chain(&["Block Size", "Grid Size", "Device", "CC"])
            .filter_map(|c| column(c))
            .max()
            .map_or(0, |c| c + 1);
        Ok(Header {
            id: column("ID").unwrap_or(0),
            name,
            block: column("Block Size"),
            grid: column("Grid Size"),
            long: (column("Metric Name"), column("Metric Unit"), column("Metric Value")),
            first_metric,
            fields,
        })
    }
}

/// One pass over an export's lines.
pub(super) struct Reader<'a> {
    kernel: KernelChoice<'a>,
    /// The name [`KernelChoice::First`] settled on.
    first: Option<String>,
    metrics: Option<&'a [&'a str]>,
    header: Option<Header>,
    /// The raw page's units row.
    units: Option<Vec<String>>,
    /// Launch ID → its index in `kernels`, or `None` for a launch not kept.
    index: HashMap<u64, Option<usize>>,
    kernels: Vec<NcuKernel>,
    /// Each kernel name and its launches, in the order first seen (for the error that
    /// names the closest when the one asked for is absent).
    names: Vec<(String, usize)>,
    name_index: HashMap<String, usize>,
}

impl<'a> Reader<'a> {
    pub(super) fn new(kernel: KernelChoice<'a>, metrics: Option<&'a [&'a str]>) -> Self {
        Reader {
            kernel,
            first: None,
            metrics,
            header: None,
            units: None,
            index: HashMap::new(),
            kernels: Vec::new(),
            names: Vec::new(),
            name_index: HashMap::new(),
        }
    }

    fn wanted_metric(&self, name: &str) -> bool {
        self.metrics.is_none_or(|m| m.contains(&name))
    }

    /// Whether a new launch of kernel `name` is kept.
    fn keeps(&mut self, name: &str) -> bool {
        let base = super::short_kernel_name(name);
        match self.kernel {
            KernelChoice::All => true,
            KernelChoice::Named(wanted) => name == wanted || base == wanted,
            KernelChoice::First => {
                let first = self.first.get_or_insert_with(|| name.to_string());
                name == first || base == first
            }
        }
    }

    pub(super) fn line(&mut self, number: usize, line: &str) -> Result<()> {
        // ncu keeps writing what it profiled after an error (a launch it failed to profile,
        // a run cut by a time limit): such an export is partial, whatever it holds.
        if line.starts_with("==ERROR==") {
            return Err(Error::new(
                ErrorKind::Format,
                format!(
                    "line {number}: ncu reported an error while profiling (`{}`): the export is partial; profile again",
                    echo(line.trim())
                ),
            ));
        }
        let Some(header) = &self.header else {
            if line.trim_start().starts_with("\"ID\"") {
                self.header = Some(Header::parse(line)?);
            }
            return Ok(());
        };
        if line.trim().is_empty() || line.starts_with("==") {
            return Ok(());
        }
        let bad = |what: String| Error::new(ErrorKind::Format, format!("line {number}: {what}"));
        let fields = split_csv_line(line).map_err(|e| e.context(format!("line {number}")))?;
        if fields.len() != header.fields.len() {
            return Err(bad(format!("{} fields where the header has {}", fields.len(), header.fields.len())));
        }
        let field = |c: usize| fields.get(c).map(String::as_str).unwrap_or("");
        if field(header.id).is_empty() {
            // The raw page's units row.
            self.units = Some(fields);
            return Ok(());
        }
        let id: u64 = field(header.id)
            .parse()
            .map_err(|_| bad(format!("launch ID `{}` is not a number", echo(field(header.id)))))?;
        let name = field(header.name);
        let kept = match self.index.get(&id) {
            Some(kept) => *kept,
            None => {
                match self.name_index.get(name) {
                    Some(&i) => self.names[i].1 += 1,
                    None => {
                        self.name_index.insert(name.to_string(), self.names.len());
                        self.names.push((name.to_string(), 1));
                    }
                }
                let kept = if self.keeps(name) {
                    let header = self.header.as_ref().expect("read above");
                    self.kernels.push(NcuKernel {
                        id,
                        name: name.to_string(),
                        block: header.block.map(|c| field(c).to_string()).unwrap_or_default(),
                        grid: header.grid.map(|c| field(c).to_string()).unwrap_or_default(),
                        metrics: BTreeMap::new(),
                        text: BTreeMap::new(),
                    });
                    Some(self.kernels.len() - 1)
                } else {
                    None
                };
                self.index.insert(id, kept);
                kept
            }
        };
        let header = self.header.as_ref().expect("read above");
        let corrupt = |metric: &str, problem: String| {
            bad(format!(
                "launch {id} ({}): `{}` {problem}; the export is corrupt: profile the kernel again",
                echo(name),
                echo(metric)
            ))
        };
        let mut values: Vec<(&str, &str, &str)> = Vec::new();
        match header.long {
            (Some(metric), unit, Some(value)) => {
                values.push((field(metric), field(value), unit.map(field).unwrap_or("")));
            }
            _ => {
                for (c, metric) in header.fields.iter().enumerate().skip(header.first_metric) {
                    let unit = self.units.as_ref().and_then(|u| u.get(c)).map(String::as_str).unwrap_or("");
                    values.push((metric, field(c), unit));
                }
            }
        }
        for (metric, value, unit) in values {
            let parsed = parse_value(value, unit).map_err(|problem| corrupt(metric, problem))?;
            let Some(k) = kept else { continue };
            if !self.wanted_metric(metric) {
                continue;
            }
            match parsed {
                Value::Missing => {}
                Value::Number(v) => {
                    self.kernels[k].metrics.insert(metric.to_string(), v);
                }
                Value::Text => {
                    self.kernels[k].text.insert(metric.to_string(), value.trim().to_string());
                }
            }
        }
        Ok(())
    }

    pub(super) fn finish(self) -> Result<Vec<NcuKernel>> {
        if self.header.is_none() {
            return Err(Error::new(
                ErrorKind::Format,
                "no ncu CSV header (a line starting with \"ID\"): export with `ncu --csv --page raw --metrics ... > file.csv`",
            ));
        }
        if self.index.is_empty() {
            return Err(Error::new(ErrorKind::Format, "the ncu CSV export holds no profiled launch"));
        }
        if let (KernelChoice::Named(wanted), true) = (self.kernel, self.kernels.is_empty()) {
            return Err(Error::new(ErrorKind::InvalidInput, no_launch_of(wanted, &self.names)));
        }
        Ok(self.kernels)
    }
}
/// One exported value, read.
enum Value {
    /// `n/a` or empty: ncu could not collect it.
    Missing,
    /// A number in base units.
    Number(f64),
    /// Text (a device attribute), or a value that is not a finite number (`inf`, `nan`):
    /// kept apart, and named when asked for as a metric.
    Text,
}

/// Reads one value in `unit`; `Err` says what is impossible about it.
fn parse_value(value: &str, unit: &str) -> std::result::Result<Value, String> {
    let value = value.trim();
    if value.is_empty() || value.eq_ignore_ascii_case("n/a") {
        return Ok(Value::Missing);
    }
    let plain: String = value.chars().filter(|c| *c != ',').collect();
    match plain.parse::<f64>() {
        Ok(v) if v.is_finite() => {
            if v < 0.0 {
                return Err(format!("is {}: ncu's counts, rates and durations are never negative", echo(value)));
            }
            let scaled = v * unit_scale(unit.trim());
            if !scaled.is_finite() {
                return Err(format!(
                    "is {} {}: beyond any count (not a finite number in base units)",
                    echo(value),
                    echo(unit.trim())
                ));
            }
            Ok(Value::Number(scaled))
        }
        _ => Ok(Value::Text),
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
pub(super) fn split_csv_line(line: &str) -> Result<Vec<String>> {
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
