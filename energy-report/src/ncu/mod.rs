//! Nsight Compute's CSV export, read back: one [`NcuKernel`] per profiled launch with its
//! metrics in base units.
//!
//! Both of `ncu --csv`'s layouts are read:
//! - `--page raw` (one row per launch, one column per metric, a units row under the header);
//! - `--page details` (the default: one row per launch and metric, with `Metric Name`,
//!   `Metric Unit` and `Metric Value` columns).
//!
//! Lines before the header (`==PROF==` messages, the program's own output) are skipped; an
//! `==ERROR==` line anywhere makes the export partial, and it is refused.
//! Values may carry thousands separators (`1,234,567`). Units are brought to base units:
//! a `K`, `M`, `G` or `T` prefix on `byte`, `sector`, `cycle`, `inst`, `request`, `warp`,
//! `wavefront` or `thread` multiplies by 10³ … 10¹² (ncu scales with powers of 1000);
//! `--print-units base` avoids the question. A value ncu could not collect (`n/a`) is left
//! out of that launch's metrics rather than read as zero; a text value (the raw page's device
//! attributes) is kept apart, and asking for it as a metric says so.
//!
//! Every number is checked as it is read: ncu's counts, rates and durations are never
//! negative, and none is beyond what an `f64` holds once in base units; a file with one
//! is refused with its line, launch and metric. The file is read line by line in one pass,
//! launches found by ID in a hash map (linear in launches: 100,000 raw-page launches in
//! seconds, docs/RELIABILITY.md); [`read_ncu_launches`] keeps only one kernel's launches
//! and the metrics asked for, so memory follows what is kept, not the file.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

use energy_results::{Error, ErrorKind, Result};

mod csv;
mod names;

use csv::Reader;

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
    /// The kernel's name without a demangled signature, template arguments or `void `
    /// (`saxpy` of `saxpy(int, float)`, `gen_sequenced` of `void gen_sequenced<…>(…)`):
    /// [`short_kernel_name`].
    pub fn base_name(&self) -> &str {
        short_kernel_name(&self.name)
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

/// Which launches of an export a read keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelChoice<'a> {
    /// Every launch.
    All,
    /// The launches of the first launch's kernel (`cargo energy explain` without `--kernel`).
    First,
    /// The launches whose name, or short name ([`NcuKernel::base_name`]: no `void `,
    /// template arguments or signature), is this; none is an error naming the closest names.
    Named(&'a str),
}

/// Calls an export of a benchmark's `--test` run holds after its setup launches (each call
/// enqueues the benchmark's launches once).
pub const TEST_CALLS: usize = 3;

/// Launches per call in `launches`, an export of [`TEST_CALLS`] calls or more: among the
/// `p` whose last `TEST_CALLS`·`p` launches repeat one sequence of `p` kernel names, the one
/// whose last `p` launches last (ncu's `gpu__time_duration.sum`) closest to the measured
/// time per call `time_per_call_s`, within a factor of 1.5; without that metric or a
/// measured time, the largest. A library call may launch several kernels (cuBLAS SASUM: two
/// of one name), and one-time work (cuRAND seeds its generator on the first call) may come
/// before. `None` when nothing repeats, or no repeat lasts about a call.
///
/// Linear in launches: the repeats come from one Z-function of the names read from the end,
/// the durations from one running sum from the last launch backwards (comparing every launch
/// for every period and summing every repeat anew was quadratic: 48,000 launches of one
/// kernel took 80 s in a debug build, now 0.06 s).
pub fn launches_per_call(launches: &[NcuKernel], time_per_call_s: Option<f64>) -> Option<usize> {
    let n = launches.len();
    let repeats = repeating_periods(launches);
    let &longest = repeats.last()?;
    let Some(time) = time_per_call_s.filter(|t| *t > 0.0) else {
        return Some(longest);
    };
    // Every repeat's duration is known when the longest's launches all have the metric.
    let seconds: Option<Vec<f64>> =
        launches[n - longest..].iter().map(|l| l.metrics.get("gpu__time_duration.sum").map(|ns| ns * 1e-9)).collect();
    match seconds {
        Some(seconds) => closest_to_time(&repeats, &seconds, time),
        None => Some(longest),
    }
}

/// The `p` (ascending) whose last `TEST_CALLS`·`p` launches repeat one sequence of `p`
/// kernel names: the window has period `p`, i.e. read from the end, the names from `p` on
/// agree with those from 0 for at least (`TEST_CALLS` − 1)·`p` launches. One Z-function of
/// the names (each once as a number) read from the end: linear in launches.
fn repeating_periods(launches: &[NcuKernel]) -> Vec<usize> {
    let mut ids: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let names: Vec<usize> = launches
        .iter()
        .rev()
        .map(|l| {
            let next = ids.len();
            *ids.entry(l.name.as_str()).or_insert(next)
        })
        .collect();
    let z = z_function(&names);
    (1..=launches.len() / TEST_CALLS).filter(|&p| z.get(p).copied().unwrap_or(0) >= (TEST_CALLS - 1) * p).collect()
}

/// `z[i]`: the length of the longest common prefix of `s` and `s[i..]` (`z[0]` = `s.len()`),
/// in linear time.
fn z_function(s: &[usize]) -> Vec<usize> {
    let n = s.len();
    let mut z = vec![0; n];
    if n == 0 {
        return z;
    }
    z[0] = n;
    let (mut left, mut right) = (0, 0);
    for i in 1..n {
        let mut k = if i < right { z[i - left].min(right - i) } else { 0 };
        while i + k < n && s[k] == s[i + k] {
            k += 1;
        }
        z[i] = k;
        if i + k > right {
            (left, right) = (i, i + k);
        }
    }
    z
}

/// Among `repeats` (ascending, each at most `seconds.len()`), the first whose duration (the
/// sum of its last launches' `seconds`, taken from the last launch backwards) lies closest in
/// log to `time`, within a factor of 1.5. One running sum from the end: linear in launches.
fn closest_to_time(repeats: &[usize], seconds: &[f64], time: f64) -> Option<usize> {
    let m = seconds.len();
    let (mut duration, mut taken) = (0.0f64, 0);
    let mut closest: Option<(usize, f64)> = None;
    for &p in repeats {
        while taken < p {
            taken += 1;
            duration += seconds[m - taken];
        }
        let distance = (duration > 0.0).then(|| (duration / time).ln().abs()).filter(|d| *d <= 1.5f64.ln());
        if let Some(distance) = distance {
            if closest.is_none_or(|(_, nearest)| distance < nearest) {
                closest = Some((p, distance));
            }
        }
    }
    closest.map(|(p, _)| p)
}

/// A kernel's name without `void `, template arguments or signature (`gen_sequenced` of
/// `void gen_sequenced<curandStateXORWOW, float, …>(…)`).
pub fn short_kernel_name(name: &str) -> &str {
    let name = name.strip_prefix("void ").unwrap_or(name);
    name.split(['(', '<']).next().unwrap_or(name).trim()
}

/// One call's launches as one launch: the last `per_call` launches, every numeric metric
/// that all of them have summed (ncu's `.sum` counts and `gpu__time_duration` add up over a
/// call; a metric some launch lacks is left out, for [`NcuKernel::metric`] to name), named
/// after the kernels it ran. An error when there are fewer launches than `per_call`, or
/// `per_call` is 0.
pub fn one_call(launches: &[NcuKernel], per_call: usize) -> Result<NcuKernel> {
    if per_call == 0 || launches.len() < per_call {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("{} profiled launch(es), fewer than one call of {per_call}", launches.len()),
        ));
    }
    let call = &launches[launches.len() - per_call..];
    // Each kernel once, in the order of its first launch.
    let mut seen = std::collections::HashSet::new();
    let names: Vec<&str> = call.iter().map(|l| short_kernel_name(&l.name)).filter(|name| seen.insert(*name)).collect();
    let metrics = call[0]
        .metrics
        .keys()
        .filter_map(|name| {
            let sum: Option<f64> = call.iter().map(|l| l.metrics.get(name).copied()).sum();
            sum.map(|v| (name.clone(), v))
        })
        .collect();
    Ok(NcuKernel {
        id: call[0].id,
        name: format!("one call: {} launch(es) of {}", per_call, names.join(", ")),
        block: String::new(),
        grid: String::new(),
        metrics,
        text: BTreeMap::new(),
    })
}

/// The launches that make one measured call of a benchmark, from an export of several calls
/// measured at `time_per_call_s` each, as `cargo energy explain` prices them without
/// `--kernel`: one call of several launches, its counts summed ([`one_call`]), when the
/// export's last launches repeat [`TEST_CALLS`] times and a repeat lasts about the call
/// ([`launches_per_call`]: a library call may launch several kernels, after one-time work
/// such as cuRAND's seeding); else every launch when they are of one kernel (each launch a
/// call); else the first kernel's launches. The note says what was chosen when it is not
/// every launch of one kernel (`None` then).
pub fn one_call_of(all: Vec<NcuKernel>, time_per_call_s: f64) -> Result<(Vec<NcuKernel>, Option<String>)> {
    let Some(first) = all.first() else {
        return Err(Error::new(ErrorKind::Format, "the ncu export holds no launch"));
    };
    let one_kernel = all.iter().all(|l| l.name == first.name);
    match launches_per_call(&all, Some(time_per_call_s)) {
        Some(1) if one_kernel => Ok((all, None)),
        Some(per_call) => {
            let call = one_call(&all, per_call)?;
            let note = format!(
                "explaining {} (the export's last {TEST_CALLS} calls repeat it); one kernel: --kernel NAME",
                call.name
            );
            Ok((vec![call], Some(note)))
        }
        None if one_kernel => Ok((all, None)),
        None => {
            let name = first.name.clone();
            let note = format!(
                "the export holds launches of several kernels and no repeating call: explaining the first kernel's \
                 ({}); choose another with --kernel",
                short_kernel_name(&name)
            );
            Ok((all.into_iter().filter(|l| l.name == name).collect(), Some(note)))
        }
    }
}

/// Reads an ncu CSV export from `path` (every launch, every metric).
pub fn read_ncu_csv(path: &Path) -> Result<Vec<NcuKernel>> {
    read_ncu_launches(path, KernelChoice::All, None)
}

/// Parses the text of an ncu CSV export (see the module's documentation).
pub fn parse_ncu_csv(text: &str) -> Result<Vec<NcuKernel>> {
    parse_ncu_launches(text, KernelChoice::All, None)
}

/// Reads the launches `kernel` chooses from the export at `path`, with only the `metrics`
/// named (all of them with `None`; a metric asked for but absent stays absent, for
/// [`NcuKernel::metric`] to name). The whole file is still checked.
pub fn read_ncu_launches(path: &Path, kernel: KernelChoice, metrics: Option<&[&str]>) -> Result<Vec<NcuKernel>> {
    // An export archived gzipped (`<export>.gz`) reads as written.
    let file = energy_results::open_archived(path).map_err(|e| Error::io(path, "read the ncu CSV export", e))?;
    let mut input = std::io::BufReader::with_capacity(1 << 16, file);
    let mut reader = Reader::new(kernel, metrics);
    let mut line = String::new();
    let mut number = 0;
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {
                number += 1;
                let text = line.strip_suffix('\n').unwrap_or(&line);
                reader.line(number, text).map_err(|e| e.context(path.display()))?;
            }
            Err(e) => return Err(Error::io(path, "read the ncu CSV export", e)),
        }
    }
    reader.finish().map_err(|e| e.context(path.display()))
}

/// [`read_ncu_launches`] on the text of an export.
pub fn parse_ncu_launches(text: &str, kernel: KernelChoice, metrics: Option<&[&str]>) -> Result<Vec<NcuKernel>> {
    let mut reader = Reader::new(kernel, metrics);
    for (index, line) in text.lines().enumerate() {
        reader.line(index + 1, line)?;
    }
    reader.finish()
}

#[cfg(test)]
mod tests;
