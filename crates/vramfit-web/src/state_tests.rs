//! Reducer tests: they run natively, no browser needed.

use super::*;

fn reduce(state: Rc<AppState>, action: Action) -> Rc<AppState> {
    state.reduce(action)
}

fn set(field: Field, value: &str) -> Action {
    Action::SetField(field, value.to_string())
}

fn peak(state: &AppState) -> u64 {
    state.report.as_ref().map(|r| r.estimate.peak_allocated_bytes.0).unwrap_or(0)
}

#[test]
fn default_state_is_estimated_and_fresh() {
    let s = AppState::default();
    assert!(s.errors.is_empty());
    assert_eq!(s.problem, None);
    assert!(!s.stale);
    let report = s.report.as_ref().expect("default inputs are valid");
    assert_eq!(report.model_name, "GPT-2 (124M)");
    assert!(report.estimate.gpu.is_some(), "the verdict needs a GPU fit");
    assert_eq!(s.visible_fields(), vec![Field::Batch, Field::Seq]);
}

#[test]
fn larger_batch_raises_the_peak() {
    let s = Rc::new(AppState::default());
    let before = peak(&s);
    let s = reduce(s, set(Field::Batch, "32"));
    assert!(!s.stale);
    assert!(peak(&s) > before, "{} <= {before}", peak(&s));
}

#[test]
fn invalid_batch_keeps_the_last_report_and_names_the_problem() {
    let s = Rc::new(AppState::default());
    let last = s.report.clone();
    for (typed, expected) in [
        ("0", "Batch size must be at least 1."),
        ("", "Enter a batch size."),
        ("   ", "Enter a batch size."),
        ("abc", "Batch size must be a whole number, like 8."),
        ("1.5", "Batch size must be a whole number, like 8."),
        ("-4", "Batch size must be at least 1."),
        ("99999999999999999999999", "Batch size must be at most 16,777,216."),
        ("16777217", "Batch size must be at most 16,777,216."),
    ] {
        let next = reduce(Rc::clone(&s), set(Field::Batch, typed));
        assert_eq!(next.errors.get(Field::Batch), Some(expected), "typed {typed:?}");
        assert!(next.stale, "typed {typed:?}");
        assert_eq!(next.report, last, "typed {typed:?} changed the report on screen");
        assert_eq!(next.inputs.batch, typed, "what was typed stays in the field");
    }
}

#[test]
fn fixing_the_field_clears_the_message() {
    let s = reduce(Rc::new(AppState::default()), set(Field::Batch, "abc"));
    let s = reduce(s, set(Field::Batch, " 16 "));
    assert_eq!(s.errors, FieldErrors::default());
    assert!(!s.stale);
    assert_eq!(s.report.as_ref().map(|r| r.estimate.config.batch), Some(16));
}

#[test]
fn cnn_uses_image_size_and_ignores_a_bad_sequence_length() {
    let s = reduce(Rc::new(AppState::default()), set(Field::Seq, "oops"));
    assert!(s.stale);
    let s = reduce(s, Action::SetModel("resnet50".to_string()));
    assert_eq!(s.visible_fields(), vec![Field::Batch, Field::Image]);
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    assert!(!s.stale);
    assert_eq!(s.report.as_ref().map(|r| r.model_name.as_str()), Some("ResNet-50"));
    let summary = s.report.as_ref().map(|r| r.summary()).unwrap_or_default();
    assert_eq!(summary, "ResNet-50 · 25.6M parameters · batch 8 at 224×224 px · Mixed bf16 · AdamW");
}

#[test]
fn mlp_needs_no_input_size() {
    let s = reduce(Rc::new(AppState::default()), Action::SetModel("mlp-small".to_string()));
    assert_eq!(s.visible_fields(), vec![Field::Batch]);
    assert!(!s.stale);
}

#[test]
fn core_rejection_is_shown_next_to_the_input_size() {
    let s = Rc::new(AppState::default());
    let last = s.report.clone();
    let s = reduce(s, set(Field::Seq, "2048"));
    let message = s.errors.get(Field::Seq).unwrap_or_default();
    assert!(message.starts_with("Sequence length 2048 exceeds") && message.ends_with('.'), "{message}");
    assert_eq!(s.report, last);

    let s = reduce(Rc::new(AppState::default()), Action::SetModel("vit_b_16".to_string()));
    let s = reduce(s, set(Field::Image, "256"));
    assert!(s.errors.get(Field::Image).is_some_and(|m| m.contains("224")), "{:?}", s.errors);
}

#[test]
fn unknown_presets_are_problems_not_panics() {
    let s = reduce(Rc::new(AppState::default()), Action::SetGpu("gtx-9999".to_string()));
    assert!(s.problem.as_deref().is_some_and(|p| p.contains("gtx-9999")));
    assert!(s.stale && s.report.is_some());
    let s = reduce(s, Action::SetGpu("h100-sxm".to_string()));
    let s = reduce(s, Action::SetModel("no-such-model".to_string()));
    assert!(s.problem.as_deref().is_some_and(|p| p.contains("no-such-model")));
}

#[test]
fn verdict_follows_the_gpu() {
    let s = reduce(Rc::new(AppState::default()), Action::SetModel("llama-2-7b".to_string()));
    let s = reduce(s, Action::SetPrecision(Precision::Fp32));
    let fit = s.report.as_ref().and_then(|r| r.estimate.gpu.clone()).expect("a GPU was chosen");
    assert!(!fit.fits, "Llama-2-7B in fp32 with AdamW cannot fit 24 GiB");
    assert_eq!(fit.max_batch, 0);
    let s = reduce(s, Action::SetModel("gpt2".to_string()));
    let fit = s.report.as_ref().and_then(|r| r.estimate.gpu.clone()).expect("a GPU was chosen");
    assert!(fit.fits && fit.max_batch >= 8, "{fit:?}");
}

#[test]
fn core_messages_become_sentences() {
    assert_eq!(sentence("sequence length 9 exceeds"), "Sequence length 9 exceeds.");
    assert_eq!(sentence("Done."), "Done.");
    assert_eq!(sentence(""), "");
}
