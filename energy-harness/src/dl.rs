//! Whether a shared library (libcuda, libnvrtc) can be loaded, asked of the dynamic loader
//! directly. cudarc answers this only when it loads its libraries at run time (its
//! `dynamic-loading`); a crate beside the harness (candle's CUDA backend) may switch the one
//! cudarc of the build to `dynamic-linking`, and the harness must build and answer the same.

use std::ffi::CString;

/// The names a library `lib` (`"cuda"`, `"nvrtc"`) goes by on Linux: the development
/// symlink and the sonames of the major versions a driver 470-580 install or NVIDIA's
/// wheels hold.
fn candidates(lib: &str) -> Vec<String> {
    let mut names = vec![format!("lib{lib}.so")];
    names.extend(["1", "13", "12", "11"].iter().map(|major| format!("lib{lib}.so.{major}")));
    names
}

/// Whether the dynamic loader can open one of `lib`'s names (already loaded counts: a
/// library preloaded by path is found by its soname). The handle is released again.
pub fn library_loadable(lib: &str) -> bool {
    candidates(lib).iter().any(|name| {
        let Ok(c_name) = CString::new(name.as_str()) else { return false };
        // SAFETY: dlopen of a valid C string; a handle it returns is closed right away.
        unsafe {
            let handle = libc::dlopen(c_name.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL);
            if handle.is_null() {
                false
            } else {
                libc::dlclose(handle);
                true
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_present_library_is_loadable_and_a_made_up_one_is_not() {
        // Every Rust program on glibc links libgcc_s.so.1 (unwinding): found by its soname.
        assert!(library_loadable("gcc_s"));
        assert!(!library_loadable("no-such-library-energy-harness"));
    }
}
