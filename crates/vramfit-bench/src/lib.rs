//! GPU kernels for measuring what vramfit estimates, with the CPU references
//! they are checked against.
//!
//! The pieces, from the bottom up:
//!
//! - [`GpuContext`] acquires an adapter, device and queue. Natively that is
//!   `GpuContext::new_native` (Vulkan; lavapipe in CI; not compiled on wasm);
//!   in a browser, await [`GpuContext::request`] with [`DEFAULT_BACKENDS`].
//!   Nothing else differs between the two targets.
//! - Each kernel is a struct that builds its pipeline once from a WGSL file
//!   in the workspace's `shaders/` directory and runs it asynchronously:
//!   [`Saxpy`] for `shaders/saxpy.wgsl`, and in [`kernels`] the
//!   neural-network ones, each in `f32` and `f16` ([`DType`]): naive and
//!   tiled [`Matmul`](kernels::Matmul) (forward and both backward products),
//!   [`Conv2d`](kernels::Conv2d), [`LayerNorm`](kernels::LayerNorm),
//!   [`Softmax`](kernels::Softmax), [`Gelu`](kernels::Gelu),
//!   [`Attention`](kernels::Attention) (materialised or fused) and
//!   [`Adam`](kernels::Adam).
//! - For the layers' backward passes, [`kernels`] also has
//!   [`Add`](kernels::Add), [`Heads`](kernels::Heads) (split / merge
//!   heads), [`GeluBackward`](kernels::GeluBackward),
//!   [`SoftmaxBackward`](kernels::SoftmaxBackward),
//!   [`LayerNormBackward`](kernels::LayerNormBackward),
//!   [`BatchNorm`](kernels::BatchNorm) (forward and backward, with residual
//!   and ReLU) and [`Conv2dBackward`](kernels::Conv2dBackward).
//! - [`layers`] chains them into a GPT-2 block
//!   ([`TransformerBlock`](layers::TransformerBlock)) and a ResNet
//!   bottleneck ([`Bottleneck`](layers::Bottleneck)), forward and backward
//!   on real buffers; lists what each keeps for backward with the real
//!   buffer sizes, compares that with `vramfit-core`'s per-layer estimate
//!   ([`layers::estimate`]), scales sizes to the adapter, times both passes
//!   and exposes the rate for the planner
//!   ([`MeasuredThroughput`](layers::MeasuredThroughput),
//!   [`project_step_seconds`](layers::project_step_seconds)).
//! - Kernels work on [`GpuTensor`]s and return [`Dispatch`]es, so a layer
//!   chains them on GPU buffers ([`encode_all`], [`submit`]) and reads back
//!   only at the end; each kernel also has a `run` that uploads, dispatches
//!   and reads back.
//! - [`timing`] times dispatches (GPU timestamps when the adapter has
//!   `TIMESTAMP_QUERY`, the wall clock otherwise; warm-up, batched runs,
//!   median and spread); [`suite`] prepares every kernel at a size preset;
//!   [`report`] holds the serde-serialisable results with Markdown and JSON
//!   renderings; [`args`] parses the flags `vramfit bench` and the
//!   `vramfit-bench` binary share.
//! - [`reference`](mod@reference) holds the CPU version of every kernel and
//!   its tolerance (stated and derived on each function); [`Comparison`] compares the two, and [`check`] runs both
//!   on seeded [`data`].
//! - `testing::gpu_or_skip` (native only) is the policy for GPU tests: fail
//!   without an adapter unless `VRAMFIT_ALLOW_NO_GPU=1`.
//! - [`AdapterSummary`] reports the adapter's name, backend and the optional
//!   features (`SHADER_F16`, `TIMESTAMP_QUERY`) later kernels depend on.
//!
//! ```no_run
//! # #[cfg(not(target_arch = "wasm32"))]
//! # fn main() -> Result<(), vramfit_bench::BenchError> {
//! use vramfit_bench::{GpuContext, Saxpy};
//!
//! let ctx = GpuContext::new_native()?;
//! let saxpy = Saxpy::new(&ctx)?;
//! let out = pollster::block_on(saxpy.run(&ctx, 2.0, &[1.0, 2.0], &[0.5, 0.5]))?;
//! assert_eq!(out, vec![2.5, 4.5]);
//! # Ok(())
//! # }
//! # #[cfg(target_arch = "wasm32")]
//! # fn main() {}
//! ```

// Tests fail by panicking; everywhere else the workspace denies these.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod args;
pub mod check;
mod compare;
mod context;
pub mod data;
mod dtype;
mod error;
pub mod kernels;
pub mod layers;
mod pipeline;
mod readback;
pub mod reference;
pub mod report;
mod saxpy;
mod scope;
pub mod suite;
mod tensor;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;
pub mod timing;

pub use compare::{Comparison, MAX_REPORTED_MISMATCHES, Mismatch};
pub use context::{AdapterSummary, DEFAULT_BACKENDS, GpuContext};
pub use dtype::{DType, SCALAR_ALIAS_F32, f16_bits_to_f32, f32_to_f16_bits};
pub use error::{BenchError, Result};
pub use pipeline::{Dispatch, dispatch_1d, encode_all, submit};
pub use saxpy::{SAXPY_WORKGROUP_SIZE, Saxpy};
pub use tensor::GpuTensor;
