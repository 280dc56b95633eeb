//! # vramfit-core
//!
//! The pure estimation core of vramfit: it answers "how much GPU memory does
//! one training step of this model need, and why?" without I/O, web or GPU.
//!
//! A model ([`ModelSpec`], from a [preset](model_preset) or a Hugging Face
//! `config.json` via [`hf::import`]) is lowered into a dataflow [`Graph`] of
//! ops that records, per op, what PyTorch's autograd keeps for backward and
//! how CUDA autocast casts it. [`simulate`] replays two training steps op by
//! op — forward, backward with checkpoint recomputation, the optimizer's lazy
//! state and temporaries — and [`estimate`] reports the peak, its phase and
//! op, the breakdown at that moment, the timeline and a per-layer table.
//!
//! Feature `every-model` (default): the lowering of every kind of model;
//! without it only dense transformers lower (the page's first-edit module).

// Without `every-model` the other models' lowering goes unused.
#![cfg_attr(
    not(feature = "every-model"),
    allow(dead_code, unused_imports, unused_variables, unused_mut)
)]

pub mod advice;
pub mod builder;
pub mod config;
pub mod deepspeed;
pub mod driver_reserve;
pub mod dtype;
pub mod engines;
pub mod error;
pub mod explore;
pub mod export;
pub mod gpus;
pub mod graph;
pub mod hf;
pub mod measured;
pub mod models;
pub mod nccl;
pub mod nn;
pub mod nn_cnn;
mod nn_moe;
mod nn_transformer;
pub mod overheads;
pub mod parallel;
pub mod plan;
pub mod presets;
pub mod report;
pub mod routing;
pub mod search;
pub mod session;
pub mod share;
pub mod simulate;
pub mod spread;
pub mod states;
pub mod units;

pub use config::{
    Attention, CheckpointMode, Checkpointing, Optimizer, OptimizerImpl, Precision, TrainConfig,
};
pub use dtype::DType;
pub use error::Error;
pub use gpus::{GpuPreset, gpu_preset, gpu_presets};
pub use graph::Graph;
pub use models::ModelSpec;
pub use overheads::{ModuleLoading, Overheads};
pub use presets::{ModelPreset, model_preset, model_presets};
pub use report::{Estimate, GpuFit, LayerRow, RankNote, SCHEMA, TimelinePoint};
pub use session::{Session, estimate, max_batch_for, max_context_for, max_input_for};
pub use simulate::{Breakdown, Phase};
pub use units::Bytes;
