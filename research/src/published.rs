//! Every generated page under `research/results/`, regenerated from its committed raw data by
//! the project's own code: `tests/published_pages.rs` holds each against the committed file
//! (a figure edited by hand fails it), and `cargo run --example republish` writes them
//! after a change of the code that renders them.
//!
//! Raw data per page: an instruction table's own kernels (every kernel's measured windows
//! summarized, `kernels` in its JSON) give its rows, checks, JSON and markdown; the board
//! pages come from those tables; a memory table comes from its points file, its Nsight
//! Compute profile and the instruction table of its DIV cross-check; an application's
//! explanation comes from the model-suite run, its ncu exports and the fitted model; a
//! board's held-out test comes from its training and held-out runs, their ncu exports and
//! the model fitted on that training run.

use std::path::Path;

use energy_harness::{Error, ErrorKind, Result};
use energy_report::{render_markdown as render_explanation, EnergyModel};

use crate::heldout::{board_report, render_board, render_repeat, report_stem};
use crate::model::{SuiteRun, HELD_OUT_APPS, SELECTION_APPS, ZERO_OPERAND_APPS};
use kernel_energy::instructions::suite::{
    board_ratios, read_table, rebuild_table, render_board_ratios, render_markdown,
};
use kernel_energy::memory::suite::{
    attach_hit_rates, build_table, div_reference, load_points, load_table, read_hit_rates, render_block_svg,
    render_markdown as render_memory, render_thread_svg,
};

pub use kernel_energy::generated::Page;

/// The instruction tables (JSON and markdown), rebuilt from their kernels.
pub const INSTRUCTION_TABLES: [&str; 7] = [
    "2026-11-23-instructions-v2-h100/o4-board1",
    "2026-11-23-instructions-v2-h100/o4-board2",
    "2026-11-23-instructions-v2-h100/o0-board2",
    "2026-11-23-instructions-v2-h100/one-thread-board1",
    "2026-11-24-instructions-v2-h100-h200/o4-board3",
    "2026-11-24-instructions-v2-h100-h200/o0-board3",
    "2026-11-24-instructions-v2-h100-h200/o4-h200",
];

/// The memory tables (from points, profile and the DIV reference).
pub const MEMORY_TABLES: [&str; 4] = [
    "2026-11-24-memory-h100-h200/h100",
    "2026-11-24-memory-h100-h200/h200",
    "2026-11-25-memory-rail-h100-h200/h100",
    "2026-11-25-memory-rail-h100-h200/h200",
];

/// The instruction table the memory tables' DIV cross-check used, as the run named it.
pub const DIV_REFERENCE: &str = "research/results/2026-11-23-instructions-v2-h100/o4-board1.json";

/// [`DIV_REFERENCE`] as the published memory tables name it: the path it had when they were
/// built (the research lived under `docs/` until 2026-11-28), kept so that the pages
/// regenerate byte for byte.
pub const DIV_REFERENCE_AS_RECORDED: &str = "docs/results/2026-11-23-instructions-v2-h100/o4-board1.json";

/// The model-suite fits whose application explanations are regenerated: (fit folder, run
/// folder) under `2026-11-24-model-h100-h200/`.
pub const MODEL_FITS: [(&str, &str); 6] = [
    ("h100-board1/fit", "h100-board1"),
    ("h100-board2/fit", "h100-board2"),
    ("h100-board3/fit", "h100-board3"),
    ("h200/fit", "h200"),
    ("h100-board2/predicted-with-board1", "h100-board2"),
    ("h100-board3/predicted-with-board1", "h100-board3"),
];

/// The held-out tests under the frozen protocol (issue 35): board folders under
/// `2026-11-26-model-protocol-h100-h200/`, each with its runs, ncu exports and fit.
pub const HELDOUT_BOARDS: [&str; 2] = ["h100-board1", "h100-board2"];

/// The folder of [`HELDOUT_BOARDS`].
pub const HELDOUT_DIR: &str = "2026-11-26-model-protocol-h100-h200";

/// The held-out tests under protocol v2 (`research/results/model-protocol-v2.json`): board folders
/// under [`HELDOUT_V2_DIR`], each fitted under v2 (`fit/`) and under v1 (`fit-v1/`: v1's test
/// on a board measured later).
pub const HELDOUT_V2_BOARDS: [&str; 3] = ["h100-board3", "h100-board4", "h100-board5"];

/// The folder of [`HELDOUT_V2_BOARDS`].
pub const HELDOUT_V2_DIR: &str = "2026-11-26-model-protocol-v2";

/// Each board's fits under v2's runs: the fit folder and the protocol version it follows (its
/// report's stem: [`crate::heldout::report_stem`]).
pub const HELDOUT_V2_FITS: [(&str, u32); 2] = [("fit", 2), ("fit-v1", 1)];

/// The held-out tests under protocol v3 (`research/results/model-protocol-v3.json`): board folders
/// under [`HELDOUT_V3_DIR`], each fitted under v3 (`fit/`).
pub const HELDOUT_V3_BOARDS: [&str; 5] = ["h100-board6", "h100-board7", "h100-board8", "h100-board9", "h200-board1"];

/// The folder of [`HELDOUT_V3_BOARDS`].
pub const HELDOUT_V3_DIR: &str = "2026-11-26-model-protocol-v3";

fn json<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string_pretty(value).map_err(|e| Error::new(ErrorKind::Format, format!("cannot serialize: {e}")))
}

/// The instruction tables and the two board pages.
pub fn instruction_pages(results: &Path) -> Result<Vec<Page>> {
    let mut pages = Vec::new();
    let mut tables = Vec::new();
    for stem in INSTRUCTION_TABLES {
        let table = rebuild_table(&read_table(&results.join(format!("{stem}.json")))?)?;
        pages.push(Page { path: format!("{stem}.json").into(), text: json(&table)? });
        pages.push(Page { path: format!("{stem}.md").into(), text: render_markdown(&table) });
        tables.push(table);
    }
    let [b1, b2, _, _, b3, _, h200] = &tables[..] else {
        return Err(Error::new(ErrorKind::Analysis, "the instruction tables changed in number"));
    };
    let name = |t: &kernel_energy::instructions::suite::InstructionTable| t.device.as_ref().map(|d| d.name.clone());
    let (h100_name, h200_name) = (name(b1).unwrap_or_default(), name(h200).unwrap_or_default());
    let dir = "2026-11-24-instructions-v2-h100-h200";
    let all = board_ratios(&[b1.clone(), b2.clone(), b3.clone()], h200, "O4");
    pages.push(Page {
        path: format!("{dir}/boards-o4-h200-vs-h100.md").into(),
        text: render_board_ratios(&all, &h100_name, &h200_name),
    });
    let h100s = board_ratios(&[b1.clone(), b2.clone()], b3, "O4");
    pages.push(Page {
        path: format!("{dir}/boards-o4-h100-board3-vs-board1.md").into(),
        text: render_board_ratios(&h100s, &h100_name, &h100_name),
    });
    Ok(pages)
}

/// The memory tables: JSON, markdown and the two plots, from the points file. The table's
/// timestamp (when it was built, not a measurement) is the committed one.
pub fn memory_pages(results: &Path) -> Result<Vec<Page>> {
    let mut pages = Vec::new();
    let root = results.parent().and_then(Path::parent).unwrap_or(results);
    for dir in MEMORY_TABLES {
        let at = results.join(dir);
        let mut reference = div_reference(&root.join(DIV_REFERENCE))?;
        reference.source = DIV_REFERENCE_AS_RECORDED.into();
        let mut table = build_table(&load_points(&at.join("memory-points.json"))?, Some(reference));
        if let Some(rows) = read_hit_rates(&at) {
            attach_hit_rates(&mut table, rows?);
        }
        table.timestamp = load_table(&at.join("memory.json"))?.timestamp;
        pages.push(Page { path: format!("{dir}/memory.json").into(), text: json(&table)? });
        pages.push(Page { path: format!("{dir}/memory.md").into(), text: render_memory(&table) });
        pages.push(Page { path: format!("{dir}/memory-threads.svg").into(), text: render_thread_svg(&table) });
        pages.push(Page { path: format!("{dir}/memory-blocks.svg").into(), text: render_block_svg(&table) });
        if dir == MEMORY_TABLES[0] {
            // The summary page's table is the 2026-11-24 H100 run's.
            pages.push(Page { path: "memory-h100.json".into(), text: json(&table)? });
        }
    }
    Ok(pages)
}

/// Each application's explanation under each model fit, as `cargo energy explain` prints it.
pub fn explanation_pages(results: &Path) -> Result<Vec<Page>> {
    let mut pages = Vec::new();
    let base = results.join("2026-11-24-model-h100-h200");
    for (fit, board) in MODEL_FITS {
        let model = EnergyModel::read_json(&base.join(fit).join("model.json"))?;
        let run = SuiteRun::read_run_and_ncu(&base.join(board).join("run"), &base.join(board).join("ncu"))?;
        for name in HELD_OUT_APPS.iter().chain(&SELECTION_APPS).chain(&ZERO_OPERAND_APPS) {
            let e = run.explain(name, &model)?;
            pages.push(Page {
                path: format!("2026-11-24-model-h100-h200/{fit}/apps/{name}.md").into(),
                text: render_explanation(&e, &model),
            });
        }
    }
    Ok(pages)
}

/// Each board's held-out test (`heldout.md`, `heldout.json`), from its runs, ncu exports
/// and fitted model, as `cargo run --example heldout` writes it; and board 1's held-out
/// measurements against a second run of them (`h100-board1-repeat/repeat.md`).
pub fn heldout_pages(results: &Path) -> Result<Vec<Page>> {
    let mut pages = Vec::new();
    for board in HELDOUT_BOARDS {
        let report = board_report(&results.join(HELDOUT_DIR).join(board), "fit", board)?;
        pages.push(Page { path: format!("{HELDOUT_DIR}/{board}/heldout.md").into(), text: render_board(&report) });
        pages.push(Page { path: format!("{HELDOUT_DIR}/{board}/heldout.json").into(), text: json(&report)? + "\n" });
    }
    // Board 1's held-out suite measured again in a later call (its repeatability).
    let dir = results.join(HELDOUT_DIR);
    let repeat = render_repeat(&dir.join("h100-board1/run-heldout"), &dir.join("h100-board1-repeat/run-heldout"))?;
    pages.push(Page { path: format!("{HELDOUT_DIR}/h100-board1-repeat/repeat.md").into(), text: repeat });
    // Protocol v2's boards, each under v2 and under v1.
    for board in HELDOUT_V2_BOARDS {
        for (fit, _) in HELDOUT_V2_FITS {
            let report = board_report(&results.join(HELDOUT_V2_DIR).join(board), fit, board)?;
            let at = format!("{HELDOUT_V2_DIR}/{board}/{}", report_stem(fit));
            pages.push(Page { path: format!("{at}.md").into(), text: render_board(&report) });
            pages.push(Page { path: format!("{at}.json").into(), text: json(&report)? + "\n" });
        }
    }
    // Board 3's suites measured again in the next call (the same board).
    let dir = results.join(HELDOUT_V2_DIR);
    let repeat = render_repeat(&dir.join("h100-board3/run-heldout"), &dir.join("h100-board3-repeat/run-heldout"))?;
    pages.push(Page { path: format!("{HELDOUT_V2_DIR}/h100-board3-repeat/repeat.md").into(), text: repeat });
    // Protocol v3's boards.
    for board in HELDOUT_V3_BOARDS {
        let report = board_report(&results.join(HELDOUT_V3_DIR).join(board), "fit", board)?;
        pages.push(Page { path: format!("{HELDOUT_V3_DIR}/{board}/heldout.md").into(), text: render_board(&report) });
        pages.push(Page { path: format!("{HELDOUT_V3_DIR}/{board}/heldout.json").into(), text: json(&report)? + "\n" });
    }
    Ok(pages)
}

/// Every page this module regenerates.
pub fn all_pages(results: &Path) -> Result<Vec<Page>> {
    let mut pages = instruction_pages(results)?;
    pages.extend(memory_pages(results)?);
    pages.extend(explanation_pages(results)?);
    pages.extend(heldout_pages(results)?);
    pages.extend(crate::parameterized::parameterized_pages(results)?);
    pages.extend(crate::ci_gate::ci_gate_pages(results)?);
    Ok(pages)
}
