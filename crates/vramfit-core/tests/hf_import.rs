//! Hugging Face `config.json` import: the real fields of each supported
//! `model_type`, and errors that name what is wrong.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::Error;
use vramfit_core::error::NotLlamaStyle;
use vramfit_core::hf::{self, Assumption, import};

fn count(json: &str) -> u64 {
    import(json).unwrap().spec.parameter_count().unwrap()
}

#[test]
fn imports_each_supported_model_type() {
    // bert-base-uncased's config: BertForMaskedLM, the masked-LM head and no
    // pooler. 109,514,298 is what `sum(p.numel() for p in model.parameters())`
    // prints for AutoModelForMaskedLM.from_pretrained('bert-base-uncased') in
    // published code (and 4,416,698 for prajjwal1/bert-tiny, below).
    let bert = r#"{"architectures":["BertForMaskedLM"],"model_type":"bert","vocab_size":30522,"hidden_size":768,
        "num_hidden_layers":12,"num_attention_heads":12,"intermediate_size":3072,"max_position_embeddings":512,"type_vocab_size":2}"#;
    assert_eq!(count(bert), 109_514_298);
    let bert_tiny = r#"{"architectures":["BertForMaskedLM"],"model_type":"bert","vocab_size":30522,"hidden_size":128,
        "num_hidden_layers":2,"num_attention_heads":2,"intermediate_size":512,"max_position_embeddings":512,"type_vocab_size":2}"#;
    assert_eq!(count(bert_tiny), 4_416_698);
    // Without architectures: BertModel, the bare encoder with its pooler
    // (`tests/reference/param_counts.csv`: bert-base-encoder).
    assert_eq!(
        count(&bert.replace(r#""architectures":["BertForMaskedLM"],"#, "")),
        109_482_240
    );
    let bert_cls = bert.replace("BertForMaskedLM", "BertForSequenceClassification");
    assert_eq!(count(&bert_cls), 109_483_778);
    // gpt2-medium, n_inner null as in the published config.
    let gpt2 = r#"{"model_type":"gpt2","vocab_size":50257,"n_embd":1024,"n_layer":24,"n_head":16,"n_inner":null,"n_positions":1024}"#;
    assert_eq!(count(gpt2), 354_823_168);
    // Mistral-7B-v0.1.
    let mistral = r#"{"model_type":"mistral","vocab_size":32000,"hidden_size":4096,"num_hidden_layers":32,
        "num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"tie_word_embeddings":false}"#;
    assert_eq!(count(mistral), 7_241_732_096);
    // Qwen2.5-7B: q/k/v biases are implied by the model type.
    let qwen = r#"{"model_type":"qwen2","vocab_size":152064,"hidden_size":3584,"num_hidden_layers":28,
        "num_attention_heads":28,"num_key_value_heads":4,"intermediate_size":18944,"tie_word_embeddings":false}"#;
    assert_eq!(count(qwen), 7_615_616_512);
    // Llama-3-8B.
    let llama3 = r#"{"model_type":"llama","vocab_size":128256,"hidden_size":4096,"num_hidden_layers":32,
        "num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336}"#;
    assert_eq!(count(llama3), 8_030_261_248);
}

/// Qwen3-8B's and Qwen3-0.6B's `config.json` (the fields that matter): the
/// counts `transformers` gives (`tests/reference/param_counts.csv`), q/k
/// norms of `head_dim` per layer, and `Qwen3Config`'s defaults for what a
/// config leaves out (`head_dim` 128, 32 key/value heads).
#[test]
fn imports_qwen3_with_its_head_norms_and_defaults() {
    let qwen3_8b = r#"{"architectures":["Qwen3ForCausalLM"],"model_type":"qwen3","vocab_size":151936,
        "hidden_size":4096,"num_hidden_layers":36,"num_attention_heads":32,"num_key_value_heads":8,
        "head_dim":128,"intermediate_size":12288,"tie_word_embeddings":false,"attention_bias":false,
        "use_sliding_window":false,"sliding_window":null,"max_position_embeddings":40960}"#;
    assert_eq!(count(qwen3_8b), 8_190_735_360);
    let qwen3_06b = r#"{"model_type":"qwen3","vocab_size":151936,"hidden_size":1024,"num_hidden_layers":28,
        "num_attention_heads":16,"num_key_value_heads":8,"head_dim":128,"intermediate_size":3072,
        "tie_word_embeddings":true}"#;
    assert_eq!(count(qwen3_06b), 596_049_920);
    // The same as a Llama config: only the two 128-wide norms per layer differ.
    let as_llama = qwen3_06b.replace("\"qwen3\"", "\"llama\"");
    assert_eq!(count(qwen3_06b) - count(&as_llama), 28 * 2 * 128);
    // Without head_dim and num_key_value_heads: Qwen3Config's 128 and 32.
    let bare = r#"{"model_type":"qwen3","vocab_size":1000,"hidden_size":256,"num_hidden_layers":1,
        "num_attention_heads":32,"intermediate_size":512}"#;
    let explicit = bare.replace(
        "\"intermediate_size\"",
        "\"head_dim\":128,\"num_key_value_heads\":32,\"intermediate_size\"",
    );
    assert_eq!(count(bare), count(&explicit));
}

/// OLMo-2-1124-7B's and Gemma-2B's `config.json` (the fields that matter):
/// the counts `transformers` gives (`tests/reference/param_counts.csv`).
#[test]
fn imports_olmo2_and_gemma() {
    let olmo2 = r#"{"architectures":["Olmo2ForCausalLM"],"model_type":"olmo2","vocab_size":100352,
        "hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":32,
        "intermediate_size":11008,"tie_word_embeddings":false,"attention_bias":false}"#;
    assert_eq!(count(olmo2), 7_298_617_344);
    let gemma = r#"{"architectures":["GemmaForCausalLM"],"model_type":"gemma","vocab_size":256000,
        "hidden_size":2048,"num_hidden_layers":18,"num_attention_heads":8,"num_key_value_heads":1,
        "head_dim":256,"intermediate_size":16384,"hidden_act":"gelu"}"#;
    assert_eq!(count(gemma), 2_506_172_416);
}

/// OLMo-3-1025-7B's `config.json` (the fields that matter) imports as its
/// preset and counts as `transformers` does (`param_counts.csv`); its
/// `layer_types` (three sliding layers of four) read as the class's
/// default, a null window slides nothing, and a list of another pattern
/// is refused by name.
#[test]
fn imports_olmo3_with_its_sliding_layers() {
    use vramfit_core::models::{ModelSpec, SlidingWindow};
    let types: Vec<&str> = (0..32)
        .map(|i| {
            if (i + 1) % 4 == 0 {
                r#""full_attention""#
            } else {
                r#""sliding_attention""#
            }
        })
        .collect();
    let olmo3 = format!(
        r#"{{"architectures":["Olmo3ForCausalLM"],"model_type":"olmo3","vocab_size":100278,
        "hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":32,
        "intermediate_size":11008,"max_position_embeddings":65536,"sliding_window":4096,
        "layer_types":[{}],"rope_scaling":{{"rope_type":"yarn","factor":8.0,
        "original_max_position_embeddings":8192,"attention_factor":1.2079441541679836}},
        "tie_word_embeddings":false,"attention_bias":false}}"#,
        types.join(",")
    );
    assert_eq!(count(&olmo3), 7_298_011_136);
    let preset = vramfit_core::model_preset("olmo-3-7b").unwrap().spec;
    assert_eq!(import(&olmo3).unwrap().spec, preset);
    let bare = r#"{"model_type":"olmo3","vocab_size":100278,"num_hidden_layers":8}"#;
    let ModelSpec::Transformer(t) = import(bare).unwrap().spec else {
        panic!("a transformer")
    };
    assert_eq!(
        t.block.sliding,
        Some(SlidingWindow {
            window: 4096,
            full_every: 4
        })
    );
    let ModelSpec::Transformer(t) = import(&bare.replace("}", r#","sliding_window":null}"#))
        .unwrap()
        .spec
    else {
        panic!("a transformer")
    };
    assert_eq!(t.block.sliding, None);
    let odd = r#"{"model_type":"olmo3","num_hidden_layers":3,
        "layer_types":["full_attention","sliding_attention","sliding_attention"]}"#;
    let e = import(odd).unwrap_err().to_string();
    assert!(e.contains("layer_types"), "{e}");
}

/// SmolLM3-3B's `config.json` (`no_rope_layers` as released: every fourth
/// layer 0) imports as the preset and counts as `transformers` does; an
/// absent list is every `no_rope_layer_interval`-th; a list that is not
/// every n-th, of the wrong length or with other values is refused.
#[test]
fn imports_smollm3_with_its_layers_without_rotary_embedding() {
    use vramfit_core::models::ModelSpec;
    let flags: Vec<&str> = (0..36)
        .map(|i| if (i + 1) % 4 == 0 { "0" } else { "1" })
        .collect();
    let smollm3 = format!(
        r#"{{"architectures":["SmolLM3ForCausalLM"],"model_type":"smollm3","attention_bias":false,
        "attention_dropout":0.0,"hidden_act":"silu","hidden_size":2048,"intermediate_size":11008,
        "max_position_embeddings":65536,"max_window_layers":28,"mlp_bias":false,
        "no_rope_layer_interval":4,"no_rope_layers":[{}],"num_attention_heads":16,"num_hidden_layers":36,
        "num_key_value_heads":4,"rms_norm_eps":1e-06,"rope_scaling":null,"rope_theta":5000000.0,
        "sliding_window":null,"tie_word_embeddings":true,"use_sliding_window":false,"vocab_size":128256}}"#,
        flags.join(",")
    );
    assert_eq!(count(&smollm3), 3_075_098_624);
    let preset = vramfit_core::model_preset("smollm3-3b").unwrap().spec;
    assert_eq!(import(&smollm3).unwrap().spec, preset);
    let nope = |json: &str| match import(json).unwrap().spec {
        ModelSpec::Transformer(t) => t.block.nope_every,
        _ => panic!("a transformer"),
    };
    assert_eq!(nope(r#"{"model_type":"smollm3","num_hidden_layers":8}"#), 4);
    assert_eq!(
        nope(r#"{"model_type":"smollm3","num_hidden_layers":6,"no_rope_layer_interval":3}"#),
        3
    );
    assert_eq!(
        nope(r#"{"model_type":"smollm3","num_hidden_layers":3,"no_rope_layers":[1,1,1]}"#),
        0
    );
    for (list, needle) in [
        ("[1,0,0]", "every n-th"),
        ("[1,0]", "lists 2 layers"),
        ("[1,2,1]", "1 (rotary) and 0"),
    ] {
        let json =
            format!(r#"{{"model_type":"smollm3","num_hidden_layers":3,"no_rope_layers":{list}}}"#);
        let e = import(&json).unwrap_err().to_string();
        assert!(e.contains(needle), "{list}: {e}");
    }
}

/// EXAONE 4.0's `config.json` files import as their presets: the 32B's
/// sliding layers from `layer_types`, from `sliding_window_pattern` as a
/// number or as EXAONE's letters, its full layers without rotary embedding;
/// the 1.2B's (`sliding_window` null) all full with it. A window with no
/// sliding layer leaves every layer without rotary embedding, as
/// `Exaone4Attention` applies it only `if self.sliding_window is None or
/// self.is_sliding`. The class defaults count as `transformers` builds them.
#[test]
fn imports_exaone4_with_its_global_layers_without_rotary_embedding() {
    use vramfit_core::models::ModelSpec;
    let types: Vec<&str> = (0..64)
        .map(|i| {
            if (i + 1) % 4 == 0 {
                r#""full_attention""#
            } else {
                r#""sliding_attention""#
            }
        })
        .collect();
    let large = format!(
        r#"{{"architectures":["Exaone4ForCausalLM"],"model_type":"exaone4","attention_dropout":0.0,
        "head_dim":128,"hidden_act":"silu","hidden_size":5120,"intermediate_size":27392,
        "max_position_embeddings":131072,"num_attention_heads":40,"num_hidden_layers":64,
        "num_key_value_heads":8,"rms_norm_eps":1e-05,"rope_scaling":{{"factor":16.0,"high_freq_factor":4.0,
        "low_freq_factor":1.0,"original_max_position_embeddings":8192,"rope_type":"llama3"}},
        "rope_theta":1000000,"sliding_window":4096,"sliding_window_pattern":"LLLG","layer_types":[{}],
        "tie_word_embeddings":false,"vocab_size":102400}}"#,
        types.join(",")
    );
    let preset = |id: &str| vramfit_core::model_preset(id).unwrap().spec;
    assert_eq!(import(&large).unwrap().spec, preset("exaone-4.0-32b"));
    assert_eq!(count(&large), 32_003_216_384);
    let no_list = large.replace(&format!(r#","layer_types":[{}]"#, types.join(",")), "");
    assert_eq!(import(&no_list).unwrap().spec, preset("exaone-4.0-32b"));
    let numbered = no_list.replace(r#""LLLG""#, "4");
    assert_eq!(import(&numbered).unwrap().spec, preset("exaone-4.0-32b"));
    let full: Vec<&str> = vec![r#""full_attention""#; 30];
    let small = format!(
        r#"{{"architectures":["Exaone4ForCausalLM"],"model_type":"exaone4","head_dim":64,"hidden_size":2048,
        "intermediate_size":4096,"max_position_embeddings":65536,"num_attention_heads":32,
        "num_hidden_layers":30,"num_key_value_heads":8,"sliding_window":null,"sliding_window_pattern":4,
        "layer_types":[{}],"tie_word_embeddings":true,"vocab_size":102400}}"#,
        full.join(",")
    );
    assert_eq!(import(&small).unwrap().spec, preset("exaone-4.0-1.2b"));
    assert_eq!(count(&small), 1_279_391_488);
    let block = |json: &str| match import(json).unwrap().spec {
        ModelSpec::Transformer(t) => (t.block.sliding.map(|w| w.full_every), t.block.nope_every),
        _ => panic!("a transformer"),
    };
    let windowed = small.replace(r#""sliding_window":null"#, r#""sliding_window":4096"#);
    assert_eq!(block(&windowed), (None, 1));
    assert_eq!(
        block(r#"{"model_type":"exaone4","num_hidden_layers":4,"sliding_window_pattern":"LG"}"#),
        (Some(2), 2)
    );
    for (json, needle) in [
        (
            r#"{"model_type":"exaone4","sliding_window_pattern":"LLXG"}"#,
            "letters L",
        ),
        (
            r#"{"model_type":"exaone4","sliding_window_pattern":0}"#,
            "at least 1",
        ),
        (
            r#"{"model_type":"exaone4","num_hidden_layers":2,"layer_types":["full_attention"]}"#,
            "lists 1 layers",
        ),
    ] {
        let e = import(json).unwrap_err().to_string();
        assert!(e.contains(needle), "{json}: {e}");
    }
    assert_eq!(count(r#"{"model_type":"exaone4"}"#), 9_429_069_824);
}

/// Gemma 4's `text_config`s (E2B's and 26B-A4B's as released, with
/// `global_head_dim` and `num_global_key_value_heads`; 31B's as
/// `transformers` 5.24 saves it, with `per_layer_config`): the presets, the
/// counts `transformers` gives (`tests/reference/param_counts.csv`), and
/// what is refused.
#[test]
fn imports_gemma_4_with_its_two_kinds_of_layers() {
    let types = |layers: usize, every: usize| {
        (0..layers)
            .map(|i| {
                if (i + 1) % every == 0 {
                    r#""full_attention""#
                } else {
                    r#""sliding_attention""#
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    let rope = r#""rope_parameters":{"full_attention":{"partial_rotary_factor":0.25,"rope_theta":1000000.0,
        "rope_type":"proportional"},"sliding_attention":{"rope_theta":10000.0,"rope_type":"default"}}"#;
    let e2b = format!(
        r#"{{"model_type":"gemma4_text","attention_bias":false,"attention_dropout":0.0,"attention_k_eq_v":false,
        "enable_moe_block":false,"final_logit_softcapping":30.0,"global_head_dim":512,"head_dim":256,
        "hidden_activation":"gelu_pytorch_tanh","hidden_size":1536,"hidden_size_per_layer_input":256,
        "intermediate_size":6144,"layer_types":[{}],"max_position_embeddings":131072,"num_attention_heads":8,
        "num_experts":null,"num_global_key_value_heads":null,"num_hidden_layers":35,"num_key_value_heads":1,
        "num_kv_shared_layers":20,{rope},"sliding_window":512,"tie_word_embeddings":true,
        "top_k_experts":null,"use_double_wide_mlp":true,"vocab_size":262144,"vocab_size_per_layer_input":262144}}"#,
        types(35, 5)
    );
    let preset = |id: &str| vramfit_core::model_preset(id).unwrap().spec;
    assert_eq!(import(&e2b).unwrap().spec, preset("gemma-4-e2b"));
    assert_eq!(count(&e2b), 4_628_569_344);
    let a4b = format!(
        r#"{{"model_type":"gemma4_text","attention_k_eq_v":true,"enable_moe_block":true,
        "final_logit_softcapping":30.0,"global_head_dim":512,"head_dim":256,"hidden_size":2816,
        "hidden_size_per_layer_input":0,"intermediate_size":2112,"layer_types":[{}],
        "max_position_embeddings":262144,"moe_intermediate_size":704,"num_attention_heads":16,"num_experts":128,
        "num_global_key_value_heads":2,"num_hidden_layers":30,"num_key_value_heads":8,"num_kv_shared_layers":0,
        {rope},"sliding_window":1024,"top_k_experts":8,"use_bidirectional_attention":"vision",
        "vocab_size":262144}}"#,
        types(30, 6)
    );
    assert_eq!(import(&a4b).unwrap().spec, preset("gemma-4-26b-a4b"));
    assert_eq!(count(&a4b), 25_233_141_760);
    // As 5.24 saves it: the full layers' heads in `per_layer_config`.
    let overrides = (0..60)
        .filter(|i| (i + 1) % 6 == 0)
        .map(|i| format!(r#""{i}":{{"head_dim":512,"num_key_value_heads":4}}"#))
        .collect::<Vec<_>>()
        .join(",");
    let b31 = format!(
        r#"{{"model_type":"gemma4_text","attention_k_eq_v":true,"final_logit_softcapping":30.0,"head_dim":256,
        "hidden_size":5376,"hidden_size_per_layer_input":0,"intermediate_size":21504,"layer_types":[{}],
        "max_position_embeddings":262144,"num_attention_heads":32,"num_hidden_layers":60,"num_key_value_heads":16,
        {rope},"sliding_window":1024,"per_layer_config":{{{overrides}}}}}"#,
        types(60, 6)
    );
    assert_eq!(import(&b31).unwrap().spec, preset("gemma-4-31b"));
    assert_eq!(count(&b31), 30_697_345_280);
    for (json, needle) in [
        (
            r#"{"model_type":"gemma4_text","num_hidden_layers":6,"num_kv_shared_layers":6}"#.to_string(),
            "must be less than num_hidden_layers",
        ),
        (
            r#"{"model_type":"gemma4_text","num_hidden_layers":3,"layer_types":["sliding_attention","full_attention","sliding_attention"]}"#.to_string(),
            "last layer must be full_attention (transformers forces it)",
        ),
        (
            r#"{"model_type":"gemma4_text","num_hidden_layers":6,"num_kv_shared_layers":5}"#.to_string(),
            "no earlier full-attention layer",
        ),
        (
            r#"{"model_type":"gemma4_text","attention_k_eq_v":true,"num_global_key_value_heads":3}"#.to_string(),
            "multiple of num_global_key_value_heads",
        ),
        (
            b31.replace(r#""5":{"head_dim":512"#, r#""5":{"head_dim":256"#),
            "overrides differ",
        ),
        (
            r#"{"model_type":"gemma4_text","sliding_window":null}"#.to_string(),
            "sliding_window: null is not read for Gemma 4",
        ),
        (
            b31.replace(r#""5":{"#, r#""4":{"#),
            "layer 4 is not a full-attention layer",
        ),
    ] {
        let e = import(&json).unwrap_err().to_string();
        assert!(e.contains(needle), "{json}: {e}");
    }
}

/// Qwen3.5-27B's `text_config`, Qwen3.5-35B-A3B's and Qwen3-Next-80B-A3B's
/// `config.json` (the fields that matter): the presets, the counts
/// `transformers` gives (`tests/reference/param_counts.csv`), linear layers
/// from `layer_types` or `full_attention_interval`, and the classes'
/// defaults.
#[test]
fn imports_qwen3_next_and_qwen3_5_with_their_linear_layers() {
    use vramfit_core::models::ModelSpec;
    let types: Vec<&str> = (0..64)
        .map(|i| {
            if (i + 1) % 4 == 0 {
                r#""full_attention""#
            } else {
                r#""linear_attention""#
            }
        })
        .collect();
    let dense = format!(
        r#"{{"model_type":"qwen3_5_text","attn_output_gate":true,"head_dim":256,"hidden_size":5120,
        "intermediate_size":17408,"layer_types":[{}],"linear_conv_kernel_dim":4,"linear_key_head_dim":128,
        "linear_num_key_heads":16,"linear_num_value_heads":48,"linear_value_head_dim":128,
        "max_position_embeddings":262144,"mtp_num_hidden_layers":1,"num_attention_heads":24,
        "num_hidden_layers":64,"num_key_value_heads":4,"rope_parameters":{{"mrope_interleaved":true,
        "mrope_section":[11,11,10],"rope_type":"default","rope_theta":10000000,"partial_rotary_factor":0.25}},
        "mamba_ssm_dtype":"float32","tie_word_embeddings":false,"vocab_size":248320}}"#,
        types.join(",")
    );
    let preset = |id: &str| vramfit_core::model_preset(id).unwrap().spec;
    let imported = import(&dense).unwrap().spec;
    assert_eq!(imported, preset("qwen3.5-27b"));
    assert_eq!(count(&dense), 26_895_998_464);
    let no_list = dense.replace(&format!(r#""layer_types":[{}],"#, types.join(",")), "");
    assert_eq!(import(&no_list).unwrap().spec, preset("qwen3.5-27b"));
    let moe = r#"{"model_type":"qwen3_5_moe_text","hidden_size":2048,"num_hidden_layers":40,
        "num_attention_heads":16,"num_key_value_heads":2,"linear_num_value_heads":32,"num_experts":256,
        "num_experts_per_tok":8,"moe_intermediate_size":512,"shared_expert_intermediate_size":512,
        "full_attention_interval":4,"mamba_ssm_dtype":"float32","max_position_embeddings":262144,
        "vocab_size":248320}"#;
    assert_eq!(import(moe).unwrap().spec, preset("qwen3.5-35b-a3b"));
    let next = r#"{"architectures":["Qwen3NextForCausalLM"],"model_type":"qwen3_next","decoder_sparse_step":1,
        "full_attention_interval":4,"head_dim":256,"hidden_size":2048,"intermediate_size":5120,
        "linear_conv_kernel_dim":4,"linear_key_head_dim":128,"linear_num_key_heads":16,
        "linear_num_value_heads":32,"linear_value_head_dim":128,"max_position_embeddings":262144,
        "mlp_only_layers":[],"moe_intermediate_size":512,"norm_topk_prob":true,"num_attention_heads":16,
        "num_experts":512,"num_experts_per_tok":10,"num_hidden_layers":48,"num_key_value_heads":2,
        "partial_rotary_factor":0.25,"rope_theta":10000000,"shared_expert_intermediate_size":512,
        "tie_word_embeddings":false,"vocab_size":151936}"#;
    assert_eq!(import(next).unwrap().spec, preset("qwen3-next-80b-a3b"));
    assert_eq!(count(next), 79_674_391_296);
    // Three linear layers of four; the class defaults.
    match &imported {
        ModelSpec::Transformer(t) => {
            let linear = t.linear.as_ref().unwrap();
            assert_eq!(linear.linear_layers(t.layers), 48);
            let vramfit_core::models::Recurrent::DeltaNet(g) = &**linear else {
                panic!("Gated DeltaNet: {linear:?}")
            };
            assert!(!g.grouped && linear.is_linear(0) && !linear.is_linear(3));
        }
        other => panic!("{other:?}"),
    }
    for (json, needle) in [
        (
            r#"{"model_type":"qwen3_5_text","num_hidden_layers":2,"layer_types":["linear_attention","mamba"]}"#,
            "linear_attention and full_attention only",
        ),
        (
            r#"{"model_type":"qwen3_5_text","num_hidden_layers":3,"layer_types":["linear_attention","full_attention"]}"#,
            "lists 2 layers",
        ),
        (
            r#"{"model_type":"qwen3_5_text","linear_num_value_heads":24,"linear_num_key_heads":16}"#,
            "multiple of linear_num_key_heads",
        ),
        (
            r#"{"model_type":"qwen3_next","attention_bias":true}"#,
            "attention_bias",
        ),
    ] {
        let e = import(json).unwrap_err().to_string();
        assert!(e.contains(needle), "{json}: {e}");
    }
}

/// Gemma-2-9B's and Gemma-3-1B's `config.json` (the fields that matter):
/// the counts `transformers` gives, four norms per layer, the soft-capping
/// and sliding layers read as the config classes fill them in.
#[test]
fn imports_gemma2_and_gemma3_text() {
    use vramfit_core::models::{ModelSpec, NormPlacement, QkNorm, SlidingWindow};
    let gemma2 = r#"{"architectures":["Gemma2ForCausalLM"],"model_type":"gemma2","vocab_size":256000,
        "hidden_size":3584,"num_hidden_layers":42,"num_attention_heads":16,"num_key_value_heads":8,
        "head_dim":256,"intermediate_size":14336,"hidden_activation":"gelu_pytorch_tanh",
        "attn_logit_softcapping":50.0,"final_logit_softcapping":30.0,"sliding_window":4096,
        "query_pre_attn_scalar":256}"#;
    assert_eq!(count(gemma2), 9_241_705_984);
    let ModelSpec::Transformer(t) = import(gemma2).unwrap().spec else {
        panic!("a transformer")
    };
    assert_eq!(t.block.norm, NormPlacement::Sandwich);
    assert!(t.block.attn_softcap && t.block.final_softcap);
    assert_eq!(
        t.block.sliding,
        Some(SlidingWindow {
            window: 4096,
            full_every: 2
        })
    );
    // `null` turns soft-capping off; a listed layer_types is read as written.
    let uncapped = gemma2
        .replace("50.0", "null")
        .replace(
            r#""sliding_window":4096"#,
            r#""sliding_window":4096,"layer_types":["sliding_attention","full_attention","sliding_attention","full_attention"]"#,
        )
        .replace(r#""num_hidden_layers":42"#, r#""num_hidden_layers":4"#);
    let ModelSpec::Transformer(u) = import(&uncapped).unwrap().spec else {
        panic!("a transformer")
    };
    assert!(!u.block.attn_softcap && u.block.final_softcap);
    assert_eq!(u.block.sliding.map(|w| w.full_every), Some(2));
    let gemma3 = r#"{"architectures":["Gemma3ForCausalLM"],"model_type":"gemma3_text","vocab_size":262144,
        "hidden_size":1152,"num_hidden_layers":26,"num_attention_heads":4,"num_key_value_heads":1,
        "head_dim":256,"intermediate_size":6912,"sliding_window":512,"sliding_window_pattern":6,
        "final_logit_softcapping":null,"attn_logit_softcapping":null,"query_pre_attn_scalar":256}"#;
    assert_eq!(count(gemma3), 999_885_952);
    let ModelSpec::Transformer(t) = import(gemma3).unwrap().spec else {
        panic!("a transformer")
    };
    assert_eq!(t.block.qk_norm, QkNorm::PerHead);
    assert!(!t.block.attn_softcap && !t.block.final_softcap);
    assert_eq!(
        t.block.sliding.map(|w| (w.window, w.full_every)),
        Some((512, 6))
    );
    // A layer_types list that disagrees with the layer count, or is no pattern, is refused by name.
    let wrong = gemma3.replace(
        "\"sliding_window_pattern\":6",
        "\"layer_types\":[\"sliding_attention\"]",
    );
    let msg = import(&wrong).unwrap_err().to_string();
    assert!(msg.contains("layer_types") && msg.contains("26"), "{msg}");
    let types = |list: &str| {
        gemma3
            .replace("\"num_hidden_layers\":26", "\"num_hidden_layers\":3")
            .replace(
                "\"sliding_window_pattern\":6",
                &format!("\"layer_types\":{list}"),
            )
    };
    let odd = types(r#"["full_attention","sliding_attention","sliding_attention"]"#);
    let msg = import(&odd).unwrap_err().to_string();
    assert!(msg.contains("layer_types"), "{msg}");
    let none = types(r#"["full_attention","full_attention","full_attention"]"#);
    let ModelSpec::Transformer(t) = import(&none).unwrap().spec else {
        panic!("a transformer")
    };
    assert_eq!(t.block.sliding, None);
}

/// Pythia-1.4B's `config.json` as published (`rotary_pct`, no
/// `attention_bias`): the preset's spec, `transformers`' count; a config
/// without the fields is GPTNeoXConfig's default model (GPT-NeoX-20B).
#[test]
fn imports_gpt_neox_as_pythia_has_it() {
    let pythia = r#"{"architectures":["GPTNeoXForCausalLM"],"bos_token_id":0,"eos_token_id":0,
        "hidden_act":"gelu","hidden_size":2048,"initializer_range":0.02,"intermediate_size":8192,
        "layer_norm_eps":1e-05,"max_position_embeddings":2048,"model_type":"gpt_neox",
        "num_attention_heads":16,"num_hidden_layers":24,"rotary_emb_base":10000,"rotary_pct":0.25,
        "tie_word_embeddings":false,"torch_dtype":"float16","use_cache":true,
        "use_parallel_residual":true,"vocab_size":50304}"#;
    let preset = vramfit_core::model_preset("pythia-1.4b").unwrap().spec;
    assert_eq!(import(pythia).unwrap().spec, preset);
    assert_eq!(count(pythia), 1_414_647_808);
    assert_eq!(count(r#"{"model_type":"gpt_neox"}"#), 20_554_567_680);
    // Without the attention's biases (the MLP keeps its own); tied and sequential.
    let small = r#"{"model_type":"gpt_neox","vocab_size":1000,"hidden_size":256,"num_hidden_layers":2,
        "num_attention_heads":4,"intermediate_size":512"#;
    assert_eq!(
        count(&format!(r#"{small},"attention_bias":false}}"#)),
        1_564_672
    );
    let tied = format!(r#"{small},"use_parallel_residual":false,"tie_word_embeddings":true}}"#);
    assert_eq!(count(&tied), 1_310_720);
    // The rotated share: rope_parameters' partial_rotary_factor over rotary_pct.
    let rotary = |json: &str| match import(json).unwrap().spec {
        vramfit_core::ModelSpec::Transformer(t) => t.block.rotary,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        rotary(&format!("{small}}}")),
        vramfit_core::models::Rotary::Sliced { dims: 16 }
    );
    let both = format!(
        r#"{small},"rotary_pct":0.5,"rope_parameters":{{"rope_type":"default","partial_rotary_factor":1.0}}}}"#
    );
    assert_eq!(
        rotary(&both),
        vramfit_core::models::Rotary::Sliced { dims: 64 }
    );
}

/// Phi-3-mini-4k-instruct's and Phi-4-mini-instruct's `config.json` (the
/// fields that matter, `sliding_window` and LongRoPE's `rope_scaling`
/// included): the presets' specs and `transformers`' counts.
#[test]
fn imports_phi3_and_phi4_mini() {
    let phi3_mini = r#"{"architectures":["Phi3ForCausalLM"],"attention_dropout":0.0,"embd_pdrop":0.0,
        "hidden_act":"silu","hidden_size":3072,"intermediate_size":8192,"max_position_embeddings":4096,
        "model_type":"phi3","num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":32,
        "original_max_position_embeddings":4096,"resid_pdrop":0.0,"rms_norm_eps":1e-05,
        "rope_scaling":null,"rope_theta":10000.0,"sliding_window":2047,"tie_word_embeddings":false,
        "vocab_size":32064}"#;
    let preset = |id: &str| vramfit_core::model_preset(id).unwrap().spec;
    assert_eq!(import(phi3_mini).unwrap().spec, preset("phi-3-mini"));
    assert_eq!(count(phi3_mini), 3_821_079_552);
    // Phi3Config's defaults are Phi-3-mini's.
    assert_eq!(count(r#"{"model_type":"phi3"}"#), 3_821_079_552);
    let factors = vec!["1.0"; 48].join(",");
    let phi4_mini = format!(
        r#"{{"architectures":["Phi3ForCausalLM"],"model_type":"phi3","hidden_size":3072,
        "intermediate_size":8192,"num_attention_heads":24,"num_hidden_layers":32,"num_key_value_heads":8,
        "partial_rotary_factor":0.75,"max_position_embeddings":131072,
        "original_max_position_embeddings":4096,"sliding_window":262144,"tie_word_embeddings":true,
        "vocab_size":200064,"lm_head_bias":false,"mlp_bias":false,
        "rope_scaling":{{"type":"longrope","long_factor":[{factors}],"short_factor":[{factors}]}}}}"#
    );
    assert_eq!(import(&phi4_mini).unwrap().spec, preset("phi-4-mini"));
    assert_eq!(count(&phi4_mini), 3_836_021_760);
    // An explicit head_dim wider than hidden / heads.
    let wide = r#"{"model_type":"phi3","vocab_size":1000,"hidden_size":256,"num_hidden_layers":2,
        "num_attention_heads":4,"num_key_value_heads":2,"head_dim":96,"intermediate_size":512}"#;
    assert_eq!(count(wide), 1_889_536);
}

/// T5-small's and Flan-T5-XL's `config.json` (google-t5/t5-small,
/// google/flan-t5-xl: the fields that matter) give the counts `transformers`
/// does (`tests/reference/param_counts.csv`); a bare `t5` config takes
/// `T5Config`'s defaults (T5-small's shape).
#[test]
fn imports_t5_and_flan_t5() {
    let t5_small = r#"{"architectures":["T5ForConditionalGeneration"],"model_type":"t5","d_model":512,
        "d_ff":2048,"d_kv":64,"num_layers":6,"num_heads":8,"vocab_size":32128,"dropout_rate":0.1,
        "feed_forward_proj":"relu","relative_attention_num_buckets":32,"decoder_start_token_id":0}"#;
    assert_eq!(count(t5_small), 60_506_624);
    assert_eq!(count(r#"{"model_type":"t5"}"#), 60_506_624);
    let flan_xl = r#"{"architectures":["T5ForConditionalGeneration"],"model_type":"t5","d_model":2048,
        "d_ff":5120,"d_kv":64,"num_layers":24,"num_decoder_layers":24,"num_heads":32,"vocab_size":32128,
        "feed_forward_proj":"gated-gelu","tie_word_embeddings":false,"dropout_rate":0.1}"#;
    assert_eq!(count(flan_xl), 2_849_757_184);
    let spec = import(flan_xl).unwrap().spec;
    let vramfit_core::ModelSpec::T5(t) = spec else {
        panic!("not a T5: {spec:?}")
    };
    assert!(t.gated && !t.tie_embeddings);
    assert_eq!(t.act, vramfit_core::models::T5Activation::GeluNew);
    // An unequal decoder: num_decoder_layers is read.
    let shallow = t5_small.replace(
        r#""num_layers":6"#,
        r#""num_layers":6,"num_decoder_layers":2"#,
    );
    assert!(count(&shallow) < 60_506_624);
}

#[test]
fn bad_t5_configs_say_what_is_wrong() {
    let err = |json: &str| import(json).unwrap_err().to_string();
    assert!(
        err(r#"{"model_type":"t5","feed_forward_proj":"gated-relu-x"}"#)
            .contains("feed_forward_proj")
    );
    assert!(err(r#"{"model_type":"t5","feed_forward_proj":"tanh"}"#).contains("'tanh'"));
    assert!(err(r#"{"model_type":"t5","num_heads":0}"#).contains("num_heads"));
    assert!(err(r#"{"model_type":"t5","d_kv":-1}"#).contains("d_kv"));
    assert!(
        err(r#"{"model_type":"t5","num_layers":100,"num_decoder_layers":100}"#)
            .contains("num_layers + num_decoder_layers")
    );
}

/// google/vit-base-patch16-224's `config.json` (ImageNet's 1000 labels in
/// `id2label`) gives `transformers`' count; without labels, `ViTConfig`'s 2.
#[test]
fn imports_hugging_face_vit() {
    let labels: Vec<String> = (0..1000).map(|i| format!(r#""{i}":"class {i}""#)).collect();
    let vit = format!(
        r#"{{"architectures":["ViTForImageClassification"],"model_type":"vit","hidden_size":768,
        "num_hidden_layers":12,"num_attention_heads":12,"intermediate_size":3072,"image_size":224,
        "patch_size":16,"qkv_bias":true,"id2label":{{{}}}}}"#,
        labels.join(",")
    );
    assert_eq!(count(&vit), 86_567_656);
    // Two labels: 998 × (768 + 1) fewer classifier parameters.
    assert_eq!(count(r#"{"model_type":"vit"}"#), 86_567_656 - 998 * 769);
    let err = |json: &str| import(json).unwrap_err().to_string();
    assert!(err(r#"{"model_type":"vit","num_channels":1}"#).contains("num_channels"));
    assert!(err(r#"{"model_type":"vit","hidden_act":"relu"}"#).contains("hidden_act"));
    assert!(err(r#"{"model_type":"vit","hidden_size":100}"#).contains("multiple of the heads"));
}

/// StarCoder2-3B's `config.json` (bigcode/starcoder2-3b, the fields that
/// matter): `transformers`' count, LayerNorms, a plain MLP with biases and
/// a window on every layer; `use_bias` false drops every bias.
#[test]
fn imports_starcoder2() {
    use vramfit_core::models::{MlpKind, ModelSpec, NormKind};
    let sc2 = r#"{"architectures":["Starcoder2ForCausalLM"],"model_type":"starcoder2","vocab_size":49152,
        "hidden_size":3072,"num_hidden_layers":30,"num_attention_heads":24,"num_key_value_heads":2,
        "intermediate_size":12288,"hidden_act":"gelu_pytorch_tanh","sliding_window":4096,"use_bias":true,
        "residual_dropout":0.1,"embedding_dropout":0.1,"attention_dropout":0.1}"#;
    assert_eq!(count(sc2), 3_030_371_328);
    let ModelSpec::Transformer(t) = import(sc2).unwrap().spec else {
        panic!("a transformer")
    };
    assert_eq!(
        (t.block.norm_kind, t.block.mlp),
        (
            NormKind::LayerNorm,
            MlpKind::Plain {
                bias: true,
                relu_squared: false,
                gelu_new: false,
                relu: false
            }
        )
    );
    assert_eq!(
        t.block.sliding.map(|w| (w.window, w.full_every)),
        Some((4096, 0))
    );
    assert_eq!(t.hidden_dropout, 0.1);
    // Without biases: q, k, v, o (3072 + 2 × 256 + 3072) and the MLP's (12288 + 3072) per layer.
    let no_bias = sc2.replace(r#""use_bias":true"#, r#""use_bias":false"#);
    assert_eq!(
        count(sc2) - count(&no_bias),
        30 * (3072 + 2 * 256 + 3072 + 12288 + 3072)
    );
}

#[test]
fn explicit_head_dim_and_tied_embeddings_are_read() {
    // A Gemma-like shape through the llama path: head_dim differs from hidden/heads.
    let base = r#"{"model_type":"llama","vocab_size":1000,"hidden_size":64,"num_hidden_layers":2,
        "num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":128"#;
    let plain = count(&format!("{base}}}"));
    let wide = count(&format!("{base},\"head_dim\":32}}"));
    // q: 64→4·32 and o: 4·32→64 grow by 2·64·(128−64); k, v: 64→2·32 grow by 2·64·(64−32); per layer.
    assert_eq!(wide - plain, 2 * (2 * 64 * 64 + 2 * 64 * 32));
    let tied = count(&format!("{base},\"tie_word_embeddings\":true}}"));
    assert_eq!(plain - tied, 1000 * 64);
}

/// A `model_type` no family reads, with the standard decoder fields, is
/// read as a Llama-style decoder naming every assumption; what cannot be
/// read that way is refused, saying why.
#[test]
fn other_decoders_import_as_llama_style_with_their_assumptions() {
    let llama3 = r#""vocab_size":128256,"hidden_size":4096,"num_hidden_layers":32,
        "num_attention_heads":32,"intermediate_size":14336"#;
    let as_llama = import(&format!(r#"{{"model_type":"llama",{llama3}}}"#)).unwrap();
    assert!(as_llama.assumptions.is_empty());
    let other = import(&format!(
        r#"{{"model_type":"internlm3",{llama3},"num_key_value_heads":8,"sliding_window":4096,"mlp_bias":false}}"#
    ))
    .unwrap();
    assert_eq!(other.spec.parameter_count().unwrap(), 8_030_261_248);
    assert_eq!(
        other.assumptions,
        vec![
            Assumption::LlamaLayout {
                model_type: "internlm3".into()
            },
            Assumption::HeadDim(128),
            Assumption::UntiedHead,
            Assumption::Ignored(vec!["sliding_window", "mlp_bias"]),
        ]
    );
    // Without num_key_value_heads: one per head, said so.
    let mha = import(&format!(
        r#"{{"model_type":"internlm3",{llama3},"head_dim":128,"tie_word_embeddings":false}}"#
    ))
    .unwrap();
    assert_eq!(
        mha.assumptions,
        vec![
            Assumption::LlamaLayout {
                model_type: "internlm3".into()
            },
            Assumption::KvHeads(32),
        ]
    );
    // Mixtures of experts and latent attention are refused, not read as dense.
    let moe = format!(r#"{{"model_type":"new_moe",{llama3},"num_local_experts":8}}"#);
    assert!(matches!(
        import(&moe),
        Err(Error::UnsupportedModelType {
            why: NotLlamaStyle::Experts("num_local_experts"),
            ..
        })
    ));
    let mla = format!(r#"{{"model_type":"new_mla",{llama3},"kv_lora_rank":512}}"#);
    let msg = import(&mla).unwrap_err().to_string();
    assert!(msg.contains("latent attention"), "{msg}");
    // So are hybrids of attention and linear attention or state-space
    // layers (a type no family reads; a Mamba hybrid), which a Llama-style
    // reading would count as attention layers; sliding layers are read.
    let hybrid = format!(
        r#"{{"model_type":"new_linear",{llama3},"layer_types":["linear_attention","full_attention"]}}"#
    );
    assert!(matches!(
        import(&hybrid),
        Err(Error::UnsupportedModelType {
            why: NotLlamaStyle::OtherLayers(ref w),
            ..
        }) if w == "layer_types: linear_attention"
    ));
    let mamba = format!(r#"{{"model_type":"new_hybrid",{llama3},"mamba_d_state":128}}"#);
    let msg = import(&mamba).unwrap_err().to_string();
    assert!(
        msg.contains("layers other than attention (mamba_d_state)"),
        "{msg}"
    );
    // LFM2's short convolutions, named by their kernel's field.
    let lfm2 = format!(r#"{{"model_type":"lfm2",{llama3},"conv_L_cache":3}}"#);
    let msg = import(&lfm2).unwrap_err().to_string();
    assert!(
        msg.contains("layers other than attention (conv_L_cache)"),
        "{msg}"
    );
    // An MLP without a gate (Apertus's xIELU) would be counted with one.
    let apertus = format!(r#"{{"model_type":"apertus",{llama3},"hidden_act":"xielu"}}"#);
    assert!(matches!(
        import(&apertus),
        Err(Error::UnsupportedModelType {
            why: NotLlamaStyle::UngatedMlp(ref a),
            ..
        }) if a == "xielu"
    ));
    let sliding = format!(
        r#"{{"model_type":"new_sliding",{llama3},"layer_types":["sliding_attention","full_attention"]}}"#
    );
    assert!(import(&sliding).is_ok());
    // Contradictory dimensions are named.
    let odd = r#"{"model_type":"internlm3","vocab_size":100,"hidden_size":64,"num_hidden_layers":2,
        "num_attention_heads":6,"num_key_value_heads":4,"intermediate_size":128}"#;
    let e = import(odd).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::UnsupportedModelType {
                why: NotLlamaStyle::Contradictory(_),
                ..
            }
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("num_key_value_heads")
            && msg.contains("supported are")
            && msg.contains("llama"),
        "{msg}"
    );
}

/// Vision–language configs nest their language model: one whose language
/// model a family reads is estimated as that model, with the assumption
/// that the encoders are not counted (Gemma 4's released `config.json`,
/// Kimi K2.5's); one whose language model no family reads is refused,
/// pointing at the part.
#[test]
fn nested_configs_import_their_language_model_or_are_refused_clearly() {
    use vramfit_core::hf::Assumption;
    let gemma3 = r#"{"architectures":["Gemma3ForConditionalGeneration"],"model_type":"gemma3",
        "text_config":{"model_type":"gemma3_text","hidden_size":2560},"vision_config":{"hidden_size":1152}}"#;
    let m = import(gemma3).unwrap();
    assert_eq!(m.name, "Gemma3ForConditionalGeneration");
    let inner = import(r#"{"model_type":"gemma3_text","hidden_size":2560}"#).unwrap();
    let encoder = count(gemma3) - count(r#"{"model_type":"gemma3_text","hidden_size":2560}"#);
    // SigLIP's defaults where the vision config is silent (12 layers of 1152).
    assert!(encoder > 150_000_000, "{encoder}");
    assert_eq!(
        m.assumptions,
        [Assumption::EncodersFrozen {
            model_type: "gemma3".into(),
            part: "text_config",
            text_model_type: "gemma3_text".into(),
            params: encoder,
            kind: "siglip_vision_model".into(),
        }]
    );
    let vramfit_core::models::ModelSpec::Transformer(mut t) = m.spec else {
        panic!("a transformer");
    };
    t.encoder = None;
    assert_eq!(vramfit_core::models::ModelSpec::Transformer(t), inner.spec);
    // Without its vision config, the language model alone, as it says.
    let bare = gemma3.replace(r#","vision_config":{"hidden_size":1152}"#, "");
    assert_eq!(
        import(&bare).unwrap().assumptions,
        [Assumption::LanguageModelOnly {
            model_type: "gemma3".into(),
            part: "text_config",
            text_model_type: "gemma3_text".into(),
        }]
    );
    // Kimi K2.5: its text model is Kimi K2's.
    let k25 = r#"{"model_type":"kimi_k25","vision_config":{"vt_num_hidden_layers":27},
        "text_config":{"model_type":"kimi_k2","hidden_size":7168,"num_hidden_layers":61,
        "num_attention_heads":64,"num_key_value_heads":64,"n_routed_experts":384,"n_shared_experts":1,
        "num_experts_per_tok":8,"moe_intermediate_size":2048,"intermediate_size":18432,
        "first_k_dense_replace":1,"q_lora_rank":1536,"kv_lora_rank":512,"qk_nope_head_dim":128,
        "qk_rope_head_dim":64,"v_head_dim":128,"n_group":1,"topk_group":1,"routed_scaling_factor":2.827,
        "norm_topk_prob":true,"max_position_embeddings":262144,"vocab_size":163840,
        "tie_word_embeddings":false}}"#;
    // Its encoder (MoonViT, remote code) is not counted, as it says.
    let m = import(k25).unwrap();
    assert_eq!(m.spec, vramfit_core::model_preset("kimi-k2").unwrap().spec);
    assert!(matches!(
        m.assumptions[0],
        Assumption::LanguageModelOnly { .. }
    ));
    // Qwen3-VL's and Qwen2.5-VL's language models are Qwen3's and Qwen2's
    // (transformers 5.24 counts Qwen3VLForConditionalGeneration's text part
    // and Qwen3ForCausalLM of the same fields alike, 792,681,984 at 4 layers
    // of Qwen3-VL-4B's width); the wrapper's `tie_word_embeddings` ties the
    // head (Qwen3-VL-4B: true at the top, absent in `text_config`).
    let qwen3_vl = |tie: bool| {
        format!(
            r#"{{"model_type":"qwen3_vl","architectures":["Qwen3VLForConditionalGeneration"],
            "text_config":{{"model_type":"qwen3_vl_text","hidden_size":2560,"intermediate_size":9728,
            "num_hidden_layers":36,"num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,
            "max_position_embeddings":262144,"vocab_size":151936,"rope_scaling":{{"mrope_interleaved":true,
            "mrope_section":[24,20,20],"rope_type":"default"}},"rope_theta":5000000}},
            "tie_word_embeddings":{tie}}}"#
        )
    };
    assert_eq!(count(&qwen3_vl(true)), 4_022_468_096, "Qwen3-4B's count");
    assert_eq!(
        count(&qwen3_vl(false)) - count(&qwen3_vl(true)),
        151_936 * 2560
    );
    let qwen25_vl = r#"{"model_type":"qwen2_5_vl","text_config":{"model_type":"qwen2_5_vl_text",
        "hidden_size":3584,"intermediate_size":18944,"num_hidden_layers":28,"num_attention_heads":28,
        "num_key_value_heads":4,"vocab_size":152064},"tie_word_embeddings":false}"#;
    // Qwen2.5-VL-7B's language model: Qwen2.5-7B's 7,615,616,512 (biased q, k, v).
    assert_eq!(count(qwen25_vl), 7_615_616_512);
    let qwen3_vl_moe = r#"{"model_type":"qwen3_vl_moe","text_config":{"model_type":"qwen3_vl_moe_text",
        "hidden_size":2048,"intermediate_size":6144,"num_hidden_layers":48,"num_attention_heads":32,
        "num_key_value_heads":4,"head_dim":128,"moe_intermediate_size":768,"num_experts":128,
        "num_experts_per_tok":8,"decoder_sparse_step":1,"vocab_size":151936},"tie_word_embeddings":false}"#;
    // Qwen3-VL-30B-A3B's: Qwen3-30B-A3B's 30,532,122,624.
    assert_eq!(count(qwen3_vl_moe), 30_532_122_624);
    // Qwen2-VL's too (transformers counts its text part at 4 layers of the
    // 7B's width as Qwen2ForCausalLM's, 2,022,229,504).
    assert_eq!(
        count(&qwen25_vl.replace("qwen2_5_vl", "qwen2_vl")),
        7_615_616_512
    );
    let qwen_vl = r#"{"model_type":"glm4v_moe","text_config":{"model_type":"glm4v_moe_text"}}"#;
    let e = import(qwen_vl).unwrap_err();
    assert_eq!(
        e,
        Error::NestedConfig {
            model_type: "glm4v_moe".into(),
            part: "text_config"
        }
    );
    assert!(
        e.to_string()
            .contains("import the 'text_config' object by itself")
    );
}

#[test]
fn errors_name_the_problem() {
    // RWKV-4's config: no attention heads, no MLP width.
    let e = import(r#"{"model_type":"rwkv","vocab_size":50277,"hidden_size":768,"num_hidden_layers":12,"intermediate_size":null}"#).unwrap_err();
    assert_eq!(
        e,
        Error::UnsupportedModelType {
            model_type: "rwkv".into(),
            why: NotLlamaStyle::Missing(vec!["num_attention_heads", "intermediate_size"]),
            supported: hf::supported(),
        }
    );
    let msg = e.to_string();
    assert!(
        msg.contains("rwkv")
            && msg.contains("num_attention_heads, intermediate_size")
            && msg.contains(
                "bert, roberta, xlm-roberta, camembert, data2vec-text, distilbert, gpt2, gpt_bigcode, opt, llama, mistral, ministral, ministral3, qwen2"
            ),
        "{msg}"
    );

    let e = import(r#"{"model_type":"llama","vocab_size":32000,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":8}"#)
        .unwrap_err();
    assert_eq!(
        e,
        Error::MissingField {
            model_type: "llama".into(),
            field: "hidden_size"
        }
    );
    assert!(e.to_string().contains("hidden_size"));

    // GPT-NeoX splits the hidden size into its heads; a rotated share
    // outside [0, 1] is refused; a malformed field is named.
    let e = import(r#"{"model_type":"gpt_neox","hidden_size":100,"num_attention_heads":3}"#)
        .unwrap_err();
    assert!(
        e.to_string().contains("hidden_size") && e.to_string().contains("num_attention_heads"),
        "{e}"
    );
    let e = import(r#"{"model_type":"gpt_neox","rotary_pct":1.5}"#).unwrap_err();
    assert!(e.to_string().contains("partial_rotary_factor"), "{e}");
    let e = import(r#"{"model_type":"gpt_neox","hidden_size":"2048"}"#).unwrap_err();
    assert!(e.to_string().contains("hidden_size"), "{e}");
    let e = import(r#"{"model_type":"phi3","hidden_size":"3072"}"#).unwrap_err();
    assert!(e.to_string().contains("hidden_size"), "{e}");
    let e = import(r#"{"model_type":"phi3","num_key_value_heads":5}"#).unwrap_err();
    assert!(e.to_string().contains("num_key_value_heads"), "{e}");

    assert!(matches!(import("{not json"), Err(Error::ConfigJson(_))));
    assert!(matches!(import("[1,2]"), Err(Error::ConfigJson(_))));
    assert!(matches!(
        import(r#"{"vocab_size":3}"#),
        Err(Error::MissingField {
            field: "model_type",
            ..
        })
    ));
    let e = import(r#"{"model_type":"llama","vocab_size":32000,"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":3,"intermediate_size":8}"#).unwrap_err();
    assert!(e.to_string().contains("num_key_value_heads"), "{e}");
    let e = import(r#"{"model_type":"gpt2","vocab_size":-5,"n_embd":64,"n_layer":1,"n_head":4}"#)
        .unwrap_err();
    assert!(e.to_string().contains("vocab_size"), "{e}");
    // Absurdly deep models are refused with the limit, not simulated for seconds.
    let e =
        import(r#"{"model_type":"gpt2","vocab_size":100,"n_embd":64,"n_layer":100000,"n_head":4}"#)
            .unwrap_err();
    let limit = vramfit_core::models::MAX_LAYERS.to_string();
    assert!(
        e.to_string().contains("num_hidden_layers") && e.to_string().contains(&limit),
        "{e}"
    );
}

/// vramfit's own descriptions of an MLP and a torchvision ResNet import to
/// the same models as the presets (parameter counts as PyTorch reports
/// them), and their mistakes are named.
#[test]
fn vramfit_mlp_and_resnet_descriptions_import() {
    use vramfit_core::ModelSpec;
    let resnet50 =
        hf::import(r#"{"model_type": "vramfit_resnet", "depths": [3, 4, 6, 3]}"#).unwrap();
    assert_eq!(
        resnet50.spec.parameter_count().unwrap(),
        25_557_032,
        "torchvision resnet50"
    );
    assert_eq!(
        resnet50.spec,
        vramfit_core::model_preset("resnet50").unwrap().spec
    );
    let resnet18 =
        hf::import(r#"{"model_type": "vramfit_resnet", "depths": [2, 2, 2, 2], "layer_type": "basic", "num_labels": 1000}"#).unwrap();
    assert_eq!(
        resnet18.spec.parameter_count().unwrap(),
        11_689_512,
        "torchvision resnet18"
    );
    // 784·512 + 512 + 512·512 + 512 + 512·10 + 10 (three nn.Linear layers).
    let mlp = hf::import(r#"{"model_type": "vramfit_mlp", "input_size": 784, "hidden_sizes": [512, 512], "num_labels": 10}"#).unwrap();
    assert_eq!(mlp.spec.parameter_count().unwrap(), 669_706);
    assert!(
        matches!(mlp.spec, ModelSpec::Mlp(ref m) if m.layers.iter().all(|l| l.activation == vramfit_core::models::MlpActivation::Relu))
    );
    let err = |json: &str| hf::import(json).unwrap_err().to_string();
    assert!(err(r#"{"model_type": "vramfit_resnet", "depths": [3, 4, 6]}"#).contains("4 stages"));
    assert!(
        err(r#"{"model_type": "vramfit_resnet", "depths": [3, 0, 6, 3]}"#)
            .contains("at least one block")
    );
    assert!(
        err(r#"{"model_type": "vramfit_resnet", "depths": [3, 4, 6, 3], "layer_type": "wide"}"#)
            .contains("layer_type")
    );
    assert!(err(r#"{"model_type": "vramfit_mlp", "input_size": 8, "hidden_sizes": [4, -1], "num_labels": 2}"#).contains("hidden_sizes"));
    assert!(
        err(r#"{"model_type": "vramfit_mlp", "input_size": 8, "hidden_sizes": [4], "hidden_act": "tanh", "num_labels": 2}"#)
            .contains("hidden_act")
    );
    assert!(
        err(r#"{"model_type": "vramfit_mlp", "input_size": 8, "hidden_sizes": [4]}"#)
            .contains("num_labels")
    );
    let long = format!(
        r#"{{"model_type": "vramfit_mlp", "input_size": 8, "hidden_sizes": [{}], "num_labels": 2}}"#,
        vec!["4"; 1000].join(",")
    );
    assert!(err(&long).contains("more than"));
}

fn context_limit(json: &str) -> Option<u64> {
    match import(json).unwrap().spec {
        vramfit_core::ModelSpec::Transformer(t) => t.trained_context(),
        other => panic!("not a transformer: {other:?}"),
    }
}

/// The longest context is read as vLLM derives `max_model_len`: the
/// configured length, stretched by a linear or YaRN factor but not by
/// Llama 3's scaling (its 131,072 is already the stretched length).
#[test]
fn reads_the_trained_context_as_vllm_derives_it() {
    let base = r#"{"model_type":"llama","vocab_size":128256,"hidden_size":4096,"num_hidden_layers":32,
        "num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336"#;
    let with = |extra: &str| format!("{base}{extra}}}");
    assert_eq!(context_limit(&with("")), None);
    assert_eq!(
        context_limit(&with(r#","max_position_embeddings":8192"#)),
        Some(8192)
    );
    // Llama 3.1: rope_type llama3 with factor 8 keeps 131,072.
    let llama31 = r#","max_position_embeddings":131072,"rope_scaling":{"rope_type":"llama3","factor":8.0,
        "original_max_position_embeddings":8192,"low_freq_factor":1.0,"high_freq_factor":4.0}"#;
    assert_eq!(context_limit(&with(llama31)), Some(131_072));
    // Qwen2.5-7B-Instruct with the YaRN block its model card adds: 4 × 32,768.
    let yarn = r#","max_position_embeddings":32768,"rope_scaling":{"type":"yarn","factor":4.0,
        "original_max_position_embeddings":32768}"#;
    assert_eq!(context_limit(&with(yarn)), Some(131_072));
    let linear = r#","max_position_embeddings":4096,"rope_scaling":{"type":"linear","factor":2.0}"#;
    assert_eq!(context_limit(&with(linear)), Some(8192));
    // GPT-2's learned positions are the limit.
    let gpt2 = r#"{"model_type":"gpt2","vocab_size":50257,"n_embd":768,"n_layer":12,"n_head":12,"n_positions":1024}"#;
    assert_eq!(context_limit(gpt2), Some(1024));
}

/// The page and the CLI name an import as its user knows it: the
/// checkpoint's path, else its class, else its model type.
#[test]
fn an_import_is_named_by_its_path_else_its_architecture_else_its_type() {
    let gpt2 = r#""model_type":"gpt2","vocab_size":50257,"n_embd":768,"n_layer":12,"n_head":12"#;
    let name = |extra: &str| {
        vramfit_core::hf::import(&format!("{{{gpt2}{extra}}}"))
            .map(|m| m.name)
            .unwrap_or_default()
    };
    assert_eq!(
        name(r#","_name_or_path":"openai-community/gpt2","architectures":["GPT2LMHeadModel"]"#),
        "openai-community/gpt2"
    );
    assert_eq!(
        name(r#","_name_or_path":"","architectures":["GPT2LMHeadModel"]"#),
        "GPT2LMHeadModel"
    );
    assert_eq!(name(r#","architectures":[]"#), "gpt2");
    assert_eq!(name(""), "gpt2");
}

/// A multimodal checkpoint's vision encoder and projector count as
/// `transformers` 5.24 builds them (`tests/reference/multimodal_counts.csv`,
/// from `multimodal_counts.py` over `tests/reference/multimodal/*.json`:
/// Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5, Gemma 3 over SigLIP, LLaVA over
/// CLIP, Mistral 3 over Pixtral, Gemma 4's vision and audio encoders, Llama
/// 4's), the language model as the text model it is, and the whole as the
/// model card's total (Gemma-4-E2B: 5.1B).
#[test]
fn multimodal_configs_count_their_vision_encoder_as_transformers_does() {
    use vramfit_core::models::ModelSpec;
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference");
    let csv = std::fs::read_to_string(format!("{dir}/multimodal_counts.csv")).unwrap();
    let mut rows = 0;
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let [id, total, language, encoders, _source] = cells[..] else {
            panic!("bad row {line}");
        };
        let total: u64 = total.parse().unwrap();
        let encoders: u64 = encoders.parse().unwrap();
        let language: u64 = language.parse().unwrap();
        let json = std::fs::read_to_string(format!("{dir}/multimodal/{id}.json")).unwrap();
        let m = import(&json).unwrap_or_else(|e| panic!("{id}: {e}"));
        let ModelSpec::Transformer(t) = &m.spec else {
            panic!("{id}: not a transformer");
        };
        let e = t
            .encoder
            .as_deref()
            .unwrap_or_else(|| panic!("{id}: no encoder"));
        assert_eq!(e.params, encoders, "{id}: encoder");
        assert_eq!(m.spec.parameter_count().unwrap(), total, "{id}: total");
        assert_eq!(total - e.params, language, "{id}: language model");
        // The encoder is not read on text: the active count is the language
        // model's (a mixture of experts' active share of it).
        let active = m.spec.active_parameter_count().unwrap();
        if t.moe.is_some() {
            assert!(active < language / 2, "{id}: {active}");
        } else {
            assert_eq!(active, language, "{id}");
        }
        assert!(
            e.linear < e.params && e.linear > e.params / 2,
            "{id}: {e:?}"
        );
        assert!(
            matches!(&m.assumptions[0], Assumption::EncodersFrozen { params, .. } if *params == encoders),
            "{id}: {:?}",
            m.assumptions
        );
        rows += 1;
    }
    assert_eq!(rows, 10);
}

#[test]
fn imports_the_roberta_line_as_bert_layers_with_its_own_embeddings_and_head() {
    // FacebookAI/roberta-base's config.json. The counts are
    // `sum(p.numel() for p in model.parameters())` of `transformers` 5.24's
    // classes built from these fields on the meta device.
    let roberta = r#"{"architectures":["RobertaForMaskedLM"],"model_type":"roberta","vocab_size":50265,
        "hidden_size":768,"num_hidden_layers":12,"num_attention_heads":12,"intermediate_size":3072,
        "max_position_embeddings":514,"type_vocab_size":1,"pad_token_id":1,"layer_norm_eps":1e-05}"#;
    assert_eq!(count(roberta), 124_697_433);
    let xlmr = r#"{"architectures":["XLMRobertaForSequenceClassification"],"model_type":"xlm-roberta",
        "vocab_size":250002,"hidden_size":768,"num_hidden_layers":12,"num_attention_heads":12,
        "intermediate_size":3072,"max_position_embeddings":514,"type_vocab_size":1,
        "id2label":{"0":"a","1":"b","2":"c"}}"#;
    assert_eq!(count(xlmr), 278_045_955);
    let camembert = r#"{"architectures":["CamembertForMaskedLM"],"model_type":"camembert","vocab_size":32005,
        "hidden_size":768,"num_hidden_layers":12,"num_attention_heads":12,"intermediate_size":3072,
        "max_position_embeddings":514,"type_vocab_size":1}"#;
    assert_eq!(count(camembert), 110_655_493);
    let data2vec = r#"{"model_type":"data2vec-text","vocab_size":50265,"hidden_size":768,"num_hidden_layers":12,
        "num_attention_heads":12,"intermediate_size":3072,"max_position_embeddings":514,"type_vocab_size":1}"#;
    assert_eq!(count(data2vec), 124_645_632);
    // No warning: they are read as what they are, not as Llama-style decoders.
    assert!(import(roberta).unwrap().assumptions.is_empty());
}

#[test]
fn imports_distilbert_with_its_six_layers_heads_and_defaults() {
    // distilbert/distilbert-base-uncased's config.json, and the SST-2
    // fine-tune's head; the counts are `sum(p.numel() for p in
    // model.parameters())` of `transformers` 5.24's classes built from these
    // fields on the meta device (tests/reference/param_counts.csv holds the
    // first two as the presets').
    let base = r#"{"activation":"gelu","architectures":["DistilBertForMaskedLM"],"attention_dropout":0.1,
        "dim":768,"dropout":0.1,"hidden_dim":3072,"initializer_range":0.02,"max_position_embeddings":512,
        "model_type":"distilbert","n_heads":12,"n_layers":6,"pad_token_id":0,"qa_dropout":0.1,
        "seq_classif_dropout":0.2,"sinusoidal_pos_embds":false,"tie_weights_":true,"vocab_size":30522}"#;
    assert_eq!(count(base), 66_985_530);
    let sst2 = base
        .replace(
            "DistilBertForMaskedLM",
            "DistilBertForSequenceClassification",
        )
        .replace(
            r#""dim":768"#,
            r#""dim":768,"id2label":{"0":"NEGATIVE","1":"POSITIVE"}"#,
        );
    assert_eq!(count(&sst2), 66_955_010);
    // `DistilBertConfig`'s defaults fill what a config leaves out, and
    // `hidden_size` is `dim` by its attribute map: the bare model has no pooler.
    assert_eq!(
        count(r#"{"model_type":"distilbert","hidden_size":768}"#),
        66_362_880
    );
    // distilbert-base-multilingual-cased's vocabulary; an untied projector.
    assert_eq!(
        count(
            r#"{"model_type":"distilbert","architectures":["DistilBertForMaskedLM"],"vocab_size":119547}"#
        ),
        135_445_755
    );
    assert_eq!(
        count(
            r#"{"model_type":"distilbert","architectures":["DistilBertForMaskedLM"],"tie_word_embeddings":false}"#
        ),
        90_426_426
    );
    let m = import(base).unwrap();
    assert!(m.assumptions.is_empty());
    match m.spec {
        vramfit_core::ModelSpec::Transformer(t) => {
            assert_eq!((t.layers, t.heads, t.type_vocab), (6, 12, 0));
            assert!(t.block.distilbert && !t.block.undropped_head);
        }
        other => panic!("{other:?}"),
    }
    let err = import(r#"{"model_type":"distilbert","dim":768,"n_heads":10}"#).unwrap_err();
    assert!(
        err.to_string()
            .contains("n_heads (10) must divide dim (768)"),
        "{err}"
    );
}

#[test]
fn qwen_1_is_read_with_its_mlp_halved_and_said_so() {
    // Qwen/Qwen-7B's config.json (remote code, `QWenLMHeadModel`): its
    // intermediate_size, 22016, is w1 and w2 together. Read as one
    // Llama-style MLP 22016 wide it was 12.0 billion parameters; the
    // layout counted by hand is 7,721,324,544: embeddings and the untied
    // head 2 × 151936 × 4096, and per layer c_attn 4096 × 12288 + 12288,
    // c_proj 4096², w1, w2 and c_proj 3 × 4096 × 11008 and two RMSNorms.
    let qwen7b = r#"{"architectures":["QWenLMHeadModel"],"attn_dropout_prob":0.0,"emb_dropout_prob":0.0,
        "hidden_size":4096,"intermediate_size":22016,"initializer_range":0.02,"kv_channels":128,
        "layer_norm_epsilon":1e-06,"max_position_embeddings":32768,"model_type":"qwen","no_bias":true,
        "num_attention_heads":32,"num_hidden_layers":32,"rotary_emb_base":10000,"rotary_pct":1.0,
        "scale_attn_weights":true,"seq_length":8192,"tie_word_embeddings":false,"use_dynamic_ntk":true,
        "use_flash_attn":"auto","use_logn_attn":true,"vocab_size":151936}"#;
    let m = import(qwen7b).unwrap();
    assert_eq!(m.spec.parameter_count().unwrap(), 7_721_324_544);
    assert_eq!(
        m.assumptions,
        vec![
            Assumption::LlamaLayout {
                model_type: "qwen".into()
            },
            Assumption::QwenHalvedMlp(11008),
            Assumption::KvHeads(32),
            Assumption::Ignored(vec!["rotary_pct"]),
        ]
    );
    // A width that is not a whole number is named, not passed over.
    let err =
        import(&qwen7b.replace(r#""kv_channels":128"#, r#""kv_channels":"128""#)).unwrap_err();
    assert!(err.to_string().contains("'kv_channels'"), "{err}");
}

#[test]
fn encoders_are_refused_rather_than_read_as_decoders() {
    // microsoft/deberta-v3-base: the decoder fields are all there, and so is
    // BERT's token-type vocabulary.
    let deberta = r#"{"model_type":"deberta-v2","vocab_size":128100,"hidden_size":768,"num_hidden_layers":12,
        "num_attention_heads":12,"intermediate_size":3072,"type_vocab_size":0,"relative_attention":true}"#;
    assert!(matches!(
        import(deberta),
        Err(Error::UnsupportedModelType { why: NotLlamaStyle::Encoder(ref w), .. }) if w == "type_vocab_size"
    ));
    // answerdotai/ModernBERT-base: no token types, but local and global attention.
    let modernbert = r#"{"architectures":["ModernBertForMaskedLM"],"model_type":"modernbert","vocab_size":50368,
        "hidden_size":768,"num_hidden_layers":22,"num_attention_heads":12,"intermediate_size":1152,
        "global_attn_every_n_layers":3}"#;
    assert!(matches!(
        import(modernbert),
        Err(Error::UnsupportedModelType { why: NotLlamaStyle::Encoder(ref w), .. }) if w == "global_attn_every_n_layers"
    ));
    // An encoder known only by its head.
    let mpnet = r#"{"architectures":["MPNetForMaskedLM"],"model_type":"mpnet","vocab_size":30527,
        "hidden_size":768,"num_hidden_layers":12,"num_attention_heads":12,"intermediate_size":3072}"#;
    let msg = import(mpnet).unwrap_err().to_string();
    assert!(
        msg.contains("it is an encoder (architectures: MPNetForMaskedLM)"),
        "{msg}"
    );
    // A decoder's classification head is no sign of an encoder.
    let reward = r#"{"architectures":["NewLmForSequenceClassification"],"model_type":"new_lm","vocab_size":32000,
        "hidden_size":512,"num_hidden_layers":2,"num_attention_heads":8,"intermediate_size":1376}"#;
    assert!(import(reward).is_ok());
}

#[test]
fn imports_phi_2_with_its_parallel_block_and_head_bias() {
    // microsoft/phi-2's config.json; 2,779,683,840 is what `transformers`
    // 5.24 counts (`tests/reference/param_counts.csv`: phi-2).
    let phi2 = r#"{"architectures":["PhiForCausalLM"],"model_type":"phi","vocab_size":51200,"hidden_size":2560,
        "intermediate_size":10240,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":32,
        "partial_rotary_factor":0.4,"qk_layernorm":false,"resid_pdrop":0.1,"embd_pdrop":0.0,
        "attention_dropout":0.0,"hidden_act":"gelu_new","tie_word_embeddings":false,"max_position_embeddings":2048}"#;
    let imported = import(phi2).unwrap();
    assert!(
        imported.assumptions.is_empty(),
        "{:?}",
        imported.assumptions
    );
    assert_eq!(imported.spec.parameter_count().unwrap(), 2_779_683_840);
    let vramfit_core::models::ModelSpec::Transformer(t) = imported.spec else {
        panic!("not a transformer")
    };
    assert!(t.block.parallel_residual && t.block.shared_norm && t.block.lm_head_bias);
    assert!(t.block.undropped_embeddings);
    assert_eq!(
        t.block.rotary,
        vramfit_core::models::Rotary::Sliced { dims: 32 }
    );
    // Per-head q/k LayerNorms, grouped key/value heads, a tied head whose
    // bias stays its own: `transformers` 5.24 counts 1,704,680.
    let small = r#"{"model_type":"phi","vocab_size":1000,"hidden_size":256,"intermediate_size":1024,
        "num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":4,"qk_layernorm":true,
        "tie_word_embeddings":true}"#;
    assert_eq!(count(small), 1_704_680);
}

#[test]
fn imports_granite_with_its_multipliers() {
    // ibm-granite/granite-3.3-8b-instruct's config.json; 8,170,864,640 is
    // what `transformers` 5.24 counts (`tests/reference/param_counts.csv`).
    let granite = r#"{"architectures":["GraniteForCausalLM"],"attention_bias":false,"attention_dropout":0.0,
        "attention_multiplier":0.0078125,"embedding_multiplier":12.0,"hidden_act":"silu","hidden_size":4096,
        "intermediate_size":12800,"logits_scaling":16.0,"max_position_embeddings":131072,"mlp_bias":false,
        "model_type":"granite","num_attention_heads":32,"num_hidden_layers":40,"num_key_value_heads":8,
        "residual_multiplier":0.22,"rms_norm_eps":1e-05,"tie_word_embeddings":true,"vocab_size":49159}"#;
    let imported = import(granite).unwrap();
    assert!(
        imported.assumptions.is_empty(),
        "{:?}",
        imported.assumptions
    );
    assert_eq!(imported.spec.parameter_count().unwrap(), 8_170_864_640);
    let vramfit_core::models::ModelSpec::Transformer(t) = imported.spec else {
        panic!("not a transformer")
    };
    assert!(t.block.embed_scale && t.block.scaled_residuals && t.block.scaled_logits);
    // Biases on the MLP are refused by name rather than left out.
    let biased = granite.replace(r#""mlp_bias":false"#, r#""mlp_bias":true"#);
    assert!(
        import(&biased)
            .unwrap_err()
            .to_string()
            .contains("mlp_bias")
    );
}

#[test]
fn imports_stablelm_with_its_layernorms_quarter_rotary_and_parallel_option() {
    // `transformers` 5.24's counts for StableLmConfig's defaults
    // (StableLM-3B-4E1T), StableLM 2 1.6B's shape with q/k/v biases, and a
    // small parallel-residual model with a tied head.
    assert_eq!(count(r#"{"model_type":"stablelm"}"#), 2_795_443_200);
    let two = r#"{"model_type":"stablelm","vocab_size":100352,"hidden_size":2048,"intermediate_size":5632,
        "num_hidden_layers":24,"num_attention_heads":32,"use_qkv_bias":true}"#;
    assert_eq!(count(two), 1_644_515_328);
    let parallel = r#"{"model_type":"stablelm","vocab_size":1000,"hidden_size":256,"intermediate_size":512,
        "num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":2,"use_parallel_residual":true,
        "tie_word_embeddings":true}"#;
    assert_eq!(count(parallel), 1_371_648);
    assert!(import(two).unwrap().assumptions.is_empty());
    // StableLM-2-12B's per-head q/k LayerNorms are refused by name.
    let qk = two.replace(r#""use_qkv_bias":true"#, r#""qk_layernorm":true"#);
    assert!(
        import(&qk)
            .unwrap_err()
            .to_string()
            .contains("qk_layernorm")
    );
}

#[test]
fn imports_glm_4_9b_as_glm_4_with_two_norms() {
    // GlmConfig's defaults are its documented checkpoint's (THUDM/glm-4-9b-chat);
    // `transformers` 5.24 counts 9,399,951,360 for them.
    let glm = r#"{"model_type":"glm"}"#;
    let imported = import(glm).unwrap();
    assert!(imported.assumptions.is_empty());
    assert_eq!(imported.spec.parameter_count().unwrap(), 9_399_951_360);
    // GLM-4-0414 (glm4) adds two norms a layer: 2 × 40 × 4096 parameters.
    assert_eq!(
        count(r#"{"model_type":"glm4"}"#) - 9_399_951_360,
        2 * 40 * 4096
    );
}

#[test]
fn imports_cohere_and_cohere_2_with_their_parallel_block_and_sliding_layers() {
    // `transformers` 5.24's counts for CohereConfig's and Cohere2Config's
    // defaults (Command R+'s shape) and a small Cohere with q/k norms.
    assert_eq!(count(r#"{"model_type":"cohere"}"#), 34_980_831_232);
    assert_eq!(count(r#"{"model_type":"cohere2"}"#), 34_980_831_232);
    let qk = r#"{"model_type":"cohere","vocab_size":1000,"hidden_size":256,"intermediate_size":512,
        "num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":2,"use_qk_norm":true}"#;
    assert_eq!(count(qk), 1_371_520);
    // Command R7B's config.json: the older pattern field, no layer_types.
    let r7b = r#"{"model_type":"cohere2","vocab_size":256000,"hidden_size":4096,"intermediate_size":14336,
        "num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"sliding_window":4096,
        "sliding_window_pattern":4,"logit_scale":0.25}"#;
    let imported = import(r7b).unwrap();
    assert!(imported.assumptions.is_empty());
    let vramfit_core::models::ModelSpec::Transformer(t) = imported.spec else {
        panic!("not a transformer")
    };
    assert_eq!(
        t.block.sliding,
        Some(vramfit_core::models::SlidingWindow {
            window: 4096,
            full_every: 4
        })
    );
    // The full layers attend without rotary embedding.
    assert_eq!(t.block.nope_every, 4);
    assert!(t.block.parallel_residual && t.block.shared_norm && t.block.scaled_logits);
}

#[test]
fn imports_opt_with_its_shifted_positions_and_refuses_opt_350m_by_name() {
    // facebook/opt-1.3b's config.json; 1,315,758,080 is what `transformers`
    // 5.24 counts (`tests/reference/param_counts.csv`: opt-1.3b): a
    // position table of 2048 + 2 rows, the head tied.
    let opt = r#"{"_name_or_path":"facebook/opt-1.3b","activation_dropout":0.0,"activation_function":"relu",
        "architectures":["OPTForCausalLM"],"attention_dropout":0.0,"bos_token_id":2,"do_layer_norm_before":true,
        "dropout":0.1,"eos_token_id":2,"ffn_dim":8192,"hidden_size":2048,"init_std":0.02,"layerdrop":0.0,
        "max_position_embeddings":2048,"model_type":"opt","num_attention_heads":32,"num_hidden_layers":24,
        "pad_token_id":1,"prefix":"</s>","torch_dtype":"float16","use_cache":true,"vocab_size":50272,
        "word_embed_proj_dim":2048}"#;
    let imported = import(opt).unwrap();
    assert!(
        imported.assumptions.is_empty(),
        "{:?}",
        imported.assumptions
    );
    assert_eq!(imported.spec.parameter_count().unwrap(), 1_315_758_080);
    let vramfit_core::models::ModelSpec::Transformer(t) = imported.spec else {
        panic!("not a transformer")
    };
    assert_eq!(
        (t.max_positions, t.block.position_offset),
        (2048, 2),
        "positions"
    );
    assert!(t.block.prescaled_query && t.block.undropped_embeddings && t.tie_embeddings);
    assert_eq!(
        t.block.mlp,
        vramfit_core::models::MlpKind::Plain {
            bias: true,
            relu_squared: false,
            gelu_new: false,
            relu: true
        }
    );
    assert_eq!(t.hidden_dropout, 0.1);
    // Longer than its learned positions: refused, as PyTorch's lookup would fail.
    let too_long = vramfit_core::TrainConfig {
        seq: 2049,
        ..Default::default()
    };
    let overheads = vramfit_core::Overheads::default();
    let spec = import(opt).unwrap().spec;
    assert!(vramfit_core::estimate(&spec, &too_long, &overheads, None).is_err());
    let longest = vramfit_core::TrainConfig {
        seq: 2048,
        ..Default::default()
    };
    assert!(vramfit_core::estimate(&spec, &longest, &overheads, None).is_ok());
    // facebook/opt-350m: LayerNorms after the residual adds, embeddings of
    // 512 features projected in and out; refused by name.
    let opt_350m = opt
        .replace(
            r#""do_layer_norm_before":true"#,
            r#""do_layer_norm_before":false"#,
        )
        .replace(
            r#""word_embed_proj_dim":2048"#,
            r#""word_embed_proj_dim":512"#,
        );
    let refused = import(&opt_350m).unwrap_err().to_string();
    assert!(refused.contains("do_layer_norm_before"), "{refused}");
    let projected = opt.replace(
        r#""word_embed_proj_dim":2048"#,
        r#""word_embed_proj_dim":512"#,
    );
    let refused = import(&projected).unwrap_err().to_string();
    assert!(refused.contains("word_embed_proj_dim 512"), "{refused}");
}

/// GPTBigCode (StarCoder's layout, `model_type` `gpt_bigcode`): the counts
/// are `sum(p.numel() for p in model.parameters())` of `transformers` 5.24's
/// `GPTBigCodeForCausalLM` built from these fields on the meta device.
#[test]
fn imports_gpt_bigcode_with_one_key_value_head_and_its_defaults() {
    // A StarCoder-sized config: 6144 wide, 40 layers, 48 query heads and
    // one key-value head (`multi_query`, the default), 8192 positions.
    let starcoder = r#"{"model_type":"gpt_bigcode","architectures":["GPTBigCodeForCausalLM"],
        "activation_function":"gelu_pytorch_tanh","n_embd":6144,"n_head":48,"n_inner":24576,"n_layer":40,
        "n_positions":8192,"vocab_size":49152,"multi_query":true}"#;
    assert_eq!(count(starcoder), 15_517_456_384);
    let spec = import(starcoder).unwrap().spec;
    let vramfit_core::models::ModelSpec::Transformer(t) = &spec else {
        panic!("a transformer: {spec:?}")
    };
    assert_eq!((t.heads, t.kv_heads, t.head_dim), (48, 1, 128));
    // `GPTBigCodeConfig`'s defaults fill what a config leaves out.
    assert_eq!(count(r#"{"model_type":"gpt_bigcode"}"#), 111_446_784);
    // Every head its own keys and values, an untied head; `hidden_size` is
    // `n_embd` by the config's attribute map.
    assert_eq!(
        count(
            r#"{"model_type":"gpt_bigcode","multi_query":false,"hidden_size":1024,"n_head":16,"n_layer":4,
            "vocab_size":32000,"tie_word_embeddings":false}"#
        ),
        116_971_520
    );
    // No warning: read as what it is, not as a Llama-style decoder.
    assert!(import(starcoder).unwrap().assumptions.is_empty());
    let e = import(r#"{"model_type":"gpt_bigcode","n_embd":100,"n_head":16}"#).unwrap_err();
    assert!(e.to_string().contains("n_embd (100)"), "{e}");
}

/// Granite's mixtures of experts and Granite 4.0 (`granitemoe`,
/// `granitemoeshared`, `granitemoehybrid`, attention-only and with Mamba-2
/// layers): the counts are
/// `sum(p.numel() for p in model.parameters())` of `transformers` 5.24's
/// `GraniteMoeForCausalLM`, `GraniteMoeSharedForCausalLM` and
/// `GraniteMoeHybridForCausalLM` built from these fields on the meta device.
#[test]
fn imports_granite_mixtures_of_experts_and_granite_4() {
    // Granite-4.0-Micro's shape: no experts, the shared MLP the only one,
    // forty attention layers, rotary, the head tied.
    let layers = vec!["\"attention\""; 40].join(",");
    let micro = format!(
        r#"{{"model_type":"granitemoehybrid","vocab_size":100352,"hidden_size":2560,"intermediate_size":8192,
        "num_hidden_layers":40,"num_attention_heads":40,"num_key_value_heads":8,"num_local_experts":0,
        "shared_intermediate_size":8192,"layer_types":[{layers}],"position_embedding_type":"rope",
        "tie_word_embeddings":true,"embedding_multiplier":12.0,"residual_multiplier":0.22,
        "attention_multiplier":0.0078125,"logits_scaling":10.0,"time_step_limit":[0.0,Infinity]}}"#
    );
    assert_eq!(count(&micro), 3_402_836_480);
    assert!(import(&micro).unwrap().assumptions.is_empty());
    // Sixteen experts, four a token, and the shared MLP after them.
    assert_eq!(
        count(
            r#"{"model_type":"granitemoehybrid","vocab_size":32000,"hidden_size":512,"intermediate_size":256,
            "num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":2,"num_local_experts":16,
            "num_experts_per_tok":4,"shared_intermediate_size":1024,"layers_block_type":["attention","attention"]}"#
        ),
        49_826_304
    );
    // Granite-3.0-1B-A400M's shape: 32 experts, 8 a token, no shared MLP.
    let a400m = r#"{"model_type":"granitemoe","vocab_size":49155,"hidden_size":1024,"intermediate_size":512,
        "num_hidden_layers":24,"num_attention_heads":16,"num_key_value_heads":8,"num_local_experts":32,
        "num_experts_per_tok":8,"tie_word_embeddings":true}"#;
    assert_eq!(count(a400m), 1_334_628_352);
    assert_eq!(
        count(
            r#"{"model_type":"granitemoeshared","vocab_size":32000,"hidden_size":512,"intermediate_size":256,
            "num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":8,"num_local_experts":8,
            "shared_intermediate_size":768}"#
        ),
        43_526_656
    );
    // `GraniteMoeConfig`'s defaults fill what a config leaves out.
    assert_eq!(count(r#"{"model_type":"granitemoe"}"#), 37_039_116_288);
    // The H models' Mamba-2 layers: an H-Tiny-like layout with the experts
    // above, one attention layer among three Mamba-2 ones; a dense one
    // with two groups of B and C, biased projections and an unbiased
    // convolution; and every layer Mamba-2, the class's default.
    assert_eq!(
        count(
            r#"{"model_type":"granitemoehybrid","vocab_size":32000,"hidden_size":512,"intermediate_size":256,
            "num_hidden_layers":4,"num_attention_heads":8,"num_key_value_heads":2,"num_local_experts":16,
            "num_experts_per_tok":4,"shared_intermediate_size":1024,"layer_types":["mamba","mamba","attention","mamba"],
            "mamba_n_heads":16,"mamba_d_state":128,"mamba_n_groups":1,"mamba_d_conv":4,"mamba_expand":2,
            "mamba_chunk_size":256,"tie_word_embeddings":false}"#
        ),
        70_076_816
    );
    assert_eq!(
        count(
            r#"{"model_type":"granitemoehybrid","vocab_size":32000,"hidden_size":768,"intermediate_size":2048,
            "num_hidden_layers":3,"num_attention_heads":12,"num_key_value_heads":4,"num_local_experts":0,
            "shared_intermediate_size":2048,"layer_types":["mamba","attention","mamba"],"mamba_n_heads":24,
            "mamba_d_state":64,"mamba_n_groups":2,"mamba_proj_bias":true,"mamba_conv_bias":false,
            "tie_word_embeddings":true,"position_embedding_type":"rope"}"#
        ),
        47_843_776
    );
    assert_eq!(
        count(r#"{"model_type":"granitemoehybrid"}"#),
        38_601_064_448
    );
}

/// Python's `json` writes a float field's infinity or NaN as a bare
/// `Infinity` or `NaN` (so does `transformers`' `to_json_file`): a field
/// vramfit does not read may hold one; a string holding the same word
/// stays as written.
#[test]
fn python_json_constants_are_read_where_no_size_needs_them() {
    let json = r#"{"model_type":"gpt2","_name_or_path":"a \"NaN\" Infinity-model","n_embd":768,"n_layer":12,
        "n_head":12,"vocab_size":50257,"x":[-Infinity,Infinity,NaN]}"#;
    let m = import(json).unwrap();
    assert_eq!(m.name, "a \"NaN\" Infinity-model");
    assert_eq!(m.spec.parameter_count().unwrap(), 124_439_808);
    let e = import(r#"{"model_type":"gpt2","n_embd":Infinite}"#).unwrap_err();
    assert!(e.to_string().contains("not valid JSON"), "{e}");
}

/// Bamba (`model_type` `bamba`): Llama's decoder with Mamba-2 in the layers
/// `attn_layer_indices` leaves out; the counts are `transformers` 5.24's
/// `BambaForCausalLM` on the meta device.
#[test]
fn imports_bamba_with_its_mamba_2_layers() {
    // Bamba-9B's shape: 32 layers, attention in three.
    let bamba = r#"{"model_type":"bamba","vocab_size":128256,"hidden_size":4096,"intermediate_size":14336,
        "num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"attn_layer_indices":[9,18,27],
        "mamba_n_heads":128,"mamba_d_head":64,"mamba_d_state":128,"mamba_n_groups":1,"tie_word_embeddings":false}"#;
    assert_eq!(count(bamba), 9_780_235_392);
    let vramfit_core::models::ModelSpec::Transformer(t) = import(bamba).unwrap().spec else {
        panic!("a transformer")
    };
    assert_eq!(t.attention_layers(), 3);
    assert_eq!(
        t.block.rotary,
        vramfit_core::models::Rotary::Sliced { dims: 64 }
    );
    // `BambaConfig`'s defaults: every layer Mamba-2.
    assert_eq!(count(r#"{"model_type":"bamba"}"#), 9_992_765_440);
    let e = import(r#"{"model_type":"bamba","attn_layer_indices":[40]}"#).unwrap_err();
    assert!(e.to_string().contains("attn_layer_indices"), "{e}");
    let e = import(r#"{"model_type":"bamba","z_loss_coefficient":0.0001}"#).unwrap_err();
    assert!(e.to_string().contains("z_loss_coefficient"), "{e}");
}

/// Ministral-8B (`ministral`): the sliding layers `layer_types` names, a
/// 4096-token window when the file names none, none with a null window;
/// Ministral 3 (`ministral3`, and inside `mistral3` as its checkpoints ship
/// it): queries scaled by position in every layer, 128-wide heads by
/// default; Llama's `attention_bias` on q, k, v and o, never on Mistral's.
/// Counts from `transformers` 5.24 (`tests/reference/param_counts.csv`).
#[test]
fn imports_the_ministrals_and_llamas_attention_bias() {
    use vramfit_core::models::{ModelSpec, SlidingWindow, TransformerSpec};
    let spec = |json: &str| -> TransformerSpec {
        match import(json).unwrap().spec {
            ModelSpec::Transformer(t) => t,
            other => panic!("{other:?}"),
        }
    };
    let ministral = r#"{"model_type":"ministral","vocab_size":32000,"hidden_size":512,
        "intermediate_size":1536,"num_hidden_layers":4,"num_attention_heads":8,"num_key_value_heads":2,
        "head_dim":64,"sliding_window":1024,"layer_types":["sliding_attention","sliding_attention",
        "sliding_attention","full_attention"],"tie_word_embeddings":false}"#;
    assert_eq!(count(ministral), 44_831_232);
    assert_eq!(
        spec(ministral).block.sliding,
        Some(SlidingWindow {
            window: 1024,
            full_every: 4
        })
    );
    let no_types = r#"{"model_type":"ministral","vocab_size":32000,"hidden_size":512,
        "intermediate_size":1536,"num_hidden_layers":4,"num_attention_heads":8}"#;
    assert_eq!(
        spec(no_types).block.sliding,
        Some(SlidingWindow {
            window: 4096,
            full_every: 0
        })
    );
    let null = no_types.replace("}", r#","sliding_window":null}"#);
    assert_eq!(spec(&null).block.sliding, None);

    let ministral3 = r#"{"model_type":"ministral3","vocab_size":32000,"hidden_size":512,
        "intermediate_size":1536,"num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":2,
        "head_dim":64,"rope_parameters":{"rope_type":"yarn","rope_theta":1000000.0,"factor":16.0,
        "original_max_position_embeddings":16384,"llama_4_scaling_beta":0.1},
        "max_position_embeddings":262144,"tie_word_embeddings":false}"#;
    assert_eq!(count(ministral3), 38_799_872);
    let t = spec(ministral3);
    assert!(t.block.position_scaled_query && t.block.sliding.is_none());
    let wrapped = format!(
        r#"{{"model_type":"mistral3","text_config":{ministral3},"vision_config":{{"model_type":"pixtral"}}}}"#
    );
    assert!(matches!(&import(&wrapped).unwrap().spec,
        ModelSpec::Transformer(w) if w.block.position_scaled_query && w.layers == 2));
    let default_heads = r#"{"model_type":"ministral3","vocab_size":32000,"hidden_size":512,
        "intermediate_size":1536,"num_hidden_layers":2,"num_attention_heads":8}"#;
    assert_eq!(spec(default_heads).head_dim, 128);

    let llama = r#"{"model_type":"llama","vocab_size":32000,"hidden_size":512,"intermediate_size":1536,
        "num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":2,"attention_bias":true}"#;
    assert_eq!(count(llama), 38_802_432);
    let mistral = llama.replace(r#""llama""#, r#""mistral""#);
    // Mistral ignores `attention_bias`: q, k, v and o biases (512 + 2 × 128 + 512 a layer) fewer.
    assert_eq!(count(&mistral), 38_802_432 - 2 * (512 + 256 + 512));
}

/// Hunyuan's dense models (`hunyuan_v1_dense`): q and k normed per head
/// after the rotary embedding, `attention_bias` on q, k, v and o;
/// Seed-OSS (`seed_oss`): q/k/v biases by default, o's with
/// `attention_out_bias`, dropout 0.1 on the attention and on both residual
/// branches, none on the embeddings. Counts from `transformers` 5.24
/// (`tests/reference/param_counts.csv`).
#[test]
fn imports_hunyuan_moe() {
    use vramfit_core::models::{ModelSpec, QkNorm, Router};
    let moe = r#"{"model_type":"hunyuan_v1_moe","vocab_size":32000,"hidden_size":512,
        "intermediate_size":256,"num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":2,
        "head_dim":64,"num_experts":64,"moe_topk":[8,8],"use_qk_norm":true,"tie_word_embeddings":true}"#;
    // transformers 5.24's HunYuanMoEV1ForCausalLM (tests/reference/param_counts.csv).
    assert_eq!(count(moe), 68_881_152);
    let ModelSpec::Transformer(t) = import(moe).unwrap().spec else {
        panic!("a transformer")
    };
    assert_eq!(t.block.qk_norm, QkNorm::PerHeadAfterRotary);
    let m = t.moe.as_deref().expect("every layer sparse");
    assert_eq!((m.experts, m.top_k, m.expert_intermediate), (64, 8, 256));
    assert_eq!(m.router, Router::HunYuan);
    let shared = m.shared.expect("the shared MLP");
    assert!(shared.first && !shared.gate && shared.intermediate == 256);
    assert!((0..2).all(|i| m.is_sparse(i)));
    // One k for every layer, as a number or a list of equal ones; num_experts only as a number.
    for (bad, why) in [
        (
            r#""moe_topk":[8,8]"#.replace("8,8", "8,4"),
            "moe_topk lists",
        ),
        (
            r#""moe_topk":[8,8]"#.replace("[8,8]", "[8]"),
            "moe_topk lists",
        ),
        (
            r#""moe_topk":[8,8]"#.replace("[8,8]", "65"),
            "num_experts_per_tok (65) is more than the 64 experts",
        ),
        (
            r#""moe_topk":[8,8]"#.replace("\"moe_topk\":[8,8]", "\"num_experts\":[64,64]"),
            "num_experts lists",
        ),
    ] {
        let json = moe.replace(r#""moe_topk":[8,8]"#, &bad);
        let err = import(&json).unwrap_err().to_string();
        assert!(err.contains(why), "{bad}: {err}");
    }
}

#[test]
fn imports_hunyuan_and_seed_oss() {
    use vramfit_core::models::{ModelSpec, QkNorm};
    let hunyuan = r#"{"model_type":"hunyuan_v1_dense","vocab_size":32000,"hidden_size":512,
        "intermediate_size":1536,"num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":2,
        "head_dim":64,"attention_bias":true,"tie_word_embeddings":true}"#;
    assert_eq!(count(hunyuan), 22_418_688);
    let ModelSpec::Transformer(t) = import(hunyuan).unwrap().spec else {
        panic!("a transformer")
    };
    assert_eq!(t.block.qk_norm, QkNorm::PerHeadAfterRotary);
    assert!(t.qkv_bias && t.mlp_bias && t.tie_embeddings);

    let seed = r#"{"model_type":"seed_oss","vocab_size":32000,"hidden_size":512,"intermediate_size":1536,
        "num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":2,"head_dim":64,
        "tie_word_embeddings":false}"#;
    assert_eq!(count(seed), 38_801_408);
    let ModelSpec::Transformer(t) = import(seed).unwrap().spec else {
        panic!("a transformer")
    };
    assert!(t.qkv_bias && !t.mlp_bias && t.block.undropped_embeddings);
    assert_eq!((t.attention_dropout, t.hidden_dropout), (0.1, 0.1));
    let biased_mlp = seed.replace("}", r#","mlp_bias":true}"#);
    assert!(
        import(&biased_mlp)
            .unwrap_err()
            .to_string()
            .contains("mlp_bias puts biases on Seed-OSS's gated MLP")
    );
}
