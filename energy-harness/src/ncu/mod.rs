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

use crate::error::{Error, ErrorKind, Result};

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
    let file = crate::archive::open_archived(path).map_err(|e| Error::io(path, "read the ncu CSV export", e))?;
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
mod tests {
    use super::csv::split_csv_line;
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

    #[test]
    fn impossible_numbers_are_refused_with_line_launch_and_metric() {
        // A negative count (raw page) and a negative value (details page).
        let e = parse_ncu_csv(&RAW.replace("\"1,234.5\"", "\"-5\"")).unwrap_err().to_string();
        assert!(
            e.contains("line 5") && e.contains("launch 0 (load_cg)") && e.contains("`dram__bytes_read.sum` is -5"),
            "{e}"
        );
        assert!(e.contains("never negative") && e.contains("profile the kernel again"), "{e}");
        let e = parse_ncu_csv(&DETAILS.replace("\"1,048,576\"", "\"-1\"")).unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("`lts__t_sectors.sum` is -1"), "{e}");
        // Finite as written, infinite in base units (1e300 Mbyte).
        let e = parse_ncu_csv(&RAW.replace("\"1,234.5\"", "\"1e305\"")).unwrap_err().to_string();
        assert!(e.contains("is 1e305 Mbyte") && e.contains("not a finite number"), "{e}");
        // A rejected launch is rejected even when it is not the one kept.
        let e = parse_ncu_launches(&RAW.replace("\"n/a\",\"0\"", "\"n/a\",\"-1\""), KernelChoice::Named("x"), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 6") && e.contains("is -1"), "{e}");
    }

    /// An export of `n` launches on the details page, one metric each, kernels `k{i % names}`.
    fn details(n: usize, names: usize) -> String {
        let mut text =
            String::from("\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n");
        for i in 0..n {
            text.push_str(&format!("\"{i}\",\"k{:05}(float*)\",\"s\",\"m\",\"byte\",\"{i}\"\n", i % names));
        }
        text
    }

    #[test]
    fn one_kernels_launches_and_metrics_are_kept() {
        let text = details(30, 3);
        let all = parse_ncu_csv(&text).unwrap();
        assert_eq!(all.len(), 30);
        let named = parse_ncu_launches(&text, KernelChoice::Named("k00001"), None).unwrap();
        assert_eq!(named.iter().map(|k| k.id).collect::<Vec<_>>(), (1..30).step_by(3).collect::<Vec<u64>>());
        assert_eq!(named[0].metric("m").unwrap(), 1.0);
        let first = parse_ncu_launches(&text, KernelChoice::First, Some(&["other"])).unwrap();
        assert_eq!(first.len(), 10);
        assert!(first.iter().all(|k| k.name == "k00000(float*)" && k.metrics.is_empty()));
        // Raw-page rows sharing an ID stay one launch.
        let twice = format!("{RAW}{}", RAW.lines().nth(4).unwrap());
        assert_eq!(parse_ncu_csv(&twice).unwrap().len(), 2);
    }

    #[test]
    fn an_absent_kernel_names_the_closest_few_and_the_count() {
        let e = parse_ncu_launches(&details(6, 2), KernelChoice::Named("gemm"), None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert_eq!(
            e.to_string(),
            "no launch of `gemm` among its 6 launches of 2 kernels: `k00000` = `k00000(float*)` (3 launches), \
             `k00001` = `k00001(float*)` (3 launches); name one of them (or its short name: no `void`, template \
             arguments or signature)"
        );
        // 5,000 names: the eight closest and the count, not a 665 kB list.
        let e = parse_ncu_launches(&details(5000, 5000), KernelChoice::Named("k0499"), None).unwrap_err().to_string();
        assert!(e.len() < 1000, "{} bytes: {e}", e.len());
        assert!(e.contains("among its 5000 launches of 5000 kernels") && e.contains("(4992 more)"), "{e}");
        // Names holding the one asked for come first.
        assert!(e.contains("the closest names: `k04990` = `k04990(float*)`, `k04991` = `k04991(float*)`"), "{e}");
    }

    #[test]
    fn an_export_with_an_ncu_error_is_refused_as_partial() {
        let text = RAW.replace(
            "memory: profile 2 launches",
            "==ERROR== Failed to profile \"load_cg\" in process 7\nmemory: profile 2 launches",
        );
        let e = parse_ncu_csv(&text).unwrap_err().to_string();
        assert!(e.contains("Failed to profile") && e.contains("the export is partial"), "{e}");
        assert!(parse_ncu_csv(RAW).is_ok());
    }

    #[test]
    fn a_kernel_is_named_by_its_short_name() {
        assert_eq!(
            short_kernel_name("void gen_sequenced<curandStateXORWOW, float, int>(curandStateXORWOW *, float *)"),
            "gen_sequenced"
        );
        assert_eq!(short_kernel_name("saxpy(int, float)"), "saxpy");
        assert_eq!(short_kernel_name("_Z5saxpyif"), "_Z5saxpyif");
        let text = RAW.replace("load_cg", "void gen_sequenced<curandStateXORWOW, float>");
        let named = parse_ncu_launches(&text, KernelChoice::Named("gen_sequenced"), None).unwrap();
        assert!(!named.is_empty() && named.iter().all(|k| k.base_name() == "gen_sequenced"));
        // `void` alone names no kernel.
        assert!(parse_ncu_launches(&text, KernelChoice::Named("void"), None).is_err());
    }

    #[test]
    fn reading_is_linear_in_launches() {
        // The launch search was a scan of every launch so far (quadratic: 50,000 launches
        // took 99 s). Sixteen times the launches must take well under 256 times as long.
        let time = |n: usize| {
            let text = details(n, 7);
            (0..3)
                .map(|_| {
                    let start = std::time::Instant::now();
                    assert_eq!(parse_ncu_csv(&text).unwrap().len(), n);
                    start.elapsed().as_secs_f64()
                })
                .fold(f64::INFINITY, f64::min)
        };
        let (small, large) = (time(2000), time(32_000));
        assert!(large < 48.0 * small, "2,000 launches: {small:.3} s; 32,000: {large:.3} s");
    }

    /// A launch of kernel `name` lasting `ns` nanoseconds (no duration with `None`).
    fn timed(id: usize, name: &str, ns: Option<f64>) -> NcuKernel {
        NcuKernel {
            id: id as u64,
            name: name.into(),
            block: String::new(),
            grid: String::new(),
            metrics: ns.map(|ns| ("gpu__time_duration.sum".to_string(), ns)).into_iter().collect(),
            text: BTreeMap::new(),
        }
    }

    /// [`launches_per_call`] as it was before issue 49 (every candidate period compared
    /// launch by launch, every repeat's duration summed anew: quadratic in launches), the
    /// reference the linear one answers as, its sums taken in the linear one's order.
    fn launches_per_call_by_scan(launches: &[NcuKernel], time_per_call_s: Option<f64>) -> Option<usize> {
        let n = launches.len();
        let repeats: Vec<usize> = (1..=n / TEST_CALLS)
            .filter(|&p| {
                let tail = &launches[n - TEST_CALLS * p..];
                (0..p).all(|i| (1..TEST_CALLS).all(|k| tail[i].name == tail[k * p + i].name))
            })
            .collect();
        // Summed from the last launch backwards, as the linear search sums (before issue 49
        // the sum ran forwards: the same up to rounding).
        let duration = |p: usize| -> Option<f64> {
            launches[n - p..].iter().rev().map(|l| l.metrics.get("gpu__time_duration.sum").map(|ns| ns * 1e-9)).sum()
        };
        let timed: Option<Vec<(usize, f64)>> = repeats.iter().map(|&p| duration(p).map(|d| (p, d))).collect();
        match (time_per_call_s.filter(|t| *t > 0.0), timed) {
            (Some(time), Some(timed)) => timed
                .into_iter()
                .filter(|(_, d)| *d > 0.0)
                .map(|(p, d)| (p, (d / time).ln().abs()))
                .filter(|(_, distance)| *distance <= 1.5f64.ln())
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(p, _)| p),
            _ => repeats.last().copied(),
        }
    }

    #[test]
    fn the_call_found_is_the_one_the_scan_of_every_period_finds() {
        // Exports of a few kernels whose tails repeat (or nearly), durations from a few values
        // (zeros, ties, sums that round), measured times near and at those sums: every answer
        // as the launch-by-launch scan gives it, to the launch.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        let names = ["a", "b", "c", "d"];
        let durations = [0.0, 0.1, 1.0, 3.0, 1000.0, 1234.5, 1e-300, 7e300];
        let mut found = [0usize; 3];
        for case in 0..6000 {
            let (prefix, period, calls) = (next(6) as usize, 1 + next(7) as usize, 1 + next(5) as usize);
            let kinds = 1 + next(4) as usize;
            let call: Vec<&str> = (0..period).map(|_| names[next(kinds as u64) as usize]).collect();
            let mut launch_names: Vec<&str> = (0..prefix).map(|_| names[next(4) as usize]).collect();
            for _ in 0..calls {
                launch_names.extend(&call);
            }
            if case % 5 == 0 && !launch_names.is_empty() {
                // A stray kernel somewhere: a repeat broken.
                let at = next(launch_names.len() as u64) as usize;
                launch_names[at] = names[next(4) as usize];
            }
            let value_kinds = if case % 3 == 0 { durations.len() } else { 5 };
            let launches: Vec<NcuKernel> = launch_names
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    let missing = case % 17 == 0 && next(10) == 0;
                    timed(i, name, (!missing).then(|| durations[next(value_kinds as u64) as usize]))
                })
                .collect();
            // A measured time at a repeat's duration, at the edge of the 1.5 factor, halfway
            // (in log) between two, or none at all.
            let n = launches.len();
            let sum = |p: usize| -> f64 {
                launches[n.saturating_sub(p)..]
                    .iter()
                    .map(|l| l.metrics.get("gpu__time_duration.sum").copied().unwrap_or(0.0) * 1e-9)
                    .sum()
            };
            let (p, q) = (1 + next(8) as usize, 1 + next(8) as usize);
            let time = match next(6) {
                0 => None,
                1 => Some(sum(p)),
                2 => Some(sum(p) * 1.5),
                3 => Some(sum(p) / 1.5),
                4 => Some((sum(p) * sum(q)).sqrt()),
                _ => Some(next(5000) as f64 * 1e-9),
            };
            let expected = launches_per_call_by_scan(&launches, time);
            assert_eq!(launches_per_call(&launches, time), expected, "{launch_names:?} at {time:?}: {launches:?}");
            found[match expected {
                None => 0,
                Some(1) => 1,
                Some(_) => 2,
            }] += 1;
        }
        // Each kind of answer came up often.
        assert!(found.iter().all(|&f| f > 300), "{found:?}");
    }

    #[test]
    fn the_call_search_is_linear_in_launches() {
        // Launches of one kernel repeat at every period: the search compared every launch for
        // every period, and summed every repeat's duration anew (quadratic: 80,000 launches
        // took 78 s). Sixteen times the launches must take well under 256 times as long.
        let time = |n: usize| {
            let launches: Vec<NcuKernel> = (0..n).map(|i| timed(i, "k(float*)", Some(1000.0))).collect();
            (0..5)
                .map(|_| {
                    let start = std::time::Instant::now();
                    assert_eq!(launches_per_call(&launches, Some(1e-6)), Some(1));
                    assert_eq!(launches_per_call(&launches, Some(7e-6)), Some(7));
                    assert_eq!(launches_per_call(&launches, None), Some(n / TEST_CALLS));
                    start.elapsed().as_secs_f64()
                })
                .fold(f64::INFINITY, f64::min)
        };
        let (small, large) = (time(3000), time(48_000));
        assert!(large < 48.0 * small, "3,000 launches: {small:.4} s; 48,000: {large:.4} s");
    }
}
