//! Host side of `shaders/saxpy.wgsl`: `y = a * x + y` on `f32` arrays.

use wgpu::util::DeviceExt as _;

use crate::context::GpuContext;
use crate::error::{BenchError, Result};
use crate::readback::read_buffer;
use crate::scope::{catch_gpu_errors, catch_gpu_errors_now};

/// The kernel's name in labels and errors.
const KERNEL: &str = "saxpy";

/// Invocations per workgroup. Passed to the shader as the `WORKGROUP_SIZE`
/// override and used here to size the dispatch; this is the only place the
/// number is written down. 256 is WebGPU's default limit for
/// `max_compute_invocations_per_workgroup`, so every adapter accepts it.
pub const SAXPY_WORKGROUP_SIZE: u32 = 256;

/// The kernel's WGSL, compiled into the binary so that native and wasm
/// builds need no file access at run time.
const SHADER_SOURCE: &str = include_str!("../../../shaders/saxpy.wgsl");

/// Bytes per element.
const ELEMENT_SIZE: u64 = size_of::<f32>() as u64;

/// The shader's `Params` uniform (binding 0).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    a: f32,
    n: u32,
}

/// The saxpy kernel (`y[i] = a * x[i] + y[i]`) with its pipeline built once.
///
/// Buffers are created per [`Saxpy::run`] call, because their size depends
/// on the input.
#[derive(Debug)]
pub struct Saxpy {
    pipeline: wgpu::ComputePipeline,
    bind_group_layout: wgpu::BindGroupLayout,
    /// The most elements one call can process on this device.
    max_len: u64,
}

impl Saxpy {
    /// Compiles the shader and builds the pipeline on `ctx`'s device.
    ///
    /// # Errors
    ///
    /// [`BenchError::UnsupportedLimit`] if the device cannot run
    /// [`SAXPY_WORKGROUP_SIZE`] invocations per workgroup;
    /// [`BenchError::Validation`] if the device rejects the shader or the
    /// pipeline. (In a browser such errors arrive asynchronously, so they
    /// surface from [`Saxpy::run`] instead.)
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        let device = ctx.device();
        let limits = device.limits();
        check_limit(
            "max_compute_invocations_per_workgroup",
            limits.max_compute_invocations_per_workgroup,
        )?;
        check_limit(
            "max_compute_workgroup_size_x",
            limits.max_compute_workgroup_size_x,
        )?;

        let (pipeline, bind_group_layout) =
            catch_gpu_errors_now(device, KERNEL, || build_pipeline(device))?;
        Ok(Self {
            pipeline,
            bind_group_layout,
            max_len: max_len(&limits),
        })
    }

    /// The most elements one [`Saxpy::run`] call accepts on this device.
    pub fn max_len(&self) -> u64 {
        self.max_len
    }

    /// Computes `a * x[i] + y[i]` for every `i` on the GPU and returns the
    /// result; `y` itself is not modified.
    ///
    /// # Errors
    ///
    /// [`BenchError::LengthMismatch`] if `x` and `y` differ in length,
    /// [`BenchError::InputTooLarge`] if they exceed [`Saxpy::max_len`],
    /// [`BenchError::Validation`] / [`BenchError::OutOfMemory`] if the device
    /// rejects the work, and the read-back errors of [`BenchError`].
    ///
    /// Natively this blocks the calling thread while the GPU works (wgpu-core
    /// has no other way to wait); in a browser it yields to the event loop.
    pub async fn run(&self, ctx: &GpuContext, a: f32, x: &[f32], y: &[f32]) -> Result<Vec<f32>> {
        if x.len() != y.len() {
            return Err(BenchError::LengthMismatch {
                kernel: KERNEL,
                left: x.len(),
                right: y.len(),
            });
        }
        if x.is_empty() {
            // Zero-sized bindings are invalid, and there is nothing to do.
            return Ok(Vec::new());
        }
        let n = u32::try_from(x.len())
            .ok()
            .filter(|&n| u64::from(n) <= self.max_len)
            .ok_or(BenchError::InputTooLarge {
                kernel: KERNEL,
                len: x.len(),
                max: self.max_len,
            })?;

        let device = ctx.device();
        let staging =
            catch_gpu_errors(device, KERNEL, || self.submit(ctx, Params { a, n }, x, y)).await?;
        read_buffer(device, &staging).await
    }

    /// Uploads the inputs, records and submits the dispatch plus a copy of
    /// `y` into a mappable buffer, and returns that buffer.
    fn submit(&self, ctx: &GpuContext, params: Params, x: &[f32], y: &[f32]) -> wgpu::Buffer {
        use wgpu::BufferUsages as Usage;

        let device = ctx.device();
        let upload = |label, contents, usage| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
        };
        // In binding order; see the header of shaders/saxpy.wgsl.
        let params_buffer = upload("saxpy params", bytemuck::bytes_of(&params), Usage::UNIFORM);
        let x_buffer = upload("saxpy x", bytemuck::cast_slice(x), Usage::STORAGE);
        let y_buffer = upload(
            "saxpy y",
            bytemuck::cast_slice(y),
            Usage::STORAGE | Usage::COPY_SRC,
        );
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("saxpy y readback"),
            size: y_buffer.size(),
            usage: Usage::MAP_READ | Usage::COPY_DST,
            mapped_at_creation: false,
        });
        let entries: Vec<_> = [&params_buffer, &x_buffer, &y_buffer]
            .into_iter()
            .zip(0..)
            .map(|(buffer, binding)| wgpu::BindGroupEntry {
                binding,
                resource: buffer.as_entire_binding(),
            })
            .collect();
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("saxpy bind group"),
            layout: &self.bind_group_layout,
            entries: &entries,
        });

        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("saxpy encoder"),
        });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("saxpy pass"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(params.n.div_ceil(SAXPY_WORKGROUP_SIZE), 1, 1);
        }
        encoder.copy_buffer_to_buffer(&y_buffer, 0, &staging, 0, y_buffer.size());
        ctx.queue().submit([encoder.finish()]);
        staging
    }
}

/// Compiles `shaders/saxpy.wgsl` and builds its pipeline and bind group
/// layout, with [`SAXPY_WORKGROUP_SIZE`] as the `WORKGROUP_SIZE` override.
fn build_pipeline(device: &wgpu::Device) -> (wgpu::ComputePipeline, wgpu::BindGroupLayout) {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("saxpy.wgsl"),
        source: wgpu::ShaderSource::Wgsl(SHADER_SOURCE.into()),
    });
    let bind_group_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("saxpy bind group layout"),
        entries: &[
            layout_entry(0, wgpu::BufferBindingType::Uniform),
            layout_entry(1, wgpu::BufferBindingType::Storage { read_only: true }),
            layout_entry(2, wgpu::BufferBindingType::Storage { read_only: false }),
        ],
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("saxpy pipeline layout"),
        bind_group_layouts: &[Some(&bind_group_layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("saxpy pipeline"),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: &[("WORKGROUP_SIZE", f64::from(SAXPY_WORKGROUP_SIZE))],
            ..Default::default()
        },
        cache: None,
    });

    (pipeline, bind_group_layout)
}

/// The most elements one call can process within `limits`: bounded by the
/// dispatch size, the storage binding and buffer sizes, and `n: u32`.
fn max_len(limits: &wgpu::Limits) -> u64 {
    let max_by_dispatch =
        u64::from(limits.max_compute_workgroups_per_dimension) * u64::from(SAXPY_WORKGROUP_SIZE);
    let max_by_binding = limits.max_storage_buffer_binding_size / ELEMENT_SIZE;
    let max_by_buffer = limits.max_buffer_size / ELEMENT_SIZE;
    max_by_dispatch
        .min(max_by_binding)
        .min(max_by_buffer)
        .min(u64::from(u32::MAX))
}

/// Fails if the device's `limit` is below [`SAXPY_WORKGROUP_SIZE`].
fn check_limit(limit: &'static str, available: u32) -> Result<()> {
    if available < SAXPY_WORKGROUP_SIZE {
        return Err(BenchError::UnsupportedLimit {
            kernel: KERNEL,
            limit,
            required: u64::from(SAXPY_WORKGROUP_SIZE),
            available: u64::from(available),
        });
    }
    Ok(())
}

/// A compute-visible buffer binding without dynamic offsets.
fn layout_entry(binding: u32, ty: wgpu::BufferBindingType) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::Saxpy;
    use crate::context::GpuContext;

    /// Compile-time check, never called: natively `run` must stay `Send` so
    /// that callers can drive it from a multi-threaded executor.
    #[expect(dead_code, reason = "only needs to compile")]
    fn run_future_is_send(kernel: &Saxpy, ctx: &GpuContext) {
        fn assert_send<T: Send>(_: T) {}
        assert_send(kernel.run(ctx, 1.0, &[], &[]));
    }
}
