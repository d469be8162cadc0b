//! The `__global__` functions of a CUDA C source, read without compiling it: what the
//! checked device knows of CUDA C where no NVRTC library is found. It finds one mistake
//! for certain: a kernel declared without `extern "C"`, whose name NVRTC mangles, so that
//! looking it up by its name fails on every GPU.
//!
//! A reader, not a compiler: comments and preprocessor lines are skipped, macros are not
//! expanded, so a kernel declared through a macro is not seen (and not judged).

/// A `__global__` function the source declares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalFunction {
    /// Its name as written.
    pub name: String,
    /// Whether it keeps that name when compiled: declared `extern "C"` (or inside an
    /// `extern "C" { … }` block), in any of its declarations, and not a template.
    pub c_linkage: bool,
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Word(String),
    Str(String),
    Punct(char),
}

/// The source without comments and preprocessor lines, as tokens.
fn tokens(source: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let chars: Vec<char> = source.chars().collect();
    let mut i = 0;
    let mut line_start = true;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if line_start && c == '#' {
            // A preprocessor line, with its backslash continuations.
            while i < chars.len() && !(chars[i] == '\n' && chars[i - 1] != '\\') {
                i += 1;
            }
            continue;
        }
        line_start = false;
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
        } else if c == '"' || c == '\'' {
            let mut text = String::new();
            i += 1;
            while i < chars.len() && chars[i] != c && chars[i] != '\n' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if let Some(&ch) = chars.get(i) {
                    text.push(ch);
                }
                i += 1;
            }
            i += 1;
            out.push(Token::Str(text));
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Word(chars[start..i].iter().collect()));
        } else {
            out.push(Token::Punct(c));
            i += 1;
        }
    }
    out
}

/// The `__global__` functions `source` declares, each once (in the order first seen).
pub fn global_functions(source: &str) -> Vec<GlobalFunction> {
    let tokens = tokens(source);
    let mut found: Vec<GlobalFunction> = Vec::new();
    // Open blocks: whether each is an `extern "C" { … }`.
    let mut blocks: Vec<bool> = Vec::new();
    // Since the last `;`, `{` or `}`: `extern "C"` seen, `template` seen.
    let (mut extern_c, mut template) = (false, false);
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Word(w) if w == "extern" && tokens.get(i + 1) == Some(&Token::Str("C".into())) => {
                if tokens.get(i + 2) == Some(&Token::Punct('{')) {
                    blocks.push(true);
                    (extern_c, template) = (false, false);
                    i += 3;
                    continue;
                }
                extern_c = true;
                i += 2;
                continue;
            }
            Token::Word(w) if w == "template" => template = true,
            Token::Word(w) if w == "__global__" => {
                if let Some(name) = function_name(&tokens[i + 1..]) {
                    let c_linkage = !template && (extern_c || blocks.iter().any(|&b| b));
                    match found.iter_mut().find(|f| f.name == name) {
                        Some(f) => f.c_linkage |= c_linkage,
                        None => found.push(GlobalFunction { name, c_linkage }),
                    }
                }
            }
            Token::Punct('{') => {
                blocks.push(false);
                (extern_c, template) = (false, false);
            }
            Token::Punct('}') => {
                blocks.pop();
                (extern_c, template) = (false, false);
            }
            Token::Punct(';') => (extern_c, template) = (false, false),
            _ => {}
        }
        i += 1;
    }
    found
}

/// The name of the function whose declaration `rest` continues (after `__global__`): the
/// word right before the first `(` that is not an attribute's (`__launch_bounds__(…)`).
fn function_name(rest: &[Token]) -> Option<String> {
    let mut last_word: Option<&str> = None;
    let mut i = 0;
    while i < rest.len() {
        match &rest[i] {
            Token::Word(w) if w.starts_with("__") && rest.get(i + 1) == Some(&Token::Punct('(')) => {
                // An attribute with arguments: skip its parentheses.
                let mut depth = 0;
                i += 1;
                while i < rest.len() {
                    match rest[i] {
                        Token::Punct('(') => depth += 1,
                        Token::Punct(')') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            Token::Word(w) => last_word = Some(w),
            Token::Punct('(') => return last_word.map(str::to_string),
            Token::Punct(';' | '{' | '}') => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linkage(source: &str) -> Vec<(String, bool)> {
        global_functions(source).into_iter().map(|f| (f.name, f.c_linkage)).collect()
    }

    #[test]
    fn extern_c_before_the_kernel_keeps_its_name() {
        let src = "extern \"C\" __global__ void saxpy(unsigned n, float a, const float *x, float *y) { y[0] = a; }";
        assert_eq!(linkage(src), vec![("saxpy".to_string(), true)]);
    }

    #[test]
    fn a_kernel_without_extern_c_is_mangled() {
        let src = "// saxpy\n__global__ void saxpy(unsigned n) { if (n) { return; } }\n";
        assert_eq!(linkage(src), vec![("saxpy".to_string(), false)]);
    }

    #[test]
    fn an_extern_c_block_gives_its_kernels_c_linkage_and_ends_with_its_brace() {
        let src = "extern \"C\" {\n__global__ void a(float *x) { x[0] = 1; }\n__global__ void __launch_bounds__(256, 2) b(float *x) {}\n}\n__global__ void c(float *x) {}";
        assert_eq!(linkage(src), vec![("a".to_string(), true), ("b".to_string(), true), ("c".to_string(), false)]);
    }

    #[test]
    fn a_declaration_with_extern_c_gives_the_later_definition_its_linkage() {
        let src = "extern \"C\" __global__ void k(int n);\n__global__ void k(int n) {}";
        assert_eq!(linkage(src), vec![("k".to_string(), true)]);
    }

    #[test]
    fn templates_comments_strings_and_preprocessor_lines_are_read_as_the_compiler_would() {
        let src = "#include <cuda_fp16.h>\n#define KERNEL extern \"C\" __global__ \\\n  void\n\
                   /* __global__ void hidden(int) */\n\
                   template <typename T> __global__ void scale(T *x) {}\n\
                   extern \"C\" __global__ void __launch_bounds__(128) name_with_brace(const char *s = \"{\") {}\n";
        assert_eq!(linkage(src), vec![("scale".to_string(), false), ("name_with_brace".to_string(), true)]);
    }

    #[test]
    fn a_namespace_without_extern_c_is_mangled_and_braces_balance() {
        let src =
            "namespace ns { __global__ void blur(float *x) { { } } }\nextern \"C\" __global__ void after(void) {}";
        assert_eq!(linkage(src), vec![("blur".to_string(), false), ("after".to_string(), true)]);
    }
}
