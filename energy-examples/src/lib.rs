//! The README's benchmarks (`benches/`) and energy budgets (`tests/energy_budgets.rs`) as a
//! GPU crate writes them, with the PTX they load (`ptx/examples/`). This library is empty:
//! the package exists for its bench and test targets.
