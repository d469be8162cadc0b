//! The instruction suite (Arafa et al. 2020 on today's GPUs): energy per PTX instruction,
//! `cargo bench --bench instructions`. See `kernel_energy::instructions::suite` and the
//! README; `ENERGY_INSTRUCTIONS_LEVELS=O4,O0` and `ENERGY_INSTRUCTIONS_THREADS=full|one`
//! choose what runs, criterion filters (`-- div_`) select instructions.

fn main() -> std::process::ExitCode {
    kernel_energy::instructions::suite::main()
}
