//! What every kernel's host side shares: building a compute pipeline from
//! WGSL, binding buffers to it, and the resulting [`Dispatch`], the unit that
//! layers chain and benchmarks time.

use wgpu::util::DeviceExt as _;

use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::{BenchError, Result};
use crate::scope::catch_gpu_errors_now;

/// The kind of one binding, in binding order, as the WGSL headers list them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// `var<uniform>`: the kernel's parameters.
    Uniform,
    /// `var<storage, read>`.
    Read,
    /// `var<storage, read_write>`.
    ReadWrite,
}

/// A compiled pipeline with its bind group layout.
#[derive(Debug)]
pub(crate) struct KernelPipeline {
    kernel: &'static str,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

/// Everything [`KernelPipeline::new`] needs to know about one kernel.
pub(crate) struct PipelineSpec<'a> {
    /// The kernel's name in labels and errors.
    pub kernel: &'static str,
    /// The WGSL, written for `f32` (see [`DType::specialize`]).
    pub source: &'a str,
    /// The type to specialise the WGSL for.
    pub dtype: DType,
    /// The bindings of group 0, in order.
    pub slots: &'a [Slot],
    /// Values of the shader's `override` constants.
    pub constants: &'a [(&'a str, f64)],
}

impl KernelPipeline {
    /// Specialises, compiles and builds the pipeline on `ctx`'s device.
    ///
    /// # Errors
    ///
    /// [`BenchError::MissingFeature`] if `spec.dtype` needs a feature the
    /// device lacks, [`BenchError::ShaderTemplate`] for a malformed source,
    /// [`BenchError::Validation`] if the device rejects the shader.
    pub(crate) fn new(ctx: &GpuContext, spec: &PipelineSpec<'_>) -> Result<Self> {
        let device = ctx.device();
        let needed = spec.dtype.required_features();
        if !device.features().contains(needed) {
            return Err(BenchError::MissingFeature {
                kernel: spec.kernel,
                feature: needed,
            });
        }
        let source = spec.dtype.specialize(spec.kernel, spec.source)?;
        let (pipeline, layout) =
            catch_gpu_errors_now(device, spec.kernel, || build(device, spec, source))?;
        Ok(Self {
            kernel: spec.kernel,
            pipeline,
            layout,
        })
    }

    /// Binds `uniform` (the parameters, copied into a new buffer) and
    /// `buffers` (bindings 1.., in order) and returns the dispatch of
    /// `workgroups` workgroups.
    ///
    /// # Errors
    ///
    /// [`BenchError::InputTooLarge`] if a workgroup count exceeds the
    /// device's `max_compute_workgroups_per_dimension`;
    /// [`BenchError::Validation`] if the device rejects the bind group.
    pub(crate) fn bind(
        &self,
        ctx: &GpuContext,
        uniform: &[u8],
        buffers: &[&wgpu::Buffer],
        workgroups: [u32; 3],
    ) -> Result<Dispatch> {
        let device = ctx.device();
        let max = device.limits().max_compute_workgroups_per_dimension;
        if let Some(&too_many) = workgroups.iter().find(|&&count| count > max) {
            return Err(BenchError::InputTooLarge {
                kernel: self.kernel,
                len: too_many as usize,
                max: u64::from(max),
            });
        }
        catch_gpu_errors_now(device, self.kernel, || {
            let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(self.kernel),
                contents: uniform,
                usage: wgpu::BufferUsages::UNIFORM,
            });
            let entries: Vec<_> = std::iter::once(&params)
                .chain(buffers.iter().copied())
                .zip(0..)
                .map(|(buffer, binding)| wgpu::BindGroupEntry {
                    binding,
                    resource: buffer.as_entire_binding(),
                })
                .collect();
            let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(self.kernel),
                layout: &self.layout,
                entries: &entries,
            });
            Dispatch {
                kernel: self.kernel,
                pipeline: self.pipeline.clone(),
                bind_group,
                workgroups,
                _params: params,
            }
        })
    }
}

/// Compiles `source` and builds the pipeline and layout for `spec`.
fn build(
    device: &wgpu::Device,
    spec: &PipelineSpec<'_>,
    source: String,
) -> (wgpu::ComputePipeline, wgpu::BindGroupLayout) {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(spec.kernel),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let entries: Vec<_> = spec
        .slots
        .iter()
        .zip(0..)
        .map(|(slot, binding)| {
            let ty = match slot {
                Slot::Uniform => wgpu::BufferBindingType::Uniform,
                Slot::Read => wgpu::BufferBindingType::Storage { read_only: true },
                Slot::ReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
            };
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
        })
        .collect();
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(spec.kernel),
        entries: &entries,
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(spec.kernel),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(spec.kernel),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: spec.constants,
            ..Default::default()
        },
        cache: None,
    });
    (pipeline, layout)
}

/// One bound kernel launch: pipeline, bind group (parameters and tensors)
/// and workgroup counts. Recording it again replays the same work, so a
/// layer is a list of `Dispatch`es over shared [`GpuTensor`](crate::GpuTensor)
/// buffers, and a benchmark records one many times in a single pass.
#[derive(Debug, Clone)]
pub struct Dispatch {
    kernel: &'static str,
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    workgroups: [u32; 3],
    /// Held so the parameters live exactly as long as the dispatch.
    _params: wgpu::Buffer,
}

impl Dispatch {
    /// The kernel's name.
    pub fn kernel(&self) -> &'static str {
        self.kernel
    }

    /// The workgroup counts along x, y and z.
    pub fn workgroups(&self) -> [u32; 3] {
        self.workgroups
    }

    /// Records the launch into `pass`.
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>) {
        let [x, y, z] = self.workgroups;
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.dispatch_workgroups(x, y, z);
    }
}

/// Records `dispatches` in order into one compute pass of `encoder`.
/// Storage writes of one dispatch are visible to the next (WebGPU orders
/// dispatches within a pass), so a chain needs no extra synchronisation.
pub fn encode_all(encoder: &mut wgpu::CommandEncoder, label: &str, dispatches: &[Dispatch]) {
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some(label),
        timestamp_writes: None,
    });
    for dispatch in dispatches {
        dispatch.record(&mut pass);
    }
}

/// Submits `dispatches` as one command buffer, inside error scopes.
///
/// # Errors
///
/// [`BenchError::Validation`] / [`BenchError::OutOfMemory`] if the device
/// rejects the work.
pub async fn submit(ctx: &GpuContext, label: &'static str, dispatches: &[Dispatch]) -> Result<()> {
    crate::scope::catch_gpu_errors(ctx.device(), label, || {
        let mut encoder = ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
        encode_all(&mut encoder, label, dispatches);
        ctx.queue().submit([encoder.finish()]);
    })
    .await
}

/// Workgroup counts for `n` independent items at `per_group` items per
/// workgroup: along x up to `max_x`, then rows along y. Kernels using it
/// recover the item index as `(wid.y * num_workgroups.x + wid.x) *
/// per_group + lid.x` and skip indices `>= n`.
///
/// # Example
///
/// ```
/// use vramfit_bench::dispatch_1d;
///
/// assert_eq!(dispatch_1d(1000, 256, 65_535), [4, 1, 1]);
/// assert_eq!(dispatch_1d(20_000_000, 256, 65_535), [65_535, 2, 1]);
/// ```
pub fn dispatch_1d(n: u64, per_group: u32, max_x: u32) -> [u32; 3] {
    let groups = n.div_ceil(u64::from(per_group.max(1)));
    let max_x = u64::from(max_x.max(1));
    if groups <= max_x {
        return [groups as u32, 1, 1];
    }
    let rows = groups.div_ceil(max_x);
    [max_x as u32, u32::try_from(rows).unwrap_or(u32::MAX), 1]
}

/// Fails unless `value` fits a `u32` shader parameter.
pub(crate) fn to_u32(kernel: &'static str, what: &'static str, value: usize) -> Result<u32> {
    u32::try_from(value).map_err(|_| BenchError::InvalidShape {
        kernel,
        what: format!("{what} = {value} does not fit in u32"),
    })
}

#[cfg(test)]
mod tests {
    use super::dispatch_1d;

    #[test]
    fn dispatch_1d_covers_every_item_exactly_once_rounded_up() {
        for (n, per, max) in [
            (0, 256, 65_535),
            (1, 256, 4),
            (256, 256, 4),
            (257, 256, 4),
            (5000, 64, 7),
        ] {
            let [x, y, z] = dispatch_1d(n, per, max);
            let capacity = u64::from(x) * u64::from(y) * u64::from(z) * u64::from(per);
            assert!(capacity >= n && x <= max, "{n}: {x}x{y}");
            assert!(
                capacity == 0 || capacity < n + u64::from(per) * u64::from(x),
                "{n}: {x}x{y} wastes a whole row"
            );
        }
    }
}
