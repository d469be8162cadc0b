//! Each kernel on the GPU: PTX compiled at its optimization level and its machine code read back, the loop sized to about 10 ms, a short launch checked against the host's evaluation; the criterion benchmarks.

use super::*;

/// Loads, sizes and verifies one kernel on the GPU and returns its launcher. On the
/// checked device (no GPU) the module, kernel name, arguments and launch are checked and
/// the host reference evaluated, but nothing runs: no result to compare, no loop to size.
pub(super) fn setup_kernel(
    gpu: &Arc<CudaGpu>,
    planned: &PlannedKernel,
    options: &SuiteOptions,
) -> Result<(Launcher, LaunchFacts)> {
    let instruction = &planned.instruction;
    let entry = entry_name(instruction, planned.variant);
    let module = gpu.load_ptx(&generate(instruction), &file_name(instruction), planned.level)?;
    let kernel = module.kernel(&entry)?;
    let properties = gpu.properties()?;
    // On the checked device nothing is measured, so nothing records the machine code, and
    // tests/instruction_ptx.rs reads the same code (ptxas -O3 and -O0 for sm_90: the JIT's O4
    // and O0) and checks each chain in it: not read again here (cuobjdump's disassembly was
    // three quarters of the checked run's time). `machine::tests` reads a cubin as this does.
    let machine_code = if gpu.is_checked() {
        MachineCode { not_read: Some(NOT_READ_ON_THE_CHECKED_DEVICE.into()), ..MachineCode::default() }
    } else {
        let keep_as = suite_dir().join("instructions-cubin").join(format!(
            "{}.{}.{}.cubin",
            instruction.stem,
            level_name(planned.level),
            properties.arch()
        ));
        read_machine_code(module.machine_code(), "driver JIT", &entry, Some(keep_as))
    };
    let resident = kernel.max_active_blocks_per_sm(THREADS_PER_BLOCK, 0)?;
    let (blocks, threads_per_block) =
        if options.one_thread { (1, 1) } else { (properties.sm_count * BLOCKS_PER_SM, THREADS_PER_BLOCK) };
    let threads = blocks as u64 * threads_per_block as u64;
    let input = gpu.upload(&input_bytes(instruction, threads))?;
    let output = gpu.alloc_zeros::<u8>(threads as usize * OUTPUT_BYTES_PER_THREAD)?;
    let config = LaunchConfig::linear(blocks, threads_per_block);
    let stream = gpu.stream().clone();
    let args = |iterations: u32| {
        let args = KernelArgs::new().buffer(&output).buffer(&input).u32(iterations).u32(1);
        // `k0`, `k1` are `.b{width}`: passed at their width (the low bits of the constant).
        instruction.constants.iter().fold(args, |args, &k| match instruction.width {
            Width::W16 => args.u16(k as u16),
            Width::W32 => args.u32(k as u32),
            Width::W64 => args.u64(k),
        })
    };

    // The stored result against the host's, from a short launch.
    let verify_iterations = match instruction.agreement {
        Agreement::Exact => options.verify_iterations,
        Agreement::Relative(_) => 1,
    };
    kernel.launch(&stream, config, &args(verify_iterations))?;
    gpu.synchronize()?;
    let stored = gpu.download(&output)?;
    let mut toggles = 0.0;
    let checked = sample_threads(threads);
    for &thread in &checked {
        let host = run_thread(instruction, planned.variant, initial_state(instruction, thread), verify_iterations)
            .map_err(|e| Error::new(ErrorKind::WrongResult, format!("the host cannot evaluate {entry}: {e}")))?;
        if thread == 0 {
            toggles = host.toggles_per_instruction;
        }
        if gpu.is_checked() {
            continue;
        }
        let result = read_result(instruction, &stored, thread).ok_or_else(|| {
            Error::new(ErrorKind::WrongResult, format!("{entry}: the output buffer has no slot for thread {thread}"))
        })?;
        check_agreement(instruction, &result, &host.result).map_err(|e| {
            Error::new(
                ErrorKind::WrongResult,
                format!(
                    "{entry} ({:?}) stored a result that disagrees with the host's after {verify_iterations} iterations, thread {thread}: {e}",
                    planned.level
                ),
            )
        })?;
    }

    if gpu.is_checked() {
        let args = args(16);
        let buffers = (input, output);
        let launcher: Launcher = Box::new(move |stream: &Stream| {
            let _ = &buffers;
            kernel.launch(stream, config, &args)
        });
        let facts = LaunchFacts {
            iterations: 16,
            blocks,
            threads_per_block,
            resident_blocks_per_sm: resident,
            verified_threads: 0,
            verify_iterations,
            toggles_per_instruction: toggles,
            sm_count: properties.sm_count,
            machine_code,
        };
        return Ok((launcher, facts));
    }

    // Loop count for a launch of about `launch_s`, refined from timed launches.
    let timer = gpu.timer()?;
    let time = |iterations: u32| -> Result<f64> {
        timer.start(&stream)?;
        kernel.launch(&stream, config, &args(iterations))?;
        timer.stop(&stream)?;
        gpu.synchronize()?;
        timer.elapsed_s()
    };
    time(16)?;
    let iterations = size_loop(time, 0.0, options.launch_s, 1 << 30)?;
    let args = args(iterations);
    let launch_kernel = kernel.clone();
    // The buffers live as long as the workload.
    let buffers = (input, output);
    let launcher: Launcher = Box::new(move |stream: &Stream| {
        let _ = &buffers;
        launch_kernel.launch(stream, config, &args)
    });
    let facts = LaunchFacts {
        iterations,
        blocks,
        threads_per_block,
        resident_blocks_per_sm: resident,
        verified_threads: checked.len(),
        verify_iterations,
        toggles_per_instruction: toggles,
        sm_count: properties.sm_count,
        machine_code,
    };
    Ok((launcher, facts))
}

/// Shared record of each kernel's setup, filled as criterion reaches it.
pub type FactsBook = Arc<Mutex<BTreeMap<String, LaunchFacts>>>;

/// The criterion benchmarks of the planned kernels.
pub fn specs(kernels: &[PlannedKernel], options: &SuiteOptions, book: &FactsBook) -> Vec<BenchSpec> {
    kernels
        .iter()
        .map(|planned| {
            let (p, o, b) = (planned.clone(), options.clone(), book.clone());
            let code = KernelCode::from_fn(move |gpu: &Arc<CudaGpu>| {
                let (launcher, facts) = setup_kernel(gpu, &p, &o)
                    .map_err(|e| e.context(format!("{} ({})", p.instruction.label, p.name)))?;
                if !gpu.is_checked() {
                    b.lock()
                        .map_err(|_| Error::new(ErrorKind::Analysis, "the facts book was poisoned"))?
                        .insert(p.name.clone(), facts);
                }
                Ok(launcher)
            });
            let spec = BenchSpec::new(&planned.name, file!(), line!())
                .code(code)
                .options(options.measure.clone())
                .without_time_bench();
            // Shared out by a node's queue (`cargo energy run --gpus`): the loop alone is the
            // baseline of every instruction of its width, so each GPU measures it on its own
            // board; an instruction's kernels at a level (its chains and its helpers, the
            // baseline of its chains) go to one GPU together, their figures being computed
            // against each other.
            match planned.variant {
                Variant::Base => spec.on_every_gpu(),
                _ => spec.queue_group(planned.name.rsplit_once('/').map_or(planned.name.as_str(), |(g, _)| g)),
            }
        })
        .collect()
}
