//! Mixtures of experts and latent attention: the `config.json` of each
//! model type imports as its preset, the active parameter counts equal
//! what `tests/reference/param_counts.py` computes from `transformers`'
//! own modules (`tests/reference/moe_active_params.csv`), dense layers
//! follow the config's rules.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::hf::import;
use vramfit_core::{ModelSpec, model_preset};

const ACTIVE: &str = include_str!("../../../tests/reference/moe_active_params.csv");

fn preset(id: &str) -> ModelSpec {
    model_preset(id).unwrap().spec
}

#[test]
fn total_and_active_parameters_match_transformers() {
    let mut checked = 0;
    for line in ACTIVE.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split(',').collect();
        let spec = preset(f[0]);
        let (total, active): (u64, u64) = (f[1].parse().unwrap(), f[2].parse().unwrap());
        assert_eq!(spec.parameter_count().unwrap(), total, "{}", f[0]);
        assert_eq!(spec.active_parameter_count().unwrap(), active, "{}", f[0]);
        checked += 1;
    }
    assert_eq!(checked, 26);
    // A dense model's parameters are all active.
    let llama = preset("llama-3-8b");
    assert_eq!(
        llama.active_parameter_count().unwrap(),
        llama.parameter_count().unwrap()
    );
}

/// Llama 4's released `config.json` files (`Llama4ForConditionalGeneration`,
/// the language model in `text_config`: Scout with its `moe_layers` and
/// `no_rope_layers` written out, Maverick with them derived) give the
/// presets beside the vision model, which the import names.
#[test]
fn llama4_configs_import_as_their_presets() {
    let nope: Vec<&str> = (0..48)
        .map(|i| if (i + 1) % 4 != 0 { "1" } else { "0" })
        .collect();
    let moe: Vec<String> = (0..48).map(|i: u64| i.to_string()).collect();
    let scout = format!(
        r#"{{"architectures":["Llama4ForConditionalGeneration"],"model_type":"llama4","tie_word_embeddings":false,
        "vision_config":{{"model_type":"llama4_vision_model","hidden_size":1408}},
        "text_config":{{"attention_bias":false,"attention_chunk_size":8192,"attention_dropout":0.0,"attn_scale":0.1,
        "attn_temperature_tuning":4,"floor_scale":8192,"head_dim":128,"hidden_act":"silu","hidden_size":5120,
        "interleave_moe_layer_step":1,"intermediate_size":8192,"intermediate_size_mlp":16384,
        "max_position_embeddings":10485760,"model_type":"llama4_text","moe_layers":[{}],"no_rope_layers":[{}],
        "num_attention_heads":40,"num_experts_per_tok":1,"num_hidden_layers":48,"num_key_value_heads":8,
        "num_local_experts":16,"rms_norm_eps":1e-05,"rope_scaling":{{"factor":16.0,"high_freq_factor":1.0,
        "low_freq_factor":1.0,"original_max_position_embeddings":8192,"rope_type":"llama3"}},"rope_theta":500000.0,
        "use_qk_norm":true,"vocab_size":202048}}}}"#,
        moe.join(","),
        nope.join(",")
    );
    let imported = import(&scout).unwrap();
    // The vision model is held beside the language model (its count is
    // checked against transformers' in hf_import.rs).
    let ModelSpec::Transformer(mut t) = imported.spec else {
        panic!("a transformer")
    };
    assert!(t.encoder.take().is_some());
    assert_eq!(ModelSpec::Transformer(t), preset("llama-4-scout-17b-16e"));
    assert!(
        imported.assumptions[0]
            .to_string()
            .contains("llama4_vision_model"),
        "{:?}",
        imported.assumptions
    );
    let maverick = r#"{"model_type":"llama4_text","attention_chunk_size":8192,"head_dim":128,"hidden_size":5120,
        "interleave_moe_layer_step":2,"intermediate_size":8192,"intermediate_size_mlp":16384,
        "max_position_embeddings":1048576,"num_attention_heads":40,"num_experts_per_tok":1,"num_hidden_layers":48,
        "num_key_value_heads":8,"num_local_experts":128,"rope_scaling":null,"rope_theta":500000.0,
        "use_qk_norm":false,"vocab_size":202048,"tie_word_embeddings":false}"#;
    assert_eq!(
        import(maverick).unwrap().spec,
        preset("llama-4-maverick-17b-128e")
    );
    // A `moe_layers` entry past the layers is named.
    let odd = maverick.replace(r#""interleave_moe_layer_step":2"#, r#""moe_layers":[1,48]"#);
    let msg = import(&odd).unwrap_err().to_string();
    assert!(msg.contains("moe_layers names layer 48"), "{msg}");
}

/// The `config.json` files on the Hugging Face Hub (the fields that
/// matter, lengths and rope scaling included) give the presets.
#[test]
fn each_mixture_of_experts_config_imports_as_its_preset() {
    let configs = [
        (
            "mixtral-8x7b",
            r#"{"architectures":["MixtralForCausalLM"],"hidden_act":"silu","hidden_size":4096,
            "intermediate_size":14336,"max_position_embeddings":32768,"model_type":"mixtral",
            "num_attention_heads":32,"num_experts_per_tok":2,"num_hidden_layers":32,"num_key_value_heads":8,
            "num_local_experts":8,"rope_theta":1000000.0,"router_aux_loss_coef":0.02,"sliding_window":null,
            "tie_word_embeddings":false,"vocab_size":32000}"#,
        ),
        (
            "qwen1.5-moe-a2.7b",
            r#"{"architectures":["Qwen2MoeForCausalLM"],"decoder_sparse_step":1,"hidden_size":2048,
            "intermediate_size":5632,"max_position_embeddings":8192,"max_window_layers":21,"model_type":"qwen2_moe",
            "moe_intermediate_size":1408,"norm_topk_prob":false,"num_attention_heads":16,"num_experts":60,
            "num_experts_per_tok":4,"num_hidden_layers":24,"num_key_value_heads":16,
            "shared_expert_intermediate_size":5632,"sliding_window":32768,"tie_word_embeddings":false,
            "use_sliding_window":false,"vocab_size":151936}"#,
        ),
        (
            "qwen3-30b-a3b",
            r#"{"architectures":["Qwen3MoeForCausalLM"],"attention_bias":false,"decoder_sparse_step":1,"head_dim":128,
            "hidden_size":2048,"intermediate_size":6144,"max_position_embeddings":40960,"mlp_only_layers":[],
            "model_type":"qwen3_moe","moe_intermediate_size":768,"norm_topk_prob":true,"num_attention_heads":32,
            "num_experts":128,"num_experts_per_tok":8,"num_hidden_layers":48,"num_key_value_heads":4,
            "rope_scaling":null,"sliding_window":null,"tie_word_embeddings":false,"use_sliding_window":false,
            "vocab_size":151936}"#,
        ),
        (
            "olmoe-1b-7b",
            r#"{"architectures":["OlmoeForCausalLM"],"attention_bias":false,"clip_qkv":null,"hidden_size":2048,
            "intermediate_size":1024,"max_position_embeddings":4096,"model_type":"olmoe","norm_topk_prob":false,
            "num_attention_heads":16,"num_experts":64,"num_experts_per_tok":8,"num_hidden_layers":16,
            "num_key_value_heads":16,"rope_scaling":null,"tie_word_embeddings":false,"vocab_size":50304}"#,
        ),
        (
            "deepseek-v2-lite",
            r#"{"architectures":["DeepseekV2ForCausalLM"],"first_k_dense_replace":1,"hidden_size":2048,
            "intermediate_size":10944,"kv_lora_rank":512,"max_position_embeddings":163840,"model_type":"deepseek_v2",
            "moe_intermediate_size":1408,"moe_layer_freq":1,"n_group":1,"n_routed_experts":64,"n_shared_experts":2,
            "norm_topk_prob":false,"num_attention_heads":16,"num_experts_per_tok":6,"num_hidden_layers":27,
            "num_key_value_heads":16,"q_lora_rank":null,"qk_nope_head_dim":128,"qk_rope_head_dim":64,
            "rope_scaling":{"beta_fast":32,"beta_slow":1,"factor":40,"mscale":0.707,"mscale_all_dim":0.707,
            "original_max_position_embeddings":4096,"type":"yarn"},"routed_scaling_factor":1.0,
            "scoring_func":"softmax","topk_group":1,"topk_method":"greedy","v_head_dim":128,"vocab_size":102400,
            "tie_word_embeddings":false}"#,
        ),
        (
            "deepseek-v3",
            r#"{"architectures":["DeepseekV3ForCausalLM"],"first_k_dense_replace":3,"hidden_size":7168,
            "intermediate_size":18432,"kv_lora_rank":512,"max_position_embeddings":163840,"model_type":"deepseek_v3",
            "moe_intermediate_size":2048,"moe_layer_freq":1,"n_group":8,"n_routed_experts":256,"n_shared_experts":1,
            "norm_topk_prob":true,"num_attention_heads":128,"num_experts_per_tok":8,"num_hidden_layers":61,
            "num_key_value_heads":128,"num_nextn_predict_layers":1,"q_lora_rank":1536,"qk_nope_head_dim":128,
            "qk_rope_head_dim":64,"rope_scaling":{"beta_fast":32,"beta_slow":1,"factor":40,"mscale":1.0,
            "mscale_all_dim":1.0,"original_max_position_embeddings":4096,"type":"yarn"},
            "routed_scaling_factor":2.5,"scoring_func":"sigmoid","topk_group":4,"topk_method":"noaux_tc",
            "v_head_dim":128,"vocab_size":129280,"tie_word_embeddings":false}"#,
        ),
        (
            "deepseek-v3.2",
            r#"{"architectures":["DeepseekV32ForCausalLM"],"first_k_dense_replace":3,"hidden_size":7168,
            "index_head_dim":128,"index_n_heads":64,"index_topk":2048,
            "intermediate_size":18432,"kv_lora_rank":512,"max_position_embeddings":163840,"model_type":"deepseek_v32",
            "moe_intermediate_size":2048,"moe_layer_freq":1,"n_group":8,"n_routed_experts":256,"n_shared_experts":1,
            "norm_topk_prob":true,"num_attention_heads":128,"num_experts_per_tok":8,"num_hidden_layers":61,
            "num_key_value_heads":128,"num_nextn_predict_layers":1,"q_lora_rank":1536,"qk_nope_head_dim":128,
            "qk_rope_head_dim":64,"rope_scaling":{"beta_fast":32,"beta_slow":1,"factor":40,"mscale":1.0,
            "mscale_all_dim":1.0,"original_max_position_embeddings":4096,"type":"yarn"},
            "routed_scaling_factor":2.5,"scoring_func":"sigmoid","topk_group":4,"topk_method":"noaux_tc",
            "v_head_dim":128,"vocab_size":129280,"tie_word_embeddings":false}"#,
        ),
        (
            "glm-5",
            r#"{"architectures":["GlmMoeDsaForCausalLM"],"first_k_dense_replace":3,"hidden_size":6144,
            "index_head_dim":128,"index_n_heads":32,"index_topk":2048,"intermediate_size":12288,
            "kv_lora_rank":512,"max_position_embeddings":202752,"model_type":"glm_moe_dsa",
            "moe_intermediate_size":2048,"n_group":1,"n_routed_experts":256,"n_shared_experts":1,
            "norm_topk_prob":true,"num_attention_heads":64,"num_experts_per_tok":8,"num_hidden_layers":78,
            "num_key_value_heads":64,"q_lora_rank":2048,"qk_nope_head_dim":192,"qk_rope_head_dim":64,
            "routed_scaling_factor":2.5,"topk_group":1,"v_head_dim":256,"vocab_size":154880,
            "tie_word_embeddings":false}"#,
        ),
        (
            "kimi-k2",
            r#"{"architectures":["DeepseekV3ForCausalLM"],"first_k_dense_replace":1,"hidden_size":7168,
            "intermediate_size":18432,"kv_lora_rank":512,"max_position_embeddings":262144,"model_type":"kimi_k2",
            "moe_intermediate_size":2048,"moe_layer_freq":1,"n_group":1,"n_routed_experts":384,"n_shared_experts":1,
            "norm_topk_prob":true,"num_attention_heads":64,"num_experts_per_tok":8,"num_hidden_layers":61,
            "num_key_value_heads":64,"num_nextn_predict_layers":0,"q_lora_rank":1536,"qk_nope_head_dim":128,
            "qk_rope_head_dim":64,"rope_scaling":{"beta_fast":1.0,"beta_slow":1.0,"factor":64.0,"mscale":1.0,
            "mscale_all_dim":1.0,"original_max_position_embeddings":4096,"type":"yarn"},"rope_theta":50000.0,
            "routed_scaling_factor":2.827,"scoring_func":"sigmoid","topk_group":1,"topk_method":"noaux_tc",
            "v_head_dim":128,"vocab_size":163840,"tie_word_embeddings":false}"#,
        ),
        (
            "glm-4.5-air",
            r#"{"architectures":["Glm4MoeForCausalLM"],"attention_bias":true,"attention_dropout":0.0,
            "first_k_dense_replace":1,"head_dim":128,"hidden_act":"silu","hidden_size":4096,
            "intermediate_size":10944,"max_position_embeddings":131072,"model_type":"glm4_moe",
            "moe_intermediate_size":1408,"n_group":1,"n_routed_experts":128,"n_shared_experts":1,
            "norm_topk_prob":true,"num_attention_heads":96,"num_experts_per_tok":8,"num_hidden_layers":46,
            "num_key_value_heads":8,"num_nextn_predict_layers":1,"partial_rotary_factor":0.5,
            "rms_norm_eps":1e-05,"rope_scaling":null,"rope_theta":1000000,"routed_scaling_factor":1.0,
            "tie_word_embeddings":false,"topk_group":1,"use_qk_norm":false,"vocab_size":151552}"#,
        ),
        (
            "glm-4.6",
            r#"{"architectures":["Glm4MoeForCausalLM"],"attention_bias":true,"head_dim":128,"hidden_act":"silu",
            "hidden_size":5120,"partial_rotary_factor":0.5,"intermediate_size":12288,
            "max_position_embeddings":202752,"model_type":"glm4_moe","moe_intermediate_size":1536,
            "norm_topk_prob":true,"num_attention_heads":96,"n_group":1,"topk_group":1,"n_routed_experts":160,
            "n_shared_experts":1,"routed_scaling_factor":2.5,"num_experts_per_tok":8,"first_k_dense_replace":3,
            "num_hidden_layers":92,"num_key_value_heads":8,"rms_norm_eps":1e-5,"rope_scaling":null,
            "rope_theta":1000000,"num_nextn_predict_layers":1,"tie_word_embeddings":false,"use_qk_norm":true,
            "vocab_size":151552}"#,
        ),
    ];
    for (id, json) in configs {
        assert_eq!(import(json).unwrap().spec, preset(id), "{id}");
    }
    // transformers 5 saves the rotated share inside `rope_parameters`.
    let saved = r#"{"model_type":"glm4_moe","head_dim":128,"attention_bias":true,"max_position_embeddings":131072,
        "rope_parameters":{"rope_theta":1000000,"partial_rotary_factor":0.5,"rope_type":"default"}}"#;
    assert_eq!(import(saved).unwrap().spec, preset("glm-4.5-air"));
    assert_ne!(
        import(&saved.replace("0.5", "1.0")).unwrap().spec,
        preset("glm-4.5-air")
    );
    // GLM-4.7-Flash's `config.json`: latent attention over GLM's sparse
    // block (its `first_k_dense_replace` is not what the class reads).
    let flash = r#"{"architectures":["Glm4MoeLiteForCausalLM"],"model_type":"glm4_moe_lite",
        "vocab_size":154880,"hidden_size":2048,"intermediate_size":10240,"moe_intermediate_size":1536,
        "num_hidden_layers":47,"num_attention_heads":20,"num_key_value_heads":20,"hidden_act":"silu",
        "rms_norm_eps":1e-5,"attention_dropout":0.0,"attention_bias":false,"max_position_embeddings":202752,
        "rope_theta":1000000.0,"rope_scaling":null,"partial_rotary_factor":1.0,"q_lora_rank":768,
        "kv_lora_rank":512,"qk_nope_head_dim":192,"qk_rope_head_dim":64,"v_head_dim":256,
        "n_routed_experts":64,"n_shared_experts":1,"num_experts_per_tok":4,"norm_topk_prob":true,
        "routed_scaling_factor":1.8,"n_group":1,"topk_group":1,"topk_method":"noaux_tc",
        "first_k_dense_replace":1,"num_nextn_predict_layers":1,"tie_word_embeddings":false}"#;
    assert_eq!(import(flash).unwrap().spec, preset("glm-4.7-flash"));
    // MiniMax-M2.7's `config.json` (remote-code fields the class ignores
    // included): `rotary_dim` 64 of 128 sets the rotated share.
    let m27 = r#"{"architectures":["MiniMaxM2ForCausalLM"],"model_type":"minimax_m2","hidden_act":"silu",
        "hidden_size":3072,"intermediate_size":1536,"num_hidden_layers":62,"num_attention_heads":48,
        "num_key_value_heads":8,"head_dim":128,"rotary_dim":64,"num_local_experts":256,
        "num_experts_per_tok":8,"shared_intermediate_size":0,"scoring_func":"sigmoid",
        "use_routing_bias":true,"output_router_logits":false,"use_qk_norm":true,"qk_norm_type":"per_layer",
        "max_position_embeddings":204800,"vocab_size":200064,"rms_norm_eps":1e-6,"attention_dropout":0.0,
        "router_jitter_noise":0.0,"num_mtp_modules":3,"mtp_transformer_layers":1,"use_mtp":true,
        "attention_bias":false,"tie_word_embeddings":false,"rope_theta":5000000}"#;
    assert_eq!(import(m27).unwrap().spec, preset("minimax-m2.7"));
    // An explicit `partial_rotary_factor` outranks `rotary_dim`, as
    // `convert_rope_params_to_dict` sets it; without either the whole head turns.
    let rotated = |json: &str| {
        let ModelSpec::Transformer(t) = import(json).unwrap().spec else {
            panic!("minimax_m2 is a transformer")
        };
        t.block.rotary
    };
    let sliced = |dims| vramfit_core::models::transformer::Rotary::Sliced { dims };
    assert_eq!(
        rotated(r#"{"model_type":"minimax_m2","rotary_dim":64}"#),
        sliced(64)
    );
    assert_eq!(
        rotated(
            r#"{"model_type":"minimax_m2","rotary_dim":64,"rope_parameters":{"partial_rotary_factor":0.25}}"#
        ),
        sliced(32)
    );
    assert_eq!(
        rotated(r#"{"model_type":"minimax_m2","rotary_dim":64,"partial_rotary_factor":1.0}"#),
        sliced(128)
    );
    assert_eq!(rotated(r#"{"model_type":"minimax_m2"}"#), sliced(128));
    let types: Vec<String> = (0..24)
        .map(|i| {
            if i % 2 == 0 {
                r#""sliding_attention""#
            } else {
                r#""full_attention""#
            }
            .to_string()
        })
        .collect();
    let gpt_oss = format!(
        r#"{{"architectures":["GptOssForCausalLM"],"attention_bias":true,"head_dim":64,"hidden_size":2880,
        "intermediate_size":2880,"layer_types":[{}],"max_position_embeddings":131072,"model_type":"gpt_oss",
        "num_attention_heads":64,"num_experts_per_tok":4,"num_hidden_layers":24,"num_key_value_heads":8,
        "num_local_experts":32,"rope_scaling":{{"beta_fast":32.0,"beta_slow":1.0,"factor":32.0,
        "original_max_position_embeddings":4096,"rope_type":"yarn","truncate":false}},"sliding_window":128,
        "swiglu_limit":7.0,"tie_word_embeddings":false,"vocab_size":201088}}"#,
        types.join(",")
    );
    assert_eq!(import(&gpt_oss).unwrap().spec, preset("gpt-oss-20b"));
}

/// A field's second name in the config class's `attribute_map` reads as
/// the field: `transformers` 5 saves Qwen3-MoE's `num_experts` as
/// `num_local_experts`, Mixtral's the other way round is accepted too, and
/// the config `memory_truth.py` saved for the H200 run has 16 experts, not
/// the class default of 128.
#[test]
fn second_field_names_from_attribute_map_read_as_the_field() {
    let spec = |json: &str| import(json).unwrap().spec;
    let qwen3 = |key: &str| {
        format!(
            r#"{{"model_type":"qwen3_moe","hidden_size":1024,"num_hidden_layers":2,"num_attention_heads":8,
            "num_key_value_heads":4,"head_dim":128,"moe_intermediate_size":256,"num_experts_per_tok":2,
            "vocab_size":1000,"{key}":8}}"#
        )
    };
    assert_eq!(
        spec(&qwen3("num_experts")),
        spec(&qwen3("num_local_experts"))
    );
    assert_ne!(spec(&qwen3("num_experts")), spec(&qwen3("unrelated_field")));
    assert_eq!(
        spec(r#"{"model_type":"mixtral","num_experts":4}"#),
        spec(r#"{"model_type":"mixtral","num_local_experts":4}"#)
    );
    assert_eq!(
        spec(r#"{"model_type":"deepseek_v3","num_local_experts":32}"#),
        spec(r#"{"model_type":"deepseek_v3","n_routed_experts":32}"#)
    );
    assert_eq!(
        spec(
            r#"{"model_type":"gpt2","hidden_size":512,"num_hidden_layers":4,"num_attention_heads":8,"vocab_size":1000}"#
        ),
        spec(r#"{"model_type":"gpt2","n_embd":512,"n_layer":4,"n_head":8,"vocab_size":1000}"#)
    );
    // Where both names are set, the reader's own name is what it reads.
    assert_eq!(
        spec(r#"{"model_type":"mixtral","num_experts":4,"num_local_experts":2}"#),
        spec(r#"{"model_type":"mixtral","num_local_experts":2}"#)
    );
    let saved =
        include_str!("../../../tests/reference/real_gpu/measured/configs/qwen3moe-small.json");
    let ModelSpec::Transformer(t) = spec(saved) else {
        panic!("qwen3moe-small is a transformer")
    };
    assert_eq!(t.moe.unwrap().experts, 16);
}

/// Each config class's defaults, counted as `transformers` 5.24.0 counts
/// them on the meta device (`DeepseekV2Config` has no default
/// `num_experts_per_tok`: 6 given).
#[test]
fn config_class_defaults_count_as_transformers_builds_them() {
    let count = |json: &str| import(json).unwrap().spec.parameter_count().unwrap();
    assert_eq!(count(r#"{"model_type":"mixtral"}"#), 46_702_792_704);
    assert_eq!(count(r#"{"model_type":"qwen2_moe"}"#), 14_315_784_192);
    assert_eq!(count(r#"{"model_type":"qwen3_moe"}"#), 15_350_731_776);
    assert_eq!(count(r#"{"model_type":"olmoe"}"#), 13_361_612_800);
    assert_eq!(
        count(r#"{"model_type":"deepseek_v2","num_experts_per_tok":6}"#),
        38_612_307_968
    );
    assert_eq!(count(r#"{"model_type":"deepseek_v3"}"#), 671_026_404_352);
    assert_eq!(count(r#"{"model_type":"gpt_oss"}"#), 116_829_156_672);
    // No `head_dim`: 4096 / 96 floors to 42.
    assert_eq!(count(r#"{"model_type":"glm4_moe"}"#), 103_481_200_640);
    assert_eq!(count(r#"{"model_type":"minimax_m2"}"#), 228_689_748_992);
    assert_eq!(count(r#"{"model_type":"glm4_moe_lite"}"#), 29_943_390_976);
    let e = import(r#"{"model_type":"deepseek_v2"}"#).unwrap_err();
    assert!(e.to_string().contains("num_experts_per_tok"), "{e}");
}

/// ERNIE 4.5's `config.json` files import as their presets (the dense
/// 0.3B's too); `moe_layer_end_index` -1, absent or null is the last layer;
/// `use_bias` is refused by name; the class defaults count as
/// `transformers` builds them on the meta device.
#[test]
fn ernie_configs_import_as_their_presets() {
    let a3b = r#"{"architectures":["Ernie4_5_MoeForCausalLM"],"model_type":"ernie4_5_moe",
        "hidden_size":2560,"intermediate_size":12288,"moe_intermediate_size":1536,"num_hidden_layers":28,
        "num_attention_heads":20,"num_key_value_heads":4,"head_dim":128,"moe_num_experts":64,
        "moe_num_shared_experts":2,"moe_k":6,"moe_layer_start_index":1,"moe_layer_end_index":27,
        "moe_layer_interval":1,"vocab_size":103424,"tie_word_embeddings":true,"hidden_act":"silu",
        "max_position_embeddings":131072,"rms_norm_eps":1e-5,"rope_theta":500000,"use_bias":false}"#;
    assert_eq!(import(a3b).unwrap().spec, preset("ernie-4.5-21b-a3b"));
    for end in [
        r#""moe_layer_end_index":-1"#,
        r#""moe_layer_end_index":null"#,
        r#""x":0"#,
    ] {
        let json = a3b.replace(r#""moe_layer_end_index":27"#, end);
        assert_eq!(
            import(&json).unwrap().spec,
            preset("ernie-4.5-21b-a3b"),
            "{end}"
        );
    }
    // transformers' attribute_map names: num_experts, num_experts_per_tok.
    let aliased = a3b
        .replace("moe_num_experts", "num_experts")
        .replace("moe_k", "num_experts_per_tok");
    assert_eq!(import(&aliased).unwrap().spec, preset("ernie-4.5-21b-a3b"));
    let big = r#"{"model_type":"ernie4_5_moe","hidden_size":8192,"intermediate_size":28672,
        "max_position_embeddings":131072,"num_attention_heads":64,"num_key_value_heads":8,
        "num_hidden_layers":54,"rms_norm_eps":1e-05,"vocab_size":103424,"rope_theta":500000.0,
        "moe_num_experts":64,"moe_num_shared_experts":0,"moe_layer_start_index":3,
        "moe_layer_end_index":53,"moe_intermediate_size":3584,"moe_k":8,"moe_layer_interval":1,
        "tie_word_embeddings":true}"#;
    assert_eq!(import(big).unwrap().spec, preset("ernie-4.5-300b-a47b"));
    let small = r#"{"architectures":["Ernie4_5_ForCausalLM"],"model_type":"ernie4_5","hidden_size":1024,
        "intermediate_size":3072,"max_position_embeddings":131072,"num_attention_heads":16,
        "num_key_value_heads":2,"head_dim":128,"num_hidden_layers":18,"rms_norm_eps":1e-05,
        "vocab_size":103424,"rope_theta":500000,"use_bias":false,"tie_word_embeddings":true}"#;
    assert_eq!(import(small).unwrap().spec, preset("ernie-4.5-0.3b"));
    let e = import(&small.replace(r#""use_bias":false"#, r#""use_bias":true"#)).unwrap_err();
    assert!(e.to_string().contains("use_bias"), "{e}");
    let count = |json: &str| import(json).unwrap().spec.parameter_count().unwrap();
    assert_eq!(count(r#"{"model_type":"ernie4_5"}"#), 360_748_032);
    assert_eq!(count(r#"{"model_type":"ernie4_5_moe"}"#), 21_825_437_888);
}

/// GLM-4.7-Flash's dense layers are the ones `mlp_layer_types` lists (the
/// first when it is absent), whatever `first_k_dense_replace` says; counts
/// as `Glm4MoeLiteForCausalLM` builds them on the meta device.
#[test]
fn glm_flash_dense_layers_follow_mlp_layer_types() {
    let json = |types: &str| {
        format!(
            r#"{{"model_type":"glm4_moe_lite","vocab_size":1000,"hidden_size":256,"intermediate_size":512,
            "moe_intermediate_size":64,"num_hidden_layers":3,"num_attention_heads":4,"q_lora_rank":64,
            "kv_lora_rank":32,"qk_nope_head_dim":32,"qk_rope_head_dim":16,"v_head_dim":48,
            "n_routed_experts":8,"num_experts_per_tok":2,"first_k_dense_replace":3{types}}}"#
        )
    };
    let count = |types: &str| {
        import(&json(types))
            .unwrap()
            .spec
            .parameter_count()
            .unwrap()
    };
    assert_eq!(count(""), 2_097_184);
    assert_eq!(
        count(r#","mlp_layer_types":["sparse","sparse","sparse"]"#),
        2_148_384
    );
    assert_eq!(
        count(r#","mlp_layer_types":["dense","dense","sparse"]"#),
        2_045_984
    );
    let e = import(&json(r#","mlp_layer_types":["dense","sparse"]"#)).unwrap_err();
    assert!(
        e.to_string().contains("mlp_layer_types lists 2 layers"),
        "{e}"
    );
    let e = import(&json(r#","mlp_layer_types":["dense","moe","sparse"]"#)).unwrap_err();
    assert!(e.to_string().contains("not \"moe\""), "{e}");
}

/// `mlp_only_layers` and `decoder_sparse_step` keep dense MLPs where
/// `Qwen2MoeDecoderLayer` does: with [0] and 2, layers 1, 3 and 5 of six
/// are sparse (4,359,168 parameters in `transformers`).
#[test]
fn dense_layers_follow_mlp_only_layers_and_sparse_step() {
    let json = r#"{"model_type":"qwen2_moe","vocab_size":1000,"hidden_size":256,"intermediate_size":512,
        "moe_intermediate_size":64,"shared_expert_intermediate_size":128,"num_hidden_layers":6,
        "num_attention_heads":4,"num_key_value_heads":2,"num_experts":8,"num_experts_per_tok":2,
        "mlp_only_layers":[0],"decoder_sparse_step":2}"#;
    let spec = import(json).unwrap().spec;
    assert_eq!(spec.parameter_count().unwrap(), 4_359_168);
    let ModelSpec::Transformer(t) = spec else {
        panic!("not a transformer")
    };
    let moe = t.moe.unwrap();
    let sparse: Vec<u64> = (0..6).filter(|&i| moe.is_sparse(i)).collect();
    assert_eq!(sparse, [1, 3, 5]);
    let bad = json.replace(r#""mlp_only_layers":[0]"#, r#""mlp_only_layers":[9]"#);
    let e = import(&bad).unwrap_err();
    assert!(e.to_string().contains("mlp_only_layers"), "{e}");
}

fn inference(id: &str, context: u64) -> vramfit_core::Estimate {
    use vramfit_core::config::Mode;
    let cfg = vramfit_core::TrainConfig {
        mode: Mode::Inference,
        batch: 1,
        seq: 64,
        context,
        precision: vramfit_core::Precision::Bf16,
        attention: vramfit_core::Attention::Flash,
        ..vramfit_core::TrainConfig::default()
    };
    vramfit_core::estimate(&preset(id), &cfg, &vramfit_core::Overheads::default(), None).unwrap()
}

/// Hugging Face's `DynamicCache` keeps latent attention's normalized latent
/// and rotated key (`cache.update(kv_nope, k_rot)` in
/// `DeepseekV3Attention.forward`), not decompressed keys and values.
#[test]
fn latent_attention_caches_the_latent_as_hugging_face_does() {
    // DeepSeek-V3: 61 layers × (512 + 64) × 2 bytes = 70,272 bytes a token.
    let e = inference("deepseek-v3", 4096);
    assert_eq!(e.at_peak.kv_cache.0, 61 * (512 + 64) * 2 * 4096);
    // Decompressed it would be 61 × 128 heads × (192 + 128) × 2 bytes: 69× more.
    let lite = inference("deepseek-v2-lite", 8192);
    assert_eq!(lite.at_peak.kv_cache.0, 27 * 576 * 2 * 8192);
    // Every expert is resident whatever the routing.
    assert!(e.at_peak.parameters.0 >= 2 * 671_026_404_352);
}

/// gpt-oss's even layers slide over 128 tokens (`layer_types`); their cache
/// stops growing there, the odd layers' keeps every position.
#[test]
fn gpt_oss_sliding_layers_cache_at_most_the_window() {
    // 2 (K, V) × 8 key/value heads × 64 dims × 2 bytes per layer and token.
    let per_layer_token = 2 * 8 * 64 * 2;
    let at = |context| inference("gpt-oss-20b", context).at_peak.kv_cache.0;
    assert_eq!(at(100), 24 * 100 * per_layer_token);
    assert_eq!(at(8192), (12 * 8192 + 12 * 128) * per_layer_token);
}

/// PEFT's `target_modules="all-linear"` adapts `nn.Linear` modules only:
/// Mixtral's q, k, v and o projections, not its routers (modules holding a
/// weight) nor its expert banks (3-D parameters). Rank 16 over 32 layers:
/// 16 × (2 × (4096 + 4096) + 2 × (4096 + 1024)) × 32 = 13,631,488.
#[test]
fn lora_adapts_only_the_linear_modules_of_a_mixture_of_experts() {
    use vramfit_core::config::Mode;
    let cfg = vramfit_core::TrainConfig {
        mode: Mode::FinetuneLora,
        lora_rank: 16,
        batch: 1,
        seq: 256,
        precision: vramfit_core::Precision::Bf16,
        ..vramfit_core::TrainConfig::default()
    };
    let e = vramfit_core::estimate(
        &preset("mixtral-8x7b"),
        &cfg,
        &vramfit_core::Overheads::default(),
        None,
    )
    .unwrap();
    assert_eq!(e.trainable_parameter_count, 13_631_488);
    assert_eq!(e.parameter_count, 46_702_792_704 + 13_631_488);
}

/// Tensor parallelism splits every expert's neurons over the ranks (expert
/// tensor parallelism equal to TP, Megatron-Core's default) and latent
/// attention's heads; a size the ranks do not divide is refused by name
/// (DeepSeek-V2's default `moe_intermediate_size`, 1407).
#[test]
fn tensor_parallelism_splits_the_experts_neurons() {
    let cfg = |tp| vramfit_core::TrainConfig {
        batch: 1,
        seq: 64,
        parallel: vramfit_core::parallel::Parallel {
            gpus_per_node: tp,
            tp,
            ..vramfit_core::parallel::Parallel::default()
        },
        ..vramfit_core::TrainConfig::default()
    };
    let bank = |id: &str, tp| {
        let g = preset(id).lower(&cfg(tp)).unwrap();
        let p = g
            .params
            .iter()
            .find(|p| p.name.ends_with("mlp.experts.gate_up_proj"))
            .unwrap();
        p.shape.clone()
    };
    assert_eq!(bank("mixtral-8x7b", 1), [8, 2 * 14_336, 4096]);
    assert_eq!(bank("mixtral-8x7b", 2), [8, 14_336, 4096]);
    let kv_b = |tp| {
        let g = preset("deepseek-v2-lite").lower(&cfg(tp)).unwrap();
        let p = g
            .params
            .iter()
            .find(|p| p.name.ends_with("self_attn.kv_b_proj.weight"))
            .unwrap();
        p.shape.clone()
    };
    assert_eq!(kv_b(1), [16 * 256, 512]);
    assert_eq!(kv_b(4), [4 * 256, 512]);
    let odd = import(r#"{"model_type":"deepseek_v2","num_experts_per_tok":6}"#)
        .unwrap()
        .spec;
    let e = odd.lower(&cfg(2)).unwrap_err();
    assert!(matches!(
        e,
        vramfit_core::Error::NotApplicable(vramfit_core::error::Inapplicable::TensorParallel {
            dimension: "moe_intermediate_size",
            size: 1407,
            tp: 2
        })
    ));
}

/// A share link carries a pasted config reduced to the keys the import
/// reads: a mixture of experts' routing, dense layers and latent ranks stay.
#[test]
fn share_links_keep_the_expert_and_latent_fields() {
    let v3 = r#"{"architectures":["DeepseekV3ForCausalLM"],"first_k_dense_replace":3,"hidden_size":7168,
        "intermediate_size":18432,"kv_lora_rank":512,"max_position_embeddings":163840,"model_type":"deepseek_v3",
        "moe_intermediate_size":2048,"n_group":8,"n_routed_experts":256,"n_shared_experts":1,
        "norm_topk_prob":true,"num_attention_heads":128,"num_experts_per_tok":8,"num_hidden_layers":61,
        "num_key_value_heads":128,"q_lora_rank":1536,"qk_nope_head_dim":128,"qk_rope_head_dim":64,
        "routed_scaling_factor":2.5,"topk_group":4,"torch_dtype":"bfloat16","v_head_dim":128,"vocab_size":129280}"#;
    let reduced = vramfit_core::share::reduce_config(v3);
    assert!(!reduced.contains("torch_dtype"), "{reduced}");
    assert_eq!(import(&reduced).unwrap().spec, import(v3).unwrap().spec);
    // Fields equal to the class's defaults go; the spec stays V3's.
    assert_eq!(
        import(&reduced).unwrap().spec.parameter_count().unwrap(),
        671_026_404_352
    );
}
