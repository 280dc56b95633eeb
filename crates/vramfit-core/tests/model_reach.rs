//! Every model type reaches every place a model appears: training, LoRA
//! and QLoRA, inference with its KV cache, tensor and pipeline
//! parallelism, the planner, "which GPUs", and a share link that reproduces
//! the estimate — for one preset of each decoder family.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::config::Mode;
use vramfit_core::error::{Error, Inapplicable};
use vramfit_core::plan::{PlanRequest, plan, which_gpus};
use vramfit_core::share::{ShareState, decode};
use vramfit_core::{
    Attention, Overheads, Precision, TrainConfig, estimate, gpu_preset, model_preset,
};

/// One preset per decoder family and block layout.
const PRESETS: [&str; 13] = [
    "llama-3.2-1b",
    "mistral-7b",
    "qwen3-0.6b",
    "olmo-2-1b",
    "olmo-3-7b",
    "gemma-2b",
    "gemma-2-2b",
    "gemma-3-1b",
    "smollm2-135m",
    "pythia-160m",
    "phi-3-mini",
    "phi-4-mini",
    "starcoder2-3b",
];

fn base() -> TrainConfig {
    TrainConfig {
        batch: 2,
        seq: 1024,
        precision: Precision::AmpBf16,
        attention: Attention::Sdpa,
        ..TrainConfig::default()
    }
}

#[test]
fn every_family_estimates_in_every_mode_and_layout() {
    let o = Overheads::default();
    for id in PRESETS {
        let spec = model_preset(id).unwrap().spec;
        let run = |cfg: TrainConfig| {
            estimate(&spec, &cfg, &o, None).unwrap_or_else(|e| panic!("{id} {cfg:?}: {e}"))
        };
        let full = run(base());
        assert_eq!(full.trainable_parameter_count, full.parameter_count, "{id}");
        // LoRA trains a small fraction; QLoRA stores the base in 4 bits.
        let lora = run(TrainConfig {
            mode: Mode::FinetuneLora,
            ..base()
        });
        assert!(
            lora.trainable_parameter_count * 20 < lora.parameter_count,
            "{id}: LoRA trains {} of {}",
            lora.trainable_parameter_count,
            lora.parameter_count
        );
        assert!(
            lora.peak_allocated_bytes < full.peak_allocated_bytes,
            "{id}"
        );
        let qlora = run(TrainConfig {
            mode: Mode::FinetuneQlora,
            ..base()
        });
        assert!(qlora.at_peak.parameters < lora.at_peak.parameters, "{id}");
        // Inference: no gradients, a KV cache.
        let infer = run(TrainConfig {
            mode: Mode::Inference,
            context: 4096,
            ..base()
        });
        assert!(infer.at_peak.kv_cache.0 > 0, "{id}");
        assert_eq!(infer.at_peak.gradients.0, 0, "{id}");
        // Tensor parallelism over 2 GPUs halves the sharded weights; a model
        // whose heads (or key/value heads) 2 does not divide says which.
        let tp = |tp| {
            let mut cfg = base();
            cfg.parallel.tp = tp;
            cfg.parallel.gpus_per_node = tp;
            estimate(&spec, &cfg, &o, None)
        };
        match tp(2) {
            Ok(e) => assert!(e.at_peak.parameters < full.at_peak.parameters, "{id}"),
            Err(Error::NotApplicable(Inapplicable::TensorParallel { size, tp, .. })) => {
                assert!(!size.is_multiple_of(tp), "{id}: {size} / {tp}");
            }
            Err(e) => panic!("{id}: {e}"),
        }
        // Pipeline parallelism: the first stage holds about half the layers.
        let mut cfg = base();
        cfg.parallel.pp = 2;
        cfg.parallel.gpus_per_node = 2;
        let pp = run(cfg);
        assert!(pp.at_peak.parameters < full.at_peak.parameters, "{id}");
    }
}

#[test]
fn the_planner_and_gpu_list_take_every_family() {
    let gpu = gpu_preset("h100-sxm").unwrap();
    let o = Overheads::for_gpu(&gpu);
    for id in PRESETS {
        let spec = model_preset(id).unwrap().spec;
        let request = PlanRequest {
            base: base(),
            target_batch: 16,
            gpus_per_node: 1,
            nodes: 1,
            margin: 0.05,
            dataset_samples: 0,
            max_plans: 8,
            measured: None,
        };
        let r = plan(&spec, &gpu, &o, &request).unwrap();
        assert!(!r.plans.is_empty(), "{id}: no plan on an H100");
        let fits = which_gpus(&spec, &base(), &Overheads::default()).unwrap();
        assert!(fits.iter().any(|f| f.fits), "{id}: no GPU fits");
    }
}

#[test]
fn a_share_link_reproduces_each_family() {
    let gpu = gpu_preset("rtx-4090").unwrap();
    let o = Overheads::for_gpu(&gpu);
    for id in PRESETS {
        let state = ShareState {
            model: id.to_string(),
            gpu: gpu.id.to_string(),
            train: TrainConfig {
                mode: Mode::Inference,
                context: 8192,
                ..base()
            },
            ..ShareState::default()
        };
        let decoded = decode(&state.to_url("https://example.org/"));
        assert!(decoded.warnings.is_empty(), "{id}: {:?}", decoded.warnings);
        assert_eq!(decoded.state.model, id);
        let spec = model_preset(id).unwrap().spec;
        let a = estimate(&spec, &state.train, &o, Some(&gpu)).unwrap();
        let b = estimate(&spec, &decoded.state.train, &o, Some(&gpu)).unwrap();
        assert_eq!(a.device_used_bytes, b.device_used_bytes, "{id}");
    }
}

/// A pasted `config.json` of each new model type travels packed in the
/// link (the `j` key) and imports to the same model, its sliding layers,
/// soft-capping and assumptions included.
#[test]
fn a_link_carries_each_new_config_json() {
    let configs = [
        r#"{"model_type":"gemma2","vocab_size":256000,"hidden_size":2304,"num_hidden_layers":4,
            "num_attention_heads":8,"num_key_value_heads":4,"head_dim":256,"intermediate_size":9216,
            "attn_logit_softcapping":null,"sliding_window":4096,
            "layer_types":["sliding_attention","full_attention","sliding_attention","full_attention"]}"#,
        r#"{"model_type":"gemma3_text","vocab_size":262144,"hidden_size":1152,"num_hidden_layers":26,
            "num_attention_heads":4,"num_key_value_heads":1,"head_dim":256,"intermediate_size":6912,
            "sliding_window":512,"sliding_window_pattern":6}"#,
        r#"{"model_type":"olmo2","vocab_size":100352,"hidden_size":2048,"num_hidden_layers":16,
            "num_attention_heads":16,"intermediate_size":8192}"#,
        r#"{"model_type":"qwen3","vocab_size":151936,"hidden_size":1024,"num_hidden_layers":28,
            "num_attention_heads":16,"num_key_value_heads":8,"head_dim":128,"intermediate_size":3072}"#,
        r#"{"model_type":"starcoder2","vocab_size":49152,"hidden_size":3072,"num_hidden_layers":30,
            "num_attention_heads":24,"num_key_value_heads":2,"intermediate_size":12288,"sliding_window":4096}"#,
        r#"{"model_type":"phi3","vocab_size":200064,"hidden_size":3072,"num_hidden_layers":32,
            "num_attention_heads":24,"num_key_value_heads":8,"intermediate_size":8192,"partial_rotary_factor":0.75,
            "tie_word_embeddings":true}"#,
        r#"{"model_type":"gpt_neox","vocab_size":50304,"hidden_size":768,"num_hidden_layers":12,
            "num_attention_heads":12,"intermediate_size":3072,"rotary_pct":0.25}"#,
        r#"{"model_type":"t5","d_model":2048,"d_ff":5120,"d_kv":64,"num_layers":24,"num_heads":32,
            "feed_forward_proj":"gated-gelu","tie_word_embeddings":false}"#,
        r#"{"model_type":"vit","hidden_size":768,"num_hidden_layers":12,"num_attention_heads":12,
            "intermediate_size":3072,"image_size":224,"patch_size":16,"num_labels":1000}"#,
        r#"{"model_type":"granite","vocab_size":49155,"hidden_size":2048,"num_hidden_layers":40,
            "num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":8192,"mlp_bias":false}"#,
    ];
    for text in configs {
        let original = vramfit_core::hf::import(text).unwrap();
        let state = ShareState {
            model: vramfit_core::share::IMPORTED_MODEL.to_string(),
            config_json: Some(text.to_string()),
            ..ShareState::default()
        };
        let url = state.to_url("https://example.org/");
        assert!(url.contains("j="), "{url}");
        let decoded = decode(&url);
        assert!(decoded.warnings.is_empty(), "{:?}", decoded.warnings);
        let back = vramfit_core::hf::import(decoded.state.config_json.as_deref().unwrap()).unwrap();
        assert_eq!(back.spec, original.spec, "{text}");
        assert_eq!(back.assumptions, original.assumptions, "{text}");
    }
}

/// The encoder–decoder and the Hugging Face ViT reach the same places:
/// LoRA and QLoRA, inference (T5's caches), the planner, a share link.
#[test]
fn t5_and_the_hugging_face_vit_reach_every_mode() {
    let gpu = gpu_preset("a100-80gb").unwrap();
    let o = Overheads::for_gpu(&gpu);
    for (id, cfg) in [
        ("flan-t5-xl", base()),
        (
            "vit-base-patch16-224",
            TrainConfig {
                batch: 32,
                image: 224,
                attention: Attention::Sdpa,
                ..TrainConfig::default()
            },
        ),
    ] {
        let spec = model_preset(id).unwrap().spec;
        let run = |c: TrainConfig| {
            estimate(&spec, &c, &o, Some(&gpu)).unwrap_or_else(|e| panic!("{id} {c:?}: {e}"))
        };
        let full = run(cfg);
        let lora = run(TrainConfig {
            mode: Mode::FinetuneLora,
            ..cfg
        });
        assert!(
            lora.trainable_parameter_count * 10 < lora.parameter_count,
            "{id}"
        );
        assert!(
            lora.peak_allocated_bytes < full.peak_allocated_bytes,
            "{id}"
        );
        let qlora = run(TrainConfig {
            mode: Mode::FinetuneQlora,
            ..cfg
        });
        assert!(qlora.at_peak.parameters < lora.at_peak.parameters, "{id}");
        let infer = run(TrainConfig {
            mode: Mode::Inference,
            context: 1024,
            ..cfg
        });
        assert_eq!(infer.at_peak.gradients.0, 0, "{id}");
        let request = PlanRequest {
            base: cfg,
            target_batch: 64,
            gpus_per_node: 1,
            nodes: 1,
            margin: 0.05,
            dataset_samples: 0,
            max_plans: 8,
            measured: None,
        };
        assert!(
            !plan(&spec, &gpu, &o, &request).unwrap().plans.is_empty(),
            "{id}"
        );
        let state = ShareState {
            model: id.to_string(),
            gpu: gpu.id.to_string(),
            train: cfg,
            ..ShareState::default()
        };
        let decoded = decode(&state.to_url("https://example.org/"));
        assert!(decoded.warnings.is_empty(), "{id}: {:?}", decoded.warnings);
        assert_eq!(
            run(decoded.state.train).device_used_bytes,
            full.device_used_bytes,
            "{id}"
        );
    }
    // T5 generates with a cache of its self- and cross-attention.
    let t5 = model_preset("flan-t5-xl").unwrap().spec;
    let infer = estimate(
        &t5,
        &TrainConfig {
            mode: Mode::Inference,
            context: 1024,
            ..base()
        },
        &o,
        None,
    )
    .unwrap();
    assert!(infer.at_peak.kv_cache.0 > 0);
}
