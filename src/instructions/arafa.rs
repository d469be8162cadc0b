//! Arafa et al. (2020), Table I: energy per instruction on a TITAN V (Volta) with one block
//! of one thread, for the instructions of this suite. Values as printed, for the optimized
//! (-O3) and non-optimized (-O0) builds, each as measured through PAPI and through the
//! authors' MTSM (their better method). The caption reads "in (j)"; the figures are nJ
//! (0.0064 J, or µJ, per add would be kilowatts; nJ puts a Volta add at 6.4 pJ, the order of
//! today's figures). With one thread a warp-instruction is one thread-instruction.

/// One row of Table I for the Volta GPU, nJ per instruction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TableIRow {
    /// The row's label in the paper.
    pub label: &'static str,
    /// Optimized (-O3): PAPI, MTSM.
    pub optimized: (f64, f64),
    /// Non-optimized (-O0): PAPI, MTSM.
    pub non_optimized: (f64, f64),
}

const fn row(label: &'static str, optimized: (f64, f64), non_optimized: (f64, f64)) -> TableIRow {
    TableIRow { label, optimized, non_optimized }
}

const INT_ADD: TableIRow = row("add / sub / min / max", (0.0064, 0.0012), (0.2531, 0.2384));
const INT_MUL: TableIRow = row("mul / mad", (0.0092, 0.0014), (0.5228, 0.4912));
const S_DIV: TableIRow = row("{s} div", (4.2489, 4.0660), (27.4008, 27.0584));
const S_REM: TableIRow = row("{s} rem", (4.2100, 4.0138), (25.4413, 25.1175));
const ABS: TableIRow = row("abs", (0.0647, 0.0621), (1.4263, 1.4013));
const U_DIV: TableIRow = row("{u} div", (3.9254, 3.8706), (20.4411, 20.2517));
const U_REM: TableIRow = row("{u} rem", (3.9587, 3.9471), (19.6811, 19.2906));
const LOGIC: TableIRow = row("and / or / not / xor", (0.0064, 0.0012), (0.2531, 0.2384));
const CNOT: TableIRow = row("cnot", (0.0071, 0.0077), (2.3421, 2.3174));
const SHIFT: TableIRow = row("shl / shr", (0.0064, 0.0012), (0.2531, 0.2384));
const F32_ADD: TableIRow = row("fp32 add / sub / min / max", (0.0064, 0.0012), (0.2531, 0.2384));
const F32_MUL: TableIRow = row("fp32 mul / mad / fma", (0.0021, 0.0014), (0.4874, 0.4797));
const F32_DIV: TableIRow = row("fp32 div", (5.1096, 5.0355), (34.1050, 33.3816));
const F64_ADD: TableIRow = row("fp64 add / sub / min / max", (0.3608, 0.3567), (0.5158, 0.5114));
const F64_DIV: TableIRow = row("fp64 div", (3.7249, 3.6828), (31.0212, 30.4121));
const F16: TableIRow = row("fp16 add / sub / mul", (0.0924, 0.0624), (0.5027, 0.4656));
const ADDC: TableIRow = row("add.cc / addc / sub.cc", (0.0669, 0.0535), (0.5187, 0.4938));
const SUBC: TableIRow = row("subc", (0.1006, 0.089), (0.9889, 0.952467));
const MADC: TableIRow = row("mad.cc / madc", (0.0730, 0.0631), (0.5165, 0.5043));
const RCP: TableIRow = row("rcp", (2.4265, 2.4270), (10.2930, 10.0538));
const SQRT: TableIRow = row("sqrt", (2.4349, 2.4219), (10.5023, 10.2700));
const APPROX_SQRT: TableIRow = row("approx.sqrt", (1.2311, 1.2076), (8.3867, 8.2517));
const RSQRT: TableIRow = row("rsqrt", (1.2488, 1.2432), (8.3784, 8.2320));
const SIN_COS: TableIRow = row("sin / cos", (0.5887, 0.5867), (1.0046, 0.9788));
const LG2: TableIRow = row("lg2", (1.2357, 1.2287), (8.4058, 8.2500));
const EX2: TableIRow = row("ex2", (0.4798, 0.4709), (7.3144, 7.2030));
const MUL24: TableIRow = row("mul24() / mad24()", (0.2263, 0.2119), (2.3732, 2.3249));
const POPC: TableIRow = row("popc()", (0.3968, 0.3990), (1.4984, 1.4601));
const CLZ: TableIRow = row("clz()", (0.5683, 0.5657), (0.9145, 0.8961));

/// The Table I row (Volta) that covers the suite's instruction `stem`, if one does.
pub fn volta_row(stem: &str) -> Option<TableIRow> {
    Some(match stem.trim_end_matches("_quiet") {
        "add_u32" | "sub_u32" | "min_s32" | "max_u32" | "neg_s32" | "add_u64" => INT_ADD,
        "mul_lo_u32" | "mad_lo_u32" | "mul_hi_u32" | "mul_lo_u64" => INT_MUL,
        "div_s32" | "div_s64" => S_DIV,
        "rem_s32" | "rem_s64" => S_REM,
        "abs_s32" => ABS,
        "div_u32" | "div_u64" => U_DIV,
        "rem_u32" | "rem_u64" => U_REM,
        "and_b32" | "or_b32" | "xor_b32" | "not_b32" => LOGIC,
        "cnot_b32" => CNOT,
        "shl_shr_b32" => SHIFT,
        "add_f32" | "min_f32" | "max_f32" => F32_ADD,
        "mul_f32" | "fma_f32" => F32_MUL,
        "div_rn_f32" | "div_approx_f32" => F32_DIV,
        "add_f64" => F64_ADD,
        "div_rn_f64" => F64_DIV,
        "add_f16" | "mul_f16" => F16,
        "addc_u32" => ADDC,
        "subc_u32" => SUBC,
        "madc_u32" => MADC,
        "rcp_rn_f32" | "rcp_approx_f32" => RCP,
        "sqrt_rn_f32" => SQRT,
        "sqrt_approx_f32" => APPROX_SQRT,
        "rsqrt_approx_f32" => RSQRT,
        "sin_approx_f32" | "cos_approx_f32" => SIN_COS,
        "lg2_approx_f32" => LG2,
        "ex2_approx_f32" => EX2,
        "mul24_lo_u32" | "mad24_lo_u32" => MUL24,
        "popc_b32" => POPC,
        "clz_b32" => CLZ,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instructions::catalog;

    #[test]
    fn most_of_the_suite_has_a_row_and_the_rows_say_what_the_paper_prints() {
        let covered = catalog().iter().filter(|i| volta_row(i.stem).is_some()).count();
        assert!(covered >= 55, "{covered} instructions have a Table I row");
        // Spot checks against the paper's text: Volta add 0.0064 / 0.0012 nJ optimized,
        // fp16 add/sub/mul 0.0924 / 0.0624, fp64 div non-optimized 31.0212 / 30.4121.
        assert_eq!(volta_row("add_u32").unwrap().optimized, (0.0064, 0.0012));
        assert_eq!(volta_row("add_f16").unwrap().optimized, (0.0924, 0.0624));
        assert_eq!(volta_row("div_rn_f64").unwrap().non_optimized, (31.0212, 30.4121));
    }
}
