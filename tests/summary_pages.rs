//! The hand-written summary pages (docs/results/instructions-h100.md, memory-h100.md) quote
//! headline figures and copy generated tables: each quoted figure is recomputed here from
//! the committed tables by the project's code, and each copied block must equal the
//! generated page it comes from. An edited figure in a summary fails here.

use std::path::{Path, PathBuf};

use energy_suites::published::instruction_pages;

fn results() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/results")
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
