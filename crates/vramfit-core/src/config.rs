//! The training configuration a user chooses: batch, sequence, precision,
//! optimizer, checkpointing, attention kind and gradient accumulation.

use crate::dtype::DType;
use crate::error::{Error, check_range};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Defines a user-facing enum with stable string ids, parsing and display.
macro_rules! choice_enum {
    ($(#[$meta:meta])* $name:ident, $flag:literal { $($(#[$vmeta:meta])* $variant:ident => $id:literal $(| $alias:literal)*),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $id)] $variant),+
        }

        impl $name {
            /// Every variant, in display order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stable id used in the CLI, the JSON output and share URLs.
            pub fn id(self) -> &'static str {
                match self { $($name::$variant => $id),+ }
            }

            /// The accepted ids joined by `|`, for error messages.
            pub fn accepted() -> String {
                Self::ALL.iter().map(|v| v.id()).collect::<Vec<_>>().join("|")
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.id())
            }
        }

        impl FromStr for $name {
            type Err = Error;
            fn from_str(s: &str) -> Result<Self, Error> {
                match s {
                    $($id $(| $alias)* => Ok($name::$variant),)+
                    _ => Err(Error::InvalidChoice { field: $flag, value: s.to_string(), accepted: Self::accepted() }),
                }
            }
        }
    };
}

choice_enum!(
    /// Numeric precision of parameters and of the computation.
    Precision, "precision" {
        /// Everything in fp32.
        Fp32 => "fp32",
        /// Pure fp16: parameters, gradients and optimizer state in fp16, no master copy.
        Fp16 => "fp16",
        /// Pure bf16: parameters, gradients and optimizer state in bf16, no master copy.
        Bf16 => "bf16",
        /// `torch.autocast(dtype=float16)`: fp32 parameters, matmuls in fp16.
        AmpFp16 => "amp-fp16",
        /// `torch.autocast(dtype=bfloat16)`: fp32 parameters, matmuls in bf16.
        AmpBf16 => "amp-bf16",
    }
);

impl Precision {
    /// Storage type of the parameters (and therefore of gradients and
    /// PyTorch optimizer state, which are created `zeros_like(param)`).
    pub fn param_dtype(self) -> DType {
        match self {
            Precision::Fp32 | Precision::AmpFp16 | Precision::AmpBf16 => DType::F32,
            Precision::Fp16 => DType::F16,
            Precision::Bf16 => DType::Bf16,
        }
    }

    /// The autocast compute type, if autocast is on.
    pub fn autocast(self) -> Option<DType> {
        match self {
            Precision::AmpFp16 => Some(DType::F16),
            Precision::AmpBf16 => Some(DType::Bf16),
            Precision::Fp32 | Precision::Fp16 | Precision::Bf16 => None,
        }
    }
}

choice_enum!(
    /// The optimizer, as implemented in PyTorch (`torch.optim`, `foreach=True`),
    /// bitsandbytes (8-bit AdamW), Hugging Face (Adafactor) or lion-pytorch (Lion).
    Optimizer, "optimizer" {
        /// Plain SGD: no state.
        Sgd => "sgd",
        /// SGD with momentum: one momentum buffer per parameter.
        SgdMomentum => "sgd-momentum",
        /// Adam: first and second moments.
        Adam => "adam",
        /// AdamW: first and second moments, decoupled weight decay.
        AdamW => "adamw",
        /// bitsandbytes `AdamW8bit`: blockwise-quantized uint8 moments.
        AdamW8bit => "adamw-8bit",
        /// Hugging Face Adafactor: factored second moment, no first moment.
        Adafactor => "adafactor",
        /// Lion: one momentum buffer.
        Lion => "lion",
    }
);

choice_enum!(
    /// How `torch.optim`'s Adam/AdamW (and SGD) step over the parameters:
    /// the three code paths of `torch/optim/adam.py`, which keep different
    /// temporaries. Other optimizers have one implementation each.
    OptimizerImpl, "optimizer-impl" {
        /// `foreach=True`, `torch.optim`'s default on CUDA since 2.0
        /// (`_multi_tensor_adam`): `torch._foreach_sqrt(exp_avg_sqs)` makes
        /// one parameter-sized tensor per parameter, all live at once.
        Foreach => "foreach",
        /// `fused=True` (`_fused_adam`, one kernel over every tensor): no
        /// temporaries, but each parameter's `step` counter is a tensor on
        /// the GPU.
        Fused => "fused",
        /// `foreach=False` (`_single_tensor_adam`): parameter by parameter,
        /// `exp_avg_sq.sqrt()` then its division by the bias correction,
        /// two temporaries of one parameter's size at a time. Hugging Face's
        /// own `transformers.AdamW` ("adamw_hf", the Trainer's default until
        /// 4.x) steps the same way with one.
        Loop => "loop",
    }
);

choice_enum!(
    /// What `zero_grad` does to the gradients after each optimizer step.
    ZeroGrad, "zero-grad" {
        /// `set_to_none=True`, `torch.optim`'s and `nn.Module`'s default
        /// since PyTorch 2.0: the gradients are freed, and the next
        /// backward makes them anew.
        SetToNone => "set-to-none",
        /// `set_to_none=False`, the default before PyTorch 2.0 (and what
        /// `model.zero_grad()` in the Hugging Face Trainer of that time did):
        /// the gradients stay allocated, filled with zeros, through the next
        /// forward; the next backward adds into them.
        Zeros => "zeros",
    }
);

choice_enum!(
    /// How long the training loop keeps what the model returns beside its
    /// loss (the logits of its `...Output`).
    LoopOutputs, "loop-outputs" {
        /// Gone before backward: the loop keeps only the loss, as the
        /// Hugging Face Trainer's `compute_loss` returns it, or as a loop
        /// that `del`s them (torchtitan's `del pred`).
        Dropped => "dropped",
        /// Held until the step ends: a loop whose `outputs = model(**batch)`
        /// stays in scope through `loss.backward()` and `optimizer.step()`
        /// (the common hand-written loop; milabench's benchmarks), so the
        /// logits live through backward.
        Kept => "kept",
    }
);

choice_enum!(
    /// What the training loop runs inside `torch.autocast`, whose weight
    /// cache lives until the region exits (mixed precision only).
    AutocastRegion, "autocast-region" {
        /// The forward and the loss: PyTorch's AMP recipe, the Hugging Face
        /// Trainer, Accelerate's and Lightning's precision plugins.
        Forward => "forward",
        /// The backward too (and the optimizer step): a loop whose
        /// `with autocast():` body also calls `backward()`, as milabench's
        /// torchvision loop does; every cached weight copy then lives until
        /// the micro-batch's backward ends.
        Backward => "backward",
    }
);

choice_enum!(
    /// The PyTorch release whose autograd runs the step: what a backward
    /// formula references, and so what autograd saves, changed between
    /// releases.
    TorchRelease, "pytorch" {
        /// PyTorch 1.11 and later.
        Current => "current",
        /// PyTorch 1.10 and earlier: `softmax` and `log_softmax` also save
        /// their input, which their backward formulas passed to
        /// `_softmax_backward_data` / `_log_softmax_backward_data` although
        /// the kernels never read it (pytorch/pytorch#64000). 1.11 passes
        /// the input's dtype instead (transformers' `softmax_backward_data`
        /// switches on `is_torch_less_than_1_11`).
        Torch110 => "1.10",
    }
);

choice_enum!(
    /// What a Hugging Face decoder's key–value cache does in a training
    /// forward. `use_cache` is on in almost every `config.json`, so the
    /// model builds a `DynamicCache` in training too, unless the loop turns
    /// it off (`model.config.use_cache = False`, TRL's trainers when
    /// checkpointing) or transformers' gradient checkpointing does.
    TrainingCache, "training-cache" {
        /// No cache, or one that keeps the step's own key and value tensors
        /// (transformers 4's list-of-tensors `DynamicCache`): nothing more
        /// is allocated.
        Off => "off",
        /// transformers 5's `DynamicLayer.update` concatenates each layer's
        /// keys and values onto empty tensors, which copies them; attention
        /// then reads (and saves for backward) the copies, and the model's
        /// output holds them until the loop drops it. Measured on an H200
        /// with transformers 5.17: GPT-2, whose key and value are views of
        /// one fused projection that the query keeps alive, allocates
        /// 2 × layers × key size more at the peak.
        Copies => "copies",
    }
);

choice_enum!(
    /// What a text model's `scaled_dot_product_attention` path is given
    /// besides q, k and v (transformers' `sdpa_attention_forward`, which
    /// every Hugging Face text model here uses; eager and flash-attn are
    /// not affected).
    AttentionMask, "attention-mask" {
        /// No mask tensor, and grouped key–value heads expanded to every
        /// query head by `repeat_kv`'s copies, which attention saves:
        /// transformers off CUDA or on PyTorch before 2.5 (the repository's
        /// CPU reference runs this path).
        Expanded => "expanded",
        /// No mask (unpadded or packed batches) on CUDA with PyTorch 2.5
        /// or later: transformers passes `enable_gqa=True` instead of
        /// expanding (`use_gqa_in_sdpa`), so attention saves the grouped
        /// k and v; the flash kernel's backward expands their gradients
        /// (`dk_expanded`, `dv_expanded`) and sums them back.
        None => "none",
        /// A padding mask: a boolean `[batch, 1, seq, seq]` mask for the
        /// whole forward, `repeat_kv`'s expansion (no `enable_gqa` with a
        /// mask), and in each layer the mask converted to the query's dtype
        /// by `scaled_dot_product_attention` (`convert_boolean_attn_mask`),
        /// which the memory-efficient kernel saves for its backward.
        Padding => "padding",
    }
);

impl Optimizer {
    /// The 8-bit optimizer that keeps this one's update rule with a quarter
    /// of its state (bitsandbytes' `AdamW8bit` for Adam and AdamW), which
    /// the comparison strip and the planner offer; `None` when there is none.
    pub fn eight_bit(self) -> Option<Optimizer> {
        match self {
            Optimizer::Adam | Optimizer::AdamW => Some(Optimizer::AdamW8bit),
            Optimizer::Sgd
            | Optimizer::SgdMomentum
            | Optimizer::AdamW8bit
            | Optimizer::Adafactor
            | Optimizer::Lion => None,
        }
    }
}

choice_enum!(
    /// Activation checkpointing mode.
    CheckpointMode, "checkpointing" {
        /// Keep every saved tensor.
        None => "none",
        /// Checkpoint every block: keep only block inputs; recompute in backward.
        Full => "full",
        /// Megatron-style selective recompute: drop only the attention core
        /// (scores, softmax, dropout, context) and recompute it.
        Selective => "selective",
        /// PyTorch's selective activation checkpointing per op, as torchtitan
        /// applies it (`--activation_checkpoint.mode selective
        /// --activation_checkpoint.selective_ac_option op`): every block is
        /// checkpointed, but the outputs of its fused attention kernel and of
        /// every other matmul (the 1st, 3rd, ... of the block) are saved in
        /// forward; the rest is recomputed before the block's backward.
        SelectiveOp => "selective-op",
    }
);

choice_enum!(
    /// What the GPU does.
    Mode, "mode" {
        /// Full training: every parameter trained.
        Train => "train",
        /// LoRA fine-tuning: frozen base, trainable low-rank adapters (also read as `lora`).
        FinetuneLora => "finetune-lora" | "lora",
        /// QLoRA: LoRA on a 4-bit NF4 base (bitsandbytes), bf16 compute (also read as `qlora`).
        FinetuneQlora => "finetune-qlora" | "qlora",
        /// Inference: one forward without autograd, with a KV cache.
        Inference => "inference",
    }
);

choice_enum!(
    /// The storage type of LoRA's and QLoRA's frozen base model under
    /// mixed precision (AMP). Under the pure precisions (`fp32`, `fp16`,
    /// `bf16`) the parameters already are in the compute type, and both
    /// choices mean the same.
    LoraBase, "lora-base" {
        /// In the compute type (bf16 under `amp-bf16`, fp16 under
        /// `amp-fp16`): the model loaded with `from_pretrained(...,
        /// torch_dtype=torch.bfloat16)` as PEFT's and TRL's examples do
        /// (a checkpoint's own dtype), then trained under autocast. A frozen
        /// weight needs no fp32 master copy: nothing updates it.
        Compute => "compute",
        /// In fp32, as a model loaded without `torch_dtype` in older
        /// `transformers` (fp32 by default), as QLoRA's unquantized
        /// parameters after PEFT's `prepare_model_for_kbit_training` (which
        /// upcasts every half-precision parameter but the 4-bit ones), and as
        /// vramfit counted it before share-link version 2: autocast then
        /// casts each weight to the compute type as a matmul reads it.
        Fp32 => "fp32",
    }
);

choice_enum!(
    /// Storage of the (frozen) linear weights inside the transformer blocks.
    WeightFormat, "weights" {
        /// As the precision says.
        Native => "native",
        /// bitsandbytes LLM.int8: int8 weights plus an fp32 scale per output row.
        Int8 => "int8",
        /// bitsandbytes NF4 with double quantization (QLoRA's format).
        Int4 => "int4",
    }
);

/// Checkpointing as configured: a mode, or "every K-th block".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Checkpointing {
    /// One of the named modes.
    Mode(CheckpointMode),
    /// Checkpoint one block in every `K` (blocks 0, K, 2K, ...); the others keep everything.
    EveryK(u32),
}

impl Checkpointing {
    /// No checkpointing.
    pub const NONE: Checkpointing = Checkpointing::Mode(CheckpointMode::None);

    /// Whether block number `index` is fully checkpointed.
    pub fn checkpoints_block(self, index: u32) -> bool {
        match self {
            Checkpointing::Mode(CheckpointMode::Full | CheckpointMode::SelectiveOp) => true,
            Checkpointing::EveryK(k) => k > 0 && index.is_multiple_of(k),
            Checkpointing::Mode(_) => false,
        }
    }

    /// Whether the attention core is recomputed (selective mode).
    pub fn selective(self) -> bool {
        self == Checkpointing::Mode(CheckpointMode::Selective)
    }

    /// Whether checkpointed blocks keep some ops' outputs from forward
    /// ([`CheckpointMode::SelectiveOp`], see [`crate::graph::Graph::op_sac_saves`]).
    pub fn saves_op_outputs(self) -> bool {
        self == Checkpointing::Mode(CheckpointMode::SelectiveOp)
    }
}

impl fmt::Display for Checkpointing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Checkpointing::Mode(m) => write!(f, "{m}"),
            Checkpointing::EveryK(k) => write!(f, "every-{k}"),
        }
    }
}

impl FromStr for Checkpointing {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        if let Some(k) = s.strip_prefix("every-") {
            return match k.parse::<u32>() {
                Ok(k) if k >= 1 => Ok(Checkpointing::EveryK(k)),
                _ => Err(Error::InvalidChoice {
                    field: "checkpointing",
                    value: s.to_string(),
                    accepted: "none|full|selective|every-K (K a whole number ≥ 1)".to_string(),
                }),
            };
        }
        s.parse::<CheckpointMode>()
            .map(Checkpointing::Mode)
            .map_err(|_| Error::InvalidChoice {
                field: "checkpointing",
                value: s.to_string(),
                accepted: "none|full|selective|every-K (K a whole number ≥ 1)".to_string(),
            })
    }
}

impl From<Checkpointing> for String {
    fn from(c: Checkpointing) -> String {
        c.to_string()
    }
}

impl TryFrom<String> for Checkpointing {
    type Error = Error;
    fn try_from(s: String) -> Result<Self, Error> {
        s.parse()
    }
}

choice_enum!(
    /// How attention is computed.
    Attention, "attention" {
        /// Eager (math) attention: scores and probabilities are materialized and saved.
        Eager => "eager",
        /// `scaled_dot_product_attention` with the memory-efficient or flash backend:
        /// only q, k, v, the output and the log-sum-exp are saved.
        Sdpa => "sdpa",
        /// FlashAttention-2: same saved set as SDPA-flash.
        Flash => "flash",
    }
);

/// Everything about one training step except the model and the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrainConfig {
    /// Micro-batch size (samples per forward/backward).
    pub batch: u64,
    /// Sequence length in tokens (transformers over text).
    pub seq: u64,
    /// Image side in pixels (CNNs and ViT).
    pub image: u64,
    /// Precision mode.
    pub precision: Precision,
    /// Optimizer.
    pub optimizer: Optimizer,
    /// Activation checkpointing.
    pub checkpointing: Checkpointing,
    /// Attention implementation.
    pub attention: Attention,
    /// Gradient-accumulation steps (micro-batches per optimizer step).
    pub grad_accum: u64,
    /// Data-parallel layout across GPUs.
    pub parallel: crate::parallel::Parallel,
    /// Training, fine-tuning or inference.
    pub mode: Mode,
    /// LoRA rank (fine-tuning modes).
    pub lora_rank: u64,
    /// Storage of the block linear weights.
    pub weights: WeightFormat,
    /// KV-cache length in tokens (inference); 0 means the sequence length.
    pub context: u64,
    /// Blocks frozen from the input side (no gradients or optimizer state;
    /// activations are still kept where later layers need them for backward).
    pub frozen_blocks: u64,
    /// Structured pruning: the kept fraction of attention heads and of MLP
    /// neurons in transformers (1 = unpruned).
    pub keep_attention: f64,
    /// Kept fraction of MLP neurons (transformers, MLPs).
    pub keep_mlp: f64,
    /// Kept fraction of convolution channels inside residual / inverted-residual
    /// blocks (ResNet inner width, MobileNetV2 expansion) and of every VGG conv.
    pub keep_conv: f64,
    /// LoRA adapters in fp32 (PEFT's `autocast_adapter_dtype=True` default) or,
    /// when false, in the model's dtype.
    pub lora_fp32: bool,
    /// The frozen base's storage type in the fine-tuning modes under AMP.
    pub lora_base: LoraBase,
    /// The optimizer's code path (Adam, AdamW; SGD's paths keep no temporaries).
    pub optimizer_impl: OptimizerImpl,
    /// Whether `zero_grad` frees the gradients or keeps them as zeros.
    pub zero_grad: ZeroGrad,
    /// Whether the training loop keeps the model's outputs through backward.
    pub loop_outputs: LoopOutputs,
    /// The PyTorch release (what autograd saves).
    pub pytorch: TorchRelease,
    /// What the loop runs inside `torch.autocast` (how long its weight cache lives).
    pub autocast_region: AutocastRegion,
    /// What a Hugging Face decoder's key–value cache allocates in training.
    pub training_cache: TrainingCache,
    /// What SDPA attention is given besides q, k and v: no mask, or a
    /// padding mask.
    pub attention_mask: AttentionMask,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            batch: 8,
            seq: 512,
            image: 224,
            precision: Precision::Fp32,
            optimizer: Optimizer::AdamW,
            checkpointing: Checkpointing::NONE,
            attention: Attention::Sdpa,
            grad_accum: 1,
            parallel: crate::parallel::Parallel::default(),
            mode: Mode::Train,
            lora_rank: 16,
            weights: WeightFormat::Native,
            context: 0,
            frozen_blocks: 0,
            keep_attention: 1.0,
            keep_mlp: 1.0,
            keep_conv: 1.0,
            lora_fp32: true,
            lora_base: LoraBase::Compute,
            optimizer_impl: OptimizerImpl::Foreach,
            zero_grad: ZeroGrad::SetToNone,
            loop_outputs: LoopOutputs::Dropped,
            pytorch: TorchRelease::Current,
            autocast_region: AutocastRegion::Forward,
            training_cache: TrainingCache::Off,
            attention_mask: AttentionMask::Expanded,
        }
    }
}

/// Largest accepted batch, sequence or image side: far beyond any real GPU,
/// small enough that byte counts cannot overflow `u64` in a sane model.
pub const MAX_DIMENSION: u64 = 1 << 24;

impl TrainConfig {
    /// Tokens the KV cache holds (inference).
    pub fn cache_tokens(&self) -> u64 {
        if self.context == 0 {
            self.seq
        } else {
            self.context.max(self.seq)
        }
    }

    /// The storage type of the model's own parameters (LoRA's adapters may
    /// differ, see [`TrainConfig::lora_fp32`]): the precision's
    /// ([`Precision::param_dtype`]), except for LoRA's and QLoRA's frozen
    /// base under AMP with [`LoraBase::Compute`], which is in the compute type.
    pub fn param_dtype(&self) -> DType {
        match (self.mode, self.lora_base, self.precision.autocast()) {
            (Mode::FinetuneLora | Mode::FinetuneQlora, LoraBase::Compute, Some(low)) => low,
            (Mode::Train | Mode::Inference, _, _)
            | (Mode::FinetuneLora | Mode::FinetuneQlora, LoraBase::Fp32, _)
            | (_, _, None) => self.precision.param_dtype(),
        }
    }

    /// This config's [`TrainConfig::lora_base`] where it changes the
    /// parameters' type (LoRA or QLoRA under AMP), [`LoraBase::Compute`]
    /// (the default) elsewhere: the one setting share links then need not carry.
    pub fn lora_base_if_it_matters(&self) -> LoraBase {
        let compute = TrainConfig {
            lora_base: LoraBase::Compute,
            ..*self
        };
        if compute.param_dtype() == self.param_dtype() {
            LoraBase::Compute
        } else {
            self.lora_base
        }
    }

    /// The weight format in effect: QLoRA implies NF4.
    pub fn weight_format(&self) -> WeightFormat {
        if self.mode == Mode::FinetuneQlora {
            WeightFormat::Int4
        } else {
            self.weights
        }
    }

    /// Checks every field's range.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] naming the first field outside its range.
    pub fn validate(&self) -> Result<(), Error> {
        check_range("batch", self.batch, 1, MAX_DIMENSION)?;
        check_range("seq", self.seq, 1, MAX_DIMENSION)?;
        check_range("image", self.image, 1, MAX_DIMENSION)?;
        check_range("grad-accum", self.grad_accum, 1, 1 << 16)?;
        self.parallel.validate()?;
        // DeepSpeed's `reduce_bucket_size` in elements (share links accept the same range).
        check_range("zero-bucket", self.parallel.zero_bucket, 1, 1 << 40)?;
        check_range("lora-rank", self.lora_rank, 1, 1 << 16)?;
        check_range("context", self.context, 0, MAX_DIMENSION)?;
        check_range("freeze", self.frozen_blocks, 0, 100_000)?;
        for (field, v) in [
            ("keep-attention", self.keep_attention),
            ("keep-mlp", self.keep_mlp),
            ("keep-conv", self.keep_conv),
        ] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(Error::OutOfRange {
                    field,
                    value: v.to_string(),
                    min: 0,
                    max: 1,
                });
            }
        }
        // Gradients kept as zeros are modelled for one GPU and DDP, where
        // `.grad` is the parameter's own; ZeRO, FSDP and Megatron manage
        // gradient buffers of their own.
        if self.zero_grad == ZeroGrad::Zeros && !self.parallel.strategy.loop_owns_gradients() {
            return Err(Error::InvalidChoice {
                field: "zero-grad",
                value: format!("zeros with --strategy {}", self.parallel.strategy),
                accepted: "set-to-none (zeros is modelled for --strategy single and ddp)".into(),
            });
        }
        if let Checkpointing::EveryK(k) = self.checkpointing {
            check_range("checkpointing every-K", u64::from(k), 1, 1 << 16)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_round_trip() {
        for p in Precision::ALL {
            assert_eq!(p.id().parse::<Precision>().ok(), Some(*p));
        }
        for o in Optimizer::ALL {
            assert_eq!(o.id().parse::<Optimizer>().ok(), Some(*o));
        }
        assert_eq!(
            "every-3".parse::<Checkpointing>().ok(),
            Some(Checkpointing::EveryK(3))
        );
        assert_eq!(
            "full".parse::<Checkpointing>().ok(),
            Some(Checkpointing::Mode(CheckpointMode::Full))
        );
    }

    #[test]
    fn lora_and_qlora_are_read_as_the_fine_tuning_modes_but_never_written() {
        assert_eq!("lora".parse::<Mode>().ok(), Some(Mode::FinetuneLora));
        assert_eq!("qlora".parse::<Mode>().ok(), Some(Mode::FinetuneQlora));
        assert_eq!(Mode::FinetuneLora.id(), "finetune-lora");
        assert_eq!(
            Mode::accepted(),
            "train|finetune-lora|finetune-qlora|inference"
        );
    }

    #[test]
    fn a_lora_base_follows_the_compute_type_only_under_amp() {
        let lora = |precision, lora_base| TrainConfig {
            mode: Mode::FinetuneLora,
            precision,
            lora_base,
            ..TrainConfig::default()
        };
        assert_eq!(
            lora(Precision::AmpBf16, LoraBase::Compute).param_dtype(),
            DType::Bf16
        );
        assert_eq!(
            lora(Precision::AmpFp16, LoraBase::Compute).param_dtype(),
            DType::F16
        );
        assert_eq!(
            lora(Precision::AmpBf16, LoraBase::Fp32).param_dtype(),
            DType::F32
        );
        assert_eq!(
            lora(Precision::Fp32, LoraBase::Compute).param_dtype(),
            DType::F32
        );
        // Full training under AMP keeps fp32 master weights.
        let train = TrainConfig {
            precision: Precision::AmpBf16,
            ..TrainConfig::default()
        };
        assert_eq!(train.param_dtype(), DType::F32);
    }

    #[test]
    fn bad_choice_names_the_field_and_accepted_values() {
        let err = "fp64"
            .parse::<Precision>()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("precision"), "{err}");
        assert!(err.contains("amp-bf16"), "{err}");
        assert!("every-0".parse::<Checkpointing>().is_err());
    }

    #[test]
    fn zero_batch_is_rejected() {
        let cfg = TrainConfig {
            batch: 0,
            ..TrainConfig::default()
        };
        assert!(matches!(
            cfg.validate(),
            Err(Error::OutOfRange { field: "batch", .. })
        ));
    }
}
