//! Benchmark names: every writer escapes (docs/RELIABILITY.md, "Names").
//!
//! Random names (control and invisible characters, `|`, backticks, backslashes, markup,
//! entities, path segments, ` - `, non-Latin scripts, up to ~700 characters) go through
//! every output: the markdown report (a GFM table with 9 cells per row, the id reading back
//! from its cell), the HTML report and both SVGs (well-formed XML, the id reading back from
//! its element), the terminal summary (no control character), explain's markdown and SVG,
//! the tracker formats (names built, never spliced) and file stems (short, safe, inside the
//! run directory). `FUZZ_CASES` and `FUZZ_SEED` as above; the by-hand campaign:
//! `FUZZ_CASES=1000000 cargo test --release -p energy-harness --test fuzz_readers names -- --nocapture`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use energy_harness::unstable::engine::AnalysisOptions;
use energy_harness::unstable::report::{power_plot, render_summary};
use energy_harness::ResultFile;
use energy_report::{github_action_benchmark_on, render, Format, ResultSet, GITHUB_ACTION_BENCHMARK_MEASURES};
use energy_report::{render_markdown, render_svg, EnergyModel, Explanation};
use energy_results::escape::file_stem;
use energy_results::escape::visible;
use energy_results::escape::MAX_STEM_BYTES;
use energy_results::trace::Trace;

use super::{result_seed, Rng};

const PIECES: &[&str] = &[
    "saxpy",
    "a",
    "/",
    "..",
    ".",
    "../",
    " ",
    "|",
    "`",
    "``",
    "\\",
    "\\|",
    "\\\\",
    "*",
    "_",
    "[",
    "](",
    ")",
    "<",
    ">",
    "&",
    "&amp;",
    "&#0;",
    "&#x1b;",
    "\"",
    "'",
    "\n",
    "\r",
    "\r\n",
    "\t",
    "\0",
    "\u{1b}[31m",
    "\u{7f}",
    "\u{85}",
    "\u{2028}",
    "\u{2029}",
    "\u{202e}",
    "\u{200b}",
    "\u{feff}",
    "\u{fffe}",
    "\u{ffff}",
    "é",
    "e\u{301}",
    "能量",
    "⚡",
    "🦀",
    " - ",
    " @ ",
    "~~",
    "$",
    "#1",
    "@me",
    "!",
    "<!--",
    "-->",
    "]]>",
    "<script>",
    "</svg>",
    "</code>",
    "http://x.y",
    "---",
    "|---|",
    "{}",
    "%",
    "+",
    "-",
    ":",
    "=",
    ";",
];

fn random_name(rng: &mut Rng) -> String {
    let mut name = String::new();
    for _ in 0..1 + rng.below(8) {
        match rng.below(4) {
            0 => {
                // Any scalar value, weighted towards the small ones.
                let limit = [0x80, 0x800, 0x1_0000, 0x11_0000][rng.below(4)];
                if let Some(c) = char::from_u32(rng.below(limit) as u32) {
                    name.push(c);
                }
            }
            _ => name.push_str(PIECES[rng.below(PIECES.len())]),
        }
    }
    if rng.below(20) == 0 {
        let piece = PIECES[rng.below(PIECES.len())];
        name.push_str(&piece.repeat(1 + rng.below(700 / piece.chars().count().max(1))));
    }
    match rng.below(3) {
        0 => name,
        1 => format!("{name}/energy"),
        _ => format!("{name}/energy (simulated)"),
    }
}

/// A GFM table row's cells as cmark-gfm splits them: `\` and the ASCII punctuation after
/// it are one unit, an unescaped `|` ends a cell, `\|` becomes `|`, cells are trimmed.
fn gfm_cells(line: &str) -> Vec<String> {
    let body = line.trim().strip_prefix('|').unwrap_or(line.trim());
    let (mut cells, mut cell, mut chars) = (Vec::new(), String::new(), body.chars().peekable());
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek().is_some_and(char::is_ascii_punctuation) => {
                let next = chars.next().unwrap();
                if next != '|' {
                    cell.push('\\');
                }
                cell.push(next);
            }
            '|' => cells.push(std::mem::take(&mut cell).trim().to_string()),
            c => cell.push(c),
        }
    }
    if !cell.trim().is_empty() {
        cells.push(cell.trim().to_string());
    }
    cells
}

/// What a cell (or inline markdown) shows: a code span's content (CommonMark's rules:
/// the fence is the opening run, one space stripped from each end when both are
/// spaces), or escaped text (every character that could start markup escaped). `None`
/// when it is neither: markup would be interpreted.
fn shown(markdown: &str) -> Option<String> {
    if markdown.starts_with('`') {
        let n = markdown.chars().take_while(|&c| c == '`').count();
        let fence = "`".repeat(n);
        let inner = markdown.strip_prefix(&fence)?.strip_suffix(&fence)?;
        // No run of exactly n backticks inside (it would close the span early).
        let mut run = 0;
        for c in inner.chars().chain(std::iter::once(' ')) {
            if c == '`' {
                run += 1;
            } else {
                if run == n {
                    return None;
                }
                run = 0;
            }
        }
        let strip = inner.len() >= 2 && inner.starts_with(' ') && inner.ends_with(' ') && inner.trim() != "";
        return Some(if strip { inner[1..inner.len() - 1].to_string() } else { inner.to_string() });
    }
    let mut out = String::new();
    let mut chars = markdown.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek().is_some_and(char::is_ascii_punctuation) => out.push(chars.next().unwrap()),
            // `|` is left bare by the table's own unescaping.
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '~' | '$' | '!' | '#' | '@' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// A tiny XML well-formedness check: one root element (after an optional `<!DOCTYPE …>`),
/// tags balanced, attributes quoted, every `&` a known reference, every character one
/// XML 1.0 allows, no control character but a newline. `void` names the HTML elements
/// that have no end tag. Returns the decoded text of each element named `want`.
pub fn check_xml(doc: &str, void: &[&str], want: &str) -> Result<Vec<String>, String> {
    if let Some(c) = doc.chars().find(|&c| (c.is_control() && c != '\n') || c == '\u{fffe}' || c == '\u{ffff}') {
        return Err(format!("character U+{:04X}", u32::from(c)));
    }
    let mut rest = doc.strip_prefix("<!DOCTYPE html>").unwrap_or(doc);
    let (mut stack, mut roots, mut texts, mut current): (Vec<String>, usize, Vec<String>, Option<String>) =
        (Vec::new(), 0, Vec::new(), None);
    let decode = |text: &str| -> Result<String, String> {
        let mut out = String::new();
        let mut parts = text.split('&');
        out.push_str(parts.next().unwrap_or(""));
        for part in parts {
            let (entity, after) = part.split_once(';').ok_or_else(|| format!("a bare & before {part:.20}"))?;
            let c = match entity {
                "amp" => '&',
                "lt" => '<',
                "gt" => '>',
                "quot" => '"',
                "apos" => '\'',
                e if e.starts_with("#x") => {
                    char::from_u32(u32::from_str_radix(&e[2..], 16).map_err(|_| e)?).ok_or_else(|| e.to_string())?
                }
                e if e.starts_with('#') => {
                    char::from_u32(e[1..].parse().map_err(|_| e)?).ok_or_else(|| e.to_string())?
                }
                e => return Err(format!("unknown entity &{e};")),
            };
            if c.is_control() && !matches!(c, '\n' | '\t' | '\r') {
                return Err(format!("a reference to U+{:04X}", u32::from(c)));
            }
            out.push(c);
            out.push_str(after);
        }
        Ok(out)
    };
    while !rest.is_empty() {
        let (text, after) = rest.split_once('<').unwrap_or((rest, ""));
        let text = decode(text)?;
        if stack.is_empty() && !text.trim().is_empty() {
            return Err(format!("text outside the root: {text:.40}"));
        }
        if let Some(t) = current.as_mut() {
            t.push_str(&text);
        }
        if after.is_empty() && !rest.contains('<') {
            break;
        }
        let (tag, after) = after.split_once('>').ok_or("a tag that never closes")?;
        rest = after;
        if let Some(name) = tag.strip_prefix('/') {
            match stack.pop() {
                Some(open) if open == name => {}
                other => return Err(format!("</{name}> closes {other:?}")),
            }
            if name == want {
                texts.extend(current.take());
            }
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.strip_suffix('/').unwrap_or(tag);
        let name_end = tag.find(char::is_whitespace).unwrap_or(tag.len());
        let name = &tag[..name_end];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_:.".contains(c)) {
            return Err(format!("a bad element name <{name:.40}"));
        }
        // Attributes: name="value" (or '…'), values decoded.
        let mut attrs = tag[name_end..].trim_start();
        while !attrs.is_empty() {
            let (attr, value) = attrs.split_once('=').ok_or_else(|| format!("attribute without a value in <{name}"))?;
            if !attr.trim().chars().all(|c| c.is_ascii_alphanumeric() || "-_:".contains(c)) {
                return Err(format!("a bad attribute name {attr:.40}"));
            }
            let quote = value.chars().next().filter(|q| *q == '"' || *q == '\'').ok_or("an unquoted attribute")?;
            let (v, after) = value[1..].split_once(quote).ok_or("an attribute that never ends")?;
            if v.contains('<') {
                return Err("< in an attribute".into());
            }
            decode(v)?;
            attrs = after.trim_start();
        }
        if stack.is_empty() {
            roots += 1;
        }
        if self_closing || void.contains(&name) {
            continue;
        }
        stack.push(name.to_string());
        if name == want {
            current = Some(String::new());
        }
    }
    if !stack.is_empty() {
        return Err(format!("unclosed elements {stack:?}"));
    }
    if roots != 1 {
        return Err(format!("{roots} root elements"));
    }
    Ok(texts)
}

fn result(id: &str) -> ResultFile {
    let mut v = result_seed(id, 0.01);
    v["device"]["name"] = serde_json::json!(format!("H100 {}", id.chars().take(12).collect::<String>()));
    ResultFile::parse(&v.to_string(), Path::new("fuzz.json")).expect("a valid seed")
}

/// One name through every writer; `Err` names the broken property.
pub fn check_name(id: &str, other: &str, stems: &mut HashMap<String, String>) -> Result<(), String> {
    let shown_id = visible(id).into_owned();
    // File stems: short, plain, never hidden, never a path, distinct when hashed.
    for name in [id, other] {
        let stem = file_stem(name);
        let plain = stem.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        if stem.is_empty() || stem.len() > MAX_STEM_BYTES || !plain || stem.starts_with(['.', '-']) {
            return Err(format!("stem {stem:?}"));
        }
        let run = Path::new("run");
        if run.join(format!("{stem}.trace.csv")).parent() != Some(run) {
            return Err(format!("stem {stem:?} leaves the run directory"));
        }
        if stems.len() < 300_000 {
            if let Some(before) = stems.insert(stem.clone(), name.to_string()) {
                if before != name && stem.len() > 17 && stem.as_bytes()[stem.len() - 17] == b'-' {
                    return Err(format!("{before:?} and {name:?} share the hashed stem {stem}"));
                }
            }
        }
    }
    let (a, b) = (result(id), result(other));
    if a.id == b.id {
        return Ok(());
    }
    let set = ResultSet {
        dir: PathBuf::from(format!("target/energy/{other}")),
        results: BTreeMap::from([(a.id.clone(), a.clone()), (b.id.clone(), b.clone())]),
        not_run: Default::default(),
    };
    // Markdown: the title one line, the summary one line, each row as many cells as the
    // header, the id read back from its cell.
    let md = render(&set, Some(&set), 5.0, Format::named("markdown").unwrap()).map_err(|e| e.to_string())?;
    let lines: Vec<&str> = md.lines().collect();
    if !lines[0].starts_with("### Energy report") || !lines[1].is_empty() {
        return Err(format!("the title is not one line: {md}"));
    }
    if !lines[2].starts_with("2 benchmarks measured") || !lines[3].is_empty() {
        return Err(format!("the summary is not one line: {md}"));
    }
    let rows: Vec<&str> = lines[4..].iter().copied().take_while(|l| l.starts_with('|')).collect();
    if rows.len() != 4 {
        return Err(format!("{} table lines, 4 expected:\n{md}", rows.len()));
    }
    let columns = gfm_cells(rows[0]).len();
    for row in &rows {
        if gfm_cells(row).len() != columns {
            return Err(format!("{} cells in {row:?}, {columns} in the header", gfm_cells(row).len()));
        }
    }
    let first_cells: Vec<String> = rows[2..].iter().map(|r| gfm_cells(r)[0].clone()).collect();
    let read: Vec<Option<String>> = first_cells.iter().map(|c| shown(c)).collect();
    let expected = visible(&a.id).into_owned();
    let matches = |r: &Option<String>| r.as_deref().is_some_and(|s| s == expected || s == expected.trim());
    if !read.iter().any(matches) {
        return Err(format!("the id {expected:?} does not read back from {first_cells:?}"));
    }
    if md.lines().count() != 4 + 4 + 2 {
        return Err(format!("a note or the table spans several lines:\n{md}"));
    }
    // HTML: well-formed, the id read back from its <code>.
    let html = render(&set, None, 5.0, Format::named("html").unwrap()).map_err(|e| e.to_string())?;
    let codes = check_xml(&html, &["meta"], "code").map_err(|e| format!("HTML: {e}"))?;
    if !codes.contains(&shown_id) {
        return Err(format!("HTML: {shown_id:?} is not among {codes:?}"));
    }
    // The power plot's SVG: well-formed, the title read back.
    let svg = power_plot(&Trace::new(), &AnalysisOptions::default(), id);
    let texts = check_xml(&svg, &[], "text").map_err(|e| format!("SVG: {e}"))?;
    if texts.first() != Some(&shown_id) {
        return Err(format!("SVG: the title reads {:?}, not {shown_id:?}", texts.first()));
    }
    // The terminal summary: no control character but the newlines ending its lines.
    let summary = render_summary(&a, None);
    if summary.chars().any(|c| c.is_control() && c != '\n') || !summary.starts_with(&format!("{shown_id} on ")) {
        return Err(format!("summary {summary:?}"));
    }
    // Trackers: each name is the id, its GPU, then the measure.
    let gab = github_action_benchmark_on(&set, Some("GPU-aaaaaaaa"));
    for entry in gab.as_array().unwrap() {
        let name = entry["name"].as_str().unwrap();
        let ok = GITHUB_ACTION_BENCHMARK_MEASURES.iter().any(|(what, _)| {
            name.strip_suffix(&format!(" - {what}"))
                .and_then(|n| n.strip_suffix(" @ GPU-aaaaaaaa"))
                .is_some_and(|n| n == a.id || n == b.id)
        });
        if !ok {
            return Err(format!("tracker name {name:?}"));
        }
    }
    // explain: markdown table cells and a well-formed SVG.
    let model: EnergyModel = serde_json::from_value(serde_json::json!({
        "format": "energy-model/1", "gpu": id, "fitted_on": [other], "sm_clock_mhz": 1980.0, "source": id,
        "classes": [], "notes": [other]
    }))
    .map_err(|e| e.to_string())?;
    let e: Explanation = serde_json::from_value(serde_json::json!({
        "id": id, "gpu": other, "uuid": "GPU-1", "kernel": other, "launches": 1,
        "terms": [{"name": id, "kind": other, "units": 1.0, "j": 1e-6, "ci_j": null},
                  {"name": other, "kind": "compute", "units": 1.0, "j": 2e-6, "ci_j": [1e-6, 3e-6]}],
        "predicted_dynamic_j": 3e-6, "measured_dynamic_j": [4e-6, 3e-6, 5e-6], "measured_total_j": 1e-5,
        "static_j": 6e-6, "unexplained_j": 1e-6
    }))
    .map_err(|e| e.to_string())?;
    let md = render_markdown(&e, &model);
    let lines: Vec<&str> = md.lines().collect();
    if !lines[0].starts_with("# Where ") || !lines[1].is_empty() || !lines[3].is_empty() {
        return Err(format!("explain: the heading or the paragraph spans lines:\n{md}"));
    }
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    if rows.len() != 2 + 2 + 5 || rows.iter().any(|r| gfm_cells(r).len() != 5) {
        return Err(format!("explain: a broken table:\n{md}"));
    }
    if shown(&gfm_cells(rows[2])[0]).is_none_or(|s| s != shown_id.trim()) {
        return Err(format!("explain: {shown_id:?} does not read back from {:?}", gfm_cells(rows[2])[0]));
    }
    let svg = render_svg(&e);
    let texts = check_xml(&svg, &[], "text").map_err(|e| format!("explain SVG: {e}"))?;
    if !texts.first().is_some_and(|t| t.starts_with(&format!("{shown_id}: "))) {
        return Err(format!("explain SVG: the title reads {:?}", texts.first()));
    }
    Ok(())
}

#[test]
fn the_checker_finds_what_the_old_writers_did() {
    // The checks can fail: raw control characters and bare markup are caught.
    assert!(check_xml("<svg><text>a\u{1b}b</text></svg>", &[], "text").is_err());
    assert!(check_xml("<svg><text>a<b</text></svg>", &[], "text").is_err());
    assert!(check_xml("<svg><text>a & b</text></svg>", &[], "text").is_err());
    assert_eq!(check_xml("<svg><text>a &lt;b&gt;</text></svg>", &[], "text").unwrap(), ["a <b>"]);
    assert_eq!(gfm_cells("| `a|b` | c |").len(), 3, "an unescaped pipe splits even a code span");
    assert_eq!(gfm_cells("| `a\\|b` | c |"), ["`a|b`", "c"]);
    assert_eq!(gfm_cells("| a\\\\|b | c |").len(), 3, "cmark-gfm: an escaped backslash, then a cell boundary");
    assert_eq!(shown("*x*"), None);
    assert_eq!(shown("`` a`b ``").as_deref(), Some("a`b"));
}

#[test]
fn names_through_every_writer_stay_well_formed() {
    let mut rng = Rng(super::seed() ^ 0x6e61_6d65);
    let n = super::cases();
    let (mut failures, mut panics, mut stems) = (Vec::new(), 0u64, HashMap::new());
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for case in 0..n {
        let (id, other) = (random_name(&mut rng), random_name(&mut rng));
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_name(&id, &other, &mut stems))) {
            Ok(Ok(())) => {}
            Ok(Err(why)) => failures.push(format!("case {case} ({id:?}, {other:?}): {why}")),
            Err(_) => {
                panics += 1;
                failures.push(format!("case {case} ({id:?}, {other:?}): panicked"));
            }
        }
    }
    std::panic::set_hook(previous_hook);
    println!(
        "fuzz names: {n} name pairs (seed {:#x}): {} broke an output, {panics} panics",
        super::seed(),
        failures.len()
    );
    assert!(failures.is_empty(), "{:#?}", &failures[..failures.len().min(5)]);
}
