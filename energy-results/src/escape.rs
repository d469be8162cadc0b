//! One escaping function per output format. Every writer that puts text it did not write
//! itself (benchmark ids above all, and device, kernel and class names read from files)
//! into an output goes through these, so an id holding `|`, a backtick, `<`, `&`, a newline
//! or any control character never breaks a table, a code span or an XML document:
//!
//! | output | function |
//! |---|---|
//! | a terminal line (the summary under criterion's) | [`visible`] |
//! | markdown text, in a paragraph, a heading or a table cell | [`markdown_text`] |
//! | a markdown code span outside a table | [`markdown_code_span`] |
//! | a markdown code span inside a table cell | [`markdown_cell_code`] |
//! | HTML text and attribute values | [`html`] |
//! | XML (SVG) text and attribute values | [`xml`] |
//! | JSON (result files, `bmf`, `github-action-benchmark`) | `serde_json`, which escapes itself |
//! | a file name derived from an id | [`file_stem`] |
//!
//! All of them start from [`visible`]: control characters (and the invisible characters that
//! reorder or break lines) are shown as escapes (`\n`, `\u{1b}`), never written raw. The
//! markdown rules are those of GitHub (GFM, as cmark-gfm implements tables); `tests/fuzz_readers/names.rs`
//! checks every format against random names.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` is shown as an escape by [`visible`] (the one list, shared with the macros'
/// check of benchmark names).
pub use energy_units::bounds::is_invisible;

/// `text` with every [`is_invisible`] character written as an escape: `\n`, `\r`, `\t`,
/// else `\u{hex}` (as Rust writes them). Everything else is kept, so ordinary ids are
/// returned unchanged (borrowed). For terminal output, and the start of every other format.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_invisible) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_invisible(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The ASCII punctuation that means something inline in GitHub markdown: escapes, code,
/// emphasis, links and images, HTML and autolinks, entities, table pipes, strikethrough,
/// math, issue references and mentions.
const MARKDOWN_SPECIAL: &[char] = &['\\', '`', '*', '_', '[', ']', '<', '>', '&', '|', '~', '$', '!', '#', '@'];

/// `text` as literal markdown text: [`visible`], then a backslash before each character
/// that could start markup (`\ ` * _ [ ] < > & | ~ $ ! # @`). Valid in a paragraph, a
/// heading and a GFM table cell (the pipe is escaped too), where it reads back as `text`
/// (its invisible characters as escapes).
pub fn markdown_text(text: &str) -> String {
    let shown = visible(text);
    let mut out = String::with_capacity(shown.len() + 4);
    for c in shown.chars() {
        if MARKDOWN_SPECIAL.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `text` as a markdown code span outside a table: [`visible`], fenced by one backtick more
/// than its longest run of backticks, padded with a space on each side where CommonMark
/// would otherwise eat one of its own (a backtick or a space at both ends). Empty text
/// gives an empty string (there is no empty code span).
pub fn markdown_code_span(text: &str) -> String {
    let shown = visible(text);
    if shown.is_empty() {
        return String::new();
    }
    let (mut longest, mut run) = (0, 0);
    for c in shown.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let all_spaces = shown.chars().all(|c| c == ' ');
    let pad = shown.starts_with('`')
        || shown.ends_with('`')
        || (shown.starts_with(' ') && shown.ends_with(' ') && !all_spaces);
    let space = if pad { " " } else { "" };
    format!("{fence}{space}{shown}{space}{fence}")
}

/// `text` as a code span inside a GFM table cell: [`markdown_code_span`] with each `|`
/// written `\|` (GFM splits cells on a pipe even inside a code span, and drops the
/// backslash). Text holding a backslash right before a pipe cannot be shown by a code
/// span in a table (cmark-gfm reads `\\|` as an escaped backslash and a cell boundary), so
/// it is written as [`markdown_text`] instead.
pub fn markdown_cell_code(text: &str) -> String {
    let shown = visible(text);
    if shown.contains("\\|") {
        return markdown_text(text);
    }
    markdown_code_span(text).replace('|', "\\|")
}

/// `text` as HTML text or a quoted attribute value: [`visible`], then `&`, `<`, `>`, `"`
/// and `'` as character references.
pub fn html(text: &str) -> String {
    xml(text)
}

/// Text of several lines as HTML (a `<pre>` block): each line as [`html`], the line breaks
/// kept as line breaks (a control character inside a line is still shown as an escape).
pub fn html_lines(text: &str) -> String {
    text.lines().map(html).collect::<Vec<_>>().join("\n")
}

/// `text` as XML (SVG) character data or a quoted attribute value: [`visible`] (which also
/// removes every character XML 1.0 forbids), then `&`, `<`, `>`, `"` and `'` as character
/// references.
pub fn xml(text: &str) -> String {
    let shown = visible(text);
    let mut out = String::with_capacity(shown.len() + 8);
    for c in shown.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The longest stem [`file_stem`] returns, in bytes: with `.trace.csv` and the temporary
/// name of an atomic write it stays far below the 255 bytes a file name may have.
pub const MAX_STEM_BYTES: usize = 80;

/// A benchmark id as a file name inside the run directory (`<stem>.json`, `.trace.csv`,
/// `.svg`). Letters, digits, `-`, `_` and `.` are kept, every other character becomes `_`.
/// An id of only those and the separators criterion ids use (`/`, space, parentheses) keeps
/// that readable stem (`saxpy/energy (simulated)` → `saxpy_energy__simulated_`). Any other
/// id (other punctuation, non-ASCII or control characters), one whose stem would start with
/// `.` (`../../tmp/x`) or be longer than [`MAX_STEM_BYTES`] gets a readable prefix and the
/// FNV-1a hash of the whole id: `_.._tmp_x_energy-0123456789abcdef`. A stem is never empty,
/// never starts with `.` or `-`, and holds no path separator, so `dir.join(stem + ext)` is
/// always a file directly inside `dir`. (Two ordinary ids with one stem, `a/b` and `a b`,
/// are refused when the second is committed to a run.)
pub fn file_stem(id: &str) -> String {
    let kept = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let mapped: String = id.chars().map(|c| if kept(c) { c } else { '_' }).collect();
    let ordinary = id.chars().all(|c| kept(c) || matches!(c, '/' | ' ' | '(' | ')'));
    if ordinary && !mapped.is_empty() && !mapped.starts_with(['.', '-']) && mapped.len() <= MAX_STEM_BYTES {
        return mapped;
    }
    // `mapped` is ASCII: any byte index is a character boundary.
    let prefix = mapped.trim_start_matches(['.', '-']);
    let prefix = &prefix[..prefix.len().min(MAX_STEM_BYTES - 17)];
    let prefix = if prefix.is_empty() { "id" } else { prefix };
    format!("{prefix}-{:016x}", crate::hash::fnv1a(id.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_their_breaks_and_each_is_escaped() {
        // The HTML sweep table: a `<pre>` block of several lines (issue 60: one line with
        // literal `\n`).
        let shown = html_lines("a <b>\n  c & d\te\n");
        assert_eq!(shown, "a &lt;b&gt;\n  c &amp; d\\te");
        assert_eq!(shown.lines().count(), 2);
    }

    #[test]
    fn invisible_characters_become_escapes_and_ordinary_text_is_kept() {
        assert!(matches!(visible("saxpy/energy (simulated)"), Cow::Borrowed(_)));
        assert_eq!(visible("a\nb\tc\r\u{1b}[31m\u{7f}\u{85}"), "a\\nb\\tc\\r\\u{1b}[31m\\u{7f}\\u{85}");
        assert_eq!(visible("x\u{202e}y\u{2028}\u{fffe}"), "x\\u{202e}y\\u{2028}\\u{fffe}");
        assert_eq!(visible("能量 ⚡ é"), "能量 ⚡ é");
    }

    #[test]
    fn markdown_text_escapes_what_would_be_markup() {
        assert_eq!(markdown_text("a|b"), "a\\|b");
        assert_eq!(
            markdown_text("*x* _y_ `z` [l](u) <b> &amp; ~s~ $m$ #1 @me !"),
            "\\*x\\* \\_y\\_ \\`z\\` \\[l\\](u) \\<b\\> \\&amp; \\~s\\~ \\$m\\$ \\#1 \\@me \\!"
        );
        assert_eq!(markdown_text("a\\|b\nc"), "a\\\\\\|b\\\\nc");
        assert_eq!(markdown_text("saxpy/energy (simulated)"), "saxpy/energy (simulated)");
    }

    #[test]
    fn code_spans_are_fenced_past_every_backtick_run() {
        assert_eq!(markdown_code_span("a/energy"), "`a/energy`");
        assert_eq!(markdown_code_span("a`b"), "``a`b``");
        assert_eq!(markdown_code_span("`a``"), "``` `a`` ```");
        assert_eq!(markdown_code_span(" a "), "`  a  `");
        assert_eq!(markdown_code_span("   "), "`   `");
        assert_eq!(markdown_code_span("a\nb"), "`a\\nb`");
        assert_eq!(markdown_code_span(""), "");
        assert_eq!(markdown_cell_code("a|b`c"), "``a\\|b`c``");
        // No code span in a GFM table shows `\|`: escaped text instead.
        assert_eq!(markdown_cell_code("a\\|b"), "a\\\\\\|b");
    }

    #[test]
    fn html_and_xml_escape_markup_quotes_and_controls() {
        assert_eq!(xml("<a href=\"x\">&'</a>\u{0}"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;\\u{0}");
        assert_eq!(html("fma <sim>"), "fma &lt;sim&gt;");
    }
}
