//! The keys of the format (version 2; version 1 had them all but `lb`): for each, its query key, the CLI flag that
//! sets the same thing, how to read it (validated, so a decoded state is
//! valid key by key) and how to write it.

use super::{IMPORTED_MODEL, Reason, ShareState};
use crate::config::{
    Attention, AttentionMask, AutocastRegion, Checkpointing, LoopOutputs, LoraBase, MAX_DIMENSION,
    Mode, Optimizer, OptimizerImpl, Precision, TorchRelease, TrainingCache, ZeroGrad,
};
use crate::engines::serving::{self, MAX_CONCURRENCY, MAX_GPU_LAYERS};
use crate::engines::{Engine, KvDtype};
use crate::parallel::{Offload, Strategy};
use crate::presets::model_presets;
use std::fmt;
use std::str::FromStr;

/// One key of the format.
#[derive(Clone, Copy)]
pub struct Key {
    /// The key in the query.
    pub key: &'static str,
    /// The `vramfit estimate` flag that sets the same thing.
    pub flag: &'static str,
    pub(super) get: fn(&ShareState) -> String,
    pub(super) set: fn(&mut ShareState, &str) -> Result<(), Reason>,
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({}, {})", self.key, self.flag)
    }
}

fn count(v: &str, min: u64, max: u64) -> Result<u64, Reason> {
    v.trim()
        .parse::<u64>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or(Reason::Count { min, max })
}

fn fraction(v: &str) -> Result<f64, Reason> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|f| *f > 0.0 && *f <= 1.0)
        .ok_or(Reason::Fraction)
}

fn switch(v: &str) -> Result<bool, Reason> {
    match v.trim() {
        "1" | "on" | "true" => Ok(true),
        "0" | "off" | "false" => Ok(false),
        _ => Err(Reason::Switch),
    }
}

fn bit(b: bool) -> String {
    if b { "1" } else { "0" }.to_string()
}

fn choice<T: FromStr>(v: &str, accepted: impl FnOnce() -> String) -> Result<T, Reason> {
    v.trim()
        .parse::<T>()
        .map_err(|_| Reason::Choice(accepted()))
}

const STEPS: u64 = 1 << 16;

/// Defines a key whose value is a whole number in a range.
macro_rules! count_key {
    ($key:literal, $flag:literal, $($field:ident).+, $min:expr, $max:expr) => {
        Key {
            key: $key,
            flag: $flag,
            get: |s| s.train.$($field).+.to_string(),
            set: |s, v| count(v, $min, $max).map(|n| s.train.$($field).+ = n),
        }
    };
}

/// Defines a key whose value is a fraction in (0, 1].
macro_rules! fraction_key {
    ($key:literal, $flag:literal, $field:ident) => {
        Key {
            key: $key,
            flag: $flag,
            get: |s| s.train.$field.to_string(),
            set: |s, v| fraction(v).map(|f| s.train.$field = f),
        }
    };
}

/// Defines a key whose value is a switch.
macro_rules! switch_key {
    ($key:literal, $flag:literal, $($field:ident).+) => {
        Key { key: $key, flag: $flag, get: |s| bit(s.train.$($field).+), set: |s, v| switch(v).map(|b| s.train.$($field).+ = b) }
    };
}

/// Defines a key whose value is one of an enum's ids.
macro_rules! choice_key {
    ($key:literal, $flag:literal, $($field:ident).+, $ty:ty, $accepted:expr) => {
        Key {
            key: $key,
            flag: $flag,
            get: |s| s.train.$($field).+.to_string(),
            set: |s, v| choice::<$ty>(v, $accepted).map(|c| s.train.$($field).+ = c),
        }
    };
}

fn strategies() -> String {
    Strategy::ALL
        .iter()
        .map(|s| s.id())
        .collect::<Vec<_>>()
        .join("|")
}

fn set_checkpointing(s: &mut ShareState, v: &str) -> Result<(), Reason> {
    let accepted = || "none|full|selective|every-K (K in 1..=65536)".to_string();
    match choice::<Checkpointing>(v, accepted)? {
        Checkpointing::EveryK(k) if u64::from(k) > STEPS => Err(Reason::Choice(accepted())),
        c => {
            s.train.checkpointing = c;
            Ok(())
        }
    }
}

fn set_offload(s: &mut ShareState, v: &str) -> Result<(), Reason> {
    // A `+` typed into a link by hand arrives as a space.
    let o = choice::<Offload>(&v.trim().replace(' ', "+"), || {
        "none|optimizer|optimizer+params".to_string()
    })?;
    s.train.parallel.offload = o;
    Ok(())
}

fn set_model(s: &mut ShareState, v: &str) -> Result<(), Reason> {
    let v = v.trim();
    if v == IMPORTED_MODEL || model_presets().iter().any(|p| p.id == v) {
        s.model = v.to_string();
        Ok(())
    } else {
        Err(Reason::UnknownModel)
    }
}

fn set_gpu(s: &mut ShareState, v: &str) -> Result<(), Reason> {
    let v = v.trim();
    // A preset, or a GPU given by its memory (`custom-<GiB>`).
    if crate::gpus::gpu_preset(v).is_ok() {
        s.gpu = v.to_string();
        Ok(())
    } else {
        Err(Reason::UnknownGpu)
    }
}

fn set_weights(s: &mut ShareState, v: &str) -> Result<(), Reason> {
    let (train, serve) = serving::parse_weights(v.trim())
        .ok_or_else(|| Reason::Choice(serving::weights_ids().collect::<Vec<_>>().join("|")))?;
    s.train.weights = train;
    s.serve.weights = serve;
    Ok(())
}

fn ids(all: impl IntoIterator<Item = &'static str>) -> String {
    all.into_iter().collect::<Vec<_>>().join("|")
}

/// `--gpu-layers`: a count, or `all` (what leaving it out means).
fn gpu_layers(v: &str) -> Result<Option<u64>, Reason> {
    match v.trim() {
        "all" => Ok(None),
        n => count(n, 0, MAX_GPU_LAYERS).map(Some),
    }
}

/// Every key of the format, in the order links write them; `v` and
/// `j` (the packed `config.json`, written last) are handled apart.
pub const KEYS: &[Key] = &[
    Key {
        key: "m",
        flag: "--model",
        get: |s| s.model.clone(),
        set: set_model,
    },
    Key {
        key: "g",
        flag: "--gpu",
        get: |s| s.gpu.clone(),
        set: set_gpu,
    },
    count_key!("b", "--batch", batch, 1, MAX_DIMENSION),
    count_key!("s", "--seq", seq, 1, MAX_DIMENSION),
    count_key!("i", "--image", image, 1, MAX_DIMENSION),
    count_key!("a", "--grad-accum", grad_accum, 1, STEPS),
    choice_key!(
        "p",
        "--precision",
        precision,
        Precision,
        Precision::accepted
    ),
    choice_key!(
        "o",
        "--optimizer",
        optimizer,
        Optimizer,
        Optimizer::accepted
    ),
    choice_key!(
        "oi",
        "--optimizer-impl",
        optimizer_impl,
        OptimizerImpl,
        OptimizerImpl::accepted
    ),
    choice_key!("zg", "--zero-grad", zero_grad, ZeroGrad, ZeroGrad::accepted),
    choice_key!(
        "lo",
        "--loop-outputs",
        loop_outputs,
        LoopOutputs,
        LoopOutputs::accepted
    ),
    choice_key!(
        "pt",
        "--pytorch",
        pytorch,
        TorchRelease,
        TorchRelease::accepted
    ),
    choice_key!(
        "ar",
        "--autocast-region",
        autocast_region,
        AutocastRegion,
        AutocastRegion::accepted
    ),
    choice_key!(
        "tc",
        "--training-cache",
        training_cache,
        TrainingCache,
        TrainingCache::accepted
    ),
    choice_key!(
        "am",
        "--attention-mask",
        attention_mask,
        AttentionMask,
        AttentionMask::accepted
    ),
    Key {
        key: "c",
        flag: "--checkpointing",
        get: |s| s.train.checkpointing.to_string(),
        set: set_checkpointing,
    },
    choice_key!(
        "at",
        "--attention",
        attention,
        Attention,
        Attention::accepted
    ),
    choice_key!("mo", "--mode", mode, Mode, Mode::accepted),
    count_key!("r", "--lora-rank", lora_rank, 1, STEPS),
    Key {
        key: "w",
        flag: "--weights",
        get: |s| serving::weights_id(s.train.weights, s.serve.weights).to_string(),
        set: set_weights,
    },
    count_key!("ctx", "--context", context, 0, MAX_DIMENSION),
    count_key!("fr", "--freeze", frozen_blocks, 0, 100_000),
    fraction_key!("ka", "--keep-attention", keep_attention),
    fraction_key!("km", "--keep-mlp", keep_mlp),
    fraction_key!("kc", "--keep-conv", keep_conv),
    switch_key!("lf", "--lora-fp32", lora_fp32),
    choice_key!("lb", "--lora-base", lora_base, LoraBase, LoraBase::accepted),
    choice_key!("st", "--strategy", parallel.strategy, Strategy, strategies),
    count_key!("gn", "--gpus-per-node", parallel.gpus_per_node, 1, 1024),
    count_key!("n", "--nodes", parallel.nodes, 1, STEPS),
    Key {
        key: "of",
        flag: "--offload",
        get: |s| s.train.parallel.offload.id().to_string(),
        set: set_offload,
    },
    count_key!("tp", "--tp", parallel.tp, 1, 1024),
    count_key!("pp", "--pp", parallel.pp, 1, 1024),
    count_key!("vpp", "--vpp", parallel.vpp, 1, 1024),
    count_key!("ep", "--ep", parallel.ep, 1, 1024),
    count_key!("etp", "--etp", parallel.etp, 0, 1024),
    switch_key!("sp", "--sp", parallel.sp),
    switch_key!("bv", "--ddp-bucket-view", parallel.bucket_view),
    count_key!("zb", "--zero-bucket", parallel.zero_bucket, 1, 1 << 40),
    Key {
        key: "en",
        flag: "--engine",
        get: |s| s.serve.engine.id().to_string(),
        set: |s, v| {
            choice::<Engine>(v, || ids(Engine::ALL.iter().map(|e| e.id())))
                .map(|e| s.serve.engine = e)
        },
    },
    Key {
        key: "kv",
        flag: "--kv-dtype",
        get: |s| s.serve.kv.id().to_string(),
        set: |s, v| {
            choice::<KvDtype>(v, || ids(KvDtype::ALL.iter().map(|k| k.id())))
                .map(|k| s.serve.kv = k)
        },
    },
    Key {
        key: "cc",
        flag: "--concurrency",
        get: |s| s.serve.concurrency.to_string(),
        set: |s, v| count(v, 1, MAX_CONCURRENCY).map(|n| s.serve.concurrency = n),
    },
    Key {
        key: "gu",
        flag: "--gpu-memory-utilization",
        get: |s| s.serve.gpu_memory_utilization.to_string(),
        set: |s, v| fraction(v).map(|f| s.serve.gpu_memory_utilization = f),
    },
    Key {
        key: "gl",
        flag: "--gpu-layers",
        get: |s| {
            s.serve
                .gpu_layers
                .map_or("all".to_string(), |n| n.to_string())
        },
        set: |s, v| gpu_layers(v).map(|n| s.serve.gpu_layers = n),
    },
];
