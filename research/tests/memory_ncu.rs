//! Real Nsight Compute exports from an H100 (research/results/2026-11-24-memory-h100-h200):
//! the memory suite's profile and a saxpy launch, read back as the suite and the breakdown
//! read them.

use std::path::{Path, PathBuf};

use energy_report::{parse_ncu_csv, read_ncu_csv};
use kernel_energy::memory::suite::{hit_rates, load_profile};
use kernel_energy::memory::{AccessCounts, Level};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results/2026-11-24-memory-h100-h200")
}

#[test]
fn every_configuration_of_the_h100_profile_is_served_by_its_level() {
    let profile = load_profile(&dir().join("h100/memory-profile.json")).unwrap();
    let ncu = read_ncu_csv(&dir().join("h100/memory-ncu.csv")).unwrap();
    let rows = hit_rates(&profile, &ncu).unwrap();
    assert_eq!(rows.len(), 20, "{rows:#?}");
    for r in &rows {
        assert!(!r.flagged(), "{r:?}");
        if r.level != Level::Shared {
            let ratio = r.sectors_ratio.unwrap();
            assert!((ratio - 1.0).abs() < 0.01, "{}: ncu counts {ratio} x our sectors", r.key);
        }
    }
    let l2 = rows.iter().find(|r| r.key == "load/l2/1024t_sm").unwrap();
    assert!(l2.l1_hit.unwrap() < 0.01 && l2.l2_hit.unwrap() > 0.99, "{l2:?}");
    let dram = rows.iter().find(|r| r.key == "load/dram/1024t_sm").unwrap();
    assert!(dram.l2_hit.unwrap() < 0.01 && dram.dram_per_byte.unwrap() > 0.99, "{dram:?}");
    // The 64-bit shared chase: two wavefronts per warp load, no bank conflict.
    let shared = rows.iter().find(|r| r.key == "load/shared/1024t_sm").unwrap();
    assert!((shared.shared_wavefronts_per_load.unwrap() - 2.0).abs() < 0.01, "{shared:?}");
}

#[test]
fn a_cut_export_does_not_line_up_with_the_profile() {
    let profile = load_profile(&dir().join("h100/memory-profile.json")).unwrap();
    let text = std::fs::read_to_string(dir().join("h100/memory-ncu.csv")).unwrap();
    let cut: String = text.lines().take(text.lines().count() - 10).collect::<Vec<_>>().join("\n");
    let e = hit_rates(&profile, &parse_ncu_csv(&cut).unwrap()).unwrap_err().to_string();
    assert!(e.contains("launches") && e.contains("ncu"), "{e}");
}

#[test]
fn saxpy_reads_and_writes_dram_once_per_element() {
    let ncu = read_ncu_csv(&dir().join("saxpy-h100/saxpy-ncu.csv")).unwrap();
    assert_eq!(ncu.len(), 3);
    let c = AccessCounts::from_ncu(&ncu[0]).unwrap();
    // 2 x 16 Mi floats read = 4 Mi sectors; 16 Mi floats stored = 2 Mi sectors.
    assert!((c.dram / 4_194_304.0 - 1.0).abs() < 0.01, "{c:?}");
    assert!(((c.l2_store + c.dram_store) / 2_097_152.0 - 1.0).abs() < 1e-9, "{c:?}");
    assert_eq!((c.l1, c.l2, c.shared), (0.0, 0.0, 0.0));
}
