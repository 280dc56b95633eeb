//! Network layers built from the kernels, forward and backward, on real GPU
//! buffers: a pre-LN GPT-2 [`TransformerBlock`] and a ResNet
//! [`Bottleneck`] block.
//!
//! Binding a layer ([`TransformerBlock::bind`], [`Bottleneck::bind`])
//! allocates every tensor and returns a [`BoundLayer`]: its forward and
//! backward [`Dispatch`](crate::Dispatch)es, the tensors it keeps for
//! backward ([`SavedTensor`], with the byte size of the real
//! `wgpu::Buffer`), and every matmul and convolution as a [`Product`] so
//! tests can check each against the CPU. [`measure_layer`] times forward
//! and forward + backward and puts the saved bytes next to what
//! `vramfit-core` estimates for the same layer ([`estimate`]), with the
//! differences itemised. [`fit_to_device`] scales batch (then sequence)
//! down when a tensor would exceed the adapter's buffer limits, and
//! [`MeasuredThroughput`] turns the measured rates into step times for the
//! planner ([`project_step_seconds`]).

mod bound;
pub mod estimate;
mod measure;
mod phrase;
mod resnet;
mod scaling;
mod throughput;
mod transformer;

pub use bound::{BoundLayer, Product, ProductKind, SavedTensor};
pub use measure::{LayerConfig, LayerId, LayerResult, LayerShape, PassTiming, measure_layer};
pub use phrase::Phrase;
pub use resnet::{Bottleneck, BottleneckShape};
pub use scaling::{Scaled, fit_to_device, fit_to_limit};
pub use throughput::{MeasuredThroughput, project_step_seconds};
pub use transformer::{TransformerBlock, TransformerBlockShape};
