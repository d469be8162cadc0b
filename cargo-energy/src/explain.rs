//! `cargo energy explain`: a measured result and its Nsight Compute profile priced with a
//! GPU model's fitted costs (`energy_report::EnergyModel`).

use std::path::Path;

use energy_harness::unstable::trace::write_atomically;
use energy_harness::{Error, ErrorKind, Result, ResultFile};
use energy_report::{
    explain, one_call_of, read_ncu_launches, render_markdown as render_explanation, render_svg as explanation_svg,
    EnergyModel, KernelChoice, NcuKernel,
};

/// Prints (and with `output` writes `explain.md`, `.json`, `.svg` in that folder) the
/// explanation of `result` with `model`; without `ncu`, says which command produces it.
pub(super) fn run(
    result: &Path,
    model: &Path,
    ncu: Option<&Path>,
    kernel: Option<&str>,
    json: bool,
    output: Option<&Path>,
) -> Result<()> {
    let model_path = model;
    let model = EnergyModel::read_json(model)?;
    let result = ResultFile::read_json(result)?;
    let Some(ncu) = ncu else {
        let command = match kernel {
            Some(name) => model.ncu_command(name),
            None => model.ncu_test_command(&result.id),
        };
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "explain needs the kernel's Nsight Compute counts (--ncu FILE.csv); produce them with:\n  {command}"
            ),
        ));
    };
    // Only the model's metrics and those of the work it has no term for are kept (an export
    // of 100,000 launches is read in one pass); a kernel the export lacks is refused with the
    // closest names there are.
    let metrics = model.metric_names_with_unpriced();
    let launches = match kernel {
        Some(name) => read_ncu_launches(ncu, KernelChoice::Named(name), Some(&metrics))?,
        None => {
            let (launches, note) =
                one_call_of(read_ncu_launches(ncu, KernelChoice::All, Some(&metrics))?, result.time_s.mean)?;
            if let Some(note) = note {
                eprintln!("{note}");
            }
            launches
        }
    };
    let chosen: Vec<&NcuKernel> = launches.iter().collect();
    let e = explain(&model, &result, &chosen)
        .map_err(|e| e.context(format!("{} with {}", model_path.display(), ncu.display())))?;
    if let (true, Some(warning)) = (json, &e.warning) {
        // The markdown opens with it; the JSON carries it, and it is said on stderr too.
        eprintln!("{warning}");
    }
    let md = render_explanation(&e, &model);
    let js = serde_json::to_string_pretty(&e)
        .map_err(|err| Error::new(ErrorKind::Format, format!("cannot serialize the explanation: {err}")))?;
    if let Some(dir) = output {
        std::fs::create_dir_all(dir).map_err(|err| Error::io(dir, "create the output folder", err))?;
        write_atomically(&dir.join("explain.md"), md.as_bytes())?;
        write_atomically(&dir.join("explain.json"), js.as_bytes())?;
        write_atomically(&dir.join("explain.svg"), explanation_svg(&e).as_bytes())?;
    }
    crate::output::emit(&if json { js + "\n" } else { md })
}
