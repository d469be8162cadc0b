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
    /// What the two figures are: `slope` (both slopes over K) or `net` (a net figure on at
    /// least one side: one chain length measured there).
    #[serde(default)]
    pub figures: String,
}

/// Pairs `other`'s rows of `level` with the first reference table that has the same
/// instruction with the same kind of figure (tables in order of preference), on the dynamic
/// energy per thread-instruction ([`InstructionRow::dynamic_j`]): a slope is paired with a
/// slope whenever a reference has one, and only a row with no slope on any reference falls
/// back to the first net figure (marked `net`). Withheld rows and rows whose reference
/// energy is not above zero are left out.
pub fn board_ratios(references: &[InstructionTable], other: &InstructionTable, level: &str) -> Vec<BoardRatio> {
    let mut list = Vec::new();
    for row in other.rows.iter().filter(|r| r.level == level) {
        let Some(b) = row.dynamic_j() else { continue };
        let candidate = |want_slope: bool| {
            references.iter().find_map(|t| {
                let r = t.rows.iter().find(|r| r.level == level && r.label == row.label)?;
                (!want_slope || r.slope.is_some()).then_some(())?;
                Some((t, r, r.dynamic_j()?))
            })
        };
        let found = if row.slope.is_some() { candidate(true).or_else(|| candidate(false)) } else { candidate(false) };
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
            figures: if reference.slope.is_some() && row.slope.is_some() { "slope" } else { "net" }.into(),
        });
    }
    list
}

/// The ratios as a markdown table, with the median and range of the ratio.
pub fn render_board_ratios(list: &[BoardRatio], reference_name: &str, other_name: &str) -> String {
    let mut s = format!(
        "| instruction | level | {reference_name} dynamic, pJ / thread-instr | board | {other_name} dynamic, pJ | ratio [95 % CI] | time ratio | figures |\n|---|---|---|---|---|---|---|---|\n"
    );
    let pj = |e: &Estimate| format!("{:.3} [{:.3}, {:.3}]", e.mean * 1e12, e.ci_low * 1e12, e.ci_high * 1e12);
    for r in list {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.3} [{:.3}, {:.3}] | {} | {} |\n",
            r.label,
            r.level,
            pj(&r.reference_j),
            r.reference_uuid.get(..12).unwrap_or(&r.reference_uuid),
            pj(&r.other_j),
            r.ratio.0,
            r.ratio.1,
            r.ratio.2,
            r.time_ratio.map(|t| format!("{t:.3}")).unwrap_or_else(|| "-".into()),
            if r.figures.is_empty() { "-" } else { &r.figures }
        ));
    }
    // Which reference board each row was measured against, and how many rows are not
    // slope against slope.
    let mut boards: Vec<(String, usize)> = Vec::new();
    for r in list {
        let id = r.reference_uuid.get(..12).unwrap_or(&r.reference_uuid).to_string();
        match boards.iter_mut().find(|(b, _)| *b == id) {
            Some((_, n)) => *n += 1,
            None => boards.push((id, 1)),
        }
    }
    if !list.is_empty() {
        let nets = list.iter().filter(|r| r.figures != "slope").count();
        s.push_str(&format!(
            "\nReference boards: {}. Figures: {} slope against slope, {nets} with a net figure on one side.\n",
            boards.iter().map(|(b, n)| format!("{b} for {n} rows")).collect::<Vec<_>>().join(", "),
            list.len() - nets
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
