//! Share links: state → URL → state is the identity for every valid state;
//! any input (random bytes, truncated links, huge or unicode values,
//! repeated keys, XSS probes) decodes to a state plus warnings without
//! panicking; published links keep their meaning (share_links.rs holds them).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use proptest::prelude::*;
use vramfit_core::config::{
    AttentionMask, AutocastRegion, LoopOutputs, LoraBase, Mode, OptimizerImpl, TorchRelease,
    TrainingCache, WeightFormat, ZeroGrad,
};
use vramfit_core::engines::{Engine, KvDtype, ServeWeights, Serving, serving};
use vramfit_core::parallel::{Offload, Parallel, Strategy as Dp};
use vramfit_core::share::{
    IMPORTED_MODEL, KEYS, Reason, ShareState, decode, pack_config, reduce_config, unpack_config,
};
use vramfit_core::{
    Attention, Checkpointing, Optimizer, Precision, TrainConfig, gpu_presets, hf, model_presets,
};

const LLAMA: &str = r#"{
  "_name_or_path": "meta-llama/Llama-2-7b-hf", "architectures": ["LlamaForCausalLM"], "bos_token_id": 1,
  "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
  "intermediate_size": 11008, "max_position_embeddings": 4096, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32, "pretraining_tp": 1,
  "rms_norm_eps": 1e-05, "rope_scaling": null, "tie_word_embeddings": false, "torch_dtype": "float16",
  "transformers_version": "4.31.0.dev0", "use_cache": true, "vocab_size": 32000
}"#;

const BERT: &str = r#"{"model_type": "bert", "hidden_size": 768, "num_attention_heads": 12, "num_hidden_layers": 12,
  "intermediate_size": 3072, "vocab_size": 30522, "architectures": ["BertForSequenceClassification"],
  "id2label": {"0": "neg", "1": "neu", "2": "pos"}, "_name_or_path": "<img src=x onerror=alert(1)>"}"#;

fn count(range: std::ops::RangeInclusive<u64>) -> impl Strategy<Value = u64> {
    // Mostly small values, sometimes the edges.
    prop_oneof![3 => *range.start()..=(*range.start() + 64).min(*range.end()), 1 => range]
}

fn fraction() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(1.0),
        (1u64..=1 << 53).prop_map(|n| n as f64 / (1u64 << 53) as f64),
        Just(0.5),
        Just(1e-300)
    ]
}

fn parallel() -> impl Strategy<Value = Parallel> {
    (
        prop::sample::select(Dp::ALL.to_vec()),
        count(1..=1024),
        count(1..=1 << 16),
        prop::sample::select(vec![
            Offload::None,
            Offload::Optimizer,
            Offload::OptimizerParams,
        ]),
        (
            count(1..=1024),
            count(1..=1024),
            count(1..=1024),
            count(1..=1024),
        ),
        (
            any::<bool>(),
            any::<bool>(),
            count(1..=1 << 40),
            count(0..=1024),
        ),
    )
        .prop_map(
            |(
                strategy,
                gpus_per_node,
                nodes,
                offload,
                (tp, pp, vpp, ep),
                (sp, bucket_view, zero_bucket, etp),
            )| Parallel {
                strategy,
                gpus_per_node,
                nodes,
                offload,
                tp,
                pp,
                sp,
                bucket_view,
                vpp,
                zero_bucket,
                ep,
                etp,
            },
        )
}

fn train() -> impl Strategy<Value = TrainConfig> {
    let checkpointing = prop_oneof![
        prop::sample::select(vec!["none", "full", "selective", "selective-op"])
            .prop_map(|c| c.parse::<Checkpointing>().unwrap()),
        (1u32..=1 << 16).prop_map(Checkpointing::EveryK),
    ];
    (
        (
            count(1..=1 << 24),
            count(1..=1 << 24),
            count(1..=1 << 24),
            count(1..=1 << 16),
        ),
        (
            prop::sample::select(Precision::ALL.to_vec()),
            prop::sample::select(Optimizer::ALL.to_vec()),
            checkpointing,
            prop::sample::select(Attention::ALL.to_vec()),
        ),
        parallel(),
        (
            prop::sample::select(Mode::ALL.to_vec()),
            count(1..=1 << 16),
            prop::sample::select(WeightFormat::ALL.to_vec()),
            prop::sample::select(LoraBase::ALL.to_vec()),
            prop::sample::select(OptimizerImpl::ALL.to_vec()),
        ),
        (
            prop::sample::select(ZeroGrad::ALL.to_vec()),
            prop::sample::select(LoopOutputs::ALL.to_vec()),
            prop::sample::select(TorchRelease::ALL.to_vec()),
            prop::sample::select(AutocastRegion::ALL.to_vec()),
            prop::sample::select(TrainingCache::ALL.to_vec()),
            prop::sample::select(AttentionMask::ALL.to_vec()),
        ),
        (
            count(0..=1 << 24),
            count(0..=100_000),
            fraction(),
            fraction(),
            fraction(),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (batch, seq, image, grad_accum),
                (precision, optimizer, checkpointing, attention),
                parallel,
                (mode, lora_rank, weights, lora_base, optimizer_impl),
                (zero_grad, loop_outputs, pytorch, autocast_region, training_cache, attention_mask),
                (context, frozen_blocks, keep_attention, keep_mlp, keep_conv, lora_fp32),
            )| TrainConfig {
                batch,
                seq,
                image,
                precision,
                optimizer,
                checkpointing,
                attention,
                grad_accum,
                parallel,
                mode,
                lora_rank,
                weights,
                context,
                frozen_blocks,
                keep_attention,
                keep_mlp,
                keep_conv,
                lora_fp32,
                lora_base,
                optimizer_impl,
                zero_grad,
                loop_outputs,
                pytorch,
                autocast_region,
                training_cache,
                attention_mask,
            },
        )
}

/// Serving settings; the `--weights` id sets the training format too (a
/// link's `w` carries one of the two).
fn serving() -> impl Strategy<Value = (Serving, Option<WeightFormat>)> {
    let weights: Vec<&str> = serving::weights_ids().chain(["native"]).collect();
    (
        prop::sample::select(Engine::ALL.to_vec()),
        prop::option::of(prop::sample::select(weights)),
        prop::sample::select(KvDtype::ALL.to_vec()),
        count(1..=1 << 20),
        fraction(),
        prop::option::of(count(0..=100_000)),
    )
        .prop_map(
            |(engine, weights, kv, concurrency, gpu_memory_utilization, gpu_layers)| {
                let parsed = weights.and_then(serving::parse_weights);
                let s = Serving {
                    engine,
                    weights: parsed.map_or(ServeWeights::Native, |(_, w)| w),
                    kv,
                    concurrency,
                    gpu_memory_utilization,
                    gpu_layers,
                };
                (s, parsed.map(|(w, _)| w))
            },
        )
}

fn state() -> impl Strategy<Value = ShareState> {
    let models: Vec<String> = model_presets()
        .iter()
        .map(|m| m.id.to_string())
        .chain([IMPORTED_MODEL.to_string()])
        .collect();
    let gpus: Vec<String> = gpu_presets().iter().map(|g| g.id.to_string()).collect();
    // A config rides along reduced (as links carry it), with any model.
    let configs = vec![None, Some(reduce_config(LLAMA)), Some(reduce_config(BERT))];
    (
        prop::sample::select(models),
        prop::sample::select(configs),
        prop::sample::select(gpus),
        train(),
        serving(),
    )
        .prop_map(|(model, config_json, gpu, mut train, (serve, weights))| {
            if let Some(w) = weights {
                train.weights = w;
            }
            let config_json = if model == IMPORTED_MODEL {
                config_json.or_else(|| Some(reduce_config(LLAMA)))
            } else {
                config_json
            };
            ShareState {
                model,
                config_json,
                gpu,
                train,
                serve,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn state_to_url_to_state_is_the_identity(s in state()) {
        let url = s.to_url("https://example.org/vramfit/");
        let d = decode(&url);
        prop_assert_eq!(&d.warnings, &vec![], "{}", url);
        prop_assert_eq!(&d.state, &s, "{}", url);
        // Only URL-safe characters, so the link survives chat apps and Markdown.
        let query = url.split_once('?').map(|(_, q)| q).unwrap_or_default();
        prop_assert!(query.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~,%=&".contains(&b)), "{}", query);
    }

    #[test]
    fn random_bytes_decode_to_a_state_and_warnings(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let text = String::from_utf8_lossy(&bytes);
        let d = decode(&text);
        // Whatever came in, what comes out is valid per key and round-trips.
        prop_assert_eq!(decode(&d.state.to_query()).state, d.state);
    }

    #[test]
    fn random_pairs_of_known_keys_never_panic(pairs in prop::collection::vec((prop::sample::select(key_names()), ".{0,12}"), 0..40)) {
        let query: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={}", vramfit_core::share::percent_encode(v))).collect();
        let d = decode(&query.join("&"));
        let repeated = pairs.len() - { let mut k: Vec<_> = pairs.iter().map(|p| p.0).collect(); k.sort_unstable(); k.dedup(); k.len() };
        let warned = d.warnings.iter().filter(|w| w.reason == Reason::Repeated).count();
        prop_assert_eq!(warned, repeated);
        prop_assert_eq!(decode(&d.state.to_query()).state, d.state);
    }

    #[test]
    fn truncated_links_decode_to_a_prefix_of_their_settings(s in state(), cut in 0usize..400) {
        let q = s.to_query();
        let cut = q.char_indices().map(|(i, _)| i).chain([q.len()]).nth(cut).unwrap_or(q.len());
        let d = decode(q.get(..cut).unwrap_or_default());
        prop_assert_eq!(decode(&d.state.to_query()).state, d.state);
    }
}

fn key_names() -> Vec<&'static str> {
    KEYS.iter().map(|k| k.key).chain(["v", "j"]).collect()
}

#[test]
fn a_config_json_travels_compact_and_imports_the_same_model() {
    let s = ShareState {
        model: IMPORTED_MODEL.into(),
        config_json: Some(LLAMA.into()),
        ..ShareState::default()
    };
    let q = s.to_query();
    assert!(q.len() < 220, "{} characters: {q}", q.len());
    assert!(q.starts_with("v=2&j=1"), "{q}");
    let back = decode(&q).state;
    assert_eq!(back.model, IMPORTED_MODEL);
    let (a, b) = (
        hf::import(LLAMA).unwrap(),
        hf::import(back.config_json.as_deref().unwrap()).unwrap(),
    );
    assert_eq!(a, b);
    assert_eq!(b.name, "meta-llama/Llama-2-7b-hf");
    // Reduction keeps what changes the model: the labels of a classifier, the name.
    let bert = reduce_config(BERT);
    assert!(
        bert.contains("id2label") && bert.contains("onerror"),
        "{bert}"
    );
    assert_eq!(hf::import(&bert).unwrap(), hf::import(BERT).unwrap());
    // Plain JSON, hand-written into a link, works too.
    let d = decode(
        r#"?j={"model_type":"gpt2","n_embd":768,"n_layer":12,"n_head":12,"vocab_size":50257}&b=2"#,
    );
    assert_eq!(
        (
            d.state.model.as_str(),
            d.state.train.batch,
            d.warnings.len()
        ),
        (IMPORTED_MODEL, 2, 0)
    );
}

/// vramfit's own MLP and ResNet descriptions (the page's custom models)
/// travel in a link like a Hugging Face config.
#[test]
fn custom_mlp_and_resnet_descriptions_travel_in_a_link() {
    for json in [
        r#"{"_name_or_path": "custom-mlp-784-512-256-10", "model_type": "vramfit_mlp", "input_size": 784, "hidden_sizes": [512, 256], "hidden_act": "gelu", "num_labels": 10}"#,
        r#"{"_name_or_path": "custom-resnet-2-2-2-2", "model_type": "vramfit_resnet", "depths": [2, 2, 2, 2], "layer_type": "basic", "num_labels": 1000}"#,
    ] {
        let s = ShareState {
            model: IMPORTED_MODEL.into(),
            config_json: Some(json.into()),
            ..ShareState::default()
        };
        let back = decode(&s.to_query()).state;
        assert_eq!(
            hf::import(back.config_json.as_deref().unwrap()).unwrap(),
            hf::import(json).unwrap(),
            "{json}"
        );
    }
}

#[test]
fn a_config_with_another_model_selected_keeps_both() {
    let s = ShareState {
        config_json: Some(reduce_config(LLAMA)),
        ..ShareState::default()
    };
    let q = s.to_query();
    assert!(q.starts_with("v=2&m=gpt2&j="), "{q}");
    assert_eq!(decode(&q).state, s);
}

#[test]
fn every_train_config_field_has_a_key() {
    // If this fails, TrainConfig has a new field: give it a key in share.rs
    // (KEYS) and a line in the README's table of keys.
    let json = serde_json::to_value(TrainConfig::default()).unwrap();
    let mut fields: Vec<String> = json
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| *k != "parallel")
        .cloned()
        .collect();
    fields.extend(
        json["parallel"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| format!("parallel.{k}")),
    );
    fields.sort();
    let mapped = [
        ("attention", "at"),
        ("attention_mask", "am"),
        ("autocast_region", "ar"),
        ("batch", "b"),
        ("checkpointing", "c"),
        ("context", "ctx"),
        ("frozen_blocks", "fr"),
        ("grad_accum", "a"),
        ("image", "i"),
        ("keep_attention", "ka"),
        ("keep_conv", "kc"),
        ("keep_mlp", "km"),
        ("loop_outputs", "lo"),
        ("lora_base", "lb"),
        ("lora_fp32", "lf"),
        ("lora_rank", "r"),
        ("mode", "mo"),
        ("optimizer", "o"),
        ("optimizer_impl", "oi"),
        ("parallel.bucket_view", "bv"),
        ("parallel.ep", "ep"),
        ("parallel.etp", "etp"),
        ("parallel.gpus_per_node", "gn"),
        ("parallel.nodes", "n"),
        ("parallel.offload", "of"),
        ("parallel.pp", "pp"),
        ("parallel.sp", "sp"),
        ("parallel.strategy", "st"),
        ("parallel.tp", "tp"),
        ("parallel.vpp", "vpp"),
        ("parallel.zero_bucket", "zb"),
        ("precision", "p"),
        ("pytorch", "pt"),
        ("seq", "s"),
        ("training_cache", "tc"),
        ("weights", "w"),
        ("zero_grad", "zg"),
    ];
    assert_eq!(
        fields,
        mapped
            .iter()
            .map(|(f, _)| f.to_string())
            .collect::<Vec<_>>()
    );
    for (_, key) in mapped {
        assert!(KEYS.iter().any(|k| k.key == key), "no key {key}");
    }
    // The serving settings beside the TrainConfig (`w` names a serving format too).
    let serve = Serving::default();
    let Serving {
        engine: _,
        weights: _,
        kv: _,
        concurrency: _,
        gpu_memory_utilization: _,
        gpu_layers: _,
    } = serve;
    let serving_keys = ["en", "kv", "cc", "gu", "gl"];
    for key in serving_keys {
        assert!(KEYS.iter().any(|k| k.key == key), "no key {key}");
    }
    assert_eq!(
        KEYS.len(),
        mapped.len() + serving_keys.len() + 2,
        "m and g besides the TrainConfig and serving keys"
    );
}

#[test]
fn version_1_defaults_are_pinned() {
    // What an omitted key means in a version-1 link. These values are part
    // of the format: if TrainConfig's defaults change, version 1 must keep
    // these (spell them out in ShareState::of_version) or old links change meaning.
    let d = ShareState::of_version(1);
    assert_eq!(
        (d.model.as_str(), d.gpu.as_str(), d.config_json.as_deref()),
        ("gpt2", "rtx-4090", None)
    );
    assert_eq!(
        serde_json::to_value(d.train).unwrap(),
        serde_json::json!({"batch":8,"seq":512,"image":224,"precision":"amp-bf16","optimizer":"adamw","checkpointing":"none",
            "attention":"eager","grad_accum":1,"parallel":{"strategy":"single","gpus_per_node":1,"nodes":1,"offload":"none","tp":1,
            "pp":1,"sp":false,"bucket_view":false,"vpp":1,"ep":1,"etp":0,"zero_bucket":500000000},"mode":"train","lora_rank":16,"weights":"native",
            "context":0,"frozen_blocks":0,"keep_attention":1.0,"keep_mlp":1.0,"keep_conv":1.0,"lora_fp32":true,"lora_base":"compute",
            "optimizer_impl":"foreach","zero_grad":"set-to-none","loop_outputs":"dropped",
            "pytorch":"current","autocast_region":"forward","training_cache":"off",
            "attention_mask":"expanded"})
    );
    assert_eq!(decode("v=1").state, d);
    // Version 1's LoRA base was fp32 under AMP, which only LoRA and QLoRA read.
    for (link, base) in [
        ("v=1&mo=finetune-lora", LoraBase::Fp32),
        ("v=1&mo=finetune-qlora", LoraBase::Fp32),
        ("v=1&mo=finetune-lora&p=bf16", LoraBase::Compute),
        ("v=1&mo=finetune-lora&lb=compute", LoraBase::Compute),
        ("v=1&mo=inference", LoraBase::Compute),
    ] {
        assert_eq!(decode(link).state.train.lora_base, base, "{link}");
    }
}

#[test]
fn version_2_defaults_are_pinned() {
    // Version 2 changed two defaults (SDPA attention, LoRA's base in the
    // compute type) and nothing else; pinned as version 1's are.
    let d = ShareState::of_version(2);
    assert_eq!(d, ShareState::default());
    assert_eq!(
        serde_json::to_value(d.train).unwrap(),
        serde_json::json!({"batch":8,"seq":512,"image":224,"precision":"amp-bf16","optimizer":"adamw","checkpointing":"none",
            "attention":"sdpa","grad_accum":1,"parallel":{"strategy":"single","gpus_per_node":1,"nodes":1,"offload":"none","tp":1,
            "pp":1,"sp":false,"bucket_view":false,"vpp":1,"ep":1,"etp":0,"zero_bucket":500000000},"mode":"train","lora_rank":16,"weights":"native",
            "context":0,"frozen_blocks":0,"keep_attention":1.0,"keep_mlp":1.0,"keep_conv":1.0,"lora_fp32":true,"lora_base":"compute",
            "optimizer_impl":"foreach","zero_grad":"set-to-none","loop_outputs":"dropped",
            "pytorch":"current","autocast_region":"forward","training_cache":"off",
            "attention_mask":"expanded"})
    );
    assert_eq!(ShareState::of_version(1).serve, d.serve);
}

#[test]
fn version_1_serving_defaults_are_pinned_and_bad_ones_warn() {
    // A link without the serving keys is Hugging Face's simulation, as
    // before the engines were added.
    let d = ShareState::default().serve;
    assert_eq!(
        (d.engine, d.weights, d.kv, d.concurrency, d.gpu_layers),
        (Engine::Hf, ServeWeights::Native, KvDtype::F16, 1, None)
    );
    assert_eq!(d.gpu_memory_utilization, 0.9);
    let d = decode("v=2&en=ollama&kv=fp4&cc=0&gu=1.5&gl=x&w=q9_k");
    assert_eq!(d.state, ShareState::default());
    let lines: Vec<String> = d.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines[0],
        "ignored en=ollama: expected one of hf|vllm|sglang|llama.cpp (using hf)"
    );
    assert_eq!(
        lines[4],
        "ignored gl=x: expected a whole number in 0..=100000 (using all)"
    );
    assert!(
        lines[5].contains("awq-int4|gptq-int4|mxfp4|q4_0"),
        "{}",
        lines[5]
    );
    let d = decode("v=2&en=llama.cpp&w=Q4_K_M&gl=all&cc=4");
    assert_eq!(d.warnings, vec![]);
    assert_eq!(d.state.serve.weights.id(), "q4_k_m");
    assert_eq!(d.state.to_query(), "v=2&w=q4_k_m&en=llama.cpp&cc=4");
}

#[test]
fn garbage_values_fall_back_with_a_warning_naming_the_key() {
    let d = decode(
        "v=2&m=gpt-5&g=rtx-9090&b=0&s=-1&p=fp64&c=every-0&ka=1.5&sp=maybe&of=disk&j=%%%&tp=1e3",
    );
    assert_eq!(d.state, ShareState::default());
    let keys: Vec<&str> = d.warnings.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(
        keys,
        ["m", "g", "b", "s", "p", "c", "ka", "sp", "of", "j", "tp"]
    );
    let lines: Vec<String> = d.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines[0],
        "ignored m=gpt-5: no model preset has this id (using gpt2)"
    );
    assert_eq!(
        lines[4],
        "ignored p=fp64: expected one of fp32|fp16|bf16|amp-fp16|amp-bf16 (using amp-bf16)"
    );
    assert_eq!(
        lines[6],
        "ignored ka=1.5: expected a number in (0, 1] (using 1)"
    );
    assert!(
        lines[9].starts_with("ignored j: the config.json cannot be read: "),
        "{}",
        lines[9]
    );
}

#[test]
fn unknown_keys_are_ignored_and_repeated_keys_keep_the_first() {
    let d = decode("utm_source=x&b=4&b=16&lang=zh-CN&B=2&theme=dark");
    assert_eq!(d.state.train.batch, 4);
    assert_eq!(d.warnings.len(), 1);
    assert_eq!(
        d.warnings[0].to_string(),
        "ignored the repeated b=16: the first b is used"
    );
}

#[test]
fn newer_versions_and_imported_models_without_a_config_warn() {
    let d = decode("v=7&b=2&new_key=1");
    assert_eq!((d.state.train.batch, d.warnings.len()), (2, 1));
    assert_eq!(d.warnings[0].reason, Reason::NewerVersion);
    let d = decode("v=0&m=hf-import");
    assert_eq!(d.state.model, "gpt2");
    assert_eq!(
        d.warnings
            .iter()
            .map(|w| w.reason.clone())
            .collect::<Vec<_>>(),
        [Reason::Count { min: 1, max: 2 }, Reason::NoConfig]
    );
}

#[test]
fn huge_unicode_and_truncated_input_is_handled() {
    let huge = format!("b=2&s={}&i=64", "9".repeat(200_000));
    let d = decode(&huge);
    assert_eq!(d.state.train.batch, 2);
    assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
    assert_eq!(d.warnings[0].reason, Reason::TooLong);
    // Settings without `v`: version 1's defaults.
    let d = decode("m=显存&b=８&s=%F0%9F%92%A5&c=every-２");
    assert_eq!(d.state, ShareState::of_version(1));
    assert_eq!(d.warnings.len(), 4);
    assert!(d.warnings.iter().all(|w| !w.to_string().is_empty()));
    let full = ShareState {
        model: IMPORTED_MODEL.into(),
        config_json: Some(LLAMA.into()),
        ..ShareState::default()
    }
    .to_query();
    for cut in 0..full.len() {
        let d = decode(&full[..cut]);
        if let Some(json) = &d.state.config_json {
            // A cut packed config either fails to unpack or yields text; never a panic.
            let _ = hf::import(json);
        }
    }
    assert!(unpack_config(&pack_config(LLAMA)).is_ok());
}

#[test]
fn xss_probes_in_every_key_are_rejected_or_kept_as_plain_text() {
    let probes = [
        "<script>alert(1)</script>",
        "\"><img src=x onerror=alert(1)>",
        "javascript:alert(1)",
    ];
    for key in key_names() {
        for probe in probes {
            let q = format!("{key}={}", vramfit_core::share::percent_encode(probe));
            let d = decode(&q);
            // No `v`: version 1's defaults; an unusable `v`: the current ones.
            let expected = if key == "v" {
                ShareState::default()
            } else {
                ShareState::of_version(1)
            };
            assert_eq!(d.state, expected, "{q}");
            assert_eq!(d.warnings.len(), 1, "{q}: {:?}", d.warnings);
            // The warning quotes the probe as data; the page renders it as text.
            assert!(d.warnings[0].key == key);
        }
    }
    // Inside a config.json a probe is just a (display) name, never markup.
    let d = decode(
        &ShareState {
            model: IMPORTED_MODEL.into(),
            config_json: Some(BERT.into()),
            ..ShareState::default()
        }
        .to_query(),
    );
    assert_eq!(
        hf::import(d.state.config_json.as_deref().unwrap())
            .unwrap()
            .name,
        "<img src=x onerror=alert(1)>"
    );
}

/// A GPU given by its memory travels in `g` as `custom-<GiB>`; other spellings are refused.
#[test]
fn a_custom_gpu_is_a_whole_number_of_gib_in_range() {
    let gpu = vramfit_core::gpu_preset("custom-48").unwrap();
    assert!(gpu.is_custom());
    assert_eq!(gpu.memory_bytes.0, 48 << 30);
    for bad in [
        "custom-0",
        "custom-4097",
        "custom-48.5",
        "custom-048",
        "custom-",
        "custom--1",
        "custom-1e3",
    ] {
        assert!(vramfit_core::gpu_preset(bad).is_err(), "{bad} was accepted");
    }
    let decoded = vramfit_core::share::decode("v=1&g=custom-96");
    assert_eq!(decoded.state.gpu, "custom-96");
    assert!(decoded.warnings.is_empty());
    let refused = vramfit_core::share::decode("v=1&g=custom-0");
    assert_eq!(
        refused.state.gpu,
        vramfit_core::share::ShareState::default().gpu
    );
    assert_eq!(refused.warnings.len(), 1);
}
