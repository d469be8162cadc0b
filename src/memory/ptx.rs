//! The kernel template every memory kernel's PTX is generated from (`ptx/memory/`).
//!
//! LOAD kernels chase 64-bit pointers (Delestrac et al. 2024, Listing 1): each block owns a
//! region of `sub` 8-byte elements; element `e` holds the address of element
//! `(e + stride) mod sub` of the same region, `stride = max(4, threads per block)` elements,
//! so a step of the block's threads reads `threads` consecutive elements (one 32-byte sector
//! per 4 threads, fully coalesced) and a thread's next address is its load's result. A
//! warm-up loop walks `warm` steps (one pass brings the region into the targeted level),
//! then the measurement loop runs `iterations` times [`LOAD_UNROLL`] dependent loads. With
//! `iterations = 0` the same kernel is the warm-up only: Delestrac's subtraction. The
//! pointer is stored at the end (its offset from the region's start), so nothing is dead.
//!
//! - `load_cached`: `ld.global` (a weak load, cached in L1 and L2: ptxas makes `.ca` a
//!   strong SM-scope load instead): the L1 level;
//! - `load_cg`: `ld.global.cg` (L2 only): the L2 level, and DRAM with a table far beyond L2;
//! - `load_shared`: the block fills its region of dynamic shared memory with the chain
//!   (the fill is its warm-up), then chases it with 64-bit shared loads (`ld.shared.v2.u32`,
//!   the next address the sum of the two words, so the load stays a 64-bit `LDS.64`);
//! - `load_div_cached`, `load_div_cg`: LOAD+DIV, each load followed by `xor` and `div.u32` of a
//!   32-bit accumulator with the pointer's low word (Delestrac's cross-validation);
//! - `store_cg`, `store_shared`: STORE, [`STORE_UNROLL`] stores per iteration to addresses
//!   `STORE_THREADS * 8` bytes apart (immediate offsets, so no arithmetic per store), the
//!   region walked in chunks with wrap-around; the warm-up is a pass of loads over the region;
//! - `init`: writes the chain of every region of a global table.
//!
//! Loops are kept rolled (`.pragma "nounroll"`) so their machine code can be checked.

/// Dependent loads per measurement-loop iteration.
pub const LOAD_UNROLL: u32 = 32;
/// Stores per measurement-loop iteration.
pub const STORE_UNROLL: u32 = 32;
/// Threads per block the STORE kernels are compiled for (their address step, `8 x` this, is
/// an immediate); a block of a divisor of it writes that share of each step.
pub const STORE_THREADS: u32 = 128;
/// Bytes of one sector, the access granularity of L1, L2 and DRAM.
pub const SECTOR_BYTES: u64 = 32;
/// Bytes of one element (a 64-bit pointer).
pub const ELEMENT_BYTES: u64 = 8;

/// The memory kernels: one PTX file each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum MemoryKernel {
    /// Pointer chase with `ld.global` (cached in L1).
    LoadCached,
    /// Pointer chase with `ld.global.cg`.
    LoadCg,
    /// Pointer chase in shared memory.
    LoadShared,
    /// `ld.global` chase with a `div.u32` after each load.
    LoadDivCached,
    /// `ld.global.cg` chase with a `div.u32` after each load.
    LoadDivCg,
    /// Strided `st.global.cg`.
    StoreCg,
    /// Strided `st.shared`.
    StoreShared,
    /// Writes the chain of a global table.
    Init,
}

impl MemoryKernel {
    /// Every kernel, in file order.
    pub const ALL: [MemoryKernel; 8] = [
        MemoryKernel::LoadCached,
        MemoryKernel::LoadCg,
        MemoryKernel::LoadShared,
        MemoryKernel::LoadDivCached,
        MemoryKernel::LoadDivCg,
        MemoryKernel::StoreCg,
        MemoryKernel::StoreShared,
        MemoryKernel::Init,
    ];

    /// The entry (and file stem).
    pub fn entry(self) -> &'static str {
        match self {
            MemoryKernel::LoadCached => "load_cached",
            MemoryKernel::LoadCg => "load_cg",
            MemoryKernel::LoadShared => "load_shared",
            MemoryKernel::LoadDivCached => "load_div_cached",
            MemoryKernel::LoadDivCg => "load_div_cg",
            MemoryKernel::StoreCg => "store_cg",
            MemoryKernel::StoreShared => "store_shared",
            MemoryKernel::Init => "init",
        }
    }

    /// `ptx/memory/<entry>.ptx`.
    pub fn file_name(self) -> String {
        format!("{}.ptx", self.entry())
    }

    /// Whether the kernel divides after each load.
    pub fn divides(self) -> bool {
        matches!(self, MemoryKernel::LoadDivCached | MemoryKernel::LoadDivCg)
    }

    /// Whether the kernel stores (else it loads, or initializes).
    pub fn stores(self) -> bool {
        matches!(self, MemoryKernel::StoreCg | MemoryKernel::StoreShared)
    }

    /// Whether the kernel works in shared memory.
    pub fn shared(self) -> bool {
        matches!(self, MemoryKernel::LoadShared | MemoryKernel::StoreShared)
    }

    /// Measured accesses per measurement-loop iteration and thread.
    pub fn accesses_per_iteration(self) -> u32 {
        match self {
            MemoryKernel::StoreCg | MemoryKernel::StoreShared => STORE_UNROLL,
            MemoryKernel::Init => 0,
            _ => LOAD_UNROLL,
        }
    }

    /// Instructions of the measurement loop besides the access itself, per access: the
    /// shared chase adds the two words of each element (one `add.u32`) to keep its loads
    /// 64-bit; the DIV kernels' divisions are counted apart.
    pub fn other_instructions_per_access(self) -> u32 {
        u32::from(self == MemoryKernel::LoadShared)
    }

    /// Bytes each thread stores in `out`.
    pub fn output_bytes_per_thread(self) -> u64 {
        if self.divides() || self.stores() {
            16
        } else {
            8
        }
    }

    /// The SASS opcode class of the measured access (for the machine-code check).
    pub fn access_class(self) -> Option<&'static str> {
        match self {
            MemoryKernel::LoadCached | MemoryKernel::LoadCg | MemoryKernel::LoadDivCached | MemoryKernel::LoadDivCg => {
                Some("LDG")
            }
            MemoryKernel::LoadShared => Some("LDS"),
            MemoryKernel::StoreCg => Some("STG"),
            MemoryKernel::StoreShared => Some("STS"),
            MemoryKernel::Init => None,
        }
    }
}

/// Opens the measurement loop: `%r3` iterations (none: straight to `DONE`), counted in `%r8`.
const MEASURE_OPEN: &str = "    mov.u32 %r8, 0;
    setp.eq.u32 %p1, %r3, 0;
    @%p1 bra DONE;
MEASURE:
    .pragma \"nounroll\";
";

/// Closes the measurement loop opened by [`MEASURE_OPEN`].
const MEASURE_CLOSE: &str = "    add.u32 %r8, %r8, 1;
    setp.lt.u32 %p1, %r8, %r3;
    @%p1 bra MEASURE;
DONE:
";

const HEADER: &str = ".version 7.8\n.target sm_80\n.address_size 64\n";

/// The PTX text of `kernel`.
pub fn generate(kernel: MemoryKernel) -> String {
    let mut s = format!(
        "//\n// Generated by kernel_energy::memory::ptx (`cargo run -p energy-suites --example generate_memory_ptx`): do not edit.\n// Kernel `{}` of the memory suite (`cargo bench --bench memory`).\n//\n{HEADER}\n",
        kernel.entry()
    );
    match kernel {
        MemoryKernel::Init => s.push_str(&init()),
        MemoryKernel::LoadShared => s.push_str(&load_shared()),
        MemoryKernel::StoreCg | MemoryKernel::StoreShared => s.push_str(&store(kernel)),
        _ => s.push_str(&load_global(kernel)),
    }
    s
}

fn init() -> String {
    "// init(table, elements, sub, stride): table[e] = &table[region(e) + (e mod sub + stride) mod sub].
.visible .entry init(
    .param .u64 table,
    .param .u64 elements,
    .param .u64 sub,
    .param .u64 stride
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<5>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [table];
    ld.param.u64 %rd2, [elements];
    ld.param.u64 %rd3, [sub];
    ld.param.u64 %rd4, [stride];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %nctaid.x;
    mul.wide.u32 %rd5, %r1, %r2;
    cvt.u64.u32 %rd6, %r3;
    add.u64 %rd5, %rd5, %rd6;
    mul.wide.u32 %rd7, %r4, %r2;
    setp.ge.u64 %p1, %rd5, %rd2;
    @%p1 bra DONE;
NEXT:
    rem.u64 %rd8, %rd5, %rd3;
    sub.u64 %rd9, %rd5, %rd8;
    add.u64 %rd10, %rd8, %rd4;
    setp.ge.u64 %p1, %rd10, %rd3;
    @%p1 sub.u64 %rd10, %rd10, %rd3;
    add.u64 %rd11, %rd9, %rd10;
    shl.b64 %rd11, %rd11, 3;
    add.u64 %rd11, %rd1, %rd11;
    shl.b64 %rd12, %rd5, 3;
    add.u64 %rd12, %rd1, %rd12;
    st.global.u64 [%rd12], %rd11;
    add.u64 %rd5, %rd5, %rd7;
    setp.lt.u64 %p1, %rd5, %rd2;
    @%p1 bra NEXT;
DONE:
    ret;
}
"
    .to_string()
}

/// The index of this thread in the grid into `%r9`, then `%rd7 = out + index * bytes`.
fn output_address(bytes: u64) -> String {
    format!(
        "    mov.u32 %r4, %ctaid.x;
    mov.u32 %r6, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.u32 %r9, %r4, %r6, %r5;
    mul.wide.u32 %rd6, %r9, {bytes};
    add.u64 %rd7, %rd2, %rd6;
"
    )
}

fn load_global(kernel: MemoryKernel) -> String {
    let op = match kernel {
        MemoryKernel::LoadCached | MemoryKernel::LoadDivCached => "ld.global.u64",
        _ => "ld.global.cg.u64",
    };
    let divides = kernel.divides();
    let mut s = format!(
        "// {entry}(table, out, sub, warm, iterations, divisor): `warm` then `iterations` x {LOAD_UNROLL} dependent `{op}`{div};
// out[thread] = the pointer's byte offset from the block's region{div_out}.
.visible .entry {entry}(
    .param .u64 table,
    .param .u64 out,
    .param .u32 sub,
    .param .u32 warm,
    .param .u32 iterations,
    .param .u32 divisor
)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [table];
    ld.param.u64 %rd2, [out];
    ld.param.u32 %r1, [sub];
    ld.param.u32 %r2, [warm];
    ld.param.u32 %r3, [iterations];
    ld.param.u32 %r12, [divisor];
    mov.u32 %r4, %ctaid.x;
    mov.u32 %r5, %tid.x;
    mul.wide.u32 %rd3, %r4, %r1;
    shl.b64 %rd3, %rd3, 3;
    add.u64 %rd8, %rd1, %rd3;
    mul.wide.u32 %rd4, %r5, 8;
    add.u64 %rd5, %rd8, %rd4;
    mov.u32 %r11, 0;
    mov.u32 %r7, 0;
    setp.eq.u32 %p1, %r2, 0;
    @%p1 bra WARM_DONE;
WARM:
    .pragma \"nounroll\";
    {op} %rd5, [%rd5];
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p1, %r7, %r2;
    @%p1 bra WARM;
WARM_DONE:
{MEASURE_OPEN}",
        entry = kernel.entry(),
        div = if divides { ", each followed by acc = (acc xor low word of the pointer) / divisor" } else { "" },
        div_out = if divides { "; out[thread] + 8 = acc" } else { "" },
    );
    for _ in 0..LOAD_UNROLL {
        s.push_str(&format!("    {op} %rd5, [%rd5];\n"));
        if divides {
            s.push_str("    cvt.u32.u64 %r10, %rd5;\n    xor.b32 %r11, %r11, %r10;\n    div.u32 %r11, %r11, %r12;\n");
        }
    }
    s.push_str(MEASURE_CLOSE);
    s.push_str(&output_address(kernel.output_bytes_per_thread()));
    s.push_str("    sub.u64 %rd9, %rd5, %rd8;\n    st.global.u64 [%rd7], %rd9;\n");
    if divides {
        s.push_str("    cvt.u64.u32 %rd10, %r11;\n    st.global.u64 [%rd7+8], %rd10;\n");
    }
    s.push_str("    ret;\n}\n");
    s
}

fn load_shared() -> String {
    let mut s = format!(
        "// load_shared(out, sub, stride, iterations): the block writes the chain of its `sub` elements of
// dynamic shared memory (its warm-up), then `iterations` x {LOAD_UNROLL} dependent 64-bit loads
// (`ld.shared.v2.u32`, one `LDS.64`). Element e holds two words: hi = a salt made from e, lo =
// the 32-bit shared address of element (e + stride) mod sub, less hi; the next address is
// lo + hi, so both halves are used and ptxas cannot narrow the load to 32 bits (the cost: one
// `add.u32` per load). out[thread] = the pointer's byte offset from the region.
.extern .shared .align 8 .b8 region[];

.visible .entry load_shared(
    .param .u64 out,
    .param .u32 sub,
    .param .u32 stride,
    .param .u32 iterations
)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd2, [out];
    ld.param.u32 %r1, [sub];
    ld.param.u32 %r2, [stride];
    ld.param.u32 %r3, [iterations];
    mov.u32 %r13, region;
    mov.u32 %r5, %tid.x;
    mov.u32 %r6, %ntid.x;
    mov.u32 %r7, %r5;
    setp.ge.u32 %p1, %r7, %r1;
    @%p1 bra FILLED;
FILL:
    .pragma \"nounroll\";
    add.u32 %r10, %r7, %r2;
    setp.ge.u32 %p1, %r10, %r1;
    @%p1 sub.u32 %r10, %r10, %r1;
    mad.lo.u32 %r14, %r10, 8, %r13;
    mul.lo.u32 %r15, %r7, -1640531535;
    or.b32 %r15, %r15, 1;
    sub.u32 %r14, %r14, %r15;
    mad.lo.u32 %r16, %r7, 8, %r13;
    st.shared.v2.u32 [%r16], {{%r14, %r15}};
    add.u32 %r7, %r7, %r6;
    setp.lt.u32 %p1, %r7, %r1;
    @%p1 bra FILL;
FILLED:
    bar.sync 0;
    mad.lo.u32 %r17, %r5, 8, %r13;
{MEASURE_OPEN}"
    );
    for _ in 0..LOAD_UNROLL {
        s.push_str("    ld.shared.v2.u32 {%r20, %r21}, [%r17];\n    add.u32 %r17, %r20, %r21;\n");
    }
    s.push_str(MEASURE_CLOSE);
    s.push_str(&output_address(8));
    s.push_str(
        "    sub.u32 %r18, %r17, %r13;\n    cvt.u64.u32 %rd9, %r18;\n    st.global.u64 [%rd7], %rd9;\n    ret;\n}\n",
    );
    s
}

fn store(kernel: MemoryKernel) -> String {
    let shared = kernel.shared();
    let step = STORE_THREADS as u64 * ELEMENT_BYTES;
    let chunk = step * STORE_UNROLL as u64;
    let (ld, st) = if shared { ("ld.shared.u64", "st.shared.u64") } else { ("ld.global.cg.u64", "st.global.cg.u64") };
    let (params, region) = if shared {
        (
            "    .param .u64 out,\n    .param .u32 sub,\n    .param .u32 warm,\n    .param .u32 iterations\n",
            "    mov.u64 %rd8, region;\n".to_string(),
        )
    } else {
        (
            "    .param .u64 buffer,\n    .param .u64 out,\n    .param .u32 sub,\n    .param .u32 warm,\n    .param .u32 iterations\n",
            "    ld.param.u64 %rd1, [buffer];\n    mul.wide.u32 %rd3, %r4, %r1;\n    shl.b64 %rd3, %rd3, 3;\n    add.u64 %rd8, %rd1, %rd3;\n"
                .to_string(),
        )
    };
    let mut s = format!(
        "// {entry}({args}out, sub, warm, iterations), for blocks of {STORE_THREADS} threads: `warm` loads {step} bytes
// apart over the block's region of `sub` elements (with wrap-around), then `iterations` x {STORE_UNROLL}
// `{st}` {step} bytes apart, the region walked in chunks of {chunk} bytes (sub is a multiple);
// out[thread] = the final byte offset in the region; out[thread] + 8 = the xor of the loaded
// values (it keeps the warm-up's loads alive; the region holds earlier launches' stores).
{decl}.visible .entry {entry}(
{params})
{{
    .reg .pred %p<2>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd2, [out];
    ld.param.u32 %r1, [sub];
    ld.param.u32 %r2, [warm];
    ld.param.u32 %r3, [iterations];
    mov.u32 %r4, %ctaid.x;
    mov.u32 %r5, %tid.x;
{region}    mul.wide.u32 %rd10, %r1, 8;
    mul.wide.u32 %rd5, %r5, 8;
    mov.u64 %rd11, 0;
    mov.u32 %r7, 0;
    setp.eq.u32 %p1, %r2, 0;
    @%p1 bra WARM_DONE;
WARM:
    .pragma \"nounroll\";
    add.u64 %rd12, %rd8, %rd5;
    {ld} %rd13, [%rd12];
    xor.b64 %rd11, %rd11, %rd13;
    add.u64 %rd5, %rd5, {step};
    setp.ge.u64 %p1, %rd5, %rd10;
    @%p1 sub.u64 %rd5, %rd5, %rd10;
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p1, %r7, %r2;
    @%p1 bra WARM;
WARM_DONE:
{MEASURE_OPEN}    add.u64 %rd12, %rd8, %rd5;
",
        entry = kernel.entry(),
        args = if shared { "" } else { "buffer, " },
        decl = if shared { ".extern .shared .align 8 .b8 region[];\n\n" } else { "" },
    );
    for j in 0..STORE_UNROLL as u64 {
        if j == 0 {
            s.push_str(&format!("    {st} [%rd12], %rd12;\n"));
        } else {
            s.push_str(&format!("    {st} [%rd12+{}], %rd12;\n", j * step));
        }
    }
    s.push_str(&format!(
        "    add.u64 %rd5, %rd5, {chunk};
    setp.ge.u64 %p1, %rd5, %rd10;
    @%p1 sub.u64 %rd5, %rd5, %rd10;
{MEASURE_CLOSE}"
    ));
    s.push_str(&output_address(16));
    s.push_str("    st.global.u64 [%rd7], %rd5;\n    st.global.u64 [%rd7+8], %rd11;\n    ret;\n}\n");
    s
}
