//! Hugging Face `config.json` import: the real fields of each supported
//! `model_type`, and errors that name what is wrong.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::Error;
use vramfit_core::hf::{self, import};

fn count(json: &str) -> u64 {
    import(json).unwrap().spec.parameter_count().unwrap()
}

#[test]
fn imports_each_supported_model_type() {
    // bert-base-uncased (BertForMaskedLM architectures -> bare encoder with pooler).
    let bert = r#"{"architectures":["BertForMaskedLM"],"model_type":"bert","vocab_size":30522,"hidden_size":768,
        "num_hidden_layers":12,"num_attention_heads":12,"intermediate_size":3072,"max_position_embeddings":512,"type_vocab_size":2}"#;
    assert_eq!(count(bert), 109_482_240);
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

#[test]
fn errors_name_the_problem() {
    let e = import(r#"{"model_type":"mt5","d_model":512}"#).unwrap_err();
    assert!(matches!(e, Error::UnsupportedModelType { .. }));
    let msg = e.to_string();
    assert!(
        msg.contains("mt5") && msg.contains("bert, gpt2, llama, mistral, qwen2"),
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
