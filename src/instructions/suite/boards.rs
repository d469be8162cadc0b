//! Dynamic energy per instruction on two boards, side by side: the figure that carries from
//! board to board (static power differs with each board's idle), with the ratio and its
//! interval. Tested with real tables in `tests/instruction_boards.rs`.

use super::*;

/// One instruction on two boards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoardRatio {
    /// The instruction's label.
    pub label: String,
    /// Its category.
    pub category: Category,
    /// JIT level.
    pub level: String,
    /// UUID of the reference board whose row was used.
    pub reference_uuid: String,
    /// Dynamic energy per thread-instruction on the reference board, J.
    pub reference_j: Estimate,
    /// The same on the other board, J.
    pub other_j: Estimate,
    /// other / reference, with its 95 % interval (the two relative half-widths in
    /// quadrature, first order).
    pub ratio: (f64, f64, f64),
    /// Grid time per instruction, other / reference.
    pub time_ratio: Option<f64>,
}

/// Pairs `other`'s rows of `level` with the first reference table that has the same
/// instruction (tables in order of preference), on the dynamic energy per thread-instruction
/// of the slope ([`InstructionRow::dynamic_j`]); withheld rows and rows whose reference
/// energy is not above zero are left out.
pub fn board_ratios(references: &[InstructionTable], other: &InstructionTable, level: &str) -> Vec<BoardRatio> {
    let mut list = Vec::new();
    for row in other.rows.iter().filter(|r| r.level == level) {
        let Some(b) = row.dynamic_j() else { continue };
        let found = references.iter().find_map(|t| {
            let r = t.rows.iter().find(|r| r.level == level && r.label == row.label)?;
            Some((t, r, r.dynamic_j()?))
        });
        let Some((table, reference, a)) = found else { continue };
        if a.mean <= 0.0 || b.mean <= 0.0 {
            continue;
        }
        let half = |e: &Estimate| (e.ci_high - e.ci_low) / 2.0 / e.mean;
        let ratio = b.mean / a.mean;
        let spread = ratio * half(&a).hypot(half(&b));
        let time = |r: &InstructionRow| r.slope.as_ref().map(|s| s.time_per_instruction_s.mean);
        list.push(BoardRatio {
            label: row.label.clone(),
            category: row.category,
            level: level.to_string(),
            reference_uuid: table.device.as_ref().map(|d| d.uuid.clone()).unwrap_or_default(),
            reference_j: a,
            other_j: b,
            ratio: (ratio, ratio - spread, ratio + spread),
            time_ratio: time(reference).zip(time(row)).map(|(a, b)| b / a),
        });
    }
    list
}

/// The ratios as a markdown table, with the median and range of the ratio.
pub fn render_board_ratios(list: &[BoardRatio], reference_name: &str, other_name: &str) -> String {
    let mut s = format!(
        "| instruction | level | {reference_name} dynamic, pJ / thread-instr | board | {other_name} dynamic, pJ | ratio [95 % CI] | time ratio |\n|---|---|---|---|---|---|---|\n"
    );
    let pj = |e: &Estimate| format!("{:.3} [{:.3}, {:.3}]", e.mean * 1e12, e.ci_low * 1e12, e.ci_high * 1e12);
    for r in list {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.3} [{:.3}, {:.3}] | {} |\n",
            r.label,
            r.level,
            pj(&r.reference_j),
            r.reference_uuid.get(..12).unwrap_or(&r.reference_uuid),
            pj(&r.other_j),
            r.ratio.0,
            r.ratio.1,
            r.ratio.2,
            r.time_ratio.map(|t| format!("{t:.3}")).unwrap_or_else(|| "-".into())
        ));
    }
    let mut ratios: Vec<f64> = list.iter().map(|r| r.ratio.0).collect();
    ratios.sort_by(f64::total_cmp);
    if let (Some(lo), Some(hi)) = (ratios.first(), ratios.last()) {
        s.push_str(&format!(
            "\n{} instructions: median ratio {:.3}, range {lo:.3} to {hi:.3}.\n",
            ratios.len(),
            ratios[ratios.len() / 2]
        ));
    }
    s
}
