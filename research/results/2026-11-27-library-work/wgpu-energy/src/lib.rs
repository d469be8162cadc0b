//! The work under test: an FMA loop in a WGSL compute shader, dispatched through wgpu's
//! Vulkan backend (no CUDA at all).

/// Threads: 8 workgroups of 256 per SM of an H100.
pub const WORKGROUPS: u32 = 132 * 8;
/// Loop iterations of each thread (16 FMAs each).
pub const ITERATIONS: u32 = 2048;

const SHADER: &str = r#"
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
struct Params { iterations: u32 }
@group(0) @binding(1) var<uniform> params: Params;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    var a = f32(id.x) * 1e-6 + 1.0;
    var b = 0.999;
    var c = 1e-3;
    var d = 0.5;
    for (var i = 0u; i < params.iterations; i = i + 1u) {
        a = fma(a, b, c); d = fma(d, b, c); a = fma(a, b, c); d = fma(d, b, c);
        a = fma(a, b, c); d = fma(d, b, c); a = fma(a, b, c); d = fma(d, b, c);
        a = fma(a, b, c); d = fma(d, b, c); a = fma(a, b, c); d = fma(d, b, c);
        a = fma(a, b, c); d = fma(d, b, c); a = fma(a, b, c); d = fma(d, b, c);
    }
    out[id.x] = a + d;
}
"#;

/// The loop on one wgpu device.
pub struct Fma {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    /// The adapter's name and PCI bus id, as wgpu reports them.
    pub adapter: (String, String),
}

impl Fma {
    /// Opens the Vulkan adapter `pick` chooses among those wgpu enumerates (given each one's
    /// PCI bus id), and builds the loop of `iterations`.
    pub fn open(pick: impl Fn(&wgpu::AdapterInfo) -> bool, iterations: u32) -> Result<Fma, String> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::VULKAN));
        let names: Vec<String> =
            adapters.iter().map(|a| format!("{} ({})", a.get_info().name, a.get_info().device_pci_bus_id)).collect();
        let adapter = adapters
            .into_iter()
            .find(|a| pick(&a.get_info()))
            .ok_or_else(|| format!("no Vulkan adapter matches; wgpu sees {names:?}"))?;
        let info = adapter.get_info();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default()))
            .map_err(|e| format!("request_device: {e}"))?;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("fma"),
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("fma"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let out = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("out"),
            size: u64::from(WORKGROUPS) * 256 * 4,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let params = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("params"),
            size: 16,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut bytes = [0u8; 16];
        bytes[..4].copy_from_slice(&iterations.to_le_bytes());
        queue.write_buffer(&params, 0, &bytes);
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("fma"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: out.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: params.as_entire_binding() },
            ],
        });
        Ok(Fma { device, queue, pipeline, bind_group, adapter: (info.name, info.device_pci_bus_id) })
    }

    /// One dispatch of the loop, submitted; returns at once.
    pub fn dispatch(&self) {
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: None });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.bind_group, &[]);
            pass.dispatch_workgroups(WORKGROUPS, 1, 1);
        }
        self.queue.submit([encoder.finish()]);
    }

    /// wgpu's own wait: until every submission has completed.
    pub fn wait(&self) -> Result<(), String> {
        self.device.poll(wgpu::PollType::wait_indefinitely()).map(|_| ()).map_err(|e| format!("poll: {e}"))
    }
}
