//! PTX the CUDA layer's unit tests read, compiled into the test binary so that the tests
//! pass in the published crate too (which holds `src/` alone, not `tests/` nor the
//! repository's other folders). Each file says where it was copied from.

/// The README's saxpy and real modules of the instruction and memory suites' shapes (copied
/// from the suites' generated PTX, the instruction module trimmed to two entries; each file's
/// first line says which): `(name, PTX text)`.
pub(crate) const SUITE_SHAPED_PTX: [(&str, &str); 4] = [
    ("saxpy.ptx", include_str!("../saxpy.ptx")),
    ("memory_init.ptx", include_str!("memory_init.ptx")),
    ("memory_load_cg.ptx", include_str!("memory_load_cg.ptx")),
    ("instruction_add_f16.ptx", include_str!("instruction_add_f16.ptx")),
];

/// The number of `.entry` kernels in [`SUITE_SHAPED_PTX`]: saxpy, init, load_cg, and the
/// instruction module's two.
pub(crate) const SUITE_SHAPED_ENTRIES: usize = 5;

/// PTX that nvcc 13.0 wrote for sm_90 from kernels of a CUDA crate (generated on the H100
/// machine from a source file under a path with braces): templates, structs by value, half,
/// char, `__launch_bounds__`, a kernel without parameters.
pub(crate) const NVCC_SM90_PTX: &str = include_str!("nvcc/kernels_sm90.ptx");

/// The same kernels compiled by nvcc 13.0 for sm_80 with `-G` (debug output).
pub(crate) const NVCC_SM80_DEBUG_PTX: &str = include_str!("nvcc/kernels_sm80_debug.ptx");
