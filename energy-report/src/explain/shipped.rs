//! The energy models that ship with `cargo energy explain`, embedded byte for byte from the
//! published fits, chosen by the GPU model a result names (`--model` stays for one's own fit).
//!
//! Which fit ships, and why: protocol v3 fits and judges each board on its own fit (its
//! rules: "each board is analysed on its own fit"), so a fit pooled over boards is not what
//! the protocol tested and its held-out figures would not hold for it. The H100 model is the
//! fit of the protocol's first board (board 6, GPU-045d23f9), taken for being first, not for
//! its score: its held-out mean absolute error, 2.7 %, lies between the four boards' 2.5 and
//! 3.0 %. The H200 model is the fit of the one H200 board protocol v3 ran on (board 1,
//! GPU-e1364036, 2026-11-29).

use std::path::Path;

use super::EnergyModel;
use energy_results::{Error, ErrorKind, Result};

/// A model that ships: the GPU model it holds for, where it was published, its text.
#[derive(Clone, Copy, Debug)]
pub struct ShippedModel {
    /// The GPU model, as NVML names it (and as the model file's `gpu` says).
    pub gpu: &'static str,
    /// What it is: protocol, board, date, and the held-out figure it was judged by.
    pub origin: &'static str,
    /// Where the published fit lies in the repository (the embedded text is that file's).
    pub published: &'static str,
    /// The model file's text.
    pub text: &'static str,
}

/// Every model that ships.
pub const SHIPPED_MODELS: &[ShippedModel] = &[
    ShippedModel {
        gpu: "NVIDIA H100 80GB HBM3",
        origin: "protocol v3 (hash 3a2bf2b414f6ec0c), fitted on board 6 (GPU-045d23f9) on 2026-11-26; on ten \
             third-party library kernels outside the fit: 2.7 % mean absolute error on dynamic energy, 18 of 18 \
             measurements inside the bracket (research/results/model-h100.md)",
        published: "research/results/2026-11-26-model-protocol-v3/h100-board6/fit/model.json",
        text: include_str!("models/h100-protocol-v3-board6.json"),
    },
    ShippedModel {
        gpu: "NVIDIA H200",
        origin: "protocol v3 (hash 3a2bf2b414f6ec0c), fitted on board 1 (GPU-e1364036) on 2026-11-29; on the \
             third-party library kernels outside the fit: 5.2 % mean absolute error on dynamic energy (8 of the \
             ten measured on their own data; the other two's windows were shorter than one sensor tick), 13 of 13 \
             measurements inside the bracket (research/results/model-h100.md)",
        published: "research/results/2026-11-26-model-protocol-v3/h200-board1/fit/model.json",
        text: include_str!("models/h200-protocol-v3-board1.json"),
    },
];

/// The shipped model for the GPU model `gpu` (a result's `device.name`), parsed and checked;
/// a GPU without one is refused, naming those that have one and how to fit one.
pub fn shipped_model_for(gpu: &str) -> Result<(EnergyModel, &'static ShippedModel)> {
    let Some(shipped) = SHIPPED_MODELS.iter().find(|m| m.gpu == gpu) else {
        let have: Vec<&str> = SHIPPED_MODELS.iter().map(|m| m.gpu).collect();
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "no energy model ships for the {gpu} (models ship for: {}): fit one on this GPU with the model suite \
                 (`cargo bench -p energy-suites --bench model`, then `cargo run -p energy-suites --release --example \
                 fit_model`; docs/SUITES.md) and pass it with --model FILE",
                have.join(", ")
            ),
        ));
    };
    let model = EnergyModel::parse(shipped.text, Path::new(shipped.published))?;
    Ok((model, shipped))
}
