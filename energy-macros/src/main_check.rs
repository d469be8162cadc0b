//! Mistakes of a bench file that rustc would report without naming the harness: a file of
//! `#[energy_bench]` functions without `energy_main!()` (rustc's E0601, "`main` function not
//! found"), and `#[energy_bench]` in an integration test under `tests/`, where it would never
//! run. Only the crate's root file is read (the file the macro is in, when cargo compiles it
//! as its own crate): a benchmark in a module file gives no verdict here.

use std::path::Path;

/// The compile error for the file `#[energy_bench]` is in, if it has one of the mistakes.
pub fn bench_file_problem() -> Option<String> {
    let file = proc_macro::Span::call_site().local_file()?;
    let crate_name = std::env::var("CARGO_CRATE_NAME").ok()?;
    if !is_crate_root(&file, &crate_name) {
        return None;
    }
    let text = std::fs::read_to_string(&file).ok()?;
    problem(&file, &text)
}

/// Whether `file` is the root of the crate `crate_name` as cargo lays targets out
/// (`benches/NAME.rs` or `benches/NAME/main.rs`, hyphens becoming underscores).
fn is_crate_root(file: &Path, crate_name: &str) -> bool {
    let stem = match file.file_stem().and_then(|s| s.to_str()) {
        Some("main") => file.parent().and_then(|p| p.file_name()).and_then(|s| s.to_str()),
        other => other,
    };
    stem.is_some_and(|s| s.replace('-', "_") == crate_name)
}

fn problem(file: &Path, text: &str) -> Option<String> {
    let code = without_comments(text);
    // A file with a `main` of its own runs its benchmarks as it chooses (a test harness
    // calling the harness's runner): no verdict.
    if has_energy_main(&code) || has_own_main(&code) {
        return None;
    }
    let in_tests = file.components().any(|c| c.as_os_str() == "tests");
    Some(if in_tests {
        format!(
            "#[energy_bench] in `{}`, an integration test: a benchmark there never runs. Benchmarks go in benches/ \
             (with `harness = false` for the target in Cargo.toml and `energy_harness::energy_main!();` at the end of \
             the file); an energy budget in a test is #[energy_test]",
            file.display()
        )
    } else {
        format!(
            "`{}` holds #[energy_bench] functions but no `energy_main!()`, so it has no `main`: add \
             `energy_harness::energy_main!();` at the end of the file (and `harness = false` for this target in \
             Cargo.toml)",
            file.display()
        )
    })
}

/// Whether the code (comments removed: a doc comment naming it is not a call) invokes
/// `energy_main!` (any path, any spacing before `!`).
fn has_energy_main(text: &str) -> bool {
    text.match_indices("energy_main").any(|(at, word)| {
        let before_ok = text[..at].chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let after = text[at + word.len()..].trim_start();
        before_ok && after.starts_with('!')
    })
}

/// Whether the code defines `fn main(`.
fn has_own_main(code: &str) -> bool {
    code.match_indices("fn").any(|(at, _)| {
        let before_ok = code[..at].chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let rest = code[at + 2..].trim_start();
        before_ok
            && code[at + 2..].starts_with(char::is_whitespace)
            && rest.strip_prefix("main").is_some_and(|r| r.trim_start().starts_with('('))
    })
}

/// `text` with its `//` and `/* */` comments (doc comments too) blanked out; string literals
/// are kept as they are, so `"//"` inside one is not a comment.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                while chars.peek().is_some_and(|&n| n != '\n') {
                    chars.next();
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut depth = 1;
                while depth > 0 {
                    match (chars.next(), chars.peek()) {
                        (Some('*'), Some('/')) => {
                            chars.next();
                            depth -= 1;
                        }
                        (Some('/'), Some('*')) => {
                            chars.next();
                            depth += 1;
                        }
                        (None, _) => break,
                        _ => {}
                    }
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_energy_main_in_any_spelling() {
        assert!(has_energy_main("energy_main!();"));
        assert!(has_energy_main("energy_harness::energy_main! {}"));
        assert!(has_energy_main("x\nenergy_main !();"));
        assert!(!has_energy_main("fn energy_main_helper() {}"));
        assert!(!has_energy_main("my_energy_main!();"));
        assert!(!has_energy_main("// nothing here"));
        let code = |t: &str| without_comments(t);
        assert!(!has_energy_main(&code("//! A bench file without `energy_main!()`.\n#[energy_bench] fn f() {}")));
        assert!(!has_energy_main(&code("/* energy_main!(); /* nested */ */ fn f() {}")));
        assert!(has_energy_main(&code("const S: &str = \"//\"; energy_main!();")));
    }

    #[test]
    fn only_a_crate_root_gets_a_verdict() {
        assert!(is_crate_root(Path::new("/c/benches/saxpy.rs"), "saxpy"));
        assert!(is_crate_root(Path::new("/c/benches/my-bench.rs"), "my_bench"));
        assert!(is_crate_root(Path::new("/c/benches/saxpy/main.rs"), "saxpy"));
        assert!(!is_crate_root(Path::new("/c/benches/common/mod.rs"), "saxpy"));
    }

    #[test]
    fn the_message_names_the_fix() {
        let bench = problem(Path::new("benches/saxpy.rs"), "#[energy_bench] fn f() {}").unwrap();
        assert!(bench.contains("energy_main!();") && bench.contains("harness = false"), "{bench}");
        let test = problem(Path::new("tests/budget.rs"), "#[energy_bench] fn f() {}").unwrap();
        assert!(test.contains("integration test") && test.contains("#[energy_test]"), "{test}");
        assert!(problem(Path::new("benches/saxpy.rs"), "energy_main!();").is_none());
        // A doc comment naming energy_main!() is not a call; a main of its own is a choice.
        assert!(problem(Path::new("benches/saxpy.rs"), "//! runs as `energy_main!()` does\nfn f() {}").is_some());
        assert!(
            problem(Path::new("tests/own.rs"), "#[energy_bench] fn f() {}\nfn main() -> ExitCode { run() }").is_none()
        );
        assert!(problem(Path::new("tests/own.rs"), "fn main_helper() {}\n// fn main() {}").is_some());
    }
}
