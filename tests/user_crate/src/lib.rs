//! A GPU crate: its kernels live in kernels/ (PTX and CUDA C).
