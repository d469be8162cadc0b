//! The memory suite (Delestrac et al. 2024 on today's GPUs): energy per 32-byte sector at
//! each memory level, `cargo bench --bench memory`. See `energy_suites::memory::suite` and
//! the README; criterion filters (`-- 'memory/load/'`) select configurations.

fn main() -> std::process::ExitCode {
    energy_suites::memory::suite::main()
}
