//! Each configuration on the GPU: the region layout from the device's own cache sizes, the loop sized, the kernel loaded and its stored results checked against the host's.

use super::*;

/// How a configuration lays out its data on a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// Blocks.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
    /// Elements of each block's region.
    pub sub: u64,
    /// Elements between a thread's consecutive accesses.
    pub stride: u64,
    /// Warm-up steps (one pass over the region).
    pub warm: u64,
}

impl Layout {
    /// Bytes of each block's region.
    pub fn region_bytes(&self) -> u64 {
        self.sub * ELEMENT_BYTES
    }

    /// Sectors one step of a block touches: its threads' consecutive 8-byte elements.
    pub fn sectors_per_block_step(&self) -> u64 {
        (u64::from(self.threads) * ELEMENT_BYTES).div_ceil(SECTOR_BYTES)
    }

    /// The dependent accesses each thread makes in `iterations` of `kernel`'s measurement
    /// loop, and the sectors the grid accesses with them.
    pub fn measured_accesses(&self, kernel: MemoryKernel, iterations: u32) -> (f64, f64) {
        let per_thread = f64::from(iterations) * f64::from(kernel.accesses_per_iteration());
        (per_thread, per_thread * f64::from(self.blocks) * self.sectors_per_block_step() as f64)
    }

    /// Thread accesses per sector access (4 for full sectors, fewer below 4 threads).
    pub fn accesses_per_sector(&self) -> f64 {
        f64::from(self.threads) / self.sectors_per_block_step() as f64
    }
}

/// The region each block of `config` gets, from the GPU's properties: shared memory
/// [`SHARED_REGION_BYTES`]; L1 a quarter of the shared memory per SM (the unified L1 holds
/// at least that with the kernel using no shared memory); L2 a quarter of the L2 split among
/// the blocks; DRAM eight times the L2 (at most an eighth of the memory) split among them.
pub fn layout(config: &Config, properties: &GpuProperties) -> Result<Layout> {
    let blocks = config.blocks.count(properties.sm_count.max(1));
    let threads = config.threads;
    if threads == 0 || threads > properties.max_threads_per_block {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{}: {threads} threads per block (the GPU allows 1 to {})",
                config.key(),
                properties.max_threads_per_block
            ),
        ));
    }
    // The STORE kernels' address step is STORE_THREADS elements (an immediate): fewer threads
    // leave part of each step unwritten (whole sectors still, for a divisor), more would
    // write each other's elements.
    if config.kernel.stores() && !STORE_THREADS.is_multiple_of(threads) {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{}: the STORE kernels are compiled for {STORE_THREADS} threads per block or a divisor of it",
                config.key()
            ),
        ));
    }
    let stride = if config.kernel.stores() { u64::from(STORE_THREADS) } else { load_stride(threads) };
    let granule = if config.kernel.stores() { stride * u64::from(STORE_UNROLL) } else { stride };
    let region_bytes = match config.level {
        Level::Shared => SHARED_REGION_BYTES,
        Level::L1 => properties.shared_per_sm_bytes / 4,
        Level::L2 => properties.l2_bytes / 4 / u64::from(blocks),
        Level::Dram => (8 * properties.l2_bytes).min(properties.total_memory_bytes / 8) / u64::from(blocks),
    };
    let sub = region_bytes / ELEMENT_BYTES / granule * granule;
    if sub < granule.max(u64::from(threads)) || sub > u64::from(u32::MAX) {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{}: a region of {region_bytes} bytes per block does not fit {threads} threads with a stride of {stride} elements",
                config.key()
            ),
        ));
    }
    let warm = if config.kernel == MemoryKernel::LoadShared || config.kernel == MemoryKernel::StoreShared {
        0
    } else {
        sub / stride
    };
    Ok(Layout { blocks, threads, sub, stride, warm })
}

/// A configuration ready on the GPU: its kernel, data and sized iteration unit.
#[derive(Clone)]
pub(super) struct Prepared {
    pub(super) kernel: Kernel,
    pub(super) launch: LaunchConfig,
    pub(super) layout: Layout,
    pub(super) unit: u32,
    pub(super) table: Option<Arc<DeviceBuffer<u64>>>,
    pub(super) out: Arc<DeviceBuffer<u8>>,
    pub(super) verified_threads: usize,
}

pub(super) fn args(config: &Config, p: &Prepared, iterations: u32) -> KernelArgs {
    let l = &p.layout;
    let sub = l.sub as u32;
    let warm = l.warm as u32;
    let with_table = |a: KernelArgs| match &p.table {
        Some(t) => a.buffer(t.as_ref()),
        None => a,
    };
    match config.kernel {
        MemoryKernel::LoadShared => {
            KernelArgs::new().buffer(p.out.as_ref()).u32(sub).u32(l.stride as u32).u32(iterations)
        }
        MemoryKernel::StoreShared => KernelArgs::new().buffer(p.out.as_ref()).u32(sub).u32(warm).u32(iterations),
        MemoryKernel::StoreCg => {
            with_table(KernelArgs::new()).buffer(p.out.as_ref()).u32(sub).u32(warm).u32(iterations)
        }
        _ => with_table(KernelArgs::new()).buffer(p.out.as_ref()).u32(sub).u32(warm).u32(iterations).u32(DIVISOR),
    }
}

pub(super) fn verify(gpu: &CudaGpu, config: &Config, p: &Prepared, iterations: u32) -> Result<usize> {
    p.kernel.launch(gpu.stream(), p.launch, &args(config, p, iterations))?;
    gpu.synchronize()?;
    check_stored(gpu, config, p, iterations)
}

/// Compares what the last launch (of `iterations`) stored with the host's evaluation, for a
/// sample of threads; the number checked.
pub(super) fn check_stored(gpu: &CudaGpu, config: &Config, p: &Prepared, iterations: u32) -> Result<usize> {
    if gpu.is_checked() {
        // Nothing ran: there is no stored result to compare.
        return Ok(0);
    }
    let stored = gpu.download(p.out.as_ref())?;
    let l = p.layout;
    let shape = ChaseShape { sub: l.sub, stride: l.stride, warm: l.warm, iterations: u64::from(iterations) };
    let slot = config.kernel.output_bytes_per_thread() as usize;
    let word = |at: usize| -> Option<u64> {
        stored.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    };
    let threads = u64::from(l.blocks) * u64::from(l.threads);
    let checked = sample_threads(threads);
    for &g in &checked {
        let (block, thread) = (g / u64::from(l.threads), g % u64::from(l.threads));
        let at = g as usize * slot;
        let got = word(at).ok_or_else(|| {
            Error::new(
                ErrorKind::WrongResult,
                format!("{}: the output buffer has no slot for thread {g}", config.key()),
            )
        })?;
        let expect = if config.kernel.stores() {
            store_offset(shape, thread)
        } else {
            load_offset(config.kernel, shape, thread)
        };
        if got != expect {
            return Err(Error::new(
                ErrorKind::WrongResult,
                format!(
                    "{} ({}) stored offset {got} for thread {g} after {iterations} iterations; the host expects {expect}: the chain or the kernel is wrong",
                    config.key(),
                    config.kernel.entry()
                ),
            ));
        }
        if config.kernel.divides() {
            let table = p.table.as_ref().map(|t| t.device_address()).unwrap_or(0);
            let acc = word(at + 8).unwrap_or(u64::MAX);
            let host = u64::from(div_accumulator(shape, table, block, thread, DIVISOR));
            if acc != host {
                return Err(Error::new(
                    ErrorKind::WrongResult,
                    format!("{}: thread {g}'s division accumulator is {acc}, the host's {host}", config.key()),
                ));
            }
        }
    }
    Ok(checked.len())
}

pub(super) fn prepare(gpu: &Arc<CudaGpu>, config: &Config, options: &SuiteOptions) -> Result<Prepared> {
    let mut prepared = load(gpu, config)?;
    if gpu.is_checked() {
        // No GPU time to size the loop by: the smallest unit, for the checked launches.
        return Ok(prepared);
    }

    // The unit: the largest point's measurement part takes about `launch_s`.
    let timer = gpu.timer()?;
    let time = |iterations: u32| -> Result<f64> {
        timer.start(gpu.stream())?;
        prepared.kernel.launch(gpu.stream(), prepared.launch, &args(config, &prepared, iterations))?;
        timer.stop(gpu.stream())?;
        gpu.synchronize()?;
        timer.elapsed_s()
    };
    let largest = f64::from(*config.points.iter().max().unwrap_or(&1)).max(1.0);
    let target = options.launch_s / largest;
    time(0)?;
    let warm_only = time(0)?;
    let unit = size_loop(time, warm_only, target, (f64::from(u32::MAX) / largest) as u32)?;
    prepared.unit = unit;
    Ok(prepared)
}

/// A configuration's kernel and data on the GPU, checked by one launch of 2 iterations
/// (unit 1: not sized).
pub(super) fn load(gpu: &Arc<CudaGpu>, config: &Config) -> Result<Prepared> {
    let properties = gpu.properties()?;
    let layout = layout(config, &properties)?;
    let module = gpu.load_ptx(&generate(config.kernel), &config.kernel.file_name(), JitOptLevel::O4)?;
    let kernel = module.kernel(config.kernel.entry())?;
    let elements = layout.sub * u64::from(layout.blocks);
    let shared_bytes = if config.kernel.shared() { layout.region_bytes() as u32 } else { 0 };
    let table = if config.kernel.shared() {
        None
    } else {
        let table = gpu.alloc_zeros::<u64>(elements as usize)?;
        if !config.kernel.stores() {
            let init = gpu.load_ptx(&generate(MemoryKernel::Init), "init.ptx", JitOptLevel::O4)?.kernel("init")?;
            let init_args = KernelArgs::new().buffer(&table).u64(elements).u64(layout.sub).u64(layout.stride);
            init.launch(gpu.stream(), LaunchConfig::linear(1024, 256), &init_args)?;
        }
        Some(Arc::new(table))
    };
    let out_bytes = u64::from(layout.blocks) * u64::from(layout.threads) * config.kernel.output_bytes_per_thread();
    let out = Arc::new(gpu.alloc_zeros::<u8>(out_bytes as usize)?);
    let launch = LaunchConfig { shared_mem_bytes: shared_bytes, ..LaunchConfig::linear(layout.blocks, layout.threads) };
    let mut prepared = Prepared { kernel, launch, layout, unit: 1, table, out, verified_threads: 0 };
    prepared.verified_threads = verify(gpu, config, &prepared, 2)?;
    Ok(prepared)
}
