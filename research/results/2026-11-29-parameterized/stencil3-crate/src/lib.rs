//! Nothing here: the crate exists for its `stencil3` energy benchmark (benches/stencil3.rs).
