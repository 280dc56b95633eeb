//! Reducer tests: they run natively, no browser needed.

use super::*;
use vramfit_core::explore::Technique;

/// Applies an action and, as the app does once the verdict is shown, completes the report.
fn reduce(state: Rc<AppState>, action: Action) -> Rc<AppState> {
    state.reduce(action).reduce(Action::CompleteReport)
}

fn initial() -> Rc<AppState> {
    Rc::new(AppState::default()).reduce(Action::CompleteReport)
}

fn set(field: Field, value: &str) -> Action {
    Action::SetField(field, value.to_string())
}

fn peak(state: &AppState) -> u64 {
    state
        .report
        .as_ref()
        .map(|r| r.estimate.peak_allocated_bytes.0)
        .unwrap_or(0)
}

fn message(state: &AppState, field: Field) -> Option<String> {
    state.errors.get(field).map(|e| e.message(field, Lang::En))
}

const LLAMA: &str = r#"{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32,
    "vocab_size": 32000, "max_position_embeddings": 4096, "rms_norm_eps": 1e-05, "tie_word_embeddings": false}"#;

#[test]
fn default_state_is_estimated_and_fresh() {
    let first = AppState::default();
    assert!(first.incomplete(), "the first report waits for its curve");
    assert!(
        first
            .report
            .as_ref()
            .is_some_and(|r| r.curve.is_empty() && r.estimate.gpu.is_some())
    );
    let s = initial();
    assert!(!s.incomplete());
    assert!(s.errors.is_empty());
    assert_eq!(s.problem, None);
    assert!(!s.stale);
    let report = s.report.as_ref().expect("default inputs are valid");
    assert_eq!(report.model_name, "GPT-2 (124M)");
    assert!(report.estimate.gpu.is_some(), "the verdict needs a GPU fit");
    assert!(report.curve.len() >= 3, "the batch curve has points");
    assert!(
        !report.variants.is_empty(),
        "the comparison strip has techniques"
    );
    assert_eq!(
        s.visible_fields(),
        vec![Field::Batch, Field::Seq, Field::Accum, Field::Gpus]
    );
}

#[test]
fn larger_batch_raises_the_peak() {
    let s = initial();
    let before = peak(&s);
    let s = reduce(s, set(Field::Batch, "32"));
    assert!(!s.stale);
    assert!(peak(&s) > before, "{} <= {before}", peak(&s));
    let curve = &s.report.as_ref().unwrap().curve;
    assert!(
        curve.iter().any(|p| p.batch == 32),
        "the curve includes the current batch"
    );
}

#[test]
fn invalid_batch_keeps_the_last_report_and_names_the_problem() {
    let s = initial();
    let last = s.report.clone();
    for (typed, expected) in [
        ("0", "Batch size must be at least 1."),
        ("-3", "Batch size must be at least 1."),
        ("", "Enter a batch size."),
        ("   ", "Enter a batch size."),
        ("abc", "Batch size must be a whole number, like 8."),
        ("1.5", "Batch size must be a whole number, like 8."),
        ("1e12", "Batch size must be at most 16,777,216."),
        (
            "99999999999999999999999",
            "Batch size must be at most 16,777,216.",
        ),
        ("16777217", "Batch size must be at most 16,777,216."),
    ] {
        let next = reduce(Rc::clone(&s), set(Field::Batch, typed));
        assert_eq!(
            message(&next, Field::Batch).as_deref(),
            Some(expected),
            "typed {typed:?}"
        );
        assert!(next.stale, "typed {typed:?}");
        assert_eq!(
            next.report, last,
            "typed {typed:?} changed the report on screen"
        );
        assert_eq!(
            next.inputs.batch, typed,
            "what was typed stays in the field"
        );
    }
}

#[test]
fn fixing_the_field_clears_the_message() {
    let s = reduce(initial(), set(Field::Batch, "abc"));
    let s = reduce(s, set(Field::Batch, " 16 "));
    assert_eq!(s.errors, FieldErrors::default());
    assert!(!s.stale);
    assert_eq!(s.report.as_ref().map(|r| r.estimate.config.batch), Some(16));
}

#[test]
fn cnn_uses_image_size_and_ignores_a_bad_sequence_length() {
    let s = reduce(initial(), set(Field::Seq, "oops"));
    assert!(s.stale);
    let s = reduce(s, Action::SetModel("resnet50".to_string()));
    assert_eq!(
        s.visible_fields(),
        vec![Field::Batch, Field::Image, Field::Accum, Field::Gpus]
    );
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    assert!(!s.stale);
    let report = s.report.as_ref().unwrap();
    assert_eq!(report.model_name, "ResNet-50");
    assert_eq!(
        report.details(Lang::En),
        "25.6M parameters · batch 8 at 224×224 px · Mixed bf16 · AdamW"
    );
    assert_eq!(
        report.details(Lang::Zh),
        "2556 万参数 · 批大小 8，224×224 像素 · 混合精度 bf16 · AdamW"
    );
}

#[test]
fn mlp_needs_no_input_size() {
    let s = reduce(initial(), Action::SetModel("mlp-small".to_string()));
    assert_eq!(
        s.visible_fields(),
        vec![Field::Batch, Field::Accum, Field::Gpus]
    );
    assert!(!s.stale);
}

#[test]
fn core_rejection_is_shown_next_to_the_input_size() {
    let s = initial();
    let last = s.report.clone();
    let s = reduce(s, set(Field::Seq, "2048"));
    let m = message(&s, Field::Seq).unwrap_or_default();
    assert!(
        m.starts_with("Not possible with this model: Sequence length 2048 exceeds")
            && m.ends_with('.'),
        "{m}"
    );
    assert_eq!(s.report, last);
    let zh = s
        .errors
        .get(Field::Seq)
        .map(|e| e.message(Field::Seq, Lang::Zh))
        .unwrap_or_default();
    assert!(zh.starts_with("此模型不支持该设置："), "{zh}");

    let s = reduce(initial(), Action::SetModel("vit_b_16".to_string()));
    let s = reduce(s, set(Field::Image, "256"));
    assert!(
        message(&s, Field::Image).is_some_and(|m| m.contains("224")),
        "{:?}",
        s.errors
    );
}

#[test]
fn unknown_presets_are_problems_not_panics() {
    let s = reduce(initial(), Action::SetGpu("gtx-9999".to_string()));
    assert!(
        s.problem
            .as_ref()
            .is_some_and(|p| p.message(Lang::En).contains("gtx-9999"))
    );
    assert!(s.stale && s.report.is_some());
    let s = reduce(s, Action::SetGpu("h100-sxm".to_string()));
    let s = reduce(s, Action::SetModel("no-such-model".to_string()));
    assert!(
        s.problem
            .as_ref()
            .is_some_and(|p| p.message(Lang::En).contains("no-such-model"))
    );
    let s = reduce(s, Action::SetModel(IMPORTED_MODEL.to_string()));
    assert_eq!(s.problem, Some(Problem::NoImportedModel));
}

#[test]
fn verdict_follows_the_gpu() {
    let s = reduce(initial(), Action::SetModel("llama-2-7b".to_string()));
    let s = reduce(s, Action::SetPrecision(Precision::Fp32));
    let fit = s
        .report
        .as_ref()
        .and_then(|r| r.estimate.gpu.clone())
        .expect("a GPU was chosen");
    assert!(!fit.fits, "Llama-2-7B in fp32 with AdamW cannot fit 24 GiB");
    assert_eq!(fit.max_batch, 0);
    let s = reduce(s, Action::SetModel("gpt2".to_string()));
    let fit = s
        .report
        .as_ref()
        .and_then(|r| r.estimate.gpu.clone())
        .expect("a GPU was chosen");
    assert!(fit.fits && fit.max_batch >= 8, "{fit:?}");
}

/// The summary line speaks of what inference runs: no accumulation,
/// checkpointing or optimizer, even where training left them set.
#[test]
fn the_inference_summary_names_no_training_setting() {
    let s = [
        set(Field::Accum, "4"),
        Action::SetCheckpointing(CheckpointChoice::Full),
        Action::SetMode(Mode::Inference),
    ]
    .into_iter()
    .fold(initial(), reduce);
    let line = s.report.clone().unwrap().details(Lang::En);
    for word in ["AdamW", "accumulation", "checkpointing"] {
        assert!(!line.contains(word), "{line}");
    }
    let train = reduce(s, Action::SetMode(Mode::Train));
    let line = train.report.clone().unwrap().details(Lang::En);
    for word in ["AdamW", "accumulation"] {
        assert!(line.contains(word), "{line}");
    }
}

#[test]
fn accumulation_multiplies_the_effective_batch_and_checkpointing_lowers_the_peak() {
    let s = reduce(initial(), set(Field::Accum, "4"));
    let r = s.report.clone().unwrap();
    assert_eq!((r.estimate.config.grad_accum, r.effective_batch()), (4, 32));
    assert!(
        r.details(Lang::En)
            .contains("accumulation ×4 (effective 32)"),
        "{}",
        r.details(Lang::En)
    );
    let before = peak(&s);
    let s = reduce(s, Action::SetCheckpointing(CheckpointChoice::Full));
    assert!(
        peak(&s) < before,
        "full checkpointing should lower GPT-2's peak"
    );
    let s = reduce(s, Action::SetCheckpointing(CheckpointChoice::EveryK));
    assert_eq!(
        s.visible_fields(),
        vec![
            Field::Batch,
            Field::Seq,
            Field::Accum,
            Field::EveryK,
            Field::Gpus
        ]
    );
    let s = reduce(s, set(Field::EveryK, "0"));
    assert_eq!(
        message(&s, Field::EveryK).as_deref(),
        Some("Interval K must be at least 1.")
    );
    let s = reduce(s, set(Field::EveryK, "3"));
    assert!(!s.stale);
    let s = reduce(s, Action::SetAttention(Attention::Flash));
    assert_eq!(
        s.report.as_ref().map(|r| r.estimate.config.attention),
        Some(Attention::Flash)
    );
}

#[test]
fn importing_a_config_selects_it_and_a_bad_one_keeps_it() {
    let s = reduce(initial(), Action::ImportConfig(LLAMA.to_string()));
    assert_eq!(s.inputs.model, IMPORTED_MODEL);
    assert!(!s.stale && s.import.error.is_none());
    let r = s.report.clone().unwrap();
    assert_eq!(
        r.model_name, "LlamaForCausalLM",
        "named by its class without a path"
    );
    assert_eq!(
        r.estimate.parameter_count, 6_738_415_616,
        "Llama-2-7B has 6.74B parameters"
    );
    let s = reduce(
        s,
        Action::ImportConfig(LLAMA.replace("\"hidden_size\": 4096,", "")),
    );
    assert!(s.import.error.is_some());
    assert_eq!(
        s.report.as_ref().map(|r| r.estimate.parameter_count),
        Some(6_738_415_616),
        "the last valid import stays"
    );
    let s = reduce(s, Action::ImportFailed(ImportError::TooLarge(1 << 30)));
    assert_eq!(s.import.error, Some(ImportError::TooLarge(1 << 30)));
    // A preset can still be chosen, and the import offered again.
    let s = reduce(s, Action::SetModel("gpt2".to_string()));
    let s = reduce(s, Action::SetModel(IMPORTED_MODEL.to_string()));
    assert_eq!(
        s.report.as_ref().map(|r| r.estimate.parameter_count),
        Some(6_738_415_616)
    );
}

#[test]
fn adopting_a_technique_reproduces_its_memory() {
    let s = Rc::new(AppState::new(
        Inputs {
            precision: Precision::Fp32,
            ..Inputs::default()
        },
        Prefs::default(),
    ));
    let s = s.reduce(Action::CompleteReport);
    let r = s.report.clone().unwrap();
    for v in &r.variants {
        let next = reduce(Rc::clone(&s), Action::Adopt(v.config));
        let used = next.report.as_ref().map(|r| r.estimate.device_used_bytes);
        assert_eq!(used, Some(v.device_used_bytes), "{:?}", v.technique);
    }
    assert!(r.variants.iter().any(|v| v.technique == Technique::Amp));
}

#[test]
fn a_full_fine_tune_is_offered_lora_and_more_gpus_and_adopting_them_reproduces_their_memory() {
    // Llama-3-8B trained in full on one H100: far over 80 GB.
    let s = Rc::new(AppState::new(
        Inputs {
            model: "llama-3-8b".to_string(),
            gpu: "h100-sxm".to_string(),
            batch: "1".to_string(),
            seq: "1024".to_string(),
            precision: Precision::AmpBf16,
            mode: Mode::Train,
            ..Inputs::default()
        },
        Prefs::default(),
    ))
    .reduce(Action::CompleteReport);
    let r = s.report.clone().unwrap();
    let kinds: Vec<Technique> = r.variants.iter().map(|v| v.technique).collect();
    for t in [
        Technique::Lora,
        Technique::Qlora,
        Technique::OptimizerOffload,
        Technique::MoreGpus,
    ] {
        assert!(kinds.contains(&t), "{t:?} missing from {kinds:?}");
    }
    for v in &r.variants {
        let next = reduce(Rc::clone(&s), Action::Adopt(v.config));
        let used = next.report.as_ref().map(|r| r.estimate.device_used_bytes);
        assert_eq!(used, Some(v.device_used_bytes), "{:?}", v.technique);
    }
    let rows = crate::compare::technique_rows(&r, Prefs::default());
    let more = rows.iter().find(|r| r.id == "more-gpus").unwrap();
    assert!(more.fits);
    assert!(
        more.detail
            .as_deref()
            .is_some_and(|d| d.starts_with("on ") && d.contains(" GPUs with ZeRO-3")),
        "{:?}",
        more.detail
    );
}

#[test]
fn a_gpu_without_bf16_is_offered_fp16_mixed_precision() {
    let s = Rc::new(AppState::new(
        Inputs {
            gpu: "v100-16gb".to_string(),
            precision: Precision::Fp32,
            ..Inputs::default()
        },
        Prefs::default(),
    ))
    .reduce(Action::CompleteReport);
    let rows = crate::compare::technique_rows(s.report.as_ref().unwrap(), Prefs::default());
    assert!(rows.iter().any(|r| r.id == "amp-fp16"), "{rows:?}");
    assert!(
        rows.iter()
            .all(|r| !r.name.contains("bf16 )") && r.id != "amp")
    );
}

#[test]
fn display_preferences_do_not_re_estimate() {
    let s = initial();
    let report = s.report.clone();
    let s = reduce(s, Action::SetLang(Lang::Zh));
    let s = reduce(s, Action::SetUnits(Units::Decimal));
    let s = reduce(s, Action::SetTheme(Theme::Dark));
    let s = reduce(s, Action::SortLayers(LayerColumn::Saved));
    assert_eq!(
        s.prefs,
        Prefs {
            lang: Lang::Zh,
            units: Units::Decimal,
            theme: Theme::Dark
        }
    );
    assert!(s.layer_sort.descending);
    assert!(
        s.report
            .as_ref()
            .zip(report.as_ref())
            .is_some_and(|(a, b)| Rc::ptr_eq(a, b)),
        "the report was recomputed"
    );
}

#[test]
fn every_edit_shows_its_verdict_first_and_keeps_the_previous_curve_until_completed() {
    let s = initial();
    let before = s.report.as_ref().map(|r| r.curve.clone());
    // Even with the largest batch known for this layout and GPU, the verdict
    // renders alone; the curve follows.
    let s = s.reduce(set(Field::Batch, "32"));
    assert!(s.incomplete());
    assert_eq!(s.report.as_ref().map(|r| r.curve.clone()), before);
    let s = s.reduce(Action::CompleteReport);
    assert!(
        s.report
            .as_ref()
            .is_some_and(|r| r.complete && r.curve.iter().any(|p| p.batch == 32))
    );
    // A new GPU needs a new largest-batch search: the verdict comes first.
    let curve = s.report.as_ref().map(|r| r.curve.clone());
    let next = s.reduce(Action::SetGpu("a100-80gb".into()));
    assert!(next.incomplete());
    assert_eq!(
        next.report.as_ref().map(|r| r.curve.clone()),
        curve,
        "no empty chart while the curve is computed"
    );
    let done = next.reduce(Action::CompleteReport);
    assert!(!done.incomplete());
    assert_ne!(done.report.as_ref().map(|r| r.curve.clone()), curve);
    // Completing twice changes nothing.
    let again = Rc::clone(&done).reduce(Action::CompleteReport);
    assert!(Rc::ptr_eq(
        again.report.as_ref().unwrap(),
        done.report.as_ref().unwrap()
    ));
}

#[test]
fn a_batch_typed_before_the_first_curve_shows_its_verdict_first() {
    // The page's first report is incomplete until the next task; a batch typed
    // at once must not wait for the whole curve to be simulated.
    let first = Rc::new(AppState::default());
    assert!(first.incomplete());
    // The cards below the breakdown are not rendered with the first verdict.
    assert!(!first.revealed);
    let typed = first.reduce(set(Field::Batch, "9"));
    assert!(
        typed.incomplete(),
        "the batch edit simulated the whole curve before showing its verdict"
    );
    assert!(!typed.revealed);
    assert_eq!(
        typed.report.as_ref().map(|r| r.estimate.config.batch),
        Some(9)
    );
    let done = typed.reduce(Action::CompleteReport);
    assert!(!done.incomplete());
    assert!(
        done.revealed,
        "the completed report did not bring the cards below the breakdown"
    );
    // Once shown they stay, also while a later report waits for its completion.
    assert!(Rc::clone(&done).reduce(set(Field::Seq, "256")).revealed);
    assert!(
        done.report
            .as_ref()
            .is_some_and(|r| r.curve.iter().any(|p| p.batch == 9))
    );
    // Later batch edits show their verdict first too, with the cards kept.
    let later = done.reduce(set(Field::Batch, "10"));
    assert!(later.incomplete() && later.revealed);
}

#[test]
fn offload_with_ddp_is_rejected_with_a_message() {
    let s = reduce(
        initial(),
        Action::SetStrategy(vramfit_core::parallel::Strategy::Ddp),
    );
    let s = reduce(
        s,
        Action::SetOffload(vramfit_core::parallel::Offload::Optimizer),
    );
    assert!(
        matches!(s.problem, Some(Problem::Core(_))),
        "{:?}",
        s.problem
    );
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    assert!(s.stale);
}

#[test]
fn the_longest_sequence_is_found_on_request_and_forgotten_when_an_input_changes() {
    let s = initial();
    assert_eq!(s.max_input, None, "searched before it was asked for");
    let found = reduce(Rc::clone(&s), Action::FindMaxInput);
    let longest = found.max_input.expect("GPT-2 has a longest sequence");
    assert!(longest > 0);
    // It is the core's answer for the same inputs.
    let cfg = found.report.as_ref().map(|r| r.estimate.config).unwrap();
    let gpu = vramfit_core::gpu_preset(&found.inputs.gpu).unwrap();
    let o = vramfit_core::Overheads::for_gpu(&gpu);
    let spec = vramfit_core::model_preset(&found.inputs.model)
        .unwrap()
        .spec;
    assert_eq!(
        vramfit_core::max_input_for(&spec, &cfg, &o, vramfit_core::overheads::usable(&gpu, &o))
            .unwrap(),
        Some(longest)
    );
    // Using it sets the sequence length; any input change forgets the answer.
    let used = reduce(Rc::clone(&found), set(Field::Seq, &longest.to_string()));
    assert_eq!(
        used.report.as_ref().map(|r| r.estimate.config.seq),
        Some(longest)
    );
    assert_eq!(used.max_input, None);
    // Display settings keep it.
    assert_eq!(
        reduce(found, Action::SetUnits(Units::Decimal)).max_input,
        Some(longest)
    );
}

#[test]
fn the_gpus_a_configuration_fits_on_are_listed_on_request_and_one_can_be_taken() {
    let s = initial();
    assert!(s.gpu_options.is_none());
    let found = reduce(s, Action::FindGpus);
    let options = found
        .gpu_options
        .as_ref()
        .and_then(|o| o.result.as_ref().ok())
        .expect("GPT-2 fits somewhere");
    let (rows, _) = crate::planner::gpu_rows(options, Units::Binary, Lang::En);
    assert!(!rows.is_empty() && rows.len() <= crate::planner::GPU_ROWS);
    // Every row takes the batch on screen; the first is the smallest.
    assert!(options.iter().filter(|o| o.fits).all(|o| o.max_batch >= 8));
    // Taking two GPUs of a preset shards with FSDP (the strategy was a single GPU).
    let two = options
        .iter()
        .find(|o| o.fits && o.gpus == 2)
        .expect("a two-GPU option");
    let used = reduce(
        Rc::clone(&found),
        Action::UseGpus(two.gpu.to_string(), 2, 1, 0),
    );
    let cfg = used.report.as_ref().map(|r| r.estimate.config).unwrap();
    assert_eq!(
        (
            used.inputs.gpu.as_str(),
            cfg.parallel.gpus_per_node,
            cfg.parallel.strategy
        ),
        (two.gpu.as_ref(), 2, Strategy::FsdpFull)
    );
    assert_eq!(
        used.report.as_ref().map(|r| r.estimate.device_used_bytes),
        Some(two.device_used_bytes),
        "the list and the estimate disagree"
    );
    assert!(
        used.gpu_options.is_none(),
        "the list outlived the inputs it was for"
    );
    // Back to one GPU: a single-GPU layout.
    let one = reduce(used, Action::UseGpus("rtx-4090".into(), 1, 1, 0));
    assert_eq!(
        one.report
            .as_ref()
            .map(|r| r.estimate.config.parallel.strategy),
        Some(Strategy::Single)
    );
}

#[test]
fn a_gpu_given_by_its_memory_is_estimated_linked_and_validated() {
    let s = reduce(initial(), Action::SetGpu(crate::inputs::CUSTOM_GPU.into()));
    let s = reduce(s, set(Field::GpuMemory, "48"));
    let fit = s
        .report
        .as_ref()
        .and_then(|r| r.estimate.gpu.clone())
        .expect("a verdict");
    assert_eq!(
        (fit.id.as_str(), fit.usable_bytes.0),
        ("custom-48", 48 << 30)
    );
    assert_eq!(
        s.share_state().map(|st| st.gpu),
        Some("custom-48".to_string())
    );
    assert!(s.visible_fields().contains(&Field::GpuMemory));
    // The planner ranks without step times: the GPU's throughput is unknown.
    let planned = reduce(Rc::clone(&s), Action::FindPlans(8));
    let timed = planned
        .plans
        .as_ref()
        .and_then(|p| p.result.as_ref().ok())
        .map(|r| r.timed);
    assert_eq!(timed, Some(false));
    // Out of range: the field says why, the last result stays.
    let bad = reduce(Rc::clone(&s), set(Field::GpuMemory, "0"));
    assert!(
        bad.stale && message(&bad, Field::GpuMemory).is_some(),
        "{:?}",
        bad.errors
    );
    // A link with the custom GPU opens it with its memory.
    let link = crate::url::read("https://x/?v=1&g=custom-40");
    let opened = AppState::from_link(&link, Prefs::default());
    assert_eq!(
        (
            opened.inputs.gpu.as_str(),
            opened.inputs.gpu_memory.as_str()
        ),
        (crate::inputs::CUSTOM_GPU, "40")
    );
    assert_eq!(
        opened
            .report
            .as_ref()
            .and_then(|r| r.estimate.gpu.as_ref())
            .map(|g| g.usable_bytes.0),
        Some(40 << 30)
    );
}

/// The page in inference mode on Llama 3 8B and an RTX 4090, 8192 tokens.
fn serving_llama() -> Rc<AppState> {
    [
        Action::SetModel("llama-3-8b".into()),
        Action::SetMode(Mode::Inference),
        set(Field::Context, "8192"),
    ]
    .into_iter()
    .fold(initial(), reduce)
}

#[test]
fn an_engine_shows_its_own_fields_and_answer() {
    use vramfit_core::engines::Engine;
    let s = serving_llama();
    assert!(s.serving.is_none(), "Hugging Face is the simulation");
    let s = reduce(s, Action::SetEngine(Engine::LlamaCpp));
    // Its sequences, not a batch; the sequence length, overridden by the
    // context, is not read (nor checked).
    assert_eq!(
        s.visible_fields(),
        [
            Field::Concurrency,
            Field::Context,
            Field::Gpus,
            Field::GpuLayers
        ]
    );
    let garbled = reduce(Rc::clone(&s), set(Field::Seq, "abc"));
    assert!(garbled.errors.is_empty() && garbled.serving.is_some());
    // A context of 0 is the sequence length: read, and checked, then.
    let by_seq = reduce(
        reduce(Rc::clone(&s), set(Field::Seq, "8192")),
        set(Field::Context, "0"),
    );
    assert_eq!(
        by_seq.visible_fields()[..3],
        [Field::Concurrency, Field::Context, Field::Seq]
    );
    let answer = |s: &AppState| {
        s.serving
            .as_ref()
            .map(|v| v.estimate.report.kv_cache_bytes.0)
    };
    assert_eq!(answer(&by_seq), answer(&s));
    let bad = reduce(Rc::clone(&by_seq), set(Field::Seq, "abc"));
    assert!(bad.errors.get(Field::Seq).is_some() && bad.stale);
    // The batch is kept for the other modes.
    let batch = reduce(Rc::clone(&s), set(Field::Batch, "12"));
    let train = reduce(batch, Action::SetMode(Mode::Train));
    assert_eq!(train.inputs.get(Field::Batch), "12");
    assert!(train.visible_fields().contains(&Field::Batch));
    let s = reduce(s, Action::SetServeWeights("q4_k_m".into()));
    let view = s.serving.clone().expect("llama.cpp runs Q4_K_M");
    assert_eq!(view.estimate.report.kv_cache_bytes.0, 1 << 30);
    assert!(view.estimate.fit.as_ref().is_some_and(|f| f.fits));
    assert!(!s.incomplete(), "nothing to complete");
    // vLLM: its utilization instead of -ngl; the GGUF mix is not its.
    let s = reduce(s, Action::SetEngine(Engine::Vllm));
    assert_eq!(
        s.visible_fields(),
        [
            Field::Concurrency,
            Field::Context,
            Field::Gpus,
            Field::Utilization
        ]
    );
    assert_eq!(s.inputs.serve.weights, "native");
    let pool = s
        .serving
        .as_ref()
        .and_then(|v| v.estimate.report.max_concurrency);
    assert!(pool.is_some_and(|c| c > 1.0), "{pool:?}");
}

#[test]
fn vllm_on_two_gpus_runs_tensor_parallel_and_says_so_per_gpu() {
    use vramfit_core::engines::Engine;
    let one = reduce(serving_llama(), Action::SetEngine(Engine::Vllm));
    let two = reduce(Rc::clone(&one), set(Field::Gpus, "2"));
    let (one, two) = (one.serving.clone().unwrap(), two.serving.clone().unwrap());
    assert_eq!((one.estimate.config.tp, two.estimate.config.tp), (1, 2));
    // Half the weights on each GPU: a larger KV pool in the same share.
    let pool = |v: &ServeView| v.estimate.report.max_concurrency.unwrap_or(0.0);
    assert!(pool(&two) > pool(&one), "{} {}", pool(&two), pool(&one));
    let fits = two.estimate.fit.as_ref().is_some_and(|f| f.fits);
    let (before, after) =
        crate::present::verdict_title(Lang::En, fits, two.estimate.config.tp, "21.6 GiB");
    assert_eq!(
        (before.as_str(), after.as_str()),
        ("Fits on 2 × ", " (21.6 GiB per GPU)")
    );
    // llama.cpp splits its layers over the two GPUs (`--split-mode layer`).
    let llama = reduce(
        reduce(serving_llama(), set(Field::Gpus, "2")),
        Action::SetEngine(Engine::LlamaCpp),
    );
    let llama = reduce(llama, Action::SetServeWeights("q4_k_m".into()));
    assert_eq!(
        llama.serving.as_ref().map(|v| v.estimate.config.tp),
        Some(2)
    );
    assert_eq!(llama.serving.as_ref().map(|v| v.gpus), Some(2));
}

#[test]
fn invalid_serving_fields_keep_the_last_answer_with_a_message() {
    use vramfit_core::engines::Engine;
    let s = reduce(serving_llama(), Action::SetEngine(Engine::Vllm));
    let before = s.serving.clone();
    let s = reduce(s, set(Field::Utilization, "1.2"));
    assert!(s.stale);
    assert_eq!(s.serving, before, "the last answer stays");
    assert_eq!(
        message(&s, Field::Utilization).as_deref(),
        Some("GPU memory utilization must be a number above 0 and at most 1, like 0.9.")
    );
    let s = reduce(s, set(Field::Utilization, "0.8"));
    assert!(!s.stale);
    let s = reduce(s, set(Field::Concurrency, "0"));
    assert_eq!(
        message(&s, Field::Concurrency).as_deref(),
        Some("Concurrency must be at least 1.")
    );
    // llama.cpp: more layers than Llama 3 8B's 32 and its output layer.
    let s = reduce(s, set(Field::Concurrency, "1"));
    let s = reduce(s, Action::SetEngine(Engine::LlamaCpp));
    let s = reduce(s, set(Field::GpuLayers, "40"));
    assert_eq!(
        message(&s, Field::GpuLayers).as_deref(),
        Some("GPU layers must be at most 33.")
    );
}

#[test]
fn engine_refusals_are_specific_in_both_languages() {
    use vramfit_core::engines::{Engine, KvDtype};
    // fp8 on an Ampere GPU.
    let s = reduce(serving_llama(), Action::SetGpu("rtx-3090".into()));
    let s = reduce(s, Action::SetEngine(Engine::Vllm));
    let s = reduce(s, Action::SetKvDtype(KvDtype::Fp8));
    let text = |s: &AppState, lang| s.problem.as_ref().map(|p| p.message(lang));
    let en = text(&s, Lang::En).unwrap_or_default();
    assert!(en.contains("has no FP8"), "{en}");
    let zh = text(&s, Lang::Zh).unwrap_or_default();
    assert!(zh.contains("不支持 FP8"), "{zh}");
    // A model the engines do not model.
    let s = reduce(s, Action::SetKvDtype(KvDtype::F16));
    assert_eq!(s.problem, None);
    let s = reduce(s, Action::SetModel("gpt2".into()));
    let en = text(&s, Lang::En).unwrap_or_default();
    assert!(en.contains("Llama-style decoders"), "{en}");
    // llama.cpp's quantized V cache without flash attention.
    let s = reduce(s, Action::SetModel("llama-3-8b".into()));
    let s = reduce(s, Action::SetEngine(Engine::LlamaCpp));
    let s = reduce(s, Action::SetAttention(vramfit_core::Attention::Eager));
    let s = reduce(s, Action::SetKvDtype(KvDtype::Q4_0));
    let en = text(&s, Lang::En).unwrap_or_default();
    assert!(en.contains("q4_0 V cache needs flash attention"), "{en}");
}

#[test]
fn leaving_inference_mode_returns_to_the_simulation() {
    use vramfit_core::engines::Engine;
    let s = reduce(serving_llama(), Action::SetEngine(Engine::Sglang));
    assert!(s.serving.is_some());
    let s = reduce(s, Action::SetMode(Mode::Train));
    assert_eq!(s.engine(), Engine::Hf);
    assert_eq!(s.problem, None);
    assert!(s.report.is_some());
    assert_eq!(s.share_state().map(|x| x.serve.engine), Some(Engine::Hf));
    // Back in inference mode the engine chosen is still chosen.
    let s = reduce(s, Action::SetMode(Mode::Inference));
    assert_eq!(s.engine(), Engine::Sglang);
}

#[test]
fn inference_mode_hides_trainings_fields_and_its_deepspeed_estimate() {
    let s = reduce(initial(), set(Field::Accum, "4"));
    let s = reduce(
        s,
        Action::SetStrategy(vramfit_core::parallel::Strategy::Zero3),
    );
    let s = reduce(s, set(Field::Gpus, "2"));
    assert!(s.visible_fields().contains(&Field::Accum));
    assert!(s.inputs.trains());
    assert!(
        s.report
            .as_ref()
            .is_some_and(|r| r.estimate.deepspeed_estimate.is_some()),
        "ZeRO-3 training shows DeepSpeed's estimator"
    );
    let s = reduce(s, Action::SetMode(Mode::Inference));
    assert!(!s.inputs.trains());
    let fields = s.visible_fields();
    assert!(!fields.contains(&Field::Accum), "{fields:?}");
    assert!(!fields.contains(&Field::EveryK), "{fields:?}");
    assert!(fields.contains(&Field::Context), "{fields:?}");
    let r = s.report.as_ref().expect("an inference report");
    assert_eq!(r.estimate.deepspeed_estimate, None);
    // Its words: a forward pass and its working set, not a training step.
    use crate::present::in_mode;
    assert_eq!(
        in_mode(Key::TimelineTitle, r.estimate.config.mode),
        Key::TimelineTitleInference
    );
    assert_eq!(
        in_mode(Key::CatActivationsNote, r.estimate.config.mode),
        Key::CatActivationsNoteInference
    );
    assert_eq!(in_mode(Key::TimelineTitle, Mode::Train), Key::TimelineTitle);
    // Back in training, the accumulation typed before is still there.
    let s = reduce(s, Action::SetMode(Mode::Train));
    assert_eq!(s.inputs.get(Field::Accum), "4");
}

#[test]
fn the_expert_parallel_field_shows_only_for_models_with_experts() {
    let s = reduce(initial(), Action::SetModel("olmoe-1b-7b".to_string()));
    assert!(s.visible_fields().contains(&Field::Ep));
    let s = reduce(s, set(Field::Gpus, "8"));
    let s = reduce(s, set(Field::Ep, "8"));
    // OLMoE's 64 experts over 8 GPUs: each holds 8 of every layer's.
    let per_gpu = s.report.as_ref().map(|r| r.estimate.parameters_per_gpu);
    assert_eq!(per_gpu, Some(1_282_017_280));
    assert_eq!(s.share_state().map(|l| l.train.parallel.ep), Some(8));
    // A model without experts hides the field and splits nothing.
    let s = reduce(s, Action::SetModel("gpt2".to_string()));
    assert!(!s.visible_fields().contains(&Field::Ep));
    assert_eq!(s.share_state().map(|l| l.train.parallel.ep), Some(1));
    assert!(s.errors.is_empty() && s.problem.is_none());
}

#[test]
fn the_expert_tensor_parallel_field_splits_each_expert_beside_ep() {
    let s = reduce(initial(), Action::SetModel("olmoe-1b-7b".to_string()));
    assert!(s.visible_fields().contains(&Field::Etp));
    let s = reduce(s, set(Field::Gpus, "8"));
    let s = reduce(s, set(Field::Ep, "8"));
    let eight = s.report.as_ref().map(|r| r.estimate.parameters_per_gpu);
    // Four experts' halves per GPU hold as many expert parameters as eight whole experts.
    let s = reduce(s, set(Field::Ep, "4"));
    let s = reduce(s, set(Field::Etp, "2"));
    let per_gpu = s.report.as_ref().map(|r| r.estimate.parameters_per_gpu);
    assert_eq!(per_gpu, eight);
    assert_eq!(s.share_state().map(|l| l.train.parallel.etp), Some(2));
    let s = reduce(s, Action::SetModel("gpt2".to_string()));
    assert!(!s.visible_fields().contains(&Field::Etp));
    assert_eq!(s.share_state().map(|l| l.train.parallel.etp), Some(0));
    assert!(s.errors.is_empty() && s.problem.is_none());
}

/// A link that splits a dense model's experts is not reset unseen: each
/// key says why it was dropped; a mixture of experts keeps its split.
#[test]
fn a_links_expert_split_for_a_dense_model_is_named_as_ignored() {
    let dense = crate::url::read("https://x/?v=2&m=gpt2&gn=8&ep=8&etp=2");
    let opened = AppState::from_link(&dense, Prefs::default());
    let dropped: Vec<(&str, &str, &str)> = opened
        .link_warnings
        .iter()
        .filter(|w| w.reason == vramfit_core::share::Reason::NoExperts)
        .map(|w| (w.key.as_str(), w.value.as_str(), w.fallback.as_str()))
        .collect();
    assert_eq!(dropped, [("ep", "8", "1"), ("etp", "2", "0")]);
    assert!(opened.problem.is_none() && opened.report.is_some());
    let text = crate::url::describe(&opened.link_warnings[0], crate::i18n::Lang::En).text;
    assert!(text.contains("no experts"), "{text}");
    let moe = crate::url::read("https://x/?v=2&m=olmoe-1b-7b&gn=8&ep=8");
    let opened = AppState::from_link(&moe, Prefs::default());
    assert!(
        opened.link_warnings.is_empty(),
        "{:?}",
        opened.link_warnings
    );
    assert_eq!(opened.share_state().map(|l| l.train.parallel.ep), Some(8));
}

#[test]
fn the_verdict_at_a_glance_follows_the_answer_shown() {
    use crate::prefs::Units;
    let s = initial();
    let glance = s.glance().expect("the default page has a verdict");
    let e = &s.report.as_ref().expect("a report").estimate;
    assert!(glance.fits);
    assert_eq!(glance.used, e.device_used_bytes);
    // Against what CUDA offers on an RTX 4090 (24564 − 354 MiB), not the marketed 24 GiB.
    let line = glance.line(Units::Binary);
    assert!(
        line.starts_with("✓ ") && line.ends_with(" / 23.6 GiB") && line.matches("GiB").count() == 1,
        "{line}"
    );
    let s = reduce(s, Action::SetModel("llama-2-7b".to_string()));
    let s = reduce(s, Action::SetPrecision(Precision::Fp32));
    let line = s.glance().expect("a verdict").line(Units::Binary);
    assert!(
        line.starts_with("✕ ") && line.ends_with(" / 23.6 GiB"),
        "{line}"
    );
    // An engine's answer is the one shown in inference mode.
    let s = reduce(
        serving_llama(),
        Action::SetEngine(vramfit_core::engines::Engine::Vllm),
    );
    let served = s.serving.as_ref().expect("an engine's answer");
    let glance = s.glance().expect("a verdict");
    assert_eq!(glance.used, served.estimate.device_used_bytes);
}

#[test]
fn a_multi_gpu_verdict_names_the_count_and_one_gpus_share_in_both_languages() {
    use crate::present::verdict_title;
    let title = |lang, fits, gpus| {
        let (before, after) = verdict_title(lang, fits, gpus, "45 GiB");
        format!("{before}H100{after}")
    };
    assert_eq!(
        title(Lang::En, true, 4),
        "Fits on 4 × H100 (45 GiB per GPU)"
    );
    assert_eq!(
        title(Lang::En, false, 8),
        "Does not fit on 8 × H100 (45 GiB per GPU)"
    );
    assert_eq!(title(Lang::En, true, 1), "Fits on H100");
    assert_eq!(
        title(Lang::Zh, true, 4),
        "可以放入 4 × H100（每张 GPU 45 GiB）"
    );
    assert_eq!(title(Lang::Zh, false, 1), "无法放入 H100");
}

/// Inference offers the strategies that shard the weights and the weights'
/// offload, plus whatever training left set, so the list shows what is in effect.
#[test]
fn inference_offers_the_weight_sharding_strategies_and_offload() {
    use vramfit_core::parallel::{Offload, Strategy};
    let ids = |groups: Vec<crate::catalog::ChoiceGroup>| -> Vec<String> {
        groups
            .into_iter()
            .flat_map(|g| g.choices.into_iter().map(|c| c.value))
            .collect()
    };
    assert_eq!(
        ids(crate::catalog::strategies(Lang::En, true, Strategy::Single)),
        ["single", "zero3", "fsdp-full", "fsdp-hybrid"]
    );
    assert_eq!(
        ids(crate::catalog::strategies(Lang::En, true, Strategy::Ddp)),
        ["single", "ddp", "zero3", "fsdp-full", "fsdp-hybrid"]
    );
    assert_eq!(
        ids(crate::catalog::strategies(
            Lang::En,
            false,
            Strategy::Single
        ))
        .len(),
        Strategy::ALL.len()
    );
    assert_eq!(
        ids(crate::catalog::offloads(Lang::En, true, Offload::None)),
        ["none", "optimizer+params"]
    );
    assert_eq!(
        ids(crate::catalog::offloads(Lang::En, true, Offload::Optimizer)),
        ["none", "optimizer+params", "optimizer"]
    );
    assert_eq!(
        ids(crate::catalog::offloads(Lang::En, false, Offload::None)),
        ["none", "optimizer", "optimizer+params"]
    );
}

#[test]
fn strategies_read_as_words_in_both_languages_and_keep_their_ids() {
    use vramfit_core::parallel::Strategy;
    for lang in [Lang::En, Lang::Zh] {
        let choices = crate::catalog::strategies(lang, false, Strategy::Single);
        let all: Vec<_> = choices.iter().flat_map(|g| g.choices.iter()).collect();
        assert_eq!(all.len(), Strategy::ALL.len());
        for (c, s) in all.iter().zip(Strategy::ALL) {
            assert_eq!(c.value, s.id());
            assert_ne!(c.label, s.id(), "{} has no words", s.id());
        }
    }
    assert_eq!(
        crate::labels::strategy(Strategy::FsdpFull, Lang::En),
        "FSDP full shard"
    );
    assert_eq!(
        crate::labels::strategy(Strategy::Zero3, Lang::Zh),
        "ZeRO-3（再切分权重）"
    );
}

#[test]
fn applying_from_a_card_below_moves_focus_to_the_verdict_it_changed() {
    let cfg = TrainConfig::default();
    assert_eq!(Action::Adopt(cfg).focus_after(), Some("verdict"));
    assert_eq!(Action::AdoptPlan(cfg).focus_after(), Some("verdict"));
    assert_eq!(
        Action::UseGpus("h100-80gb".into(), 4, 1, 0).focus_after(),
        Some("verdict")
    );
    // Typing keeps focus in the field.
    assert_eq!(set(Field::Batch, "12").focus_after(), None);
    assert_eq!(Action::FindPlans(64).focus_after(), None);
}

/// What was typed into the prerendered page is where the app starts: the
/// same answer as the default page with that edit, in one estimate, and an
/// invalid edit (a field cleared to type another number) is the field's
/// error beside the default page's answer, stale, as after any edit.
#[test]
fn a_page_typed_into_before_the_app_started_opens_with_the_edit() {
    let link = crate::url::read("https://x/");
    let edited = AppState::from_link_edited(
        &link,
        Prefs::default(),
        vec![(Field::Batch, "9".into())],
        None,
    );
    let then_set =
        Rc::new(AppState::from_link(&link, Prefs::default())).reduce(set(Field::Batch, "9"));
    assert_eq!(edited.inputs.batch, "9");
    assert_eq!(peak(&edited), peak(&then_set));
    assert_ne!(
        peak(&edited),
        peak(&AppState::from_link(&link, Prefs::default()))
    );
    let page = AppState::from_link(&link, Prefs::default());
    for typed in ["0", "", "abc"] {
        let bad = AppState::from_link_edited(
            &link,
            Prefs::default(),
            vec![(Field::Batch, typed.into())],
            None,
        );
        assert!(
            message(&bad, Field::Batch).is_some(),
            "{typed:?}: {:?}",
            bad.errors
        );
        assert_eq!(bad.inputs.batch, typed);
        assert!(
            bad.stale && peak(&bad) == peak(&page),
            "{typed:?}: the default answer went"
        );
    }
}

/// The largest batches the prerendered page shows answer the first
/// estimate of a page typed into (the batch does not change them), and a
/// page of another build cannot plant wrong ones: the answer is the same
/// whatever is seeded.
#[test]
fn the_prerendered_pages_largest_batches_seed_the_first_estimate_only_where_they_check_out() {
    let link = crate::url::read("https://x/");
    let estimate = |s: &AppState| s.report.as_ref().map(|r| r.estimate.clone());
    let page = AppState::from_link(&link, Prefs::default());
    let fit = page
        .report
        .as_ref()
        .and_then(|r| r.estimate.gpu.clone())
        .expect("the default page has a GPU");
    let typed = || vec![(Field::Batch, "9".to_string())];
    let searched = AppState::from_link_edited(&link, Prefs::default(), typed(), None);
    for largest in [
        (fit.max_batch, fit.margin_batch),
        (fit.max_batch + 3, fit.margin_batch),
        (fit.max_batch, 1),
    ] {
        let seeded = AppState::from_link_edited(&link, Prefs::default(), typed(), Some(largest));
        assert_eq!(estimate(&seeded), estimate(&searched), "{largest:?}");
    }
}

/// DeepSeek-V3.2's step is not simulated (its sparse-attention indexer):
/// said above the results, in both languages, not pinned on a field.
#[test]
fn a_model_whose_step_is_not_simulated_says_so_above_the_results() {
    let s = reduce(initial(), Action::SetModel("deepseek-v3.2".to_string()));
    assert!(s.errors.get(Field::Seq).is_none());
    let problem = s.problem.as_ref().expect("a problem");
    assert!(
        problem
            .message(Lang::En)
            .contains("sparse-attention indexer"),
        "{}",
        problem.message(Lang::En)
    );
    assert!(problem.message(Lang::Zh).contains("稀疏注意力索引器"));
}
