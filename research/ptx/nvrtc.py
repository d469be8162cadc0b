#!/usr/bin/env python3
"""Compiles a CUDA C file to PTX with NVRTC (no nvcc, no host compiler needed).

    python3 ptx/nvrtc.py ptx/apps/apps.cu ptx/apps/apps.ptx
    python3 ptx/nvrtc.py --arch compute_90a ptx/model/train_sm90.cu ptx/model/train_sm90.ptx

NVRTC comes from NVIDIA's wheel: `pip install nvidia-cuda-nvrtc-cu12`, or set NVRTC_LIB to
libnvrtc.so. The PTX targets compute_80 (Ampere and newer JIT it) unless --arch names another (compute_90a
for Hopper-only instructions such as wgmma); -lineinfo is off so
the file does not change with the path it was built from.
"""
import ctypes
import glob
import os
import sys


def find_nvrtc():
    if os.environ.get("NVRTC_LIB"):
        return os.environ["NVRTC_LIB"]
    for base in sys.path:
        hits = glob.glob(os.path.join(base, "nvidia", "cuda_nvrtc", "lib", "libnvrtc.so.*"))
        if hits:
            return sorted(hits)[0]
    sys.exit("libnvrtc.so not found: pip install nvidia-cuda-nvrtc-cu12 (or set NVRTC_LIB)")


def main():
    args = sys.argv[1:]
    arch = "compute_80"
    if len(args) == 4 and args[0] == "--arch":
        arch, args = args[1], args[2:]
    if len(args) != 2:
        sys.exit(__doc__)
    src, dst = args
    lib = ctypes.CDLL(find_nvrtc())
    prog = ctypes.c_void_p()
    code = open(src, "rb").read()
    name = os.path.basename(src).encode()
    check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), code, name, 0, None, None), "create")
    opts = [b"--gpu-architecture=" + arch.encode(), b"--std=c++17", b"-default-device"]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if log.value.strip():
        sys.stderr.write(log.value.decode())
    check(lib, rc, "compile")
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    check(lib, lib.nvrtcGetPTX(prog, ptx), "get PTX")
    header = "// Generated from %s by ptx/nvrtc.py (NVRTC, %s): do not edit.\n" % (os.path.basename(src), arch)
    header += "// Source FNV-1a: %016x\n" % fnv1a(code)
    tmp = dst + ".tmp"
    with open(tmp, "w") as f:
        f.write(header + ptx.value.decode())
    os.replace(tmp, dst)


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


def check(lib, rc, what):
    if rc != 0:
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        sys.exit("nvrtc %s failed: %s" % (what, lib.nvrtcGetErrorString(rc).decode()))


if __name__ == "__main__":
    main()
