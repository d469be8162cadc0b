//! Reproducibility: every generated page under research/results/ is what the project's code
//! makes of its committed raw data (`energy_suites::published`), byte for byte. A figure
//! edited by hand fails here, naming the page and the first line that differs; after a
//! change of a renderer, `cargo run --example republish` writes the pages again.

use std::path::{Path, PathBuf};

use energy_suites::published::{explanation_pages, heldout_pages, instruction_pages, memory_pages, Page};

fn results() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results")
}

/// Every page equal to its committed file; else the first differing line of each.
fn check(pages: &[Page]) {
    let mut wrong = Vec::new();
    for page in pages {
        let committed = std::fs::read_to_string(results().join(&page.path)).unwrap_or_default();
        if committed == page.text {
            continue;
        }
        let line = committed.lines().zip(page.text.lines()).position(|(a, b)| a != b);
        let n = line.unwrap_or_else(|| committed.lines().count().min(page.text.lines().count()));
        wrong.push(format!(
            "{} differs from what its raw data gives at line {}:\n  committed:   {}\n  regenerated: {}",
            page.path.display(),
            n + 1,
            committed.lines().nth(n).unwrap_or("(end of file)"),
            page.text.lines().nth(n).unwrap_or("(end of file)")
        ));
    }
    assert!(
        wrong.is_empty(),
        "{} page(s) edited by hand or stale (regenerate with `cargo run --example republish`):\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn instruction_tables_and_board_pages_regenerate_from_their_kernels() {
    let pages = instruction_pages(&results()).unwrap();
    assert_eq!(pages.len(), 16);
    check(&pages);
}

#[test]
fn memory_tables_regenerate_from_their_points_and_profiles() {
    let pages = memory_pages(&results()).unwrap();
    assert_eq!(pages.len(), 17);
    check(&pages);
}

#[test]
fn application_explanations_regenerate_from_the_model_runs() {
    let pages = explanation_pages(&results()).unwrap();
    assert_eq!(pages.len(), 6 * 15);
    check(&pages);
}

/// Issue 48's sweeps on H200s: the page and one SVG per sweep and call.
#[test]
fn the_parameterized_page_regenerates_from_its_runs() {
    let pages = energy_suites::parameterized::parameterized_pages(&results()).unwrap();
    assert_eq!(pages.len(), 1 + 3 * 2);
    check(&pages);
}

#[test]
fn held_out_tests_regenerate_from_their_runs_profiles_and_fits() {
    let pages = heldout_pages(&results()).unwrap();
    // v1: two boards and a repeat; v2: three boards, each under v2 and v1, and a repeat; v3:
    // its boards.
    assert_eq!(pages.len(), 2 * 2 + 1 + 3 * 2 * 2 + 1 + 2 * energy_suites::published::HELDOUT_V3_BOARDS.len());
    check(&pages);
}

/// Issue 58's pages: the stored same-board repeats through `compare`.
#[test]
fn the_ci_gate_pages_regenerate_from_the_stored_runs() {
    let pages = energy_suites::ci_gate::ci_gate_pages(&results()).unwrap();
    assert_eq!(pages.len(), 3, "the stored repeats, the GPU gates and the edge windows");
    check(&pages);
    // The guards' reason holds on the stored measurements: the outer windows' residuals are
    // larger than the inner ones'.
    let edges = &pages[2].text;
    let times_inner = |place: &str| -> f64 {
        let row = edges.lines().find(|l| l.starts_with(&format!("| {place} |"))).unwrap_or_else(|| panic!("{place}"));
        row.split('|').nth(5).unwrap().trim().parse().unwrap()
    };
    for place in ["first", "last"] {
        assert!(times_inner(place) > 1.5, "{place}: {edges}");
    }
    // The two pairs the issue names are among them, and the default calls no regression.
    let page = &pages[0].text;
    for pair in ["h100-board1-repeat/run-model", "h100-board3-repeat/run-model"] {
        assert!(page.contains(pair), "{pair} is a repeat pair");
    }
    assert!(page.contains("the default 0 regressions"), "{page}");
    // The book's CI chapter and the GUIDE quote the page's totals: they must be its figures.
    let summary = page.lines().find(|l| l.starts_with("**All ")).expect("the summary line");
    let number_after = |text: &str, before: &str| -> String {
        let rest = &text[text.find(before).unwrap_or_else(|| panic!("`{before}` in {text}")) + before.len()..];
        rest.chars().take_while(char::is_ascii_digit).collect()
    };
    let comparisons = number_after(summary, " pairs, ");
    let within = number_after(summary, "within-run test ");
    let with_controls = number_after(summary, "three benchmarks or more, ");
    let false_alarms = number_after(summary, " comparisons): ");
    let caught_5 = number_after(summary, " false alarms, ");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let read =
        |doc: &str| std::fs::read_to_string(repo.join(doc)).unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
    let quoted = format!("{within} of {comparisons}");
    for doc in ["docs/book/src/ci.md", "docs/GUIDE.md"] {
        assert!(read(doc).contains(&quoted), "{doc} quotes the stored repeats as `{quoted}`");
    }
    // The GUIDE's figures of the GPU gates: the two rules at three pairs, today's defaults as
    // they ran, and the same runs replayed by today's rule.
    let gpu = &pages[1].text;
    let line = |start: &str| gpu.lines().find(|l| l.starts_with(start)).unwrap_or_else(|| panic!("`{start}`"));
    let rules = line("**At three pairs");
    let defaults = line("**Today's defaults as they ran");
    let replayed = line("**Today's rule replayed on the runs settled on precision only");
    let lean = line("**Lean runs, measured");
    let lean_tail = &lean[lean.find("took ").unwrap() + 5..lean.find(" with idle tails").unwrap()];
    let lean_saving = &lean[lean.find("lean (").unwrap()..];
    let lean_saving = &lean_saving[lean_saving.find("), ").unwrap() + 3..lean_saving.find(" less").unwrap()];
    let lean_estimate = &lean[lean.find("GPU time per 10 benchmarks").unwrap()..lean.rfind(").**").unwrap() + 1];
    // Each condition's GPU time in the replay, as the GUIDE gives it.
    let replay_time = |label: &str| {
        let rest = &replayed[replayed.find(label).unwrap_or_else(|| panic!("`{label}` in {replayed}"))..];
        number_after(rest, ", ")
    };
    // Unchanged code judged after every pair: the last cell of the looks table's A/A row.
    let looks = gpu.split("Regressions at each look").nth(1).expect("the looks table");
    let aa_looks = looks.lines().find(|l| l.starts_with("| A/A (unchanged) |")).expect("its A/A row");
    let any_look = aa_looks.trim_end_matches(" |").rsplit("| ").next().unwrap().to_string();
    let p2 = &rules[rules.find("+2 % (102 calls): ").unwrap()..];
    let moderated = number_after(p2, ": ");
    let n = number_after(p2, " of ");
    let own = number_after(p2, "moderated, ");
    let aa_n = number_after(rules, "moderated, 0 of ");
    for quoted in [
        format!("{false_alarms} false alarms in {with_controls} comparisons"),
        format!("+5 %: {caught_5} of {with_controls}"),
        format!("the moderated variance caught {moderated} of {n} changes of +2 % where each benchmark's own spread caught {own} of {n}"),
        format!("(0 of {aa_n})"),
        defaults[defaults.find("A/A ").unwrap()..defaults.find("; GPU time").unwrap()].to_string(),
        format!("GPU time per 10 benchmarks {} s on average", number_after(defaults, "per 10 benchmarks ")),
        format!("GPU time per 10 benchmarks {} s on", number_after(replayed, "per 10 benchmarks ")),
        format!("a regression at one look or more in {any_look} benchmark-gates"),
        format!("took {lean_tail} with idle tails"),
        format!("{lean_saving} less a benchmark-run"),
        lean_estimate.to_string(),
        format!(
            "{} s for unchanged code, {} s for +2 %, {} s for +1 %",
            replay_time("A/A (unchanged) "),
            replay_time("+2 % (102 calls) "),
            replay_time("+1 % (101 calls) ")
        ),
    ] {
        assert!(read("docs/GUIDE.md").contains(&quoted), "docs/GUIDE.md quotes `{quoted}`");
    }
}
