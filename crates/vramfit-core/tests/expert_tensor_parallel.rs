//! Expert tensor parallelism (`Parallel::etp`, Megatron-Core's
//! `expert_tensor_parallel_size`) as `initialize_model_parallel` in
//! `megatron/core/parallel_state.py` lays it out: each routed expert's
//! columns split over etp ranks, independently of `tp` (its default); the
//! experts tile the world as etp × ep × pp × expert-dp.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::error::Inapplicable;
use vramfit_core::parallel::{Parallel, Strategy};
use vramfit_core::{Error, Estimate, Overheads, TrainConfig, model_preset};

/// Mixtral-8x7B: 32 sparse layers × 8 experts × 3 × 4096 × 14,336.
const MIXTRAL_EXPERTS: u64 = 32 * 8 * 3 * 4096 * 14_336;
/// Mixtral-8x7B's parameters outside its routed experts.
const MIXTRAL_DENSE: u64 = 46_702_792_704 - MIXTRAL_EXPERTS;

fn on(strategy: Strategy, gpus: u64, (tp, ep, etp): (u64, u64, u64)) -> TrainConfig {
    TrainConfig {
        batch: 1,
        seq: 256,
        precision: vramfit_core::Precision::Bf16,
        parallel: Parallel {
            strategy,
            gpus_per_node: gpus,
            tp,
            ep,
            etp,
            ..Parallel::default()
        },
        ..TrainConfig::default()
    }
}

fn estimate(id: &str, cfg: &TrainConfig) -> Result<Estimate, Error> {
    vramfit_core::estimate(
        &model_preset(id).unwrap().spec,
        cfg,
        &Overheads::default(),
        None,
    )
}

/// Eight GPUs hold Mixtral's 8 experts as ep 4 × etp 2: each GPU a quarter
/// of the experts, half of each expert's columns, and every dense
/// parameter (no `tp`).
#[test]
fn expert_tensor_parallelism_splits_each_experts_columns_apart_from_tp() {
    for (ep, etp) in [(1, 2), (4, 2), (2, 4), (1, 8)] {
        let e = estimate("mixtral-8x7b", &on(Strategy::Ddp, 8, (1, ep, etp))).unwrap();
        assert_eq!(
            e.parameters_per_gpu,
            MIXTRAL_DENSE + MIXTRAL_EXPERTS / (ep * etp),
            "ep {ep} etp {etp}"
        );
        assert_eq!(e.parameter_count, 46_702_792_704, "ep {ep} etp {etp}");
    }
}

/// Unset, `etp` is `tp` (Megatron-Core's default): the same estimate as
/// giving it; `etp` 1 under `tp` 2 keeps whole experts on each GPU.
#[test]
fn unset_expert_tensor_parallelism_follows_tp() {
    let unset = estimate("olmoe-1b-7b", &on(Strategy::Ddp, 8, (2, 4, 0))).unwrap();
    let given = estimate("olmoe-1b-7b", &on(Strategy::Ddp, 8, (2, 4, 2))).unwrap();
    assert_eq!(unset.parameters_per_gpu, given.parameters_per_gpu);
    assert_eq!(unset.peak_allocated_bytes, given.peak_allocated_bytes);
    let whole = estimate("olmoe-1b-7b", &on(Strategy::Ddp, 8, (2, 2, 1))).unwrap();
    assert!(whole.parameters_per_gpu > given.parameters_per_gpu);
}

/// ZeRO-3 shards the experts over the expert-data-parallel group,
/// world / (etp × ep × pp): 8 / (2 × 2) = 2 GPUs; the dense parameters
/// over all 8.
#[test]
fn zero3_shards_the_experts_over_world_over_etp_ep_pp() {
    let e = estimate("mixtral-8x7b", &on(Strategy::Zero3, 8, (1, 2, 2))).unwrap();
    assert_eq!(
        e.parameters_per_gpu,
        MIXTRAL_DENSE.div_ceil(8) + (MIXTRAL_EXPERTS / 4).div_ceil(2)
    );
    let p = on(Strategy::Zero3, 8, (1, 2, 2)).parallel;
    assert_eq!(
        (p.expert_tp(), p.expert_dp(), p.expert_shard_group()),
        (2, 2, 2)
    );
}

/// Each sparse layer's expert shards run S × etp / tp rows (Megatron's
/// dispatcher gathers the routed rows over the etp ranks): new buffers in
/// and out when etp differs from tp, none when they agree.
#[test]
fn expert_shards_run_the_rows_their_etp_group_routed() {
    let regroups = |tp: u64, etp: u64| {
        let g = model_preset("olmoe-1b-7b")
            .unwrap()
            .spec
            .lower(&on(Strategy::Ddp, 8, (tp, 1, etp)))
            .unwrap();
        let size = |name: &str| -> Vec<u64> {
            g.ops
                .iter()
                .filter(|o| o.name.ends_with(name))
                .map(|o| g.tensor(o.outputs[0]).unwrap().numel.per_sample)
                .collect()
        };
        (size("etp_gather"), size("etp_scatter"))
    };
    assert_eq!(regroups(2, 2), (vec![], vec![]));
    assert_eq!(regroups(2, 0), (vec![], vec![]));
    // OLMoE: 16 sparse layers, top-8 routing, hidden 2048, 256 tokens.
    let routed = 256 * 8 * 2048;
    assert_eq!(regroups(1, 4), (vec![4 * routed; 16], vec![routed; 16]));
    assert_eq!(regroups(2, 1), (vec![routed / 2; 16], vec![routed; 16]));
}

#[test]
fn expert_tensor_parallelism_is_refused_where_it_cannot_apply() {
    let not = |id: &str, cfg: &TrainConfig| match estimate(id, cfg) {
        Err(Error::NotApplicable(why)) => why,
        other => panic!("{id}: {:?}", other.map(|e| e.peak_allocated_bytes)),
    };
    assert_eq!(
        not("llama-3-8b", &on(Strategy::Ddp, 8, (1, 1, 2))),
        Inapplicable::ExpertTensorParallelNoExperts { etp: 2 }
    );
    // Qwen1.5-MoE's experts are 1408 = 2^7 × 11 wide.
    assert_eq!(
        not("qwen1.5-moe-a2.7b", &on(Strategy::Ddp, 6, (1, 1, 3))),
        Inapplicable::ExpertTensorParallel { size: 1408, etp: 3 }
    );
    // etp 2 × ep 8 = 16 ranks per copy of the experts on 8 GPUs.
    assert_eq!(
        not("mixtral-8x7b", &on(Strategy::Ddp, 8, (1, 8, 2))),
        Inapplicable::ExpertParallelGpus {
            etp_ep_pp: 16,
            gpus: 8
        }
    );
}

/// The planner splits each expert's columns only where expert parallelism
/// has run out of experts (or GPUs) and GPUs remain, at widths that divide
/// the experts' and leave whole expert groups.
#[test]
fn the_planner_tries_expert_tensor_parallelism_past_the_last_expert_degree() {
    use vramfit_core::plan::expert_layouts;
    let spec = |id: &str| model_preset(id).unwrap().spec;
    let mixtral = spec("mixtral-8x7b");
    assert_eq!(
        expert_layouts(&mixtral, (1, 1), 8),
        [(1, 0), (2, 0), (4, 0), (8, 0)]
    );
    assert_eq!(
        expert_layouts(&mixtral, (1, 1), 64),
        [(1, 0), (2, 0), (4, 0), (8, 0), (8, 2), (8, 4), (8, 8)]
    );
    // Under tp 2 the experts' columns go over 4 (twice tp), not 2 (tp itself).
    assert_eq!(
        expert_layouts(&mixtral, (2, 1), 32),
        [(1, 0), (2, 0), (4, 0), (8, 0), (8, 4)]
    );
    // Qwen1.5-MoE: 60 experts stop ep at 4 of 8 GPUs; 1408 columns halve.
    assert_eq!(
        expert_layouts(&spec("qwen1.5-moe-a2.7b"), (1, 1), 8),
        [(1, 0), (2, 0), (4, 0), (4, 2)]
    );
    assert_eq!(expert_layouts(&spec("llama-3-8b"), (1, 1), 8), [(1, 0)]);
    // Every layout it offers is one the estimate accepts.
    for (ep, etp) in expert_layouts(&mixtral, (1, 1), 64) {
        let cfg = TrainConfig {
            parallel: Parallel {
                nodes: 8,
                ..on(Strategy::Zero3, 8, (1, ep, etp)).parallel
            },
            ..on(Strategy::Zero3, 8, (1, ep, etp))
        };
        assert!(cfg.validate().is_ok(), "ep {ep} etp {etp}");
    }
}

/// The routed experts' activations are tokens × top-k rows whatever the
/// routing: linear in the micro-batch, a part of what the layers keep for
/// backward; a drop-and-pad dispatch at capacity factor 1.25 would keep a
/// quarter more. Dense models and inference have none.
#[test]
fn the_routing_note_sizes_the_experts_activations_and_their_padding() {
    let at = |batch: u64| {
        let cfg = TrainConfig {
            batch,
            ..on(Strategy::Single, 1, (1, 1, 0))
        };
        estimate("olmoe-1b-7b", &cfg).unwrap()
    };
    let (one, two) = (at(1), at(2));
    let (r1, r2) = (one.routing.unwrap(), two.routing.unwrap());
    assert!(r1.expert_activation_bytes.0 > 0);
    assert_eq!(
        r2.expert_activation_bytes.0,
        2 * r1.expert_activation_bytes.0
    );
    assert_eq!(r1.capacity_factor, 1.25);
    assert_eq!(
        r1.padded_extra_bytes.0,
        (r1.expert_activation_bytes.0 as f64 * 0.25).round() as u64
    );
    let kept: u64 = one.layers.iter().map(|l| l.saved_bytes.0).sum();
    assert!(r1.expert_activation_bytes.0 < kept, "{r1:?} of {kept}");
    let dense = estimate("llama-3-8b", &on(Strategy::Single, 1, (1, 1, 0))).unwrap();
    assert!(dense.routing.is_none());
    let serve = TrainConfig {
        mode: vramfit_core::config::Mode::Inference,
        ..on(Strategy::Single, 1, (1, 1, 0))
    };
    assert!(estimate("olmoe-1b-7b", &serve).unwrap().routing.is_none());
}

/// DeepSpeed's own ZeRO estimate divides one model over every GPU: with
/// the experts split apart from the rest it is left out, as under `ep`.
#[test]
fn deepspeeds_own_estimate_is_left_out_when_etp_splits_the_experts() {
    let at = |etp| {
        estimate("olmoe-1b-7b", &on(Strategy::Zero2, 8, (1, 1, etp)))
            .unwrap()
            .deepspeed_estimate
    };
    assert!(at(0).is_some() && at(1).is_some());
    assert!(at(2).is_none());
}
