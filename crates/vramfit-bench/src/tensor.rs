//! Tensors that live on the GPU: a buffer, its element count and type.

use wgpu::util::DeviceExt as _;

use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::{BenchError, Result};
use crate::readback::read_buffer;
use crate::scope::{catch_gpu_errors, catch_gpu_errors_now};

/// A flat array of `len` elements of `dtype` in a storage buffer that can
/// also be copied from and to, so kernels can chain on it and tests can read
/// it back.
#[derive(Debug, Clone)]
pub struct GpuTensor {
    buffer: wgpu::Buffer,
    len: usize,
    dtype: DType,
}

impl GpuTensor {
    /// Uploads `values`, converted to `dtype`.
    ///
    /// # Errors
    ///
    /// [`BenchError::InputTooLarge`] beyond the device's buffer or binding
    /// size, [`BenchError::Validation`] / [`BenchError::OutOfMemory`] if the
    /// device refuses the buffer.
    pub fn from_f32(ctx: &GpuContext, label: &str, values: &[f32], dtype: DType) -> Result<Self> {
        let size = padded_size(ctx, values.len(), dtype)?;
        let mut contents = dtype.encode(values);
        contents.resize(size as usize, 0);
        let buffer = catch_gpu_errors_now(ctx.device(), "tensor", || {
            ctx.device()
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents: &contents,
                    usage: usage(),
                })
        })?;
        Ok(Self {
            buffer,
            len: values.len(),
            dtype,
        })
    }

    /// A tensor of `len` zeros.
    ///
    /// # Errors
    ///
    /// As [`GpuTensor::from_f32`].
    pub fn zeros(ctx: &GpuContext, label: &str, len: usize, dtype: DType) -> Result<Self> {
        let size = padded_size(ctx, len, dtype)?;
        let buffer = catch_gpu_errors_now(ctx.device(), "tensor", || {
            ctx.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: usage(),
                mapped_at_creation: false,
            })
        })?;
        Ok(Self { buffer, len, dtype })
    }

    /// The buffer, for binding or copying.
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Bytes of data (without the padding to a multiple of four).
    pub fn bytes(&self) -> u64 {
        self.len as u64 * self.dtype.size()
    }

    /// Overwrites the contents with `values` (queued; takes effect before
    /// the next submission).
    ///
    /// # Errors
    ///
    /// [`BenchError::ShapeMismatch`] if `values` has another length.
    pub fn write(&self, ctx: &GpuContext, values: &[f32]) -> Result<()> {
        if values.len() != self.len {
            return Err(BenchError::ShapeMismatch {
                kernel: "tensor",
                tensor: "write",
                expected: self.len,
                actual: values.len(),
            });
        }
        let mut bytes = self.dtype.encode(values);
        bytes.resize(self.buffer.size() as usize, 0);
        ctx.queue().write_buffer(&self.buffer, 0, &bytes);
        Ok(())
    }

    /// Copies the tensor back and widens it to `f32`, after all work
    /// submitted so far.
    ///
    /// # Errors
    ///
    /// The device and read-back errors of [`BenchError`].
    pub async fn read(&self, ctx: &GpuContext) -> Result<Vec<f32>> {
        let device = ctx.device();
        let staging = catch_gpu_errors(device, "tensor read-back", || {
            let staging = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("tensor read-back"),
                size: self.buffer.size(),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("tensor read-back"),
            });
            encoder.copy_buffer_to_buffer(&self.buffer, 0, &staging, 0, self.buffer.size());
            ctx.queue().submit([encoder.finish()]);
            staging
        })
        .await?;
        let bytes: Vec<u8> = read_buffer(device, &staging).await?;
        Ok(self.dtype.decode(&bytes, self.len))
    }

    /// Fails unless the tensor has `expected` elements of `dtype`; `kernel`
    /// and `name` label the error.
    pub(crate) fn expect(
        &self,
        kernel: &'static str,
        name: &'static str,
        expected: usize,
        dtype: DType,
    ) -> Result<()> {
        if self.dtype != dtype {
            return Err(BenchError::DTypeMismatch {
                kernel,
                tensor: name,
                expected: dtype,
                actual: self.dtype,
            });
        }
        if self.len != expected {
            return Err(BenchError::ShapeMismatch {
                kernel,
                tensor: name,
                expected,
                actual: self.len,
            });
        }
        Ok(())
    }
}

/// Storage plus copies both ways.
fn usage() -> wgpu::BufferUsages {
    wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST
}

/// The buffer size for `len` elements: a multiple of four bytes (copies and
/// bindings need it), at least four (zero-sized bindings are invalid), and
/// within the device's limits.
fn padded_size(ctx: &GpuContext, len: usize, dtype: DType) -> Result<u64> {
    let limits = ctx.device().limits();
    let max_bytes = limits
        .max_buffer_size
        .min(limits.max_storage_buffer_binding_size);
    let bytes = (len as u64)
        .saturating_mul(dtype.size())
        .next_multiple_of(4)
        .max(4);
    if bytes > max_bytes {
        return Err(BenchError::InputTooLarge {
            kernel: "tensor",
            len,
            max: max_bytes / dtype.size(),
        });
    }
    Ok(bytes)
}
