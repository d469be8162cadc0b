//! The machine code each measured kernel ran: the cubin the module was loaded from (the
//! driver JIT's, read back through the driver's linker), its hash, and, where `cuobjdump`
//! is found, the SASS of the kernel's loop by class and by pipe (the bound check's input).

use super::*;
use crate::instructions::bound::pipe_counts;
use crate::sass::{disassemble, find_tool, histogram, loop_body, Tool};

/// Why a kernel's machine code is not read on the checked device (`setup_kernel`).
pub(super) const NOT_READ_ON_THE_CHECKED_DEVICE: &str =
    "not read on the checked device: nothing is measured there, and tests/instruction_ptx.rs checks each chain in the same code";

/// What is known of a kernel's machine code.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineCode {
    /// Where it came from: `driver JIT` (the cubin the driver compiled and loaded) or
    /// `ptxas` (the checked device); empty when the module gave none.
    pub source: String,
    /// FNV-1a hash of the cubin, hex.
    pub cubin_hash: Option<String>,
    /// SASS classes in one iteration of the kernel's loop.
    pub loop_classes: BTreeMap<String, i64>,
    /// SASS per pipe in one iteration of the loop (`issue`: all; see `bound::pipes_of`).
    pub loop_pipes: BTreeMap<String, i64>,
    /// Why the SASS was not read, where it was not.
    pub not_read: Option<String>,
}

impl MachineCode {
    /// Whether the loop's SASS was read.
    pub fn loop_was_read(&self) -> bool {
        self.not_read.is_none() && !self.loop_pipes.is_empty()
    }
}

/// Disassemblies already made in this process, by cubin hash.
type SassCache = BTreeMap<String, std::result::Result<BTreeMap<String, Vec<crate::sass::SassInstruction>>, String>>;
static DISASSEMBLED: Mutex<SassCache> = Mutex::new(BTreeMap::new());

/// Reads the machine code of `entry` in `cubin` (`None`: the module gave none); the cubin
/// is kept under `dir` as `<file>.<level>.cubin` for anyone to disassemble again.
pub(super) fn read_machine_code(
    cubin: Option<&[u8]>,
    source: &str,
    entry: &str,
    keep_as: Option<PathBuf>,
) -> MachineCode {
    let Some(cubin) = cubin else {
        return MachineCode { not_read: Some("the module gave no machine code".into()), ..MachineCode::default() };
    };
    let hash = energy_results::hash::content_hash(cubin);
    let mut code = MachineCode { source: source.to_string(), cubin_hash: Some(hash.clone()), ..MachineCode::default() };
    if let Some(path) = &keep_as {
        if !path.exists() {
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = write_atomically(path, cubin);
        }
    }
    let functions = {
        let mut cache = DISASSEMBLED.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .entry(hash.clone())
            .or_insert_with(|| {
                let tool = find_tool(Tool::Cuobjdump)?;
                let file = std::env::temp_dir().join(format!("energy-suite-{}-{hash}.cubin", std::process::id()));
                std::fs::write(&file, cubin).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
                let functions = disassemble(&tool, &file);
                let _ = std::fs::remove_file(&file);
                functions
            })
            .clone()
    };
    match functions {
        Err(e) => code.not_read = Some(e),
        Ok(functions) => match functions.get(entry).and_then(|f| loop_body(f)) {
            Some(body) => {
                code.loop_classes = histogram(body);
                code.loop_pipes = pipe_counts(body);
            }
            None => code.not_read = Some(format!("no loop found in the SASS of {entry}")),
        },
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instructions::{catalog, file_name};
    use crate::sass::{assemble, tools_for_tests, PtxasOpt};

    /// The suite on a GPU reads the loop of each kernel from the cubin its module was
    /// loaded from; here from a cubin ptxas made of a catalog file (the checked device
    /// does not read it: `setup_kernel`).
    #[test]
    fn the_loop_of_each_variant_is_read_from_its_cubin() {
        let Some((ptxas, _)) = tools_for_tests() else { return };
        let dir = tempfile::tempdir().unwrap();
        let instruction = catalog().into_iter().find(|i| i.helper.is_none()).expect("a chain without a helper");
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ptx/instructions").join(file_name(&instruction));
        let cubin = std::fs::read(assemble(&ptxas, &path, "sm_90", PtxasOpt::O3, dir.path()).unwrap()).unwrap();
        let kept = dir.path().join("kept.cubin");
        let issued = |variant: Variant| {
            let code = read_machine_code(Some(&cubin), "ptxas", &entry_name(&instruction, variant), Some(kept.clone()));
            assert!(code.loop_was_read(), "{variant:?}: {:?}", code.not_read);
            assert_eq!(code.cubin_hash.as_deref(), Some(energy_results::hash::content_hash(&cubin).as_str()));
            code.loop_pipes["issue"]
        };
        let (base, short, long) = (issued(Variant::Base), issued(Variant::Chain(8)), issued(Variant::Chain(16)));
        assert!(
            base > 0 && short > base && long > short,
            "issued per iteration: base {base}, K=8 {short}, K=16 {long}"
        );
        assert_eq!(std::fs::read(&kept).unwrap(), cubin, "the cubin is kept where asked");
        let missing = read_machine_code(Some(&cubin), "ptxas", "no_such_entry", None);
        assert!(!missing.loop_was_read() && missing.not_read.is_some());
        assert!(read_machine_code(None, "ptxas", "any", None).not_read.is_some());
    }
}
