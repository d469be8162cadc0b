//! The memory suite (Delestrac et al. 2024 on today's GPUs): energy per 32-byte sector at
//! each memory level, `cargo bench --bench memory`. See `kernel_energy::memory::suite` and
//! the README; criterion filters (`-- 'memory/load/'`) select configurations.

fn main() -> std::process::ExitCode {
    kernel_energy::memory::suite::main()
}
