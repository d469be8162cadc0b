//! What a report of a partial run says: a run some of whose bench targets never finished
//! ([`PartialRun`]) is reported with what it holds and, above the tables, a line saying it
//! is partial and what never finished (markdown, HTML), or `partial` in the JSON report of
//! that run. The tracker formats carry no such line: `cargo energy report` refuses a
//! partial run for them.

use super::shown_dir;
use energy_results::echo;
use energy_results::PartialRun;

/// The line a report of a partial run carries: that it is partial, what never finished,
/// and what the report holds.
pub fn partial_line(p: &PartialRun) -> String {
    let finished = if p.finished.is_empty() {
        String::new()
    } else {
        format!(" (finished: {})", p.finished.iter().map(|n| format!("`{}`", echo(n))).collect::<Vec<_>>().join(", "))
    };
    format!(
        "run `{}` in `{}` is partial: {}. This report holds only the {} result(s) its bench targets committed{finished}, not the benchmarks the unfinished ones did not reach; `cargo energy report` exits 2 on it and `compare` refuses it. Run `cargo bench` again for a complete run",
        echo(&p.name),
        shown_dir(&p.dir),
        p.what_is_missing(),
        p.results
    )
}

/// The JSON `partial` of a report: the line, and what never finished.
pub(super) fn partial_json(partial: &PartialRun) -> serde_json::Value {
    serde_json::json!({
        "line": partial_line(partial),
        "run": partial.name,
        "unfinished_targets": partial.unfinished,
        "never_started_targets": partial.never_started,
        "finished_targets": partial.finished,
        "results": partial.results,
    })
}
