//! The layers that keep a fixed state instead of attending: Gated DeltaNet
//! linear attention (Qwen3-Next, Qwen3.5: [`GatedDeltaNet`]) and Mamba-2
//! (Granite 4.0's H models: [`Mamba2`]). A transformer holds at most one
//! kind ([`super::TransformerSpec::linear`]); what its cache, the serving
//! engines and the report need of either is asked here.

use super::gated_deltanet::GatedDeltaNet;
use super::mamba2::Mamba2;
use crate::error::Error;
use serde::{Deserialize, Serialize};

/// The recurrent token mixer of a transformer's non-attention layers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Recurrent {
    /// Gated DeltaNet linear attention.
    DeltaNet(GatedDeltaNet),
    /// Mamba-2 state-space layers.
    Mamba2(Mamba2),
}

impl Recurrent {
    /// Whether layer `i` (from 0) is recurrent rather than attention.
    pub fn is_linear(&self, i: u64) -> bool {
        match self {
            Recurrent::DeltaNet(g) => g.is_linear(i),
            Recurrent::Mamba2(m) => m.is_mamba(i),
        }
    }

    /// How many of `layers` layers are recurrent.
    pub fn linear_layers(&self, layers: u64) -> u64 {
        (0..layers).filter(|&i| self.is_linear(i)).count() as u64
    }

    /// What `transformers`' cache holds per sequence for one recurrent
    /// layer (the convolution's window in `dtype_size`-byte elements, the
    /// fp32 state).
    pub fn state_bytes(&self, dtype_size: u64) -> u64 {
        match self {
            Recurrent::DeltaNet(g) => g.state_bytes(dtype_size),
            Recurrent::Mamba2(m) => m.state_bytes(dtype_size),
        }
    }

    /// What a serving engine keeps per sequence for one recurrent layer on
    /// one of `tp` GPUs, the convolution's inputs in `conv_size`-byte
    /// elements and the state in `state_size`-byte ones.
    pub fn serving_state_bytes(&self, tp: u64, conv_size: u64, state_size: u64) -> u64 {
        match self {
            Recurrent::DeltaNet(g) => g.serving_state_bytes(tp, conv_size, state_size),
            Recurrent::Mamba2(m) => m.serving_state_bytes(tp, conv_size, state_size),
        }
    }

    /// The checkpoint asks vLLM for an fp32 state (`mamba_ssm_dtype:
    /// "float32"`); else vLLM keeps it in the model's dtype.
    pub fn state_fp32(&self) -> bool {
        match self {
            Recurrent::DeltaNet(g) => g.state_fp32,
            Recurrent::Mamba2(_) => false,
        }
    }

    /// Checks the dimensions.
    ///
    /// # Errors
    /// As [`GatedDeltaNet::validate`] and [`Mamba2::validate`].
    pub fn validate(&self) -> Result<(), Error> {
        match self {
            Recurrent::DeltaNet(g) => g.validate(),
            Recurrent::Mamba2(m) => m.validate(),
        }
    }

    /// One tensor-parallel rank's share.
    ///
    /// # Errors
    /// As [`GatedDeltaNet::shard`] and [`Mamba2::shard`].
    pub fn shard(&self, tp: u64) -> Result<Recurrent, Error> {
        Ok(match self {
            Recurrent::DeltaNet(g) => Recurrent::DeltaNet(g.shard(tp)?),
            Recurrent::Mamba2(m) => Recurrent::Mamba2(m.shard(tp)?),
        })
    }
}
