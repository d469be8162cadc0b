//! A newcomer's GPU crate: its kernels live in kernels/ (PTX and CUDA C).
