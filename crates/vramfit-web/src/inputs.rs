//! What the user has entered, kept as typed so an invalid field stays
//! editable, and its validation into a [`TrainConfig`].

use crate::fields::{Field, FieldErrors, parse_count};
use crate::serving::ServeInputs;
use vramfit_core::config::Mode;
use vramfit_core::engines::{Engine, Serving};
use vramfit_core::models::InputKind;
use vramfit_core::parallel::{Offload, Strategy};
use vramfit_core::share::ShareState;
use vramfit_core::{Attention, CheckpointMode, Checkpointing, Optimizer, Precision, TrainConfig};

/// The model id under which an imported `config.json` is offered (the
/// share links' id for it, so a link can select it).
pub const IMPORTED_MODEL: &str = vramfit_core::share::IMPORTED_MODEL;

/// The GPU list's choice for a GPU given by its memory ([`Field::GpuMemory`]).
pub const CUSTOM_GPU: &str = "custom";

/// The checkpointing choice of the form; "every K-th block" takes its K from
/// a separate field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CheckpointChoice {
    /// Keep every saved tensor.
    #[default]
    None,
    /// Checkpoint every block.
    Full,
    /// Recompute only the attention core.
    Selective,
    /// Checkpoint every block, keeping the attention kernel's and every
    /// other matmul's outputs (torchtitan's per-op policy).
    SelectiveOp,
    /// Checkpoint one block in every K.
    EveryK,
}

impl CheckpointChoice {
    /// Every choice, in the order offered.
    pub const ALL: &'static [CheckpointChoice] = &[
        CheckpointChoice::None,
        CheckpointChoice::Full,
        CheckpointChoice::Selective,
        CheckpointChoice::SelectiveOp,
        CheckpointChoice::EveryK,
    ];

    /// The `<option>` value.
    pub fn id(self) -> &'static str {
        match self {
            CheckpointChoice::None => "none",
            CheckpointChoice::Full => "full",
            CheckpointChoice::Selective => "selective",
            CheckpointChoice::SelectiveOp => "selective-op",
            CheckpointChoice::EveryK => "every-k",
        }
    }

    /// The choice with this `<option>` value.
    pub fn parse(id: &str) -> Option<CheckpointChoice> {
        CheckpointChoice::ALL.iter().copied().find(|c| c.id() == id)
    }

    /// The choice (and K, for every-K) a core setting corresponds to.
    pub fn of(c: Checkpointing) -> (CheckpointChoice, Option<u32>) {
        match c {
            Checkpointing::Mode(CheckpointMode::None) => (CheckpointChoice::None, None),
            Checkpointing::Mode(CheckpointMode::Full) => (CheckpointChoice::Full, None),
            Checkpointing::Mode(CheckpointMode::Selective) => (CheckpointChoice::Selective, None),
            Checkpointing::Mode(CheckpointMode::SelectiveOp) => {
                (CheckpointChoice::SelectiveOp, None)
            }
            Checkpointing::EveryK(k) => (CheckpointChoice::EveryK, Some(k)),
        }
    }
}

/// The form's values.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    /// Model preset id, or [`IMPORTED_MODEL`].
    pub model: String,
    /// Micro-batch size, as typed.
    pub batch: String,
    /// Sequence length, as typed (used by text models).
    pub seq: String,
    /// Image size, as typed (used by vision models).
    pub image: String,
    /// Gradient-accumulation steps, as typed.
    pub accum: String,
    /// Precision mode.
    pub precision: Precision,
    /// Optimizer.
    pub optimizer: Optimizer,
    /// Checkpointing choice.
    pub checkpointing: CheckpointChoice,
    /// K of "every K-th block", as typed.
    pub every_k: String,
    /// Attention implementation (text models).
    pub attention: Attention,
    /// GPU preset id, or [`CUSTOM_GPU`] for a GPU given by its memory.
    pub gpu: String,
    /// A custom GPU's memory in GiB, as typed.
    pub gpu_memory: String,
    /// GPUs per node, as typed.
    pub gpus: String,
    /// Expert-parallel GPUs, as typed (shown for models with experts).
    pub ep: String,
    /// Expert tensor-parallel GPUs, as typed (0: as tensor parallelism;
    /// shown for models with experts).
    pub etp: String,
    /// Data-parallel strategy.
    pub strategy: Strategy,
    /// What is offloaded to host memory.
    pub offload: Offload,
    /// Training, fine-tuning or inference.
    pub mode: Mode,
    /// LoRA rank, as typed (fine-tuning modes).
    pub lora_rank: String,
    /// KV-cache length, as typed (inference).
    pub context: String,
    /// Everything the form does not show (nodes, tensor and pipeline
    /// parallelism, weights, pruning; LoRA rank and context outside their
    /// modes; attention for models that do not read tokens),
    /// as a share link set it. The form's fields override its counterparts.
    pub rest: TrainConfig,
    /// The serving engine and its settings (inference mode).
    pub serve: ServeInputs,
}

/// What the form's fields depend on in the selected model: the input it
/// reads and whether it has routed experts (the expert-parallel field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// What the model takes as input.
    pub kind: InputKind,
    /// Whether it is a mixture of experts.
    pub experts: bool,
}

impl From<InputKind> for Shape {
    /// A model without experts reading `kind`.
    fn from(kind: InputKind) -> Shape {
        Shape {
            kind,
            experts: false,
        }
    }
}

impl Default for Inputs {
    /// The page's first screen: what a share link without keys means.
    fn default() -> Self {
        Inputs::from_share(&ShareState::default())
    }
}

impl Inputs {
    /// The form for a share link's state (its model, GPU and configuration;
    /// a carried `config.json` is the import box's business).
    pub fn from_share(share: &ShareState) -> Inputs {
        let cfg = &share.train;
        let (checkpointing, k) = CheckpointChoice::of(cfg.checkpointing);
        let custom = share.gpu.strip_prefix(vramfit_core::gpus::CUSTOM_PREFIX);
        Inputs {
            model: share.model.clone(),
            batch: cfg.batch.to_string(),
            seq: cfg.seq.to_string(),
            image: cfg.image.to_string(),
            accum: cfg.grad_accum.to_string(),
            precision: cfg.precision,
            optimizer: cfg.optimizer,
            checkpointing,
            every_k: k.unwrap_or(2).to_string(),
            attention: cfg.attention,
            gpu: if custom.is_some() {
                CUSTOM_GPU.to_string()
            } else {
                share.gpu.clone()
            },
            gpu_memory: custom.unwrap_or("24").to_string(),
            gpus: cfg.parallel.gpus_per_node.to_string(),
            ep: cfg.parallel.ep.to_string(),
            etp: cfg.parallel.etp.to_string(),
            strategy: cfg.parallel.strategy,
            offload: cfg.parallel.offload,
            mode: cfg.mode,
            lora_rank: cfg.lora_rank.to_string(),
            context: cfg.context.to_string(),
            rest: *cfg,
            serve: ServeInputs::from_share(share),
        }
    }

    /// The raw text of a count field.
    pub fn get(&self, field: Field) -> &str {
        if let Some(raw) = self.serve.get(field) {
            return raw;
        }
        match field {
            Field::Batch => &self.batch,
            Field::Seq => &self.seq,
            Field::Image => &self.image,
            Field::Accum => &self.accum,
            Field::EveryK => &self.every_k,
            Field::Gpus => &self.gpus,
            Field::Ep => &self.ep,
            Field::Etp => &self.etp,
            Field::GpuMemory => &self.gpu_memory,
            Field::LoraRank => &self.lora_rank,
            Field::Context => &self.context,
            Field::Concurrency | Field::Utilization | Field::GpuLayers => "",
        }
    }

    /// Replaces the raw text of a count field.
    pub fn set(&mut self, field: Field, value: String) {
        if let Some(slot) = self.serve.slot(field) {
            return *slot = value;
        }
        let slot = match field {
            Field::Batch => &mut self.batch,
            Field::Seq => &mut self.seq,
            Field::Image => &mut self.image,
            Field::Accum => &mut self.accum,
            Field::EveryK => &mut self.every_k,
            Field::Gpus => &mut self.gpus,
            Field::Ep => &mut self.ep,
            Field::Etp => &mut self.etp,
            Field::GpuMemory => &mut self.gpu_memory,
            Field::LoraRank => &mut self.lora_rank,
            Field::Context => &mut self.context,
            // Answered by `serve.slot` above.
            Field::Concurrency | Field::Utilization | Field::GpuLayers => return,
        };
        *slot = value;
    }

    /// Micro-batch × accumulation steps, when both fields are valid.
    pub fn effective_batch(&self) -> Option<(u64, u64, u64)> {
        let batch = parse_count(Field::Batch, &self.batch).ok()?;
        let accum = parse_count(Field::Accum, &self.accum).ok()?;
        Some((batch.saturating_mul(accum), batch, accum))
    }

    /// These values less the batch's text where nothing else in the form
    /// shows it (the accumulation field's hint does, at more than one step):
    /// what the form's props carry, so that a batch edit re-renders the
    /// batch field alone ([`crate::components::BatchText`]).
    pub fn without_batch(&self) -> Inputs {
        match self.effective_batch() {
            Some((_, _, accum)) if accum > 1 => self.clone(),
            _ => Inputs {
                batch: String::new(),
                ..self.clone()
            },
        }
    }

    /// Takes over what a [`TrainConfig`] sets (a technique the user applies):
    /// batch, accumulation, precision, optimizer, checkpointing, attention,
    /// mode, the frozen base's storage, strategy, offload and GPU count.
    pub fn adopt(&mut self, cfg: &TrainConfig) {
        self.batch = cfg.batch.to_string();
        self.accum = cfg.grad_accum.to_string();
        self.precision = cfg.precision;
        self.optimizer = cfg.optimizer;
        self.attention = cfg.attention;
        let (choice, k) = CheckpointChoice::of(cfg.checkpointing);
        self.checkpointing = choice;
        if let Some(k) = k {
            self.every_k = k.to_string();
        }
        // The comparison strip's bigger levers change the mode, the base's
        // storage and the GPUs too.
        self.mode = cfg.mode;
        self.rest.lora_base = cfg.lora_base;
        self.strategy = cfg.parallel.strategy;
        self.offload = cfg.parallel.offload;
        self.gpus = cfg.parallel.gpus_per_node.to_string();
        self.rest.parallel.nodes = cfg.parallel.nodes;
    }

    /// The serving engine that answers, where one does: inference mode with
    /// vLLM, SGLang or llama.cpp (Hugging Face's `generate` is simulated).
    pub fn engine(&self) -> Option<Engine> {
        (self.mode == Mode::Inference && self.serve.engine != Engine::Hf)
            .then_some(self.serve.engine)
    }

    /// Whether the engine picks the weights' type and the attention kernels
    /// itself (vLLM and SGLang): the precision and attention are not read.
    pub fn engine_picks_kernels(&self) -> bool {
        matches!(self.engine(), Some(Engine::Vllm | Engine::Sglang))
    }

    /// Whether an engine's context is the sequence length (a context of
    /// 0): the sequence length is read then, and only then.
    pub fn context_is_seq(&self) -> bool {
        self.engine().is_some() && parse_count(Field::Context, &self.context) == Ok(0)
    }

    /// The count fields a model of this shape uses, in form order.
    pub fn fields(&self, shape: impl Into<Shape>) -> Vec<Field> {
        let Shape { kind, experts } = shape.into();
        let size = Field::input_size(kind);
        if self.engine().is_some() {
            // An engine reads the sequences in flight, not a batch, and
            // splits the model over the GPUs, experts and all. The sequence
            // length is only the context's default (a context of 0): the
            // form's context shows it then, and it is read only then.
            let memory = (self.gpu == CUSTOM_GPU).then_some(Field::GpuMemory);
            let serving = self.serve.fields();
            return [
                Some(Field::Concurrency),
                Some(Field::Context),
                size.filter(|_| self.context_is_seq()),
                memory,
                Some(Field::Gpus),
            ]
            .into_iter()
            .flatten()
            .chain(serving.into_iter().filter(|f| *f != Field::Concurrency))
            .collect();
        }
        let every_k = (self.checkpointing == CheckpointChoice::EveryK).then_some(Field::EveryK);
        let mode_field = match self.mode {
            Mode::FinetuneLora | Mode::FinetuneQlora => Some(Field::LoraRank),
            Mode::Inference => Some(Field::Context),
            Mode::Train => None,
        };
        let memory = (self.gpu == CUSTOM_GPU).then_some(Field::GpuMemory);
        let serving = if self.mode == Mode::Inference {
            self.serve.fields()
        } else {
            Vec::new()
        };
        // Inference has no optimizer step to accumulate for and nothing to recompute.
        let trains = self.trains();
        [
            Some(Field::Batch),
            size,
            trains.then_some(Field::Accum),
            every_k.filter(|_| trains),
            memory,
            Some(Field::Gpus),
            experts.then_some(Field::Ep),
            experts.then_some(Field::Etp),
            mode_field,
        ]
        .into_iter()
        .flatten()
        .chain(serving)
        .collect()
    }

    /// Whether the form describes training (or fine-tuning): its optimizer,
    /// accumulation and checkpointing apply. Inference has none of them.
    pub fn trains(&self) -> bool {
        self.mode != Mode::Inference
    }

    /// The GPU's id for the core and for links: the preset's, or
    /// `custom-<GiB>` for a GPU given by its memory (as typed: the core
    /// refuses it when the memory is invalid, which [`Inputs::config`] reports).
    pub fn gpu_id(&self) -> String {
        if self.gpu == CUSTOM_GPU {
            let memory = parse_count(Field::GpuMemory, &self.gpu_memory)
                .map_or_else(|_| self.gpu_memory.trim().to_string(), |n| n.to_string());
            format!("{}{memory}", vramfit_core::gpus::CUSTOM_PREFIX)
        } else {
            self.gpu.clone()
        }
    }

    /// Whether the optimizer has `torch.optim`'s implementations to choose
    /// from (Adam and AdamW: foreach, fused, loop keep different temporaries).
    pub fn optimizer_has_impls(&self) -> bool {
        matches!(self.optimizer, Optimizer::Adam | Optimizer::AdamW)
    }

    /// Whether the form offers the autocast region (training under autocast).
    pub fn shows_autocast_region(&self) -> bool {
        self.trains() && self.precision.autocast().is_some()
    }

    /// Whether the form offers what `zero_grad` leaves: only where the
    /// gradients are the loop's own (one GPU, DDP); ZeRO, FSDP and Megatron
    /// keep buffers of their own.
    pub fn shows_zero_grad(&self) -> bool {
        self.trains() && self.strategy.loop_owns_gradients()
    }

    /// The link keys of the training-loop settings the form shows (none in
    /// inference, which runs no training loop).
    pub fn loop_keys(&self) -> Vec<&'static str> {
        if !self.trains() {
            return Vec::new();
        }
        let mut keys = vec!["lo", "pt"];
        if self.shows_zero_grad() {
            keys.push("zg");
        }
        if self.shows_autocast_region() {
            keys.push("ar");
        }
        keys
    }

    /// After the link's settings were cleared: the training-loop settings the
    /// form shows keep their values from `kept`.
    pub fn keep_loop_settings(&mut self, kept: &TrainConfig) {
        if !self.trains() {
            return;
        }
        if self.shows_zero_grad() {
            self.rest.zero_grad = kept.zero_grad;
        }
        self.rest.loop_outputs = kept.loop_outputs;
        self.rest.pytorch = kept.pytorch;
        self.rest.training_cache = kept.training_cache;
        self.rest.attention_mask = kept.attention_mask;
        if self.shows_autocast_region() {
            self.rest.autocast_region = kept.autocast_region;
        }
    }

    /// Whether any training-loop setting differs from the default (the
    /// form then opens its section).
    pub fn loop_changed(&self) -> bool {
        let d = TrainConfig::default();
        let r = &self.rest;
        (self.shows_zero_grad() && r.zero_grad != d.zero_grad)
            || r.loop_outputs != d.loop_outputs
            || r.pytorch != d.pytorch
            || r.training_cache != d.training_cache
            || r.attention_mask != d.attention_mask
            || (self.shows_autocast_region() && r.autocast_region != d.autocast_region)
    }

    /// Validates the fields a model with this input kind uses.
    ///
    /// # Errors
    /// Why each invalid field is invalid.
    pub fn config(&self, shape: impl Into<Shape>) -> Result<TrainConfig, FieldErrors> {
        self.settings(shape).map(|(cfg, _)| cfg)
    }

    /// Validates the fields a model with this input kind uses, the serving
    /// settings with them (the weights choice of an engine sets the
    /// configuration's weight format too).
    ///
    /// # Errors
    /// Why each invalid field is invalid.
    pub fn settings(&self, shape: impl Into<Shape>) -> Result<(TrainConfig, Serving), FieldErrors> {
        let shape = shape.into();
        let kind = shape.kind;
        let mut cfg = TrainConfig {
            precision: self.precision,
            optimizer: self.optimizer,
            attention: if kind == InputKind::Tokens {
                self.attention
            } else {
                self.rest.attention
            },
            mode: self.mode,
            ..self.rest
        };
        cfg.parallel.strategy = self.strategy;
        cfg.parallel.offload = self.offload;
        // Without experts there is nothing to split: the field is hidden
        // and a link's `ep` does not carry over to such a model.
        cfg.parallel.ep = 1;
        cfg.parallel.etp = 0;
        cfg.checkpointing = match self.checkpointing {
            CheckpointChoice::None => Checkpointing::Mode(CheckpointMode::None),
            CheckpointChoice::Full => Checkpointing::Mode(CheckpointMode::Full),
            CheckpointChoice::Selective => Checkpointing::Mode(CheckpointMode::Selective),
            CheckpointChoice::SelectiveOp => Checkpointing::Mode(CheckpointMode::SelectiveOp),
            CheckpointChoice::EveryK => Checkpointing::EveryK(1),
        };
        let mut errors = FieldErrors::default();
        let (weights, serving) = self
            .serve
            .settings(self.mode == Mode::Inference, &mut errors);
        if let Some(w) = weights {
            cfg.weights = w;
        }
        for field in self.fields(shape) {
            if self.serve.get(field).is_some() {
                // Read by `serve.settings`.
                continue;
            }
            match parse_count(field, self.get(field)) {
                Ok(n) => match field {
                    Field::Batch => cfg.batch = n,
                    Field::Seq => cfg.seq = n,
                    Field::Image => cfg.image = n,
                    Field::Accum => cfg.grad_accum = n,
                    // In range, so at most 2^16.
                    Field::EveryK => {
                        cfg.checkpointing =
                            Checkpointing::EveryK(u32::try_from(n).unwrap_or(u32::MAX))
                    }
                    Field::Gpus => cfg.parallel.gpus_per_node = n,
                    Field::Ep => cfg.parallel.ep = n,
                    Field::Etp => cfg.parallel.etp = n,
                    // Not part of the configuration: read by `gpu_id`.
                    Field::GpuMemory => {}
                    Field::LoraRank => cfg.lora_rank = n,
                    Field::Context => cfg.context = n,
                    Field::Concurrency | Field::Utilization | Field::GpuLayers => {}
                },
                Err(e) => errors.set(field, e),
            }
        }
        // vLLM and SGLang spread a model over the GPUs by tensor parallelism
        // (`--tensor-parallel-size`, `--tp`), llama.cpp by layer
        // (`--split-mode layer`): the GPU count is that degree. A link's own
        // `tp` stays where the form asks for one GPU.
        if matches!(
            serving.engine,
            Engine::Vllm | Engine::Sglang | Engine::LlamaCpp
        ) && self.mode == Mode::Inference
            && cfg.parallel.world() > 1
        {
            cfg.parallel.tp = cfg.parallel.world();
        }
        if errors.is_empty() {
            Ok((cfg, serving))
        } else {
            Err(errors)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_follow_the_model_and_the_checkpointing_choice() {
        let mut i = Inputs::default();
        assert_eq!(
            i.fields(InputKind::Tokens),
            vec![Field::Batch, Field::Seq, Field::Accum, Field::Gpus]
        );
        assert_eq!(
            i.fields(InputKind::Features),
            vec![Field::Batch, Field::Accum, Field::Gpus]
        );
        i.checkpointing = CheckpointChoice::EveryK;
        assert_eq!(
            i.fields(InputKind::Image),
            vec![
                Field::Batch,
                Field::Image,
                Field::Accum,
                Field::EveryK,
                Field::Gpus
            ]
        );
        i.mode = Mode::FinetuneQlora;
        assert_eq!(i.fields(InputKind::Features).last(), Some(&Field::LoraRank));
        i.mode = Mode::Inference;
        assert_eq!(i.fields(InputKind::Features).last(), Some(&Field::Context));
    }

    /// The form's props do not change with the batch unless the
    /// accumulation hint shows it (more than one step).
    #[test]
    fn the_form_sees_the_batch_only_where_a_hint_shows_it() {
        let at = |batch: &str, accum: &str| Inputs {
            batch: batch.into(),
            accum: accum.into(),
            ..Inputs::default()
        };
        assert_eq!(at("8", "1").without_batch(), at("9", "1").without_batch());
        assert_eq!(at("8", "x").without_batch(), at("", "x").without_batch());
        assert_ne!(at("8", "4").without_batch(), at("9", "4").without_batch());
        assert_eq!(at("8", "4").without_batch(), at("8", "4"));
        // Everything else is kept.
        let mut other = at("8", "1");
        other.seq = "4096".into();
        assert_ne!(other.without_batch(), at("9", "1").without_batch());
    }

    #[test]
    fn config_carries_every_choice() {
        let mut i = Inputs {
            accum: "4".into(),
            checkpointing: CheckpointChoice::EveryK,
            every_k: "3".into(),
            ..Inputs::default()
        };
        i.attention = Attention::Flash;
        let cfg = i.config(InputKind::Tokens).unwrap_or_default();
        assert_eq!((cfg.batch, cfg.seq, cfg.grad_accum), (8, 512, 4));
        assert_eq!(cfg.checkpointing, Checkpointing::EveryK(3));
        assert_eq!(cfg.attention, Attention::Flash);
        // The form's attention only applies to text models; others keep the link's.
        assert_eq!(
            i.config(InputKind::Image).map(|c| c.attention),
            Ok(Attention::Sdpa)
        );
        i.rest.attention = Attention::Eager;
        assert_eq!(
            i.config(InputKind::Image).map(|c| c.attention),
            Ok(Attention::Eager)
        );
    }

    #[test]
    fn parallel_and_mode_fields_reach_the_config() {
        let i = Inputs {
            gpus: "8".into(),
            strategy: Strategy::Zero3,
            offload: Offload::Optimizer,
            mode: Mode::Inference,
            context: "2048".into(),
            ..Inputs::default()
        };
        let cfg = i.config(InputKind::Tokens).unwrap_or_default();
        assert_eq!(
            (
                cfg.parallel.gpus_per_node,
                cfg.parallel.strategy,
                cfg.parallel.offload
            ),
            (8, Strategy::Zero3, Offload::Optimizer)
        );
        assert_eq!((cfg.mode, cfg.context), (Mode::Inference, 2048));
        let bad = Inputs {
            gpus: "0".into(),
            ..i
        };
        assert!(
            bad.config(InputKind::Tokens)
                .is_err_and(|e| e.get(Field::Gpus).is_some())
        );
    }

    #[test]
    fn adopting_a_config_round_trips() {
        let cfg = TrainConfig {
            batch: 2,
            grad_accum: 16,
            checkpointing: Checkpointing::EveryK(5),
            ..TrainConfig::default()
        };
        let mut i = Inputs::default();
        i.adopt(&cfg);
        let back = i.config(InputKind::Tokens).unwrap_or_default();
        assert_eq!(back, TrainConfig { seq: 512, ..cfg });
    }

    #[test]
    fn effective_batch_needs_both_fields() {
        let i = Inputs {
            batch: "8".into(),
            accum: "4".into(),
            ..Inputs::default()
        };
        assert_eq!(i.effective_batch(), Some((32, 8, 4)));
        assert_eq!(
            Inputs {
                accum: "x".into(),
                ..i
            }
            .effective_batch(),
            None
        );
    }

    #[test]
    fn checkpoint_choices_have_unique_ids() {
        for &c in CheckpointChoice::ALL {
            assert_eq!(CheckpointChoice::parse(c.id()), Some(c));
        }
        assert_eq!(CheckpointChoice::parse("bogus"), None);
    }
}
