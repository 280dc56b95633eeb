//! Mixtures of experts: what a transformer's sparse feed-forward holds
//! ([`Moe`]) as the `transformers` model types vramfit reads build it —
//! routed experts stored as fused banks, a router, optional shared experts,
//! and the layers that keep a dense MLP. The lowering is in
//! [`super::moe_lower`]; the sources are in `tests/reference/moe/README.md`.
//!
//! The auxiliary load-balancing loss runs only with `output_router_logits`
//! on ([`Moe::aux_loss`]); it is off in every config class and released
//! config. Not modelled: `experts_implementation`
//! other than the default `grouped_mm` (the per-expert loop routes the
//! same rows expert by expert, but also makes a tokens × k × (experts + 1)
//! int64 one-hot mask and, under autocast, saves a half copy of every hit
//! expert's weights). Expert parallelism (`Parallel::ep`) is lowered in
//! [`super::moe_lower`] as Megatron-Core's all-to-all dispatcher runs it.

use crate::error::Error;
use serde::{Deserialize, Serialize};

/// A sparse feed-forward: each token goes through `top_k` of `experts`
/// routed experts (and the shared experts, if any).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moe {
    /// Routed experts per sparse layer (`num_local_experts`, `num_experts`,
    /// `n_routed_experts`).
    pub experts: u64,
    /// Experts each token is sent to (`num_experts_per_tok`).
    pub top_k: u64,
    /// Each routed expert's intermediate size (`moe_intermediate_size`, or
    /// `intermediate_size` where the model has no other MLP).
    pub expert_intermediate: u64,
    /// How the router picks and weights the experts.
    pub router: Router,
    /// Experts every token goes through besides the routed ones.
    #[serde(default)]
    pub shared: Option<SharedExperts>,
    /// The layers that keep a dense MLP (of the spec's `intermediate`).
    #[serde(default)]
    pub dense: DenseLayers,
    /// Biases on the router and on every expert's projections (gpt-oss).
    #[serde(default)]
    pub biases: bool,
    /// The experts' gated activation.
    #[serde(default)]
    pub activation: ExpertActivation,
    /// `output_router_logits` (default off): the forward adds
    /// `load_balancing_loss_func`'s auxiliary loss over every sparse
    /// layer's router logits (Mixtral, Qwen2-/Qwen3-MoE, OLMoE and gpt-oss;
    /// DeepSeek's `ForCausalLM` computes none).
    #[serde(default)]
    pub aux_loss: bool,
    /// The experts run in a narrower latent space (Nemotron-H's
    /// `moe_latent_size`): `fc1_latent_proj` (hidden → latent) before
    /// them and `fc2_latent_proj` (latent → hidden) after, the experts'
    /// matrices `latent` wide; 0 for none.
    #[serde(default)]
    pub latent: u64,
}

/// How a router turns its logits (`F.linear(x, router.weight)`, one per
/// expert) into the experts and weights of each token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Router {
    /// Softmax over every expert in fp32, then top-k (Mixtral, Qwen2-MoE,
    /// Qwen3-MoE, OLMoE).
    Softmax {
        /// The k weights are divided by their sum (Mixtral always;
        /// `norm_topk_prob` for the others).
        renormalize: bool,
        /// The weights are cast back to the logits' dtype (the Qwen MoE
        /// and OLMoE routers; Mixtral's stay fp32).
        cast_back: bool,
    },
    /// DeepSeek-V2: softmax, top-k over the best `topk_groups` of
    /// `groups` expert groups (`group_limited_greedy`; greedy when
    /// `groups` is 1), times `routed_scaling_factor`.
    SoftmaxGroups {
        /// Expert groups (`n_group`).
        groups: u64,
        /// Groups a token may choose from (`topk_group`).
        topk_groups: u64,
    },
    /// DeepSeek-V3: sigmoid scores, the choice biased by
    /// `e_score_correction_bias` and limited to the best `topk_groups`
    /// groups, the chosen scores gathered, renormalized, scaled.
    SigmoidGroups {
        /// Expert groups (`n_group`).
        groups: u64,
        /// Groups a token may choose from (`topk_group`).
        topk_groups: u64,
        /// The k weights are divided by their sum (`norm_topk_prob`).
        renormalize: bool,
    },
    /// MiniMax-M2: the logits cast to fp32 (`router_logits.float()`),
    /// sigmoid scores, the choice biased by `e_score_correction_bias` (no
    /// groups), the chosen scores gathered and divided by their sum in
    /// place; no scaling.
    SigmoidBias,
    /// ERNIE 4.5: with autocast off, fp32 logits of the fp32 input
    /// (`F.linear(x.float(), w.float())`), softmax, the choice biased by
    /// `moe_statics.e_score_correction_bias` (a frozen `[1, experts]`
    /// parameter), the chosen probabilities gathered and divided by their
    /// sum (clamped to `moe_norm_min`), cast to the hidden states' dtype.
    SoftmaxCorrected,
    /// gpt-oss: top-k of the logits, softmax over the k.
    TopKSoftmax,
    /// Hunyuan's MoE (`HunYuanMoEV1Gate`): the hidden states cast to fp32
    /// (`.float()`, while the gate's weight is fp32; autocast still runs
    /// the linear in 16 bits), fp32 softmax over every expert, top-k, the k
    /// divided by their sum and cast to the logits' dtype: Qwen3-MoE's
    /// router with the input's fp32 copy.
    HunYuan,
    /// Granite's MoE (`GraniteMoeTopKRouter`, and GraniteMoeShared's and
    /// GraniteMoeHybrid's): the logits cast to fp32 (`.float()`), top-k of
    /// them, softmax over the k in fp32, cast to the hidden states' dtype
    /// (`.type_as(hidden_states)`).
    TopKSoftmaxFp32,
    /// Gemma 4 (`Gemma4TextRouter`): routed from the block's residual
    /// through an RMSNorm without weight and a learned scale; fp32
    /// softmax, top-k, renormalized, times `per_expert_scale[index]`
    /// ([`super::gemma4::router`]).
    Gemma4,
    /// Llama 4 (`Llama4Router`, an `nn.Linear`): top-k of the logits, the
    /// other experts' scores −inf (`full_like(..).scatter_`), the sigmoid
    /// of every score in fp32, cast back. Every token then goes through
    /// every expert, scaled by its score (0 where not chosen), by `bmm`
    /// over the whole banks (`Llama4TextExperts`; see
    /// [`super::moe_lower`]), the shared expert after them.
    Llama4,
}

/// Experts every token goes through: one MLP (gate, up, down `nn.Linear`)
/// of `intermediate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedExperts {
    /// Its intermediate size (Qwen2-MoE's `shared_expert_intermediate_size`;
    /// DeepSeek's `moe_intermediate_size × n_shared_experts`).
    pub intermediate: u64,
    /// Qwen2-MoE's `shared_expert_gate`: computed before the routed
    /// experts and scaled by `sigmoid(shared_expert_gate(x))` (a `[1,
    /// hidden]` weight); without it (DeepSeek) the shared experts run
    /// after the routed ones and are added as they are.
    pub gate: bool,
    /// Computed before the routed experts without a gate (ERNIE 4.5's
    /// `shared_experts`), then added.
    #[serde(default)]
    pub first: bool,
    /// Gate and up are one projection chunked in two (Granite's
    /// `shared_mlp`: `input_linear`, `output_linear`), as
    /// [`super::MlpKind::FusedGated`]; computed after the routed experts.
    #[serde(default)]
    pub fused: bool,
}

/// Which layers keep a dense MLP: those before `first`
/// (`first_k_dense_replace`), those whose number plus one is not a
/// multiple of `sparse_step` (`decoder_sparse_step`) and those `listed`
/// (`mlp_only_layers`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DenseLayers {
    /// Layers before this one are dense.
    pub first: u64,
    /// Layer `i` is sparse only when `(i + 1) % sparse_step == 0`.
    pub sparse_step: u64,
    /// Layers listed as dense.
    pub listed: Vec<u64>,
}

impl Default for DenseLayers {
    fn default() -> Self {
        DenseLayers {
            first: 0,
            sparse_step: 1,
            listed: Vec::new(),
        }
    }
}

/// The gated activation inside each expert.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpertActivation {
    /// `act(gate) * up` of the bank's two halves (SwiGLU).
    #[default]
    Gated,
    /// gpt-oss's `_apply_gate`: interleaved gate and up, each clamped,
    /// `(up + 1) * gate * sigmoid(gate * alpha)`.
    ClampedSwiglu,
    /// No gate (Nemotron-H's experts, `has_gate=False`): `relu(up(x))²`
    /// on an `up_proj` bank `[experts, intermediate, width]`, two matrices
    /// per expert; the shared experts the same ungated MLP.
    Relu2,
}

impl Moe {
    /// DeepSeek's sparse block (DeepSeek-V2/V3, and GLM-4.5's, which is
    /// DeepSeek-V3's): `experts` routed experts of `intermediate`, `top_k`
    /// per token, `shared` shared experts run as one ungated MLP of
    /// `shared × intermediate` after them (none for 0), and the first
    /// `first_dense` layers dense.
    pub fn deepseek_style(
        (experts, top_k, intermediate): (u64, u64, u64),
        shared: u64,
        first_dense: u64,
        router: Router,
    ) -> Moe {
        Moe {
            experts,
            top_k,
            expert_intermediate: intermediate,
            router,
            shared: (shared > 0).then(|| SharedExperts {
                intermediate: intermediate.saturating_mul(shared),
                gate: false,
                first: false,
                fused: false,
            }),
            dense: DenseLayers {
                first: first_dense,
                ..DenseLayers::default()
            },
            biases: false,
            activation: ExpertActivation::default(),
            aux_loss: false,
            latent: 0,
        }
    }

    /// Whether layer `i` (from 0) routes to experts.
    pub fn is_sparse(&self, i: u64) -> bool {
        i >= self.dense.first
            && (i + 1).is_multiple_of(self.dense.sparse_step.max(1))
            && !self.dense.listed.contains(&i)
    }

    /// The number of sparse layers among `layers`.
    pub fn sparse_layers(&self, layers: u64) -> u64 {
        (0..layers).filter(|&i| self.is_sparse(i)).count() as u64
    }

    /// The width the experts read and write: [`Moe::latent`], else the
    /// model's `hidden` size.
    pub fn expert_width(&self, hidden: u64) -> u64 {
        if self.latent > 0 { self.latent } else { hidden }
    }

    /// One routed expert's matrices, `(out, in)`: gate, up and down, or
    /// up and down for [`ExpertActivation::Relu2`].
    pub fn expert_matrices(&self, hidden: u64) -> Vec<(u64, u64)> {
        let (w, i) = (self.expert_width(hidden), self.expert_intermediate);
        match self.activation {
            ExpertActivation::Relu2 => vec![(i, w), (w, i)],
            ExpertActivation::Gated | ExpertActivation::ClampedSwiglu => {
                vec![(i, w), (i, w), (w, i)]
            }
        }
    }

    /// Parameters of one routed expert: gate, up and down projections
    /// (and their biases with [`Moe::biases`]).
    pub fn expert_parameters(&self, hidden: u64) -> u64 {
        let i = self.expert_intermediate;
        let weights = self
            .expert_matrices(hidden)
            .iter()
            .fold(0u64, |sum, &(o, n)| sum.saturating_add(o.saturating_mul(n)));
        if self.biases {
            weights.saturating_add(2 * i).saturating_add(hidden)
        } else {
            weights
        }
    }

    /// Checks the counts against each other and the model's `layers`.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] naming the field.
    pub fn validate(&self, layers: u64) -> Result<(), Error> {
        let bad = |msg: String| Err(Error::InvalidModel(msg));
        for (name, v) in [
            ("the number of experts", self.experts),
            ("num_experts_per_tok", self.top_k),
            ("the experts' intermediate size", self.expert_intermediate),
            ("decoder_sparse_step", self.dense.sparse_step),
        ] {
            if v == 0 || v > 1 << 32 {
                return bad(format!("{name} must be between 1 and 2^32, got {v}"));
            }
        }
        if self.top_k > self.experts {
            return bad(format!(
                "num_experts_per_tok ({}) is more than the {} experts",
                self.top_k, self.experts
            ));
        }
        if let Some(s) = self.shared
            && (s.intermediate == 0 || s.intermediate > 1 << 32)
        {
            return bad(format!(
                "the shared experts' intermediate size must be between 1 and 2^32, got {}",
                s.intermediate
            ));
        }
        if let Some(&i) = self.dense.listed.iter().find(|&&i| i >= layers) {
            return bad(format!(
                "mlp_only_layers names layer {i}, but the model has {layers}"
            ));
        }
        match self.router {
            Router::SoftmaxGroups {
                groups,
                topk_groups,
            }
            | Router::SigmoidGroups {
                groups,
                topk_groups,
                ..
            } => {
                if groups == 0 || !self.experts.is_multiple_of(groups) {
                    return bad(format!(
                        "n_group ({groups}) must divide the {} experts",
                        self.experts
                    ));
                }
                if topk_groups == 0 || topk_groups > groups {
                    return bad(format!(
                        "topk_group ({topk_groups}) must be between 1 and n_group ({groups})"
                    ));
                }
            }
            Router::Softmax { .. }
            | Router::SigmoidBias
            | Router::SoftmaxCorrected
            | Router::TopKSoftmax
            | Router::TopKSoftmaxFp32
            | Router::HunYuan
            | Router::Gemma4
            | Router::Llama4 => {}
        }
        Ok(())
    }
}
