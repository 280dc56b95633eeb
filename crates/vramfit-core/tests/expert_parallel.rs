//! Expert parallelism (`Parallel::ep`) as Megatron-Core lays it out: each
//! sparse layer's routed experts split over `ep` ranks, their state sharded
//! over the expert-data-parallel group (world / (etp × ep × pp), etp = tp
//! here; `expert_tensor_parallel.rs` sets it apart), the rest
//! over the data-parallel group (world / (tp × pp)).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::error::Inapplicable;
use vramfit_core::parallel::{Offload, Parallel, Strategy};
use vramfit_core::{Error, Estimate, Overheads, TrainConfig, model_preset};

/// Mixtral-8x7B: 32 sparse layers × 8 experts × 3 × 4096 × 14,336.
const MIXTRAL_EXPERTS: u64 = 32 * 8 * 3 * 4096 * 14_336;
/// Mixtral-8x7B's parameters outside its routed experts.
const MIXTRAL_DENSE: u64 = 46_702_792_704 - MIXTRAL_EXPERTS;

fn base() -> TrainConfig {
    TrainConfig {
        batch: 1,
        seq: 256,
        precision: vramfit_core::Precision::Bf16,
        ..TrainConfig::default()
    }
}

fn on(
    strategy: Strategy,
    gpus_per_node: u64,
    nodes: u64,
    (tp, ep, pp): (u64, u64, u64),
) -> TrainConfig {
    TrainConfig {
        parallel: Parallel {
            strategy,
            gpus_per_node,
            nodes,
            tp,
            ep,
            pp,
            ..Parallel::default()
        },
        ..base()
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

#[test]
fn expert_parallelism_holds_the_dense_parameters_and_a_share_of_the_experts() {
    for ep in [1, 2, 4, 8] {
        let e = estimate("mixtral-8x7b", &on(Strategy::Ddp, 8, 1, (1, ep, 1))).unwrap();
        assert_eq!(
            e.parameters_per_gpu,
            MIXTRAL_DENSE + MIXTRAL_EXPERTS / ep,
            "ep {ep}"
        );
        // The model's own count does not change.
        assert_eq!(e.parameter_count, 46_702_792_704, "ep {ep}");
    }
    // Without expert parallelism one GPU holds the whole model.
    let one = estimate("mixtral-8x7b", &base()).unwrap();
    assert_eq!(one.parameters_per_gpu, one.parameter_count);
}

/// ZeRO-3 shards the dense parameters over the 8 data-parallel GPUs and the
/// experts over the expert-data-parallel group: 8 / (ep 4) = 2 GPUs.
#[test]
fn zero3_shards_the_experts_over_the_expert_data_parallel_group() {
    let e = estimate("mixtral-8x7b", &on(Strategy::Zero3, 8, 1, (1, 4, 1))).unwrap();
    assert_eq!(
        e.parameters_per_gpu,
        MIXTRAL_DENSE.div_ceil(8) + (MIXTRAL_EXPERTS / 4).div_ceil(2)
    );
    // Tensor parallelism halves both before they are sharded (dense over
    // 8 / 2 = 4 GPUs, the experts over 8 / (2 × 4) = 1).
    let tp = estimate("mixtral-8x7b", &on(Strategy::Zero3, 8, 1, (2, 4, 1))).unwrap();
    let half = estimate("mixtral-8x7b", &on(Strategy::Ddp, 8, 1, (2, 4, 1))).unwrap();
    assert!(tp.parameters_per_gpu < half.parameters_per_gpu);
    assert!(half.parameters_per_gpu < e.parameter_count / 2);
}

fn model_states(e: &Estimate) -> u64 {
    e.at_peak.parameters.0 + e.at_peak.gradients.0 + e.at_peak.optimizer_states.0
}

#[test]
fn model_states_shrink_as_expert_parallelism_grows() {
    for strategy in [
        Strategy::Ddp,
        Strategy::Zero1,
        Strategy::Zero2,
        Strategy::Zero3,
        Strategy::FsdpFull,
        Strategy::FsdpHybrid,
        Strategy::MegatronDistOpt,
    ] {
        let states: Vec<u64> = [1, 2, 4, 8]
            .iter()
            .map(|&ep| {
                let e = estimate("olmoe-1b-7b", &on(strategy, 8, 2, (1, ep, 1))).unwrap();
                model_states(&e)
            })
            .collect();
        assert!(
            states.windows(2).all(|w| w[1] <= w[0]),
            "{strategy}: {states:?}"
        );
        assert!(states[3] < states[0], "{strategy}: {states:?}");
    }
}

/// The estimates of `tests/reference`'s mixtures of experts under each
/// strategy before expert parallelism existed (peak allocated, peak
/// reserved, host RAM): `ep` = 1 changes none of them. (Mixtral's reserved
/// moved 2 MiB since, when the rotary embedding's temporaries became
/// separate requests: `tests/rotary.rs`.)
#[test]
fn expert_parallelism_of_one_keeps_the_earlier_estimates() {
    let cases = [
        (
            "mixtral-8x7b",
            Strategy::Zero3,
            (8, 1),
            (2, 1),
            Offload::None,
            [140_129_361_920, 145_357_799_424, 0],
        ),
        (
            "qwen1.5-moe-a2.7b",
            Strategy::Zero2,
            (4, 2),
            (1, 1),
            Offload::Optimizer,
            [33_783_966_720, 35_389_440_000, 114_526_273_536],
        ),
        (
            "olmoe-1b-7b",
            Strategy::FsdpHybrid,
            (4, 2),
            (1, 1),
            Offload::None,
            [17_314_944_000, 18_664_652_800, 0],
        ),
        (
            "deepseek-v2-lite",
            Strategy::MegatronDistOpt,
            (8, 1),
            (1, 2),
            Offload::None,
            [78_954_485_760, 80_039_903_232, 0],
        ),
        (
            "olmoe-1b-7b",
            Strategy::Zero3,
            (8, 1),
            (1, 1),
            Offload::OptimizerParams,
            [5_857_810_944, 7_021_264_896, 96_868_265_984],
        ),
    ];
    for (id, strategy, (gpus, nodes), (tp, pp), offload, want) in cases {
        let mut cfg = on(strategy, gpus, nodes, (tp, 1, pp));
        cfg.parallel.offload = offload;
        let e = estimate(id, &cfg).unwrap();
        let got = [
            e.peak_allocated_bytes.0,
            e.peak_reserved_bytes.0,
            e.host_ram_bytes.0,
        ];
        assert_eq!(got, want, "{id} {strategy}");
    }
}

/// Each sparse layer exchanges its S = tokens × top-k rows of `hidden`
/// twice (dispatch, combine) by all-to-all, and regroups them by local
/// expert each time when a rank holds several: new S × hidden buffers that
/// an unsplit model does not have.
#[test]
fn each_sparse_layer_exchanges_its_routed_rows_by_all_to_all() {
    let exchanges = |ep: u64| {
        let g = model_preset("olmoe-1b-7b")
            .unwrap()
            .spec
            .lower(&on(Strategy::Ddp, 8, 1, (1, ep, 1)))
            .unwrap();
        let sizes = |suffix: &str| -> Vec<u64> {
            g.ops
                .iter()
                .filter(|o| o.name.ends_with(suffix))
                .map(|o| g.tensor(o.outputs[0]).unwrap().numel.per_sample)
                .collect()
        };
        (sizes(".all_to_all"), sizes(".sort_chunks"))
    };
    assert_eq!(exchanges(1), (vec![], vec![]));
    // OLMoE: 16 sparse layers, top-8 of 64 experts, hidden 2048, 256 tokens.
    let rows = 256 * 8 * 2048;
    let (moved, regrouped) = exchanges(8);
    assert_eq!(moved, vec![rows; 2 * 16]);
    assert_eq!(regrouped, vec![rows; 2 * 16]);
}

/// DeepSpeed's `estimate_zero2/3_model_states_mem_needs` divide one
/// model's states over every GPU; with experts split they are left out.
#[test]
fn deepspeeds_own_estimate_is_left_out_under_expert_parallelism() {
    let at = |ep| {
        estimate("olmoe-1b-7b", &on(Strategy::Zero2, 8, 1, (1, ep, 1)))
            .unwrap()
            .deepspeed_estimate
    };
    assert!(at(1).is_some());
    assert!(at(2).is_none());
}

#[test]
fn expert_parallelism_is_refused_where_it_cannot_apply() {
    let not = |id: &str, cfg: &TrainConfig| match estimate(id, cfg) {
        Err(Error::NotApplicable(why)) => why,
        other => panic!("{id}: {:?}", other.map(|e| e.peak_allocated_bytes)),
    };
    assert_eq!(
        not("llama-3-8b", &on(Strategy::Ddp, 8, 1, (1, 2, 1))),
        Inapplicable::ExpertParallelNoExperts { ep: 2 }
    );
    // Qwen1.5-MoE's 60 experts do not split over 8 ranks.
    assert_eq!(
        not("qwen1.5-moe-a2.7b", &on(Strategy::Ddp, 8, 1, (1, 8, 1))),
        Inapplicable::ExpertParallelExperts { experts: 60, ep: 8 }
    );
    // tp 2 × ep 8 = 16 ranks per expert replica on 8 GPUs.
    assert_eq!(
        not("mixtral-8x7b", &on(Strategy::Ddp, 8, 1, (2, 8, 1))),
        Inapplicable::ExpertParallelGpus {
            etp_ep_pp: 16,
            gpus: 8
        }
    );
}

#[test]
fn the_planner_tries_the_powers_of_two_that_split_the_experts_and_the_gpus() {
    use vramfit_core::plan::expert_degrees;
    let spec = |id: &str| model_preset(id).unwrap().spec;
    assert_eq!(expert_degrees(&spec("mixtral-8x7b"), 1, 8), [1, 2, 4, 8]);
    assert_eq!(expert_degrees(&spec("mixtral-8x7b"), 1, 64), [1, 2, 4, 8]);
    // With tp × pp = 2, 8 GPUs make 4 replicas to split the experts over.
    assert_eq!(expert_degrees(&spec("mixtral-8x7b"), 2, 8), [1, 2, 4]);
    // 60 experts: 8 does not divide them.
    assert_eq!(expert_degrees(&spec("qwen1.5-moe-a2.7b"), 1, 8), [1, 2, 4]);
    assert_eq!(expert_degrees(&spec("mixtral-8x7b"), 1, 6), [1, 2]);
    assert_eq!(expert_degrees(&spec("llama-3-8b"), 1, 8), [1]);
}

/// DDP keeps a whole Mixtral-8x7B on every GPU (over 500 GiB in bf16):
/// no GPU holds it without expert parallelism; with it, 8 H200s do.
#[test]
fn which_gpus_finds_the_expert_parallel_degree_that_fits() {
    let cfg = TrainConfig {
        precision: vramfit_core::Precision::Bf16,
        seq: 512,
        parallel: Parallel {
            strategy: Strategy::Ddp,
            ..Parallel::default()
        },
        ..base()
    };
    let spec = model_preset("mixtral-8x7b").unwrap().spec;
    let options = vramfit_core::plan::which_gpus(&spec, &cfg, &Overheads::default()).unwrap();
    let h200 = options
        .iter()
        .find(|o| o.gpu == "h200" && o.gpus == 8)
        .expect("8 × H200 with expert parallelism");
    assert_eq!(h200.ep, 8);
    assert!(h200.fits);
    assert!(
        options
            .iter()
            .all(|o| o.ep > 1 && o.gpus.is_multiple_of(o.ep))
    );
    // One option per GPU and count.
    let mut seen: Vec<(&str, u64)> = options.iter().map(|o| (&*o.gpu, o.gpus)).collect();
    let all = seen.len();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), all);
    // A dense model's options never split experts.
    let dense = vramfit_core::plan::which_gpus(
        &model_preset("gpt2").unwrap().spec,
        &TrainConfig {
            parallel: Parallel {
                strategy: Strategy::Ddp,
                ..Parallel::default()
            },
            ..base()
        },
        &Overheads::default(),
    )
    .unwrap();
    assert!(!dense.is_empty() && dense.iter().all(|o| o.ep == 1));
}

/// On 8 H200s the planner's DDP plans for Mixtral-8x7B exist only with the
/// experts split (DDP without it needs over 500 GiB a GPU).
#[test]
fn the_planner_offers_expert_parallel_plans() {
    let req = vramfit_core::plan::PlanRequest {
        base: TrainConfig {
            seq: 1024,
            ..TrainConfig::default()
        },
        target_batch: 16,
        gpus_per_node: 8,
        nodes: 1,
        margin: 0.0,
        dataset_samples: 0,
        max_plans: 64,
        measured: None,
    };
    let gpu = vramfit_core::gpus::gpu_preset("h200").unwrap();
    let spec = model_preset("mixtral-8x7b").unwrap().spec;
    let result = vramfit_core::plan::plan(&spec, &gpu, &Overheads::default(), &req).unwrap();
    let ddp: Vec<u64> = result
        .plans
        .iter()
        .filter(|p| p.config.parallel.strategy == Strategy::Ddp)
        .map(|p| p.config.parallel.ep)
        .collect();
    assert!(!ddp.is_empty());
    assert!(ddp.iter().all(|&ep| ep > 1), "{ddp:?}");
}
