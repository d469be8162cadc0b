//! `#[energy_bench]` misuse is a compile error with a precise span (trybuild snapshots in
//! tests/ui/*.stderr; regenerate with TRYBUILD=overwrite after reviewing a change).

#[test]
fn misuse_of_energy_bench_is_a_compile_error() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
