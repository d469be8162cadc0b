// benches/shader.rs: a WGSL compute shader dispatched through wgpu's Vulkan backend (no CUDA),
// measured with the harness on the GPU it measures.
use energy_harness::prelude::*;
use energy_harness::same_pci_bus_id;

const WORKGROUPS: u32 = 132 * 8; // 8 workgroups of 256 threads per SM of an H100
const ITERATIONS: u32 = 2048; // 16 FMAs each

const SHADER: &str = r#"
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    var a = f32(id.x) * 1e-6 + 1.0;
    var d = 0.5;
    for (var i = 0u; i < 2048u; i = i + 1u) {
        a = fma(a, 0.999, 1e-3); d = fma(d, 0.999, 1e-3); a = fma(a, 0.999, 1e-3); d = fma(d, 0.999, 1e-3);
        a = fma(a, 0.999, 1e-3); d = fma(d, 0.999, 1e-3); a = fma(a, 0.999, 1e-3); d = fma(d, 0.999, 1e-3);
        a = fma(a, 0.999, 1e-3); d = fma(d, 0.999, 1e-3); a = fma(a, 0.999, 1e-3); d = fma(d, 0.999, 1e-3);
        a = fma(a, 0.999, 1e-3); d = fma(d, 0.999, 1e-3); a = fma(a, 0.999, 1e-3); d = fma(d, 0.999, 1e-3);
    }
    out[id.x] = a + d;
}
"#;

struct Shader {
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
}

fn setup(gpu: &CudaGpu) -> Result<Shader> {
    // The Vulkan adapter of the GPU the harness measures, found by its PCI bus id.
    let bus = gpu.pci_bus_id()?; // "0000:41:00.0"
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::VULKAN));
    let seen: Vec<String> = adapters.iter().map(|a| a.get_info().device_pci_bus_id).collect();
    let adapter = adapters
        .into_iter()
        .find(|a| same_pci_bus_id(&a.get_info().device_pci_bus_id, &bus))
        .ok_or_else(|| Error::library("wgpu enumerate_adapters", format!("no adapter at {bus}; wgpu sees {seen:?}")))?;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default()))
        .map_err(|e| Error::library("wgpu request_device", e))?;
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
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("fma"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry { binding: 0, resource: out.as_entire_binding() }],
    });
    Ok(Shader { device, queue, pipeline, bind_group })
}

/// wgpu's work is outside CUDA: the wait is wgpu's own.
fn sync(s: &mut Shader) -> Result<()> {
    s.device.poll(wgpu::PollType::wait_indefinitely()).map(|_| ()).map_err(|e| Error::library("wgpu poll", e))
}

/// One dispatch, submitted; the harness calls `sync` before it closes a window.
#[energy_bench(setup = setup, wait = sync, ops = 2 * 16 * ITERATIONS as u64 * WORKGROUPS as u64 * 256)]
fn wgpu_fma(s: &mut Shader, _stream: &Stream) -> Result<()> {
    let mut encoder = s.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: None });
        pass.set_pipeline(&s.pipeline);
        pass.set_bind_group(0, &s.bind_group, &[]);
        pass.dispatch_workgroups(WORKGROUPS, 1, 1);
    }
    s.queue.submit([encoder.finish()]);
    Ok(())
}

energy_main!();
