//! What the routing does and does not change in a mixture of experts'
//! training memory ([`Routing`]): the routed experts run tokens × top-k
//! rows whatever the routing (`transformers`' grouped path and
//! Megatron-Core's dropless dispatch neither drop nor pad); a drop-and-pad
//! dispatch at a capacity factor pads every expert's rows to that factor
//! times its even share, however the tokens fall. Llama 4 in
//! `transformers` runs every token through every expert (tokens × experts
//! rows, [`crate::models::Router::Llama4`]): nothing is dispatched, so
//! nothing is padded.

use crate::graph::Graph;
use crate::units::Bytes;
use serde::Serialize;

/// The capacity factor the padded figure assumes: Switch Transformer's
/// training setting (Fedus et al. 2021, "Switch Transformers", Table 1:
/// capacity factor 1.25).
pub const CAPACITY_FACTOR: f64 = 1.25;

/// The routed experts' rows and activations on this GPU, and what a
/// drop-and-pad dispatch would add.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Routing {
    /// Rows the routed experts' ops keep for backward, per micro-batch:
    /// every sparse layer's tensors of tokens × top-k rows (as this GPU
    /// runs them), whose sum does not depend on which experts the tokens
    /// choose or how evenly.
    pub expert_activation_bytes: Bytes,
    /// The capacity factor of [`Routing::padded_extra_bytes`]
    /// ([`CAPACITY_FACTOR`]).
    pub capacity_factor: f64,
    /// What a drop-and-pad dispatch at that capacity factor would keep
    /// besides (Megatron-Core's `--moe-expert-capacity-factor` with
    /// `--moe-pad-expert-input-to-capacity`, DeepSpeed-MoE's
    /// `capacity_factor`): each expert's rows padded to the factor times
    /// its even share, so (factor − 1) × the experts' activations, the
    /// busiest expert's overflow dropped rather than stored.
    pub padded_extra_bytes: Bytes,
    /// Whether the forward adds the auxiliary load-balancing loss
    /// (`output_router_logits` in the `config.json`, off by default):
    /// every sparse layer's router logits kept until it.
    pub aux_loss: bool,
    /// Every token goes through all of these experts (Llama 4 in
    /// `transformers`): the rows are tokens × experts, and
    /// [`Routing::padded_extra_bytes`] is 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub every_expert: Option<u64>,
}

/// [`Routing`] for the graph `g` at micro-batch `batch`, whose experts
/// run the auxiliary loss when `aux_loss` and take every token through all
/// `every_expert` experts when given; `None` without routed experts (or in
/// inference, which saves nothing).
pub fn routing(
    g: &Graph,
    batch: u64,
    aux_loss: bool,
    every_expert: Option<u64>,
) -> Option<Routing> {
    let mut seen = std::collections::HashSet::new();
    let mut bytes = 0u64;
    let mut routed = false;
    for op in g.ops.iter().filter(|o| o.routed) {
        routed = true;
        for &t in &op.saved {
            let storage = g.storage_of(t);
            let Some(info) = g.tensor(storage) else {
                continue;
            };
            // The per-expert offsets are as many as the experts, not the rows.
            if info.numel.per_sample > 0 && seen.insert(storage) {
                bytes =
                    bytes.saturating_add(info.numel.at(batch).saturating_mul(info.dtype.size()));
            }
        }
    }
    (routed && bytes > 0).then(|| Routing {
        expert_activation_bytes: Bytes(bytes),
        capacity_factor: CAPACITY_FACTOR,
        padded_extra_bytes: if every_expert.is_some() {
            Bytes::ZERO
        } else {
            Bytes((bytes as f64 * (CAPACITY_FACTOR - 1.0)).round() as u64)
        },
        aux_loss,
        every_expert,
    })
}
