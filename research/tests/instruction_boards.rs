//! Dynamic energy per instruction on two boards, from real tables: the H200 and three H100s
//! (research/results/2026-11-2[34]-instructions-v2-*).

use std::path::{Path, PathBuf};

use kernel_energy::instructions::suite::{board_ratios, read_table, render_board_ratios};

fn results() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results")
}

#[test]
fn every_h200_instruction_finds_an_h100_figure_in_order_of_preference() {
    let h200 = read_table(&results().join("2026-11-24-instructions-v2-h100-h200/o4-h200.json")).unwrap();
    let board1 = read_table(&results().join("2026-11-23-instructions-v2-h100/o4-board1.json")).unwrap();
    let board2 = read_table(&results().join("2026-11-23-instructions-v2-h100/o4-board2.json")).unwrap();
    let board3 = read_table(&results().join("2026-11-24-instructions-v2-h100-h200/o4-board3.json")).unwrap();
    let only_board1 = board_ratios(std::slice::from_ref(&board1), &h200, "O4");
    assert_eq!(only_board1.len(), board1.rows.iter().filter(|r| r.level == "O4").count());
    let all = board_ratios(&[board1.clone(), board2, board3], &h200, "O4");
    assert_eq!(all.len(), 71);
    let uuid1 = board1.device.as_ref().unwrap().uuid.clone();
    for r in &all {
        let (m, lo, hi) = r.ratio;
        assert!(lo < m && m < hi, "{}: {:?}", r.label, r.ratio);
        // Same die, same clock: a ratio outside 0.8-1.25 would be a defect of the pairing.
        assert!((0.8..1.25).contains(&m), "{}: {m}", r.label);
        // Board 1 first, where it has a slope: a slope is never paired with a net figure
        // while another board has a slope (xor.b32: net on board 1, slope on board 2).
        if board1.rows.iter().any(|b| b.label == r.label && b.level == "O4" && b.slope.is_some()) {
            assert_eq!(r.reference_uuid, uuid1, "{}", r.label);
        }
        assert_eq!(r.figures, "slope", "{}", r.label);
    }
    // Nothing pairs across levels.
    assert!(board_ratios(&[board1], &h200, "O0").is_empty());
    let text = render_board_ratios(&all, "H100", "H200");
    assert!(text.contains("71 instructions: median ratio"), "{text}");
}
