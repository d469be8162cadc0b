//! `cargo energy explain`: a measured result and its Nsight Compute profile priced with a
//! GPU model's fitted costs (`energy_harness::unstable::explain::EnergyModel`).

use std::path::Path;

use energy_harness::unstable::explain::{
    explain, read_ncu_csv, render_markdown as render_explanation, render_svg as explanation_svg, EnergyModel, NcuKernel,
};
use energy_harness::unstable::trace::write_atomically;
use energy_harness::{Error, ErrorKind, Result, ResultFile};

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
    let model = EnergyModel::read_json(model)?;
    let result = ResultFile::read_json(result)?;
    let Some(ncu) = ncu else {
        let name = kernel.unwrap_or("<kernel>");
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "explain needs the kernel's Nsight Compute counts (--ncu FILE.csv); produce them with:\n  {}",
                model.ncu_command(name)
            ),
        ));
    };
    let launches = read_ncu_csv(ncu)?;
    let name = match kernel {
        Some(k) => k.to_string(),
        None => launches[0].name.clone(),
    };
    let chosen: Vec<&NcuKernel> =
        launches.iter().filter(|l| l.name == name || l.base_name() == name.as_str()).collect();
    if chosen.is_empty() {
        let names: Vec<&str> = launches.iter().map(|l| l.name.as_str()).collect();
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("{}: no launch of `{name}` (launches: {})", ncu.display(), names.join(", ")),
        ));
    }
    let e = explain(&model, &result, &chosen)?;
    let md = render_explanation(&e, &model);
    let js = serde_json::to_string_pretty(&e)
        .map_err(|err| Error::new(ErrorKind::Format, format!("cannot serialize the explanation: {err}")))?;
    if let Some(dir) = output {
        std::fs::create_dir_all(dir).map_err(|err| Error::io(dir, "create the output folder", err))?;
        write_atomically(&dir.join("explain.md"), md.as_bytes())?;
        write_atomically(&dir.join("explain.json"), js.as_bytes())?;
        write_atomically(&dir.join("explain.svg"), explanation_svg(&e).as_bytes())?;
    }
    super::emit(&if json { js + "\n" } else { md })
}
