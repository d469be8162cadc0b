//! Unit tests of the Nsight Compute CSV reader: both page layouts, units, refusals and scaling.

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
    // took 99 s). Sixteen times the launches must take well under 256 times as long (in
    // the thread's CPU time, as the call search below).
    let time = |n: usize| {
        let text = details(n, 7);
        crate::test_support::least_cpu_s(|| assert_eq!(parse_ncu_csv(&text).unwrap().len(), n))
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
    // took 78 s). Sixteen times the launches must take well under 256 times as long, in the
    // thread's CPU time: the wall clock failed it beside a CPU hog (0.0017 s and 0.0906 s,
    // 53 times: the large case waited for a core, the least of five small ones did not).
    let time = |n: usize| {
        let launches: Vec<NcuKernel> = (0..n).map(|i| timed(i, "k(float*)", Some(1000.0))).collect();
        crate::test_support::least_cpu_s(|| {
            assert_eq!(launches_per_call(&launches, Some(1e-6)), Some(1));
            assert_eq!(launches_per_call(&launches, Some(7e-6)), Some(7));
            assert_eq!(launches_per_call(&launches, None), Some(n / TEST_CALLS));
        })
    };
    let (small, large) = (time(3000), time(48_000));
    assert!(large < 48.0 * small, "3,000 launches: {small:.4} s; 48,000: {large:.4} s");
}
