//! `use_bench`: the Benchmark tab's state, with the effects that talk to
//! the benchmark module (detect on first render, run, cancel, project).

use std::rc::Rc;

use yew::platform::spawn_local;
use yew::prelude::*;

use super::js;
use super::rows::matching_preset;
use super::state::{BenchAction, BenchState};

/// Which export to download.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Export {
    /// `vramfit-bench.json` (`vramfit.bench/1`).
    Json,
    /// `vramfit-bench.md`.
    Markdown,
}

/// The tab's state and what its controls do.
#[derive(Clone, PartialEq)]
pub struct BenchHandle {
    /// The state.
    pub state: Rc<BenchState>,
    /// Choices (preset, f16, size, kernels).
    pub on_action: Callback<BenchAction>,
    /// Start pressed.
    pub on_start: Callback<()>,
    /// Cancel pressed.
    pub on_cancel: Callback<()>,
    /// A download asked for.
    pub on_export: Callback<Export>,
}

/// The tab's state: detects the adapter once when first used, runs and
/// cancels on request, and keeps the projected step time in step with the
/// calculator's configuration (`query`, its share-link query).
#[hook]
pub fn use_bench(query: Option<String>) -> BenchHandle {
    let state = use_reducer(BenchState::default);
    {
        let dispatcher = state.dispatcher();
        use_effect_with((), move |_| {
            spawn_local(async move {
                let detected = js::detect().await;
                let presets = vramfit_core::gpu_presets();
                let preset = detected
                    .as_ref()
                    .ok()
                    .and_then(|a| matching_preset(a, &presets))
                    .map(|p| p.id.to_string());
                dispatcher.dispatch(BenchAction::Detected(detected, preset));
            });
        });
    }
    {
        let dispatcher = state.dispatcher();
        let has_layers = state
            .finished
            .as_ref()
            .is_some_and(|f| f.report.throughput.is_some());
        let json = state
            .finished
            .as_ref()
            .filter(|_| has_layers)
            .map(|f| f.json.clone());
        use_effect_with((json, query.clone()), move |(json, query)| {
            if let (Some(json), Some(query)) = (json.clone(), query.clone()) {
                spawn_local(async move {
                    dispatcher.dispatch(BenchAction::Projected(js::project(json, query).await))
                });
            }
        });
    }
    let on_start = {
        let dispatcher = state.dispatcher();
        let state = state.clone();
        let query = query.unwrap_or_default();
        Callback::from(move |()| {
            if !state.can_start() {
                return;
            }
            let options = state.run_options(&query);
            let dispatcher = dispatcher.clone();
            dispatcher.dispatch(BenchAction::Started);
            spawn_local(async move {
                let progress = {
                    let dispatcher = dispatcher.clone();
                    move |p| dispatcher.dispatch(BenchAction::Progress(p))
                };
                let result = js::run(options, progress).await;
                dispatcher.dispatch(BenchAction::Finished(result));
            });
        })
    };
    let on_cancel = Callback::from(|()| spawn_local(js::cancel()));
    let on_export = {
        let finished = state.finished.clone();
        Callback::from(move |export: Export| {
            if let Some(f) = &finished {
                match export {
                    Export::Json => js::download("vramfit-bench.json", "application/json", &f.json),
                    Export::Markdown => {
                        js::download("vramfit-bench.md", "text/markdown", &f.markdown)
                    }
                }
            }
        })
    };
    let dispatcher = state.dispatcher();
    BenchHandle {
        state: Rc::new((*state).clone()),
        on_action: Callback::from(move |a| dispatcher.dispatch(a)),
        on_start,
        on_cancel,
        on_export,
    }
}
