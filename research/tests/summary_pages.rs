//! The hand-written summary pages (research/results/instructions-h100.md, memory-h100.md) quote
//! headline figures and copy generated tables: each quoted figure is recomputed here from
//! the committed tables by the project's code, and each copied block must equal the
//! generated page it comes from. An edited figure in a summary fails here.

use std::path::{Path, PathBuf};

use energy_suites::published::instruction_pages;

fn results() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(results().join(path)).unwrap()
}

/// The last line of a generated page that starts with `prefix`, from the code's pages.
fn generated_line(pages: &[energy_suites::published::Page], page: &str, prefix: &str) -> String {
    let text = &pages.iter().find(|p| p.path.to_str() == Some(page)).unwrap().text;
    text.lines().rfind(|l| l.starts_with(prefix)).unwrap().to_string()
}

/// "range 1.05x to 1.63x over 5 pairs" out of a switching check's detail.
fn switching_range(pages: &[energy_suites::published::Page], page: &str) -> (String, String, String) {
    let line = generated_line(pages, page, "| switching operands");
    let range = line.split("range ").nth(1).unwrap();
    let words: Vec<&str> = range.split_whitespace().collect();
    (words[0].trim_end_matches('x').into(), words[2].trim_end_matches('x').into(), words[4].into())
}

#[test]
fn the_instruction_summary_quotes_what_the_tables_give() {
    let pages = instruction_pages(&results()).unwrap();
    let page = read("instructions-h100.md");
    // One thread: the median of the dynamic figures per warp-instruction (= per thread).
    let median = generated_line(&pages, "2026-11-23-instructions-v2-h100/one-thread-board1.md", "Median magnitude");
    let figure = median.split_whitespace().nth(5).unwrap();
    assert!(page.contains(&format!("is {figure} nJ per warp-instruction")), "one-thread median {figure}");
    // Switching against constant on the H200, over every pair.
    let (lo, hi, n) = switching_range(&pages, "2026-11-24-instructions-v2-h100-h200/o4-h200.md");
    assert_eq!(n, "5");
    assert!(page.contains(&format!("{lo}–{hi}× over the same five pairs on the H200")), "H200 {lo}–{hi}");
    // Board to board: the ranges and medians of the two board pages.
    for (file, quoted) in [
        ("boards-o4-h200-vs-h100.md", "dynamic energy per instruction is {lo}–{hi} times the H100's (median {m}, {n}"),
        ("boards-o4-h100-board3-vs-board1.md", "slope\n  against slope: {lo}–{hi}, median {m}, {n} instructions"),
    ] {
        let line = generated_line(&pages, &format!("2026-11-24-instructions-v2-h100-h200/{file}"), "");
        let w: Vec<&str> = line.split_whitespace().collect();
        let (n, m, lo, hi) = (w[0], w[4].trim_end_matches(','), w[6], w[8].trim_end_matches('.'));
        let want = quoted.replace("{lo}", lo).replace("{hi}", hi).replace("{m}", m).replace("{n}", n);
        assert!(page.contains(&want), "{file}: the page should say `{want}`");
    }
}

#[test]
fn the_memory_summary_copies_the_generated_h100_table() {
    let generated = read("2026-11-24-memory-h100-h200/h100/memory.md");
    let page = read("memory-h100.md");
    for line in
        generated.lines().filter(|l| l.starts_with("| ") && (l.contains(" | load | ") || l.contains(" | store | ")))
    {
        assert!(page.contains(line), "memory-h100.md lacks the generated row `{line}`");
    }
    for line in generated.lines().filter(|l| l.contains(": 1 thread per block costs")) {
        assert!(page.contains(line), "memory-h100.md lacks `{line}`");
    }
    // The saxpy breakdowns it quotes (82.7 % on the H100, 101.6 % on the H200).
    for (dir, share) in [("saxpy-h100", "82.7 %"), ("saxpy-h200", "101.6 %")] {
        let b = read(&format!("2026-11-24-memory-h100-h200/{dir}/breakdown.md"));
        let line = b.lines().find(|l| l.starts_with("| data movement")).unwrap();
        assert!(line.contains(share) && page.contains(line), "{dir}: {line}");
    }
}

#[test]
fn the_memory_rail_page_copies_the_generated_tables_and_counts() {
    let dir = "2026-11-25-memory-rail-h100-h200";
    let page = read(&format!("{dir}/README.md"));
    let generated: Vec<String> = ["h100", "h200"].iter().map(|g| read(&format!("{dir}/{g}/memory.md"))).collect();
    // Every table row on the page is a row of one of the generated pages.
    let rows: Vec<&str> = page.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| folder")).collect();
    assert!(rows.len() > 40, "{}", rows.len());
    for row in
        rows.iter().filter(|r| !r.contains("NVIDIA") && !r.contains("the H100 above") && !r.contains("the H200 above"))
    {
        assert!(generated.iter().any(|g| g.contains(row)), "{dir}/README.md: `{row}` is in no generated memory.md");
    }
    // Each GPU's rail rows are there (the rail table is the page's point).
    for g in &generated {
        let start = g.find("## Board and memory rail per level").expect("a rail section");
        for line in g[start..].lines().skip(1).take_while(|l| !l.starts_with("## ")).filter(|l| l.starts_with("| ")) {
            assert!(page.contains(line), "{dir}/README.md lacks the rail row `{line}`");
        }
    }
    // The warnings it counts and the lowest share served it quotes.
    for (g, log) in ["h100", "h200"].iter().map(|g| (*g, read(&format!("{dir}/{g}/memory.log")))) {
        let n = log.matches("warning").count();
        let said = if g == "h100" { format!("{n} lines (H100)") } else { format!("and {n} (H200)") };
        assert!(page.contains(&said), "{g}: {said}");
    }
    let served: Vec<f64> = generated
        .iter()
        .flat_map(|g| {
            let start = g.find("## Which level served").unwrap();
            g[start..]
                .lines()
                .filter(|l| l.starts_with("| load/") || l.starts_with("| store/"))
                .filter_map(|l| l.split('|').nth(3).and_then(|c| c.trim().trim_end_matches(" %").parse::<f64>().ok()))
                .collect::<Vec<_>>()
        })
        .collect();
    let lowest = served.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(page.contains(&format!("{lowest:.1}-100 %")), "lowest share served {lowest:.1} %");
}

#[test]
fn the_model_page_copies_each_boards_held_out_test_and_quotes_what_it_gives() {
    use energy_suites::heldout::board_report;
    use energy_suites::published::{heldout_pages, HELDOUT_BOARDS, HELDOUT_DIR};
    let page = read("model-h100.md");
    let pages = heldout_pages(&results()).unwrap();
    let mut coverage = Vec::new();
    for board in HELDOUT_BOARDS {
        // The table and its summary, as generated, from the header to the verdict.
        let path = format!("{HELDOUT_DIR}/{board}/heldout.md");
        let text = &pages.iter().find(|p| p.path.to_str() == Some(path.as_str())).unwrap().text;
        let table = &text[text.find("| benchmark | written by").unwrap()..];
        assert!(page.contains(table.trim_end()), "model-h100.md does not hold {path}'s table as generated");
        let report = board_report(&results().join(HELDOUT_DIR).join(board), "fit", board).unwrap();
        // "Not met": above the 10 % asked and below the 90 % in the bracket, on both boards.
        assert!(report.analysis.model.unwrap().mean_pct > 10.0, "{board}");
        assert!(!report.shortfalls.is_empty(), "{board}");
        coverage.push(report.analysis.in_bracket);
    }
    assert_eq!(coverage[0], coverage[1]);
    let (inside, of) = coverage[0];
    assert!(page.contains(&format!("{inside} of {of} third-party measurements lie inside the")), "{inside} of {of}");
}

/// A protocol's section of the model page (from `heading` to `next`) holds each of its boards'
/// held-out tables and summaries as generated (up to the seen kernels of earlier protocols),
/// names each board, says the goal is not met where it is not, and every third-party
/// measurement lies inside its bracket, as the sections say.
fn assert_section_copies(heading: &str, next: &str, dir: &str, boards: &[&str]) {
    use energy_suites::heldout::board_report;
    use energy_suites::published::heldout_pages;
    let page = read("model-h100.md");
    let section = &page[page.find(heading).unwrap()..page.find(next).unwrap()];
    let pages = heldout_pages(&results()).unwrap();
    for board in boards {
        let path = format!("{dir}/{board}/heldout.md");
        let text = &pages.iter().find(|p| p.path.to_str() == Some(path.as_str())).unwrap().text;
        let table = &text[text.find("| benchmark | written by").unwrap()..];
        let table = table.split("\n## Held-out kernels of the earlier protocol").next().unwrap();
        assert!(section.contains(table.trim_end()), "model-h100.md does not hold {path}'s table as generated");
        let report = board_report(&results().join(dir).join(board), "fit", board).unwrap();
        assert!(section.contains(&format!("({})", report.uuid)), "{board}");
        if !report.shortfalls.is_empty() {
            assert!(section.contains("Not met on any board"), "{board}");
        }
        let (inside, of) = report.analysis.in_bracket;
        assert_eq!(inside, of, "{board}: the page says the bracket holds every measurement");
    }
}

/// Protocol v2's section of the model page.
#[test]
fn the_model_page_copies_each_v2_boards_held_out_test() {
    use energy_suites::published::{HELDOUT_V2_BOARDS, HELDOUT_V2_DIR};
    assert_section_copies("## Protocol v2", "## Protocol v1", HELDOUT_V2_DIR, &HELDOUT_V2_BOARDS);
}

/// Protocol v3's section of the model page.
#[test]
fn the_model_page_copies_each_v3_boards_held_out_test() {
    use energy_suites::published::{HELDOUT_V3_BOARDS, HELDOUT_V3_DIR};
    assert_section_copies("## Protocol v3", "## Protocol v2", HELDOUT_V3_DIR, &HELDOUT_V3_BOARDS);
}
