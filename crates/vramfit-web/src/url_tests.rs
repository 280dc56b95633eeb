//! The page's state and its address: a link loads into the form, the form
//! writes the same link back, and what the form does not show survives.

use crate::prefs::Prefs;
use crate::state::{Action, AppState, Field, IMPORTED_MODEL, Problem};
use crate::url::read;
use std::rc::Rc;
use vramfit_core::share::{Reason, ShareState, decode};
use vramfit_core::{Overheads, estimate, gpu_preset, model_preset};
use yew::Reducible;

fn load(query: &str) -> Rc<AppState> {
    Rc::new(AppState::from_link(&read(query), Prefs::default()))
}

#[test]
fn a_link_loads_into_the_form_and_is_written_back_unchanged() {
    for q in [
        "v=2",
        "v=2&m=bert-large&g=rtx-3060-12gb&c=full",
        "v=2&m=resnet50&g=a100-80gb&b=64&i=256&a=4&p=fp32&o=sgd-momentum&c=every-3",
        "v=2&m=llama-2-7b&g=a100-40gb&b=2&s=1024&p=bf16&st=zero3&gn=8&of=optimizer",
        "v=2&m=vit_b_16&at=eager",
        "v=2&m=llama-2-7b&mo=finetune-lora&lb=fp32",
    ] {
        let s = load(q);
        assert_eq!(s.problem, None, "{q}");
        assert_eq!(s.share_state().map(|s| s.to_query()).as_deref(), Some(q));
    }
}

#[test]
fn a_version_1_link_is_written_back_as_version_2_saying_the_same() {
    for (old, new) in [
        ("v=1", "v=2&at=eager"),
        (
            "v=1&m=bert-large&g=rtx-3060-12gb&c=full",
            "v=2&m=bert-large&g=rtx-3060-12gb&c=full&at=eager",
        ),
        ("v=1&m=vit_b_16&at=sdpa", "v=2&m=vit_b_16"),
        (
            "v=1&m=llama-2-7b&mo=finetune-lora",
            "v=2&m=llama-2-7b&at=eager&mo=finetune-lora&lb=fp32",
        ),
    ] {
        let s = load(old);
        assert_eq!(s.problem, None, "{old}");
        assert_eq!(s.share_state().map(|s| s.to_query()).as_deref(), Some(new));
        assert_eq!(
            s.report.as_ref().map(|r| &r.estimate),
            load(new).report.as_ref().map(|r| &r.estimate),
            "{old}"
        );
    }
}

#[test]
fn the_page_estimates_what_the_cli_would_for_the_same_link() {
    let q = "v=1&m=gpt2&g=rtx-3060-12gb&b=4&s=256&o=adamw-8bit&c=selective&at=sdpa&st=ddp&gn=2";
    let s = load(q);
    let link = decode(q).state;
    let spec = model_preset("gpt2").unwrap().spec;
    let gpu = gpu_preset("rtx-3060-12gb").unwrap();
    let core = estimate(&spec, &link.train, &Overheads::for_gpu(&gpu), Some(&gpu)).unwrap();
    assert_eq!(s.report.as_ref().map(|r| &r.estimate), Some(&core));
}

#[test]
fn a_config_json_in_the_link_is_imported_and_written_back() {
    let json = r#"{"model_type":"gpt2","n_embd":768,"n_layer":12,"n_head":12,"vocab_size":50257,"_name_or_path":"<b>x</b>"}"#;
    let share = ShareState {
        model: IMPORTED_MODEL.into(),
        config_json: Some(json.into()),
        ..ShareState::default()
    };
    let s = load(&share.to_query());
    assert_eq!(s.inputs.model, IMPORTED_MODEL);
    assert_eq!(
        s.report.as_ref().map(|r| r.model_name.as_str()),
        Some("<b>x</b>")
    );
    assert_eq!(
        s.share_state().map(|s| s.to_query()),
        Some(share.to_query())
    );
    // Picking a preset drops the config from the link.
    let s = s.reduce(Action::SetModel("gpt2".into()));
    assert_eq!(s.share_state().and_then(|s| s.config_json), None);
}

#[test]
fn bad_values_keep_defaults_and_are_listed_until_dismissed() {
    let s = load("?b=abc&m=gpt-9&s=128&lang=xx");
    assert_eq!(
        (
            s.inputs.batch.as_str(),
            s.inputs.model.as_str(),
            s.inputs.seq.as_str()
        ),
        ("8", "gpt2", "128")
    );
    let keys: Vec<&str> = s.link_warnings.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(keys, ["b", "m", "lang"]);
    assert!(matches!(s.link_warnings[0].reason, Reason::Count { .. }));
    let s = s.reduce(Action::DismissLinkWarnings);
    assert!(s.link_warnings.is_empty());
}

#[test]
fn settings_the_form_does_not_show_are_listed_kept_and_cleared() {
    let s = load("v=1&m=llama-2-7b&g=a100-80gb&b=1&st=zero2&gn=4&mo=finetune-lora&r=32&n=2");
    let extras: Vec<String> = s.extras().iter().map(|e| e.cli()).collect();
    // Version 1's LoRA kept its base in fp32: the form does not show it.
    assert_eq!(extras, ["--lora-base fp32", "--nodes 2"]);
    // The form shows the strategy, GPUs, mode and rank.
    assert_eq!(
        (
            s.inputs.strategy.id(),
            s.inputs.gpus.as_str(),
            s.inputs.mode.id(),
            s.inputs.lora_rank.as_str()
        ),
        ("zero2", "4", "finetune-lora", "32")
    );
    // Editing the form keeps them.
    let s = s.reduce(Action::SetField(Field::Batch, "2".into()));
    let q = s.share_state().map(|s| s.to_query()).unwrap_or_default();
    assert!(
        q.contains("&b=2")
            && q.contains("&st=zero2&gn=4&n=2")
            && q.contains("&mo=finetune-lora&r=32"),
        "{q}"
    );
    let s = s.reduce(Action::ClearExtras);
    assert!(s.extras().is_empty());
    assert_eq!(
        s.share_state().map(|s| s.to_query()).as_deref(),
        Some("v=2&m=llama-2-7b&g=a100-80gb&b=2&at=eager&mo=finetune-lora&r=32&st=zero2&gn=4")
    );
}

#[test]
fn the_optimizer_implementation_is_the_forms_where_it_offers_one() {
    // Adam offers foreach / fused / loop in the form: not listed beside it,
    // and kept when the link's other settings are cleared.
    let s = load("v=2&m=bert-base-mlm&o=adam&oi=loop&st=zero2&gn=2&zb=1000");
    assert_eq!(
        s.extras().iter().map(|e| e.cli()).collect::<Vec<_>>(),
        ["--zero-bucket 1000"]
    );
    let s = s.reduce(Action::ClearExtras);
    assert!(s.extras().is_empty());
    assert_eq!(s.inputs.rest.optimizer_impl.id(), "loop");
    // SGD has one code path: the form shows none, so a link's is listed.
    let s = load("v=2&o=sgd&oi=fused");
    assert_eq!(
        s.extras().iter().map(|e| e.cli()).collect::<Vec<_>>(),
        ["--optimizer-impl fused"]
    );
}

#[test]
fn the_training_loop_settings_are_the_forms_in_training() {
    // The form's "Training loop" section shows zero_grad, the outputs kept
    // and the PyTorch release, and under autocast the autocast region: not
    // listed beside it, kept when the link's other settings are cleared.
    let s = load("v=2&m=bert-base-mlm&p=amp-fp16&zg=zeros&lo=kept&pt=1.10&ar=backward");
    assert!(s.extras().is_empty(), "{:?}", s.extras());
    assert!(s.inputs.loop_changed());
    let s = s.reduce(Action::ClearExtras);
    assert_eq!(
        (
            s.inputs.rest.zero_grad.id(),
            s.inputs.rest.loop_outputs.id()
        ),
        ("zeros", "kept")
    );
    assert_eq!(
        (
            s.inputs.rest.pytorch.id(),
            s.inputs.rest.autocast_region.id()
        ),
        ("1.10", "backward")
    );
    // Under ZeRO the gradients are the engine's: the form offers no
    // zero_grad there, so a link's is listed (and the estimator says why
    // it does not apply).
    let s = load("v=2&st=zero2&gn=2&lo=kept&zg=zeros");
    assert_eq!(
        s.extras().iter().map(|e| e.cli()).collect::<Vec<_>>(),
        ["--zero-grad zeros"]
    );
    // Without autocast the form has no autocast region: a link's is listed.
    let s = load("v=2&p=fp32&ar=backward");
    assert_eq!(
        s.extras().iter().map(|e| e.cli()).collect::<Vec<_>>(),
        ["--autocast-region backward"]
    );
    assert!(!s.inputs.loop_changed());
    // Picking in the form sets the link.
    let s = load("v=2&m=gpt2&p=amp-bf16")
        .reduce(Action::SetAutocastRegion(
            vramfit_core::config::AutocastRegion::Backward,
        ))
        .reduce(Action::SetPytorch(
            vramfit_core::config::TorchRelease::Torch110,
        ));
    let query = s.share_state().map(|s| s.to_query()).unwrap_or_default();
    assert!(
        query.contains("pt=1.10") && query.contains("ar=backward"),
        "{query}"
    );
}

#[test]
fn an_invalid_or_rejected_state_leaves_the_address_alone() {
    let s = load("v=1&b=4").reduce(Action::SetField(Field::Batch, "x".into()));
    assert_eq!(s.share_state(), None);
    // A combination the estimator rejects (sequence parallelism without tensor parallelism).
    let s = load("v=1&sp=1");
    assert!(
        matches!(s.problem, Some(Problem::Core(_))),
        "{:?}",
        s.problem
    );
    assert_eq!(s.share_state(), None);
    assert_eq!(
        s.extras().iter().map(|e| e.cli()).collect::<Vec<_>>(),
        ["--sp on"]
    );
}

#[test]
fn the_benchmark_frame_gets_the_state_and_every_display_setting() {
    use crate::i18n::Lang;
    use crate::prefs::{Theme, Units};
    let share = decode("?m=gpt2&b=3").state;
    let prefs = Prefs {
        lang: Lang::Zh,
        theme: Theme::Dark,
        units: Units::Decimal,
    };
    let query = crate::url::frame_query(&share, prefs);
    // The framed page reads it as any page address: the same state, and these settings whatever its browser says.
    let link = read(&format!("?{query}"));
    assert_eq!(link.share, share);
    assert!(link.warnings.is_empty(), "{:?}", link.warnings);
    assert_eq!(link.view.apply(Prefs::default()), prefs);
    assert_eq!(
        link.view.apply(Prefs {
            lang: Lang::En,
            theme: Theme::Light,
            units: Units::Binary
        }),
        prefs
    );
}

/// A Llama 3 8B inference link served by `serve`.
fn served(serve: vramfit_core::engines::Serving, gpu: &str) -> ShareState {
    let mut share = ShareState {
        model: "llama-3-8b".into(),
        gpu: gpu.into(),
        serve,
        ..ShareState::default()
    };
    share.train.mode = vramfit_core::config::Mode::Inference;
    share.train.context = 8192;
    share
}

#[test]
fn a_links_serving_engine_loads_into_the_form_and_is_written_back() {
    use vramfit_core::engines::{Engine, KvDtype, Serving};
    let weights = |w: &str| {
        w.parse()
            .unwrap_or(vramfit_core::engines::ServeWeights::Native)
    };
    let links = [
        served(
            Serving {
                engine: Engine::Vllm,
                weights: weights("fp8"),
                kv: KvDtype::Fp8,
                concurrency: 4,
                gpu_memory_utilization: 0.85,
                ..Serving::default()
            },
            "h100-sxm",
        ),
        served(
            Serving {
                engine: Engine::Sglang,
                weights: weights("awq-int4"),
                concurrency: 2,
                ..Serving::default()
            },
            "rtx-4090",
        ),
        served(
            Serving {
                engine: Engine::LlamaCpp,
                weights: weights("q4_k_m"),
                kv: KvDtype::Q8_0,
                gpu_layers: Some(20),
                ..Serving::default()
            },
            "rtx-3090",
        ),
    ];
    for mut share in links {
        // llama.cpp's quantized V cache needs flash attention.
        share.train.attention = vramfit_core::Attention::Flash;
        let q = share.to_query();
        let s = load(&q);
        assert_eq!((&s.problem, s.stale), (&None, false), "{q}");
        assert!(s.serving.is_some(), "{q}: the engine's answer is shown");
        assert_eq!(s.engine(), share.serve.engine);
        assert_eq!(s.share_state().map(|s| s.to_query()), Some(q.clone()));
        assert!(s.extras().is_empty(), "{q}: {:?}", s.extras());
    }
}

#[test]
fn another_engines_setting_in_a_link_is_kept_shown_and_refused() {
    use vramfit_core::engines::{Engine, Serving};
    let share = served(
        Serving {
            engine: Engine::Vllm,
            gpu_layers: Some(10),
            ..Serving::default()
        },
        "rtx-4090",
    );
    let s = load(&share.to_query());
    // Not dropped: listed with the link's settings and named by the estimate.
    assert_eq!(
        s.extras().iter().map(|e| e.cli()).collect::<Vec<_>>(),
        ["--gpu-layers 10"]
    );
    let message = s.problem.as_ref().map(|p| p.message(crate::i18n::Lang::En));
    assert_eq!(
        message.as_deref(),
        Some("The estimator rejected this configuration: GPU layers does not apply to vLLM.")
    );
    assert_eq!(s.share_state(), None, "the address keeps the link");
    let cleared = s.reduce(Action::ClearExtras);
    assert_eq!(cleared.problem, None);
    assert!(cleared.serving.is_some());
    assert_eq!(
        cleared.share_state().map(|s| s.serve.gpu_layers),
        Some(None)
    );
}

#[test]
fn an_engine_link_outside_inference_mode_is_refused_not_simulated() {
    let q = "v=2&m=llama-3-8b&en=vllm";
    let s = load(q);
    assert_eq!(s.engine(), vramfit_core::engines::Engine::Vllm);
    assert!(
        matches!(
            s.problem,
            Some(Problem::Core(vramfit_core::Error::Serve(_)))
        ),
        "{:?}",
        s.problem
    );
    assert_eq!(s.extras().iter().map(|e| e.key).collect::<Vec<_>>(), ["en"]);
    // Clearing it returns to Hugging Face's training estimate.
    let cleared = s.reduce(Action::ClearExtras);
    assert_eq!(cleared.problem, None);
    assert!(cleared.report.is_some());
    assert_eq!(
        cleared.share_state().map(|s| s.to_query()).as_deref(),
        Some("v=2&m=llama-3-8b")
    );
}
