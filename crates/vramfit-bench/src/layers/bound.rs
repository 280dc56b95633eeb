//! A layer bound to GPU buffers: its forward and backward dispatches, every
//! tensor it allocated by name, which of them are kept for backward, and
//! the products (matmuls, convolutions) tests check against the CPU.

use crate::context::GpuContext;
use crate::data::seeded_f32s;
use crate::dtype::DType;
use crate::error::{BenchError, Result};
use crate::kernels::{Conv2dShape, MatmulShape};
use crate::pipeline::Dispatch;
use crate::tensor::GpuTensor;

/// One tensor a layer keeps from forward for backward, with its size as
/// allocated on the device.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SavedTensor {
    /// The tensor's name in the layer (PyTorch module path style).
    pub name: String,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Its element type.
    pub dtype: DType,
    /// Bytes of data, elements times element size.
    pub data_bytes: u64,
    /// Bytes of the `wgpu::Buffer` holding it (`Buffer::size()`: the data
    /// padded to a multiple of four bytes, at least four).
    pub allocated_bytes: u64,
}

/// What a [`Product`] computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ProductKind {
    /// `out = alpha op(a) op(b)` ([`Matmul`](crate::kernels::Matmul)).
    Matmul(MatmulShape),
    /// Convolution forward: `a` = input, `b` = weight (zero bias).
    Conv(Conv2dShape),
    /// Convolution input gradient: `a` = output gradient, `b` = weight.
    ConvData(Conv2dShape),
    /// Convolution weight gradient: `a` = output gradient, `b` = saved input.
    ConvFilter(Conv2dShape),
}

impl ProductKind {
    /// Floating-point operations.
    pub fn flops(&self) -> f64 {
        match self {
            ProductKind::Matmul(shape) => shape.flops(),
            // Each gradient of a convolution has the forward's multiply-adds.
            ProductKind::Conv(shape)
            | ProductKind::ConvData(shape)
            | ProductKind::ConvFilter(shape) => shape.flops(),
        }
    }
}

/// One matmul or convolution of a layer, naming its operand tensors (see
/// [`BoundLayer::tensor`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Product {
    /// What it is, e.g. `mlp.c_fc dW`.
    pub name: String,
    /// The operation and its shape.
    pub kind: ProductKind,
    /// The first operand.
    pub a: String,
    /// The second operand.
    pub b: String,
    /// The result.
    pub out: String,
    /// Part of the backward pass.
    pub backward: bool,
}

/// A layer ready to run: dispatches over buffers that live as long as it.
#[derive(Debug)]
pub struct BoundLayer {
    /// Forward, in order.
    pub forward: Vec<Dispatch>,
    /// Backward (from the seeded output gradient), in order.
    pub backward: Vec<Dispatch>,
    /// The tensors kept for backward, in forward order.
    pub saved: Vec<SavedTensor>,
    /// Every matmul and convolution, forward and backward.
    pub products: Vec<Product>,
    tensors: Vec<(String, Vec<usize>, GpuTensor)>,
}

impl BoundLayer {
    /// The tensor named `name` (inputs, weights, activations, gradients).
    pub fn tensor(&self, name: &str) -> Option<&GpuTensor> {
        self.tensors
            .iter()
            .find(|(n, ..)| n == name)
            .map(|(.., t)| t)
    }

    /// Every tensor's name, in allocation order.
    pub fn tensor_names(&self) -> impl Iterator<Item = &str> {
        self.tensors.iter().map(|(n, ..)| n.as_str())
    }

    /// The sum of the saved tensors' allocated bytes.
    pub fn saved_bytes(&self) -> u64 {
        self.saved.iter().map(|s| s.allocated_bytes).sum()
    }

    /// Bytes of every buffer the layer allocated (weights, saved tensors,
    /// temporaries and gradients).
    pub fn allocated_bytes(&self) -> u64 {
        self.tensors.iter().map(|(.., t)| t.buffer().size()).sum()
    }

    /// FLOPs of the forward (`false`) or backward (`true`) matmuls and
    /// convolutions; element-wise work is not counted.
    pub fn flops(&self, backward: bool) -> f64 {
        self.products
            .iter()
            .filter(|p| p.backward == backward)
            .map(|p| p.kind.flops())
            .sum()
    }
}

/// Builds a [`BoundLayer`]: allocates named tensors, marks the saved ones,
/// collects dispatches and products.
pub(crate) struct LayerBuilder<'a> {
    ctx: &'a GpuContext,
    dtype: DType,
    seed: u64,
    tensors: Vec<(String, Vec<usize>, GpuTensor)>,
    saved: Vec<String>,
    pub(crate) forward: Vec<Dispatch>,
    pub(crate) backward: Vec<Dispatch>,
    products: Vec<Product>,
}

impl<'a> LayerBuilder<'a> {
    /// A builder for tensors of `dtype`; seeded data starts at `seed`.
    pub(crate) fn new(ctx: &'a GpuContext, dtype: DType, seed: u64) -> Self {
        Self {
            ctx,
            dtype,
            seed,
            tensors: Vec::new(),
            saved: Vec::new(),
            forward: Vec::new(),
            backward: Vec::new(),
            products: Vec::new(),
        }
    }

    /// A zeroed tensor of the layer's type.
    pub(crate) fn zeros(&mut self, name: &str, shape: &[usize]) -> Result<GpuTensor> {
        self.zeros_of(name, shape, self.dtype)
    }

    /// A zeroed tensor of `dtype` (the `f32` statistics).
    pub(crate) fn zeros_of(
        &mut self,
        name: &str,
        shape: &[usize],
        dtype: DType,
    ) -> Result<GpuTensor> {
        let tensor = GpuTensor::zeros(self.ctx, name, shape.iter().product(), dtype)?;
        self.tensors
            .push((name.to_string(), shape.to_vec(), tensor.clone()));
        Ok(tensor)
    }

    /// A tensor of seeded values in `[-scale, scale)` plus `offset`.
    pub(crate) fn seeded(
        &mut self,
        name: &str,
        shape: &[usize],
        scale: f32,
        offset: f32,
    ) -> Result<GpuTensor> {
        self.seed += 1;
        let values: Vec<f32> = seeded_f32s(self.seed, shape.iter().product())
            .into_iter()
            .map(|v| v * scale + offset)
            .collect();
        let tensor = GpuTensor::from_f32(self.ctx, name, &values, self.dtype)?;
        self.tensors
            .push((name.to_string(), shape.to_vec(), tensor.clone()));
        Ok(tensor)
    }

    /// Marks `names` as kept for backward.
    pub(crate) fn save(&mut self, names: &[&str]) {
        self.saved.extend(names.iter().map(|n| n.to_string()));
    }

    /// Records a product and returns its name for chaining.
    pub(crate) fn product(
        &mut self,
        name: &str,
        kind: ProductKind,
        operands: [&str; 3],
        backward: bool,
    ) {
        let [a, b, out] = operands.map(str::to_string);
        self.products.push(Product {
            name: name.to_string(),
            kind,
            a,
            b,
            out,
            backward,
        });
    }

    /// The tensor named `name`.
    pub(crate) fn get(&self, name: &str) -> Result<GpuTensor> {
        self.tensors
            .iter()
            .find(|(n, ..)| n == name)
            .map(|(.., t)| t.clone())
            .ok_or_else(|| BenchError::InvalidShape {
                kernel: "layer",
                what: format!("no tensor named {name}"),
            })
    }

    /// The finished layer.
    ///
    /// # Errors
    ///
    /// [`BenchError::InvalidShape`] if a saved name was never allocated.
    pub(crate) fn finish(self) -> Result<BoundLayer> {
        let mut saved = Vec::new();
        for name in &self.saved {
            let (_, shape, tensor) =
                self.tensors
                    .iter()
                    .find(|(n, ..)| n == name)
                    .ok_or_else(|| BenchError::InvalidShape {
                        kernel: "layer",
                        what: format!("saved tensor {name} was not allocated"),
                    })?;
            saved.push(SavedTensor {
                name: name.clone(),
                shape: shape.clone(),
                dtype: tensor.dtype(),
                data_bytes: tensor.bytes(),
                allocated_bytes: tensor.buffer().size(),
            });
        }
        Ok(BoundLayer {
            forward: self.forward,
            backward: self.backward,
            saved,
            products: self.products,
            tensors: self.tensors,
        })
    }
}
