//! Tests of the checked device (`checked.rs`).

use super::*;
use crate::cuda::ptx_interface::parse_interface;
use crate::cuda::testdata::{NVCC_SM90_PTX, SUITE_SHAPED_ENTRIES, SUITE_SHAPED_PTX};
use std::sync::Arc;

const SAXPY: &str = include_str!("saxpy.ptx");

fn check_config_(kernel: &str, config: &LaunchConfig, properties: &GpuProperties) -> Result<()> {
    check_config(kernel, config, properties, None)
}

fn h100() -> GpuProperties {
    crate::sim::SimPreset::h100().gpu_properties()
}

fn saxpy_entry() -> PtxEntry {
    parse_interface(SAXPY, "saxpy.ptx").unwrap().entries.remove(0)
}

fn buffer(alive: &Arc<()>) -> ArgValue {
    ArgValue::Buffer { address: 0x1000, bytes: 64, alive: Arc::downgrade(alive) }
}

#[test]
fn matching_arguments_pass() {
    let alive = Arc::new(());
    let args = [ArgValue::U32(16), ArgValue::F32(0.5), buffer(&alive), buffer(&alive)];
    check_args(&saxpy_entry(), "PTX saxpy.ptx", &args).unwrap();
}

#[test]
fn one_argument_too_few_names_the_missing_parameter() {
    let alive = Arc::new(());
    let args = [ArgValue::U32(16), ArgValue::F32(0.5), buffer(&alive)];
    let err = check_args(&saxpy_entry(), "PTX saxpy.ptx", &args).unwrap_err().to_string();
    assert!(err.contains("kernel `saxpy` (PTX saxpy.ptx) takes 4 parameter(s)"), "{err}");
    assert!(err.contains("passes 3 argument(s) (u32, f32, buffer)"), "{err}");
    // x and y are both pointers: either could be the one left out.
    assert!(err.contains("one of x: .u64, y: .u64 is missing"), "{err}");
}

/// A CUDA C stencil's parameters as NVRTC names them.
fn stencil_entry() -> PtxEntry {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry stencil5(\n\
               .param .u64 stencil5_param_0,\n.param .f32 stencil5_param_1,\n.param .u64 stencil5_param_2,\n\
               .param .u32 stencil5_param_3,\n.param .u32 stencil5_param_4\n)\n{\nret;\n}\n";
    parse_interface(ptx, "stencil.cu").unwrap().entries.remove(0)
}

#[test]
fn a_forgotten_argument_in_the_middle_is_named_not_the_last_parameter() {
    let alive = Arc::new(());
    // The f32 coefficient (parameter 2) left out: the rest shift by one.
    let args = [buffer(&alive), buffer(&alive), ArgValue::U32(64), ArgValue::U32(64)];
    let err = check_args(&stencil_entry(), "CUDA C stencil.cu", &args).unwrap_err().to_string();
    assert!(err.contains("add the missing stencil5_param_1: .f32 (parameter 2 of 5)"), "{err}");
    assert!(!err.contains("stencil5_param_4: .u32 to"), "{err}");
    // One argument too many in the middle: named too.
    let args =
        [buffer(&alive), ArgValue::F32(0.5), ArgValue::F32(0.25), buffer(&alive), ArgValue::U32(64), ArgValue::U32(64)];
    let err = check_args(&stencil_entry(), "CUDA C stencil.cu", &args).unwrap_err().to_string();
    assert!(err.contains("remove one of arguments 2 (an f32 (0.5)), 3 (an f32 (0.25))"), "{err}");
    // Nothing fits with one left out: the trailing parameters, as before.
    let args = [ArgValue::U32(1), ArgValue::U32(2), ArgValue::U32(3), ArgValue::U32(4)];
    let err = check_args(&stencil_entry(), "CUDA C stencil.cu", &args).unwrap_err().to_string();
    assert!(err.contains("add the missing stencil5_param_4: .u32 to its KernelArgs, in order"), "{err}");
}

#[test]
fn a_u32_where_the_ptx_has_u64_is_refused() {
    let alive = Arc::new(());
    let args = [ArgValue::U32(16), ArgValue::F32(0.5), ArgValue::U32(7), buffer(&alive)];
    let err = check_args(&saxpy_entry(), "PTX saxpy.ptx", &args).unwrap_err().to_string();
    assert!(err.contains("argument 3 is a u32 (7) but parameter 3 `x` is .u64 (8 bytes)"), "{err}");
    assert!(err.contains(".buffer(&buffer)"), "{err}");
}

#[test]
fn an_integer_for_a_float_parameter_is_refused() {
    let alive = Arc::new(());
    let args = [ArgValue::U32(16), ArgValue::U32(1), buffer(&alive), buffer(&alive)];
    let err = check_args(&saxpy_entry(), "PTX saxpy.ptx", &args).unwrap_err().to_string();
    assert!(err.contains("parameter 2 `a` is .f32"), "{err}");
    assert!(err.contains("pass it with .f32(…)"), "{err}");
}

#[test]
fn a_freed_buffer_is_refused() {
    let alive = Arc::new(());
    let gone = {
        let dropped = Arc::new(());
        buffer(&dropped)
    };
    let args = [ArgValue::U32(16), ArgValue::F32(0.5), gone, buffer(&alive)];
    let err = check_args(&saxpy_entry(), "PTX saxpy.ptx", &args).unwrap_err().to_string();
    assert!(err.contains("argument 3 (`x`) points to a buffer that was freed"), "{err}");
}

#[test]
fn launch_limits() {
    let p = h100();
    check_config_("k", &LaunchConfig::linear(1 << 20, 1024), &p).unwrap();
    let err = check_config_("k", &LaunchConfig::linear(4, 2048), &p).unwrap_err().to_string();
    assert!(err.contains("2048 threads per block") && err.contains("at most 1024"), "{err}");
    let err = check_config_("k", &LaunchConfig { block: (32, 32, 2), ..LaunchConfig::linear(1, 1) }, &p)
        .unwrap_err()
        .to_string();
    assert!(err.contains("2048 threads per block (32×32×2)"), "{err}");
    assert!(check_config_("k", &LaunchConfig::linear(0, 32), &p).is_err());
    assert!(check_config_("k", &LaunchConfig { grid: (1, 70_000, 1), ..LaunchConfig::linear(1, 32) }, &p).is_err());
    let shared = LaunchConfig { shared_mem_bytes: 64 * 1024, ..LaunchConfig::linear(1, 32) };
    assert!(check_config_("k", &shared, &p).unwrap_err().to_string().contains("dynamic shared memory"));
}

#[test]
fn newer_targets_are_refused() {
    let p = h100();
    check_target(Some("sm_90a"), "a.ptx", &p).unwrap();
    check_target(Some("sm_70"), "a.ptx", &p).unwrap();
    let err = check_target(Some("sm_100"), "a.ptx", &p).unwrap_err().to_string();
    assert!(err.contains("targets sm_100") && err.contains("sm_90"), "{err}");
    // An architecture-specific target runs on its own architecture alone, and is assembled
    // for it (the JIT's way); an older one is refused too.
    let err = check_target(Some("sm_80a"), "a.ptx", &p).unwrap_err().to_string();
    assert!(err.contains("architecture-specific") && err.contains("sm_80 alone"), "{err}");
    assert_eq!(assembly_arch(Some("sm_90a"), &p), "sm_90a");
    assert_eq!(assembly_arch(Some("sm_80"), &p), "sm_90");
    assert_eq!(assembly_arch(None, &p), "sm_90");
}

#[test]
fn memory_is_accounted() {
    let gpu = CheckedGpu::new(h100());
    let total = gpu.properties.total_memory_bytes;
    let a = gpu.allocate(total / 2).unwrap();
    assert!(gpu.allocate(total).unwrap_err().to_string().contains("CUDA_ERROR_OUT_OF_MEMORY"));
    gpu.release(a);
    gpu.allocate(total).unwrap();
    assert_eq!(gpu.activity().buffers, 2);
}

fn checked_h100() -> crate::cuda::CudaGpu {
    crate::cuda::CudaGpu::checked(h100())
}

#[test]
fn the_checked_device_runs_a_correct_launch_and_keeps_buffers_on_the_host() {
    let gpu = checked_h100();
    assert!(gpu.is_checked() && gpu.stream().is_checked());
    let x = gpu.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    let y = gpu.alloc_zeros::<f32>(3).unwrap();
    assert_eq!(gpu.download(&x).unwrap(), vec![1.0, 2.0, 3.0]);
    assert_eq!(gpu.download(&y).unwrap(), vec![0.0; 3]);
    assert_ne!(x.device_address(), y.device_address());
    assert_eq!(x.size_bytes(), 12);
    // Raw cudarc and events do not exist here, and say so.
    assert!(gpu.stream().cuda().unwrap_err().to_string().contains("only on a real GPU"));
    assert!(x.cuda_slice().is_err());
    assert!(gpu.timer().is_err());
}

#[test]
fn a_launch_after_its_buffer_is_dropped_is_refused() {
    use crate::cuda::{KernelArgs, LaunchConfig};
    let gpu = checked_h100();
    let interface = parse_interface(SAXPY, "saxpy.ptx").unwrap();
    // check_args is what Kernel::launch calls first.
    let y = gpu.alloc_zeros::<f32>(16).unwrap();
    let args = {
        let x = gpu.upload(&[0.0f32; 16]).unwrap();
        KernelArgs::new().u32(16).f32(1.0).buffer(&x).buffer(&y)
    };
    let err = check_args(&interface.entries[0], "PTX saxpy.ptx", &args.values).unwrap_err().to_string();
    assert!(err.contains("argument 3 (`x`) points to a buffer that was freed"), "{err}");
    check_config_("saxpy", &LaunchConfig::linear(1, 16), &gpu.properties().unwrap()).unwrap();
}

#[test]
fn memory_beyond_the_device_is_refused_and_freed_memory_returns() {
    let gpu = checked_h100();
    let total = gpu.properties().unwrap().total_memory_bytes as usize;
    let big = gpu.alloc_zeros::<u8>(total - 1024).unwrap();
    assert!(gpu.alloc_zeros::<u8>(4096).unwrap_err().to_string().contains("OUT_OF_MEMORY"));
    drop(big);
    gpu.alloc_zeros::<u8>(4096).unwrap();
}

#[test]
fn correct_arguments_for_every_entry_of_suite_shaped_modules_pass() {
    // The README's PTX and modules of the research suites' shapes (fixtures in `testdata/`):
    // each entry takes arguments of its parameters' kinds, and refuses one fewer. The suites'
    // own run on the checked device (their benches' `--test` run in CI) launches every kernel
    // of theirs with its real arguments.
    let alive = Arc::new(());
    let mut entries = 0;
    for (name, text) in SUITE_SHAPED_PTX {
        let interface = parse_interface(text, name).unwrap();
        for entry in &interface.entries {
            let args: Vec<ArgValue> = entry
                .params
                .iter()
                .map(|p| match (p.ty.as_bytes()[0], p.size_bytes) {
                    (b'f', 4) => ArgValue::F32(1.0),
                    (b'f', 8) => ArgValue::F64(1.0),
                    (_, 2) => ArgValue::U16(1),
                    (_, 4) => ArgValue::U32(1),
                    _ => buffer(&alive),
                })
                .collect();
            check_args(entry, name, &args).unwrap();
            // One argument fewer is always refused.
            assert!(check_args(entry, name, &args[..args.len() - 1]).is_err(), "{name}: {}", entry.name);
            entries += 1;
        }
    }
    assert_eq!(entries, SUITE_SHAPED_ENTRIES);
}

#[test]
fn launch_bounds_and_by_value_arguments_of_nvcc_kernels_are_checked() {
    let interface = parse_interface(NVCC_SM90_PTX, "kernels.ptx").unwrap();
    let scale = &interface.entries[0];
    let p = h100();
    check_config("scale", &LaunchConfig::linear(8, 256), &p, Some(scale)).unwrap();
    let err = check_config("scale", &LaunchConfig::linear(8, 512), &p, Some(scale)).unwrap_err().to_string();
    assert!(err.contains("512 threads per block") && err.contains("`.maxntid` 256"), "{err}");
    // `char c` is one byte: the launch API has no such argument, and says so.
    let mixed = &interface.entries[2];
    let alive = Arc::new(());
    let args = [
        ArgValue::U16(0x3c00),
        ArgValue::F64(1.0),
        ArgValue::U64(2),
        ArgValue::U16(3),
        ArgValue::U32(4),
        ArgValue::U64(0),
        buffer(&alive),
    ];
    let err = check_args(mixed, "kernels.ptx", &args).unwrap_err().to_string();
    assert!(err.contains("argument 5 is a u32 (4) but parameter 5 `mixed_param_4` is .u8 (1 bytes)"), "{err}");
    assert!(err.contains("the launch API passes 2-, 4- and 8-byte values"), "{err}");
}

#[test]
fn a_ptxas_older_than_the_ptx_is_not_a_mistake_of_the_ptx() {
    if find_ptxas().is_none() {
        eprintln!("skipped: no ptxas (set PTXAS)");
        return;
    }
    // PTX ISA 9.0 (CUDA 13) against whatever ptxas is here: assembled, or "not assembled"
    // with the reason when the ptxas is older; never an error.
    match assemble(NVCC_SM90_PTX, "kernels.ptx", "sm_90", JitOptLevel::O4).unwrap() {
        Assembly::Assembled => {}
        Assembly::NotAssembled(why) => assert!(why.contains("older than the PTX"), "{why}"),
        Assembly::CudaCNotCompiled(why) => panic!("PTX read as CUDA C: {why}"),
    }
    let older = NVCC_SM90_PTX.replace(".version 9.0", ".version 8.0");
    assert_eq!(assemble(&older, "kernels.ptx", "sm_90", JitOptLevel::O4).unwrap(), Assembly::Assembled);
    let broken = older.replace("ret;", "ret.bogus;");
    let err = assemble(&broken, "kernels.ptx", "sm_90", JitOptLevel::O3).unwrap_err().to_string();
    assert!(err.contains("could not compile PTX `kernels.ptx` at O3 for sm_90") && err.contains("JIT log"), "{err}");
}

#[test]
fn the_module_hands_back_the_machine_code_it_was_assembled_to() {
    let gpu = checked_h100();
    let ptx = NVCC_SM90_PTX.replace(".version 9.0", ".version 8.0");
    let module = gpu.load_ptx(&ptx, "kernels.ptx", JitOptLevel::O3).unwrap();
    assert_eq!(module.level(), JitOptLevel::O3);
    match (find_ptxas(), module.machine_code()) {
        // An ELF cubin: the magic number, and the same bytes when loaded again.
        (Some(_), Some(cubin)) => {
            assert_eq!(&cubin[..4], b"\x7fELF", "a cubin is an ELF file");
            let again = gpu.load_ptx(&ptx, "kernels.ptx", JitOptLevel::O3).unwrap();
            assert_eq!(again.machine_code(), Some(cubin));
        }
        (Some(_), None) => panic!("ptxas assembled the module but no machine code came back"),
        (None, code) => assert!(code.is_none(), "no ptxas, no machine code"),
    }
}

#[test]
fn pci_bus_ids_compare_whatever_their_case_and_domain_width() {
    use crate::cuda::same_pci_bus_id;
    assert!(same_pci_bus_id("00000000:41:00.0", "0000:41:00.0"));
    assert!(same_pci_bus_id("0000:C1:00.0", "0000:c1:00.0"));
    assert!(same_pci_bus_id("41:00.0", "0000:41:00.0"));
    assert!(!same_pci_bus_id("0000:41:00.0", "0000:42:00.0"));
    assert!(!same_pci_bus_id("0000:41:00.0", "0001:41:00.0"));
    assert!(!same_pci_bus_id("", "0000:41:00.0"));
    assert!(!same_pci_bus_id("GPU-1234", "GPU-1234"));
}

#[test]
fn the_checked_device_has_no_pci_bus_id() {
    let gpu = crate::cuda::CudaGpu::checked(crate::sim::SimPreset::h100().gpu_properties());
    assert_eq!(gpu.pci_bus_id().unwrap_err().kind(), crate::ErrorKind::NeedsGpu);
}

/// `graph = N` without a GPU: the launches run as the graph's capture would, so a launch
/// function that synchronizes is refused as CUDA refuses it on a GPU; without `graph` the
/// same function runs, and after the check the stream synchronizes again.
#[test]
fn a_synchronize_in_a_graph_launch_is_refused_without_a_gpu() {
    use crate::kernel::KernelCode;
    let gpu = std::sync::Arc::new(crate::cuda::CudaGpu::checked(crate::sim::SimPreset::h100().gpu_properties()));
    let waits = || KernelCode::launch(|stream: &crate::cuda::Stream| stream.synchronize());
    let err = waits().graph(100).check(&gpu).unwrap_err();
    assert!(err.message().contains("Stream::synchronize in a launch function captured into a CUDA graph"), "{err}");
    assert!(err.message().contains("launch 1 of 3 failed"), "{err}");
    assert!(waits().check(&gpu).is_ok(), "without a graph a synchronize is allowed");
    assert!(gpu.stream().synchronize().is_ok(), "the capture ended with the check");
    let fine = KernelCode::launch(|_: &crate::cuda::Stream| Ok(())).graph(100).check(&gpu).unwrap();
    assert!(fine.to_string().contains("as a capture of a CUDA graph of 100 would run them"), "{fine}");
}
