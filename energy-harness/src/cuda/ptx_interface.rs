//! The interface of a PTX module, read from its text: version, target, address size, and
//! each kernel entry with its parameters (type and size). What a launch must match, known
//! without a GPU: the groundwork of the checked device (a launch's arguments against the
//! entry's parameters, a kernel name against the entries, with the closest one suggested).
//!
//! Only the module's directives and `.entry` headers are read; bodies are skipped. A
//! header this reader cannot make sense of is an error naming the line.

use energy_results::error::{echo, Error, ErrorKind, Result};

/// One parameter of a kernel entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxParam {
    /// Its name.
    pub name: String,
    /// Its state-space type as written: `u32`, `f32`, `u64`, `b8`, …
    pub ty: String,
    /// Its size in bytes (an array `.b8 p[16]` is 16).
    pub size_bytes: usize,
    /// Whether it is an array (a struct passed by value).
    pub array: bool,
}

/// One kernel entry (`.entry`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxEntry {
    /// Its name.
    pub name: String,
    /// Its parameters, in order.
    pub params: Vec<PtxParam>,
    /// The 1-based line of its `.entry`.
    pub line: usize,
    /// `.maxntid x, y, z`: the most threads per block it may be launched with (their product).
    pub max_threads_per_block: Option<u64>,
    /// `.reqntid x, y, z`: the only block shape it may be launched with.
    pub required_block: Option<(u32, u32, u32)>,
}

/// A module's interface.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PtxInterface {
    /// `.version`, e.g. `7.0`.
    pub version: Option<String>,
    /// `.target`, e.g. `sm_70`.
    pub target: Option<String>,
    /// `.address_size` (32 or 64).
    pub address_size: Option<u32>,
    /// The kernel entries.
    pub entries: Vec<PtxEntry>,
}

fn type_size(ty: &str) -> Option<usize> {
    let bits: usize = ty.get(1..)?.parse().ok()?;
    matches!(ty.as_bytes()[0], b'u' | b's' | b'b' | b'f').then_some(())?;
    matches!(bits, 8 | 16 | 32 | 64).then_some(bits / 8)
}

/// Removes `//` and `/* */` comments and the contents of string literals (`.file 1
/// "/src{1}/k.cu"`), keeping line breaks so line numbers stay right.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_block = false;
    while let Some(c) = chars.next() {
        if in_block {
            if c == '*' && chars.peek() == Some(&'/') {
                chars.next();
                in_block = false;
            } else if c == '\n' {
                out.push('\n');
            }
            continue;
        }
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                in_block = true;
            }
            ('"', _) => {
                out.push('"');
                while let Some(d) = chars.next() {
                    match d {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        '\n' => {
                            out.push('\n');
                            break;
                        }
                        _ => {}
                    }
                }
                out.push('"');
            }
            _ => out.push(c),
        }
    }
    out
}

fn parse_param(text: &str, origin: &str, line: usize) -> Result<PtxParam> {
    let bad =
        |why: &str| Error::new(ErrorKind::Format, format!("{origin}:{line}: parameter `{}`: {why}", echo(text.trim())));
    let mut tokens: Vec<&str> = text.split_whitespace().collect();
    if tokens.first() != Some(&".param") {
        return Err(bad("expected `.param TYPE NAME`"));
    }
    tokens.remove(0);
    // `.align N` and `.ptr…` qualifiers come before or after the type.
    let mut ty = None;
    let mut name = None;
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        if t == ".align" {
            i += 2;
            continue;
        }
        if let Some(stripped) = t.strip_prefix('.') {
            if type_size(stripped).is_some() && ty.is_none() {
                ty = Some(stripped.to_string());
            }
            i += 1;
            continue;
        }
        name = Some(t);
        i += 1;
    }
    let ty = ty.ok_or_else(|| bad("no type (.u32, .f32, .u64, .b8 …)"))?;
    let name = name.ok_or_else(|| bad("no name"))?;
    let element = type_size(&ty).ok_or_else(|| bad("unknown type"))?;
    let (name, count, array) = match name.split_once('[') {
        Some((n, rest)) => {
            let count: usize = rest.trim_end_matches(']').trim().parse().map_err(|_| bad("bad array length"))?;
            (n, count, true)
        }
        None => (name, 1, false),
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%')) {
        return Err(bad("bad name"));
    }
    Ok(PtxParam { name: name.to_string(), ty, size_bytes: element * count, array })
}

/// Reads the interface of a PTX module; `origin` names it in errors.
pub fn parse_interface(text: &str, origin: &str) -> Result<PtxInterface> {
    let clean = strip_comments(text);
    let mut interface = PtxInterface::default();
    let line_of = |offset: usize| clean[..offset].matches('\n').count() + 1;
    let mut depth = 0usize;
    let mut offset = 0usize;
    let bytes = clean.as_bytes();
    while offset < bytes.len() {
        let rest = &clean[offset..];
        let c = bytes[offset];
        if c == b'{' {
            depth += 1;
            offset += 1;
            continue;
        }
        if c == b'}' {
            depth = depth.checked_sub(1).ok_or_else(|| {
                Error::new(ErrorKind::Format, format!("{origin}:{}: `}}` without its `{{`", line_of(offset)))
            })?;
            offset += 1;
            continue;
        }
        if depth > 0 || c != b'.' {
            offset += 1;
            continue;
        }
        let word_end = rest.find(|ch: char| ch.is_whitespace() || ch == '(' || ch == ';').unwrap_or(rest.len());
        let word = &rest[..word_end];
        let line_end = rest.find('\n').unwrap_or(rest.len());
        let value = rest[word_end..line_end].trim().trim_end_matches(';').trim();
        match word {
            ".version" => interface.version = Some(value.to_string()),
            ".target" => interface.target = Some(value.split(',').next().unwrap_or("").trim().to_string()),
            ".address_size" => {
                interface.address_size = Some(value.parse().map_err(|_| {
                    Error::new(
                        ErrorKind::Format,
                        format!("{origin}:{}: `.address_size {}` is not 32 or 64", line_of(offset), echo(value)),
                    )
                })?)
            }
            ".entry" => {
                let line = line_of(offset);
                let after = &rest[word_end..];
                let open = after.find('(');
                let body = after.find('{');
                let name_end = [open, body].into_iter().flatten().min().unwrap_or(after.len());
                let name = after[..name_end].trim().to_string();
                if name.is_empty() {
                    return Err(Error::new(ErrorKind::Format, format!("{origin}:{line}: `.entry` without a name")));
                }
                let mut params = Vec::new();
                let mut consumed = word_end + name_end;
                if let Some(open) = open.filter(|&o| body.is_none_or(|b| o < b)) {
                    let close = after[open..].find(')').map(|c| open + c).ok_or_else(|| {
                        Error::new(
                            ErrorKind::Format,
                            format!("{origin}:{line}: the parameter list of `{}` is not closed", echo(&name)),
                        )
                    })?;
                    for p in after[open + 1..close].split(',').filter(|p| !p.trim().is_empty()) {
                        params.push(parse_param(p, origin, line)?);
                    }
                    consumed = word_end + close + 1;
                }
                // Performance directives between the parameter list and the body.
                let header_end = clean[offset + consumed..].find('{').map_or(clean.len(), |b| offset + consumed + b);
                let header = &clean[offset + consumed..header_end];
                let dims = |directive: &str| -> Result<Option<Vec<u32>>> {
                    let Some(at) = header.find(directive) else { return Ok(None) };
                    let value = header[at + directive.len()..].split(['\n', ';', '.']).next().unwrap_or("");
                    let dims: Option<Vec<u32>> = value.split(',').map(|v| v.trim().parse().ok()).collect();
                    match dims.filter(|d| (1..=3).contains(&d.len()) && d.iter().all(|&x| x > 0)) {
                        Some(d) => Ok(Some(d)),
                        None => Err(Error::new(
                            ErrorKind::Format,
                            format!(
                                "{origin}:{line}: `{directive} {}` is not 1 to 3 positive sizes",
                                echo(value.trim())
                            ),
                        )),
                    }
                };
                let max_threads_per_block = dims(".maxntid")?.map(|d| d.iter().map(|&x| u64::from(x)).product());
                let required_block =
                    dims(".reqntid")?.map(|d| (d[0], *d.get(1).unwrap_or(&1), *d.get(2).unwrap_or(&1)));
                interface.entries.push(PtxEntry { name, params, line, max_threads_per_block, required_block });
                offset += consumed;
                continue;
            }
            _ => {}
        }
        offset += word_end.max(1);
    }
    if depth != 0 {
        return Err(Error::new(ErrorKind::Format, format!("{origin}: a `{{` is never closed")));
    }
    Ok(interface)
}

impl PtxInterface {
    /// The entry named `name`; the error lists the entries and the closest name.
    pub fn entry(&self, name: &str, origin: &str) -> Result<&PtxEntry> {
        if let Some(e) = self.entries.iter().find(|e| e.name == name) {
            return Ok(e);
        }
        let names: Vec<&str> = self.entries.iter().map(|e| e.name.as_str()).collect();
        let closest = names.iter().min_by_key(|n| edit_distance(n, name)).filter(|n| edit_distance(n, name) <= 3);
        let mangled = names.iter().find(|n| cpp_base_name(n) == Some(name));
        let hint = match (mangled, closest) {
            (Some(m), _) => format!(
                "; `{m}` is `{}` compiled as C++ (its name mangled with its parameter types): declare it \
                 `extern \"C\" __global__` in the CUDA C source so that it keeps its name",
                echo(name)
            ),
            (None, Some(c)) => format!("; did you mean `{c}`?"),
            (None, None) => String::new(),
        };
        Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{origin} has no kernel `{}`: its entries are {}{hint}",
                echo(name),
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            ),
        ))
    }
}

/// The function name inside an Itanium C++ mangled name (`_Z8stencil5PKfPfii` →
/// `stencil5`; `_ZN2ns4blurEPf` → `blur`), what NVRTC and nvcc make of a `__global__` function
/// not declared `extern "C"`; `None` for a name that is not mangled.
pub fn cpp_base_name(mangled: &str) -> Option<&str> {
    let rest = mangled.strip_prefix("_Z")?;
    let (mut rest, nested) = match rest.strip_prefix('N') {
        Some(r) => (r, true),
        None => (rest, false),
    };
    let mut last = None;
    loop {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            break;
        }
        let len: usize = rest[..digits].parse().ok()?;
        let name = rest.get(digits..digits + len)?;
        last = Some(name);
        rest = &rest[digits + len..];
        if !nested {
            break;
        }
    }
    last
}

/// Levenshtein distance (characters).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::testdata::{NVCC_SM80_DEBUG_PTX, NVCC_SM90_PTX, SUITE_SHAPED_ENTRIES, SUITE_SHAPED_PTX};

    const SAXPY: &str = include_str!("saxpy.ptx");

    #[test]
    fn reads_the_saxpy_interface() {
        let i = parse_interface(SAXPY, "saxpy.ptx").unwrap();
        assert_eq!(i.version.as_deref(), Some("7.0"));
        assert_eq!(i.target.as_deref(), Some("sm_70"));
        assert_eq!(i.address_size, Some(64));
        assert_eq!(i.entries.len(), 1);
        let e = &i.entries[0];
        assert_eq!(e.name, "saxpy");
        let sig: Vec<(&str, &str, usize)> =
            e.params.iter().map(|p| (p.name.as_str(), p.ty.as_str(), p.size_bytes)).collect();
        assert_eq!(sig, vec![("n", "u32", 4), ("a", "f32", 4), ("x", "u64", 8), ("y", "u64", 8)]);
    }

    #[test]
    fn reads_modules_of_each_suite_shape() {
        // The README's PTX and modules of the research suites' shapes (fixtures in `testdata/`).
        // Every module of the suites is read by their own run on the checked device (their
        // benches' `--test` run in CI), which generates and loads each.
        let mut entries = Vec::new();
        for (name, text) in SUITE_SHAPED_PTX {
            let i = parse_interface(text, name).unwrap();
            assert!(i.version.is_some() && i.target.is_some() && i.address_size == Some(64), "{name}");
            assert!(!i.entries.is_empty(), "{name}");
            assert!(i.entries.iter().all(|e| !e.params.is_empty()), "{name}");
            entries.extend(i.entries.iter().map(|e| (e.name.clone(), e.params.len())));
        }
        let expected = [("saxpy", 4), ("init", 4), ("load_cg", 6), ("add_f16_k8", 6), ("add_f16_base", 6)];
        let expected: Vec<(String, usize)> = expected.iter().map(|(n, p)| (n.to_string(), *p)).collect();
        assert_eq!(entries, expected);
        assert_eq!(entries.len(), SUITE_SHAPED_ENTRIES);
    }

    #[test]
    fn comments_arrays_alignment_and_several_entries() {
        let text = "/* header\n.entry fake( */\n.version 8.0\n.target sm_90a, debug\n.address_size 64\n\
                    .visible .entry a(.param .align 8 .b8 s[16], // a struct\n .param .u64 .ptr .global .align 16 p)\n{ ret; }\n\
                    .entry b\n{\n { nested }\n}\n";
        let i = parse_interface(text, "t.ptx").unwrap();
        assert_eq!(i.target.as_deref(), Some("sm_90a"));
        assert_eq!(i.entries.len(), 2);
        assert_eq!(i.entries[0].params[0], PtxParam { name: "s".into(), ty: "b8".into(), size_bytes: 16, array: true });
        assert_eq!(i.entries[0].params[1].size_bytes, 8);
        assert_eq!(i.entries[0].line, 6);
        assert!(i.entries[1].params.is_empty());
    }

    #[test]
    fn a_missing_kernel_names_the_entries_and_the_closest() {
        let i = parse_interface(SAXPY, "saxpy.ptx").unwrap();
        let err = i.entry("saxpi", "saxpy.ptx").unwrap_err();
        assert!(err.message().contains("its entries are saxpy; did you mean `saxpy`?"), "{err}");
        let err = i.entry("vector_add", "saxpy.ptx").unwrap_err();
        assert!(!err.message().contains("did you mean"), "{err}");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn a_kernel_compiled_as_cpp_is_named_with_the_extern_c_fix() {
        assert_eq!(cpp_base_name("_Z8stencil5PKfPfii"), Some("stencil5"));
        assert_eq!(cpp_base_name("_ZN2ns4blurEPf"), Some("blur"));
        assert_eq!(cpp_base_name("saxpy"), None);
        assert_eq!(cpp_base_name("_Z"), None);
        assert_eq!(cpp_base_name("_Z99x"), None);
        let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry _Z8stencil5PKfPfii(\n\
                   .param .u64 _Z8stencil5PKfPfii_param_0\n)\n{\nret;\n}\n";
        let interface = parse_interface(ptx, "stencil.cu").unwrap();
        let err = interface.entry("stencil5", "CUDA C `stencil.cu`").unwrap_err();
        assert!(err.message().contains("`_Z8stencil5PKfPfii` is `stencil5` compiled as C++"), "{err}");
        assert!(err.message().contains("extern \"C\" __global__"), "{err}");
    }

    #[test]
    fn malformed_headers_are_errors_with_the_line() {
        for (text, needle) in [
            (".entry k(.param .u32 n\n{ }", "is not closed"),
            (".entry k(.param .q32 n)\n{ }", "no type"),
            (".entry k(.param .u32)\n{ }", "no name"),
            (".entry k(.param .b8 s[x])\n{ }", "bad array length"),
            (".address_size big\n", "is not 32 or 64"),
            (".entry k()\n{ ", "never closed"),
            ("}\n", "without its"),
        ] {
            let err = parse_interface(text, "m.ptx").unwrap_err();
            assert!(err.message().contains(needle), "{text:?}: {err}");
            assert!(err.message().starts_with("m.ptx"), "{err}");
        }
    }

    /// PTX that nvcc 13.0 wrote for kernels of a CUDA crate (`testdata/nvcc`, generated on
    /// the H100 machine from a source file under a path with braces): templates, structs by
    /// value, half, char, `__launch_bounds__`, a kernel without parameters, `-G` debug output.
    #[test]
    fn reads_what_nvcc_writes() {
        for (file, text) in [("kernels_sm90.ptx", NVCC_SM90_PTX), ("kernels_sm80_debug.ptx", NVCC_SM80_DEBUG_PTX)] {
            assert!(text.contains("src{1}"), "the fixture has a brace in a .file path");
            let i = parse_interface(text, file).unwrap();
            assert_eq!(i.version.as_deref(), Some("9.0"), "{file}");
            let names: Vec<&str> = i.entries.iter().map(|e| e.name.as_str()).collect();
            assert_eq!(names, ["_Z5scaleIfEvPKT_PS0_6Params", "_Z5scaleIdEvPKT_PS0_6Params", "mixed", "no_params"]);
            let sizes = |e: &PtxEntry| e.params.iter().map(|p| p.size_bytes).collect::<Vec<_>>();
            assert_eq!(sizes(&i.entries[0]), [8, 8, 8], "{file}");
            assert!(i.entries[0].params[2].array);
            assert_eq!(i.entries[0].max_threads_per_block, Some(256), "{file}");
            assert_eq!(sizes(&i.entries[2]), [2, 8, 8, 2, 1, 32, 8], "{file}");
            assert_eq!(i.entries[2].max_threads_per_block, None);
            assert!(i.entries[3].params.is_empty());
            let err = i.entry("scale", file).unwrap_err().to_string();
            assert!(err.contains("_Z5scaleIfEvPKT_PS0_6Params"), "{err}");
        }
    }

    #[test]
    fn launch_directives_are_read() {
        let ptx = ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k(.param .u32 n)\n.reqntid 32, 4\n{\nret;\n}\n";
        let e = &parse_interface(ptx, "k.ptx").unwrap().entries[0];
        assert_eq!(e.required_block, Some((32, 4, 1)));
        let bad = ptx.replace("32, 4", "0, 4");
        assert!(parse_interface(&bad, "k.ptx").unwrap_err().to_string().contains(".reqntid"));
    }
}
