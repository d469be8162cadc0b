//! `cargo energy explain`: a measured result and its Nsight Compute profile priced with a
//! GPU model's fitted costs (`energy_report::EnergyModel`): the model that ships for the
//! result's GPU unless `--model` names one; `cargo energy explain NAME` finds the benchmark's
//! latest result and, where `ncu` is installed, profiles its `--test` run itself.

use std::path::{Path, PathBuf};

use energy_report::{
    explain, one_call_of, read_ncu_launches, render_markdown as render_explanation, render_svg as explanation_svg,
    shipped_model_for, EnergyModel, KernelChoice, NcuKernel,
};
use energy_results::{write_atomically, Error, ErrorKind, Result, ResultFile, RunManifest};

/// What `cargo energy explain` was asked.
pub(super) struct Asked<'a> {
    /// The benchmark's name or id (its result found in `run` under `dir`).
    pub name: Option<&'a str>,
    /// A result file given by path instead.
    pub result: Option<&'a Path>,
    /// The directory of the runs.
    pub dir: &'a Path,
    /// The run to read.
    pub run: &'a str,
    /// A model file instead of the shipped one.
    pub model: Option<&'a Path>,
    /// An ncu export instead of profiling.
    pub ncu: Option<&'a Path>,
    /// The bench executable to profile (else built with cargo).
    pub exe: Option<&'a Path>,
    /// One kernel's launches instead of one call.
    pub kernel: Option<&'a str>,
    /// JSON instead of markdown.
    pub json: bool,
    /// Where to write explain.md, .json and .svg.
    pub output: Option<&'a Path>,
}

/// Prints (and with `output` writes `explain.md`, `.json`, `.svg` in that folder) the
/// explanation of the result asked for; without an export and without `ncu`, says which
/// command produces the export.
pub(super) fn run(asked: &Asked<'_>) -> Result<()> {
    let (result, target) = match (asked.name, asked.result) {
        (Some(name), None) => find_result(&asked.dir.join(asked.run), name)?,
        (None, Some(path)) => (ResultFile::read_json(path)?, None),
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "name the benchmark (`cargo energy explain saxpy`) or give its result file (--result FILE)",
            ))
        }
    };
    if result.device.simulated {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "`{}` is a simulated result (no GPU measured it): explain prices a kernel measured on a GPU; run the \
                 benchmark on one first",
                result.id
            ),
        ));
    }
    let (model, model_path) = match asked.model {
        Some(path) => (EnergyModel::read_json(path)?, path.display().to_string()),
        None => {
            let (model, shipped) = shipped_model_for(&result.device.name)?;
            eprintln!("model: the one that ships for the {}: {}", shipped.gpu, shipped.origin);
            (model, format!("the shipped {} model", shipped.gpu))
        }
    };
    // Without `measure` nothing is profiled: the bench target and `--exe` go unused.
    #[cfg(not(feature = "measure"))]
    let _ = (&target, asked.exe);
    #[cfg(feature = "measure")]
    let profiled: PathBuf;
    let ncu = match (asked.ncu, asked.name, ncu_program()) {
        (Some(ncu), _, _) => ncu,
        #[cfg(feature = "measure")]
        (None, Some(_), Some(program)) => {
            let csv = asked.dir.join("explain").join(format!("{}-ncu.csv", energy_results::file_stem(&result.id)));
            let exe = profiling::bench_exe(asked.exe, target.as_deref(), &result.id)?;
            profiling::profile(&program, &exe, &result.id, &model.metrics_with_unpriced(), &csv)?;
            profiled = csv;
            &profiled
        }
        (None, _, _) => {
            let command = match asked.kernel {
                Some(name) => model.ncu_command(name),
                None => model.ncu_test_command(&result.id),
            };
            let why = match (asked.name.is_some(), ncu_program().is_some()) {
                (true, true) => {
                    "this cargo-energy was built without the `measure` feature, so it cannot run the benchmark under ncu"
                }
                (true, false) => "ncu is not installed (nor NCU set)",
                (false, _) => "no --ncu FILE.csv",
            };
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "explain needs the kernel's Nsight Compute counts ({why}); produce them with:\n  {command}\nthen pass \
                     the file with --ncu"
                ),
            ));
        }
    };
    let (kernel, json, output) = (asked.kernel, asked.json, asked.output);
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
    let e = explain(&model, &result, &chosen).map_err(|e| e.context(format!("{model_path} with {}", ncu.display())))?;
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

/// The result of benchmark `name` in the run `run_dir` (its id, or its name, whose energy
/// result is `name/energy`), and the bench target that wrote it.
fn find_result(run_dir: &Path, name: &str) -> Result<(ResultFile, Option<String>)> {
    let manifest = RunManifest::read_manifest(run_dir)?;
    let wanted = [name.to_string(), format!("{name}/energy")];
    for target in &manifest.targets {
        if let Some(entry) = target.results.iter().find(|r| wanted.contains(&r.id)) {
            return Ok((ResultFile::read_json(&run_dir.join(&entry.json))?, Some(target.name.clone())));
        }
    }
    let simulated = format!("{name}/energy (simulated)");
    let ids: Vec<&str> = manifest.results().map(|r| r.id.as_str()).collect();
    let why = if ids.contains(&simulated.as_str()) {
        "it holds only a simulated result of it (no GPU measured it): run the benchmark on a GPU first".to_string()
    } else {
        format!("it holds {}", if ids.is_empty() { "no result".to_string() } else { ids.join(", ") })
    };
    Err(Error::new(
        ErrorKind::InvalidInput,
        format!("no measured result of `{name}` in the run {}: {why}", run_dir.display()),
    ))
}

/// The Nsight Compute CLI: `NCU` when set, else `ncu` on the PATH or in /usr/local/cuda/bin.
fn ncu_program() -> Option<PathBuf> {
    if let Some(given) = std::env::var_os("NCU").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(given));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/local/cuda/bin")])
        .map(|d| d.join("ncu"))
        .find(|p| p.is_file())
}

/// The bench executable that runs `id`: `exe` when given, else the one `cargo bench
/// --no-run` builds for `target`.
/// Running the benchmark under ncu: the runtime's part of `explain` (feature `measure`).
#[cfg(feature = "measure")]
mod profiling {
    use std::path::Path;
    use std::process::Command;

    use energy_results::escape::visible;
    use energy_results::{write_atomically, Error, ErrorKind, Result};

    pub(super) fn bench_exe(exe: Option<&Path>, target: Option<&str>, id: &str) -> Result<crate::gpus::BenchExe> {
        let here = std::env::current_dir().map_err(|e| Error::io(Path::new("."), "read the current folder", e))?;
        if let Some(exe) = exe {
            return crate::gpus::check_executable("--exe", exe, &here);
        }
        let Some(target) = target else {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("the run does not say which bench target measured `{id}`: give its executable with --exe PATH"),
            ));
        };
        let built = crate::gpus::build(&["--bench".to_string(), target.to_string()])?;
        let wanted = format!("{}-", target.replace('-', "_"));
        built
            .into_iter()
            .find(|e| e.path.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&wanted)))
            .ok_or_else(|| {
                Error::new(ErrorKind::InvalidInput, format!("cargo built no executable of the bench target `{target}`"))
            })
    }

    /// Profiles the `--test` run of `id` (three calls) under `ncu` with `metrics`, clocks and
    /// caches left alone, into `csv`; a failed or partial profile (`==ERROR==`) is refused with
    /// what ncu said.
    pub(super) fn profile(ncu: &Path, exe: &crate::gpus::BenchExe, id: &str, metrics: &str, csv: &Path) -> Result<()> {
        // The --test run's own files go to a scratch target beside the export, not over the
        // measured run; removed afterwards.
        let scratch = csv.with_extension("target");
        eprintln!("explain: profiling `{id}` under {} (its --test run: three calls; clocks left alone)", ncu.display());
        let out = Command::new(ncu)
            .args([
                "--clock-control",
                "none",
                "--cache-control",
                "none",
                "--csv",
                "--page",
                "raw",
                "--print-units",
                "base",
            ])
            .args(["--metrics", metrics])
            .arg(&exe.path)
            .args(["--bench", "--test", "--exact", id])
            .current_dir(&exe.package_dir)
            .env("CARGO_TARGET_DIR", &scratch)
            .output()
            .map_err(|e| Error::new(ErrorKind::Io, format!("could not run {}: {e}", ncu.display())));
        let _ = std::fs::remove_dir_all(&scratch);
        let out = out?;
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if !out.status.success() || stdout.contains("==ERROR==") || stderr.contains("==ERROR==") {
            // ncu's own error lines when it wrote some (a partial profile exits 0), else the end
            // of its stderr, as `cargo energy run` shows a failed executable's.
            let errors: Vec<String> = stderr
                .lines()
                .chain(stdout.lines())
                .filter(|l| l.contains("==ERROR=="))
                .take(5)
                .map(|l| visible(l).into_owned())
                .collect();
            let said = if errors.is_empty() {
                crate::gpus::process::stderr_tail(&out.stderr)
            } else {
                format!("; it reported:\n        {}", errors.join("\n        "))
            };
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("ncu could not profile `{id}`: it {}{said}", crate::gpus::process::exit_reason(out.status)),
            ));
        }
        if let Some(dir) = csv.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create the folder of the ncu export", e))?;
        }
        write_atomically(csv, out.stdout.as_slice())?;
        eprintln!("explain: ncu's export is {} (pass it with --ncu to explain again without profiling)", csv.display());
        Ok(())
    }
}
