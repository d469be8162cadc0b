//! The user guide (the book in `docs/book/`, the README, the changelog) holds together: every
//! chapter of `SUMMARY.md` exists, every relative link resolves to a file (and its `#anchor`
//! to a heading of it), and every `{{#include …}}` names a file. The code a chapter shows is
//! included from files the tests build (`docs/book/examples/`, `tests/user_crate.rs`).

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A heading's anchor as GitHub and mdBook make it: lower case, letters, digits, `-` and `_`
/// kept, spaces made `-`, the rest dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The text of `markdown` outside fenced code blocks.
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The anchors of a markdown file's headings.
fn anchors(markdown: &str) -> Vec<String> {
    prose(markdown).lines().filter(|l| l.starts_with('#')).map(|l| slug(l.trim_start_matches('#'))).collect()
}

/// The targets of `[text](target)` links in `markdown`'s prose.
fn links(markdown: &str) -> Vec<String> {
    let text = prose(markdown);
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].to_string());
        }
    }
    out
}

/// Every problem of the links and includes of `file`.
fn problems(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let dir = file.parent().unwrap();
    let mut out = Vec::new();
    for target in links(&text) {
        if target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = target.split_once('#').map_or((target.as_str(), None), |(p, a)| (p, Some(a)));
        let resolved = if path.is_empty() { file.to_path_buf() } else { dir.join(path) };
        if !resolved.exists() {
            out.push(format!("{}: the link `{target}` names no file", file.display()));
            continue;
        }
        if let Some(anchor) = anchor.filter(|_| resolved.extension().is_some_and(|e| e == "md")) {
            let heads = anchors(&std::fs::read_to_string(&resolved).unwrap());
            if !heads.iter().any(|h| h == anchor) {
                out.push(format!("{}: the link `{target}` names no heading of {}", file.display(), resolved.display()));
            }
        }
    }
    for include in text.split("{{#include ").skip(1) {
        let spec = include.split("}}").next().unwrap().trim();
        let (path, anchor) = spec.split_once(':').map_or((spec, None), |(p, a)| (p, Some(a)));
        let Ok(included) = std::fs::read_to_string(dir.join(path)) else {
            out.push(format!("{}: `{{{{#include {spec}}}}}` names no file", file.display()));
            continue;
        };
        // `file:name` (not a line range): mdBook's anchor comments must be in the file.
        if let Some(name) = anchor.filter(|a| !a.starts_with(|c: char| c.is_ascii_digit())) {
            if !included.contains(&format!("ANCHOR: {name}")) || !included.contains(&format!("ANCHOR_END: {name}")) {
                out.push(format!("{}: `{{{{#include {spec}}}}}`: {path} has no anchor {name}", file.display()));
            }
        }
        // The code shown comes from a file that is built: the book's examples (the tests
        // build them as a user's crate), its library examples (scripts/build-library-examples.sh),
        // or the repository's own tests.
        let built = ["examples/", "library-examples/", "tests/", "ci/"];
        if path.ends_with(".rs") && !built.iter().any(|root| path.contains(root)) {
            out.push(format!("{}: `{{{{#include {spec}}}}}` shows code no test or script builds", file.display()));
        }
    }
    out
}

/// Rust written in a chapter itself rather than included from a file that compiles (the
/// README's quick start is held to `docs/book/examples/quickstart.rs` by tests/user_crate.rs).
fn inline_rust(file: &Path, markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rust_block: Option<usize> = None;
    let mut fenced = false;
    for (number, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            fenced = !fenced;
            rust_block = (fenced && trimmed.trim_start_matches('`').starts_with("rust")).then_some(number + 1);
            continue;
        }
        if let Some(start) = rust_block {
            if !trimmed.is_empty() && !trimmed.starts_with("{{#include ") {
                out.push(format!("{}:{start}: a Rust block not included from a file that compiles", file.display()));
                rust_block = None;
            }
        }
    }
    out
}

#[test]
fn every_chapter_link_and_include_of_the_book_resolves() {
    let src = repo().join("docs/book/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let chapters: Vec<String> = links(&summary);
    assert!(chapters.len() >= 10, "SUMMARY.md lists {} chapters", chapters.len());
    let mut all = Vec::new();
    for chapter in &chapters {
        let path = src.join(chapter);
        assert!(path.is_file(), "SUMMARY.md lists {chapter}, which does not exist");
        all.extend(problems(&path));
        all.extend(inline_rust(&path, &std::fs::read_to_string(&path).unwrap()));
    }
    // Every chapter file is in the summary (mdBook would leave it out of the book).
    for entry in std::fs::read_dir(&src).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") && name != "SUMMARY.md" {
            assert!(chapters.contains(&name), "{name} is not in SUMMARY.md");
        }
    }
    for file in ["README.md", "CHANGELOG.md"] {
        all.extend(problems(&repo().join(file)));
    }
    assert!(all.is_empty(), "{}", all.join("\n"));
}

#[test]
fn the_checker_finds_broken_links_anchors_includes_and_inline_rust() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.md"), "# A heading: `code`\n").unwrap();
    let a = dir.path().join("a.md");
    std::fs::write(
        &a,
        "[ok](b.md#a-heading-code) [bad](c.md) [anchor](b.md#nope)\n```\n[in code](x.md)\n```\n{{#include d.rs}}\n\
         ```rust\n{{#include examples/e.rs:there}}\n{{#include examples/e.rs:gone}}\n```\n\
         ```rust,ignore\nfn written_here() {}\n```\n{{#include f.rs}}\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("examples")).unwrap();
    std::fs::write(dir.path().join("examples/e.rs"), "// ANCHOR: there\nfn f() {}\n// ANCHOR_END: there\n").unwrap();
    std::fs::write(dir.path().join("f.rs"), "fn f() {}\n").unwrap();
    let mut p = problems(&a);
    p.extend(inline_rust(&a, &std::fs::read_to_string(&a).unwrap()));
    assert_eq!(p.len(), 6, "{p:?}");
    assert!(p[0].contains("`c.md` names no file") && p[1].contains("b.md#nope") && p[2].contains("d.rs"), "{p:?}");
    assert!(p[3].contains("has no anchor gone") && p[4].contains("f.rs}}` shows code no test"), "{p:?}");
    assert!(p[5].contains(":10: a Rust block not included"), "{p:?}");
}

/// The simulated saxpy's sample output is shown in the README, the book and the GUIDE: one
/// output, regenerated together, never one copy left behind.
#[test]
fn the_sample_output_is_one_output_wherever_it_is_shown() {
    // From the summary's first line to its `files` line (the GUIDE shows criterion's lines
    // around it).
    let block = |file: &str| -> String {
        let text = std::fs::read_to_string(repo().join(file)).unwrap();
        let start =
            text.find("saxpy/energy (simulated) on").unwrap_or_else(|| panic!("{file} shows the saxpy sample output"));
        let files = start + text[start..].find("\n  files ").expect("its files line");
        let end = files + 1 + text[files + 1..].find('\n').unwrap();
        text[start..end].to_string()
    };
    let readme = block("README.md");
    for file in ["docs/book/src/benchmarks.md", "docs/GUIDE.md"] {
        assert_eq!(block(file), readme, "{file}'s saxpy sample differs from the README's");
    }
}
