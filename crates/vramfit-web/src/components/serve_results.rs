//! The results column for a serving engine (vLLM, SGLang, llama.cpp): a
//! notice when the inputs are invalid, the summary line, the verdict on
//! the GPU, what the engine allocates and, for vLLM and SGLang, how many
//! sequences its KV pool holds; then the launch command.

use super::{LaunchCommand, LinkExtras, Notice};
use crate::hooks::use_prefs;
use crate::i18n::{Key, Lang, t, tf};
use crate::labels;
use crate::present::{
    bytes, capacity, css_fill, group_digits, percent, ratio, share, verdict_title,
};
use crate::serve_report::{ServeView, Term};
use crate::state::{Action, Problem};
use std::rc::Rc;
use vramfit_core::config::MAX_DIMENSION;
use vramfit_core::engines::cache::CacheKind;
use vramfit_core::engines::{Engine, ServeAnswers};
use vramfit_core::share::Setting;
use yew::prelude::*;

/// Props of [`ServeResults`].
#[derive(Properties, PartialEq)]
pub struct ServeResultsProps {
    /// The engine's last valid answer.
    pub view: Rc<ServeView>,
    /// Whether it is older than the (invalid) inputs.
    pub stale: bool,
    /// A problem not tied to a field, if any.
    #[prop_or_default]
    pub problem: Option<Problem>,
    /// Settings in effect that the form does not show (a link set them).
    #[prop_or_default]
    pub extras: Vec<Setting>,
    /// Emits [`Action::ClearExtras`].
    pub on_action: Callback<Action>,
    /// The widget's view: the verdict and the engine's terms, without the
    /// limits card and the launch command.
    #[prop_or_default]
    pub compact: bool,
}

/// The label and the note of a term's tile.
fn term_texts(term: Term, pooled: bool) -> (Key, Key) {
    match (term, pooled) {
        (Term::Weights, _) => (Key::ServeWeightsTerm, Key::ServeWeightsNote),
        (Term::KvCache, false) => (Key::ServeKv, Key::ServeKvNote),
        (Term::KvCache, true) => (Key::ServeKvPool, Key::ServeKvPoolNote),
        (Term::ComputeBuffer, false) => (Key::ServeCompute, Key::ServeComputeNote),
        (Term::ComputeBuffer, true) => (Key::ServeCompute, Key::ServeComputePoolNote),
        (Term::Host, _) => (Key::ServeHost, Key::ServeHostNote),
        (Term::DeviceUsed, false) => (Key::DeviceUsed, Key::ServeDeviceNote),
        (Term::DeviceUsed, true) => (Key::DeviceUsed, Key::ServeDevicePoolNote),
    }
}

/// One answer of the limits card: its question and its value.
fn answer_row(id: &'static str, question: String, value: Option<u64>, shown: String) -> Html {
    html! {
        <div class="answer" id={id} data-value={value.map_or_else(|| "none".to_string(), |v| v.to_string())}>
            <dt>{ question }</dt>
            <dd>{ shown }</dd>
        </div>
    }
}

/// The questions asked both ways on this GPU: the longest context at the
/// concurrency, the most sequences at the context, the fewest GPUs.
fn answers_card(a: &ServeAnswers, engine: Engine, lang: Lang) -> Html {
    let none = || t(lang, Key::ServeNoneFits).to_string();
    let context = match a.max_context {
        // The search ends at the model's limit, else at the largest setting.
        Some(n) if n == a.context_limit && n < MAX_DIMENSION => {
            tf(lang, Key::ServeAtLimit, &[&group_digits(n)])
        }
        Some(0) | None => none(),
        Some(n) => tf(lang, Key::InputTokens, &[&group_digits(n)]),
    };
    let sequences = a.max_concurrency.map_or_else(none, group_digits);
    let gpus = match (engine, a.fewest_gpus) {
        (_, Some(n)) => group_digits(n),
        (_, None) => tf(
            lang,
            Key::ServeNoGpus,
            &[&group_digits(a.tp_degrees.last().copied().unwrap_or(1))],
        ),
    };
    html! {
        <section class="card" id="serve-answers" aria-labelledby="serve-answers-title">
            <h2 id="serve-answers-title" class="card-title">{ t(lang, Key::ServeAnswersTitle) }</h2>
            <p class="card-sub">{ t(lang, Key::ServeAnswersSub) }</p>
            <dl class="answers">
                { answer_row("answer-context", tf(lang, Key::ServeLongestContext, &[&group_digits(a.concurrency)]), a.max_context, context) }
                { answer_row("answer-sequences", tf(lang, Key::ServeMostSequences, &[&group_digits(a.context)]), a.max_concurrency, sequences) }
                { answer_row(
                    "answer-gpus",
                    t(lang, if engine == Engine::LlamaCpp { Key::ServeFewestGpusLayers } else { Key::ServeFewestGpus }).to_string(),
                    a.fewest_gpus,
                    gpus,
                ) }
            </dl>
        </section>
    }
}

/// Everything right of (or below) the form while an engine is chosen.
#[function_component]
pub fn ServeResults(props: &ServeResultsProps) -> Html {
    let prefs = use_prefs();
    let (lang, units) = (prefs.lang, prefs.units);
    let v = &props.view;
    let e = &v.estimate;
    let c = &e.config;
    let pooled = v.pooled();
    let engine = labels::engine(c.engine, lang);
    let notice = match (&props.problem, props.stale) {
        (Some(problem), _) => html! { <Notice kind="error" text={problem.message(lang)} /> },
        (None, true) => html! { <Notice kind="info" text={t(lang, Key::StaleNotice)} /> },
        (None, false) => html! {},
    };
    let on_clear = use_callback(props.on_action.clone(), |(), on_action| {
        on_action.emit(Action::ClearExtras)
    });
    let weights = labels::serve_weights(c.engine, c.weights.id(), lang);
    let setting = tf(
        lang,
        Key::ServeSub,
        &[
            &weights,
            c.kv.id(),
            &group_digits(c.context),
            &group_digits(c.concurrency),
        ],
    );
    let verdict = e.fit.as_ref().map(|fit| {
        let gpu = html! { <span translate="no">{ v.gpu_name.clone() }</span> };
        let used = e.device_used_bytes;
        // Tensor-parallel engines: "Fits on 2 × H100 (X GiB per GPU)".
        let (before, after) = verdict_title(lang, fit.fits, c.tp, &bytes(used, units));
        let cap = capacity(fit.usable_bytes, units);
        let filled = share(used, fit.usable_bytes);
        let detail = match (pooled, fit.fits) {
            (true, true) => tf(lang, Key::ServePoolFits, &[&group_digits(c.concurrency), &group_digits(c.context), &cap, &percent(c.gpu_memory_utilization)]),
            (true, false) => tf(lang, Key::ServePoolNoFit, &[&ratio(e.report.max_concurrency.unwrap_or(0.0)), &group_digits(c.context), &cap, &group_digits(c.concurrency)]),
            (false, true) => tf(lang, Key::FitsDetail, &[&bytes(used, units), &cap, &percent(filled), &bytes(fit.usable_bytes - used, units)]),
            (false, false) => tf(lang, Key::NoFitDetail, &[&bytes(used, units), &bytes(used - fit.usable_bytes, units), &cap]),
        };
        html! {
            <section id="serve-verdict" tabindex="-1" class={classes!("card", "verdict", if fit.fits { "fits" } else { "no-fit" })}
                data-fits={fit.fits.to_string()} aria-labelledby="serve-verdict-title">
                <div class="verdict-head">
                    <span class="verdict-icon" aria-hidden="true">{ if fit.fits { "✓" } else { "✕" } }</span>
                    <div>
                        <h2 id="serve-verdict-title" class="verdict-title">{ before }{ gpu }{ after }</h2>
                        <p class="verdict-detail">{ detail }</p>
                    </div>
                </div>
                if !pooled {
                    <div class="meter" role="meter" aria-label={t(lang, Key::MeterLabel)} aria-valuemin="0" aria-valuemax="100"
                        aria-valuenow={format!("{:.0}", filled * 100.0)} style={css_fill(filled)}></div>
                    <div class="meter-scale"><span>{ "0" }</span><span>{ cap.clone() }</span></div>
                }
                if let Some(limit) = e.beyond_trained_context {
                    <p class="verdict-warn" id="beyond-trained" data-value={limit.to_string()}>
                        { tf(lang, Key::BeyondTrained, &[&group_digits(limit)]) }
                    </p>
                }
            </section>
        }
    });
    let tile = |(term, value): (Term, vramfit_core::Bytes)| {
        let (label, note) = term_texts(term, pooled);
        html! {
            <div class="stat" id={term.id()} data-bytes={value.0.to_string()}>
                <div class="stat-label">{ t(lang, label) }</div>
                <div class="stat-value">{ bytes(value, units) }</div>
                <p class="stat-note">{ t(lang, note) }</p>
            </div>
        }
    };
    let pool = e.report.max_concurrency.zip(e.report.kv_tokens).map(|(conc, tokens)| {
        html! {
            <p class="max-batch" id="max-concurrency" data-value={conc.to_string()}>
                { tf(lang, Key::ServeMaxConcurrency, &[&group_digits(tokens), &ratio(conc), &group_digits(c.context)]) }
            </p>
        }
    });
    let layout = {
        let per_token = bytes(vramfit_core::Bytes(e.cache.bytes_per_token), units);
        let kind = match e.cache.kind {
            CacheKind::KeysValues { heads, head_dim } => tf(
                lang,
                Key::ServeCacheKv,
                &[&group_digits(heads), &group_digits(head_dim), &per_token],
            ),
            CacheKind::Latent { width } => tf(
                lang,
                Key::ServeCacheLatent,
                &[&group_digits(width), &per_token],
            ),
        };
        let sliding = e.cache.sliding.map(|h| {
            tf(
                lang,
                if h.chunked {
                    Key::ServeCacheChunked
                } else {
                    Key::ServeCacheSliding
                },
                &[
                    &group_digits(h.sliding),
                    &group_digits(h.full + h.sliding),
                    &group_digits(h.window),
                ],
            )
        });
        let linear = e.cache.linear.map(|l| {
            tf(
                lang,
                if l.mamba2 {
                    Key::ServeCacheMamba2
                } else {
                    Key::ServeCacheLinear
                },
                &[
                    &group_digits(l.layers),
                    &group_digits(l.of),
                    &bytes(vramfit_core::Bytes(l.bytes_per_sequence), units),
                ],
            )
        });
        let feed_forward = e.cache.feed_forward.map(|(layers, of)| {
            tf(
                lang,
                Key::ServeCacheFeedForward,
                &[&group_digits(layers), &group_digits(of)],
            )
        });
        let full = e.cache.full_layers.map(|f| {
            let heads = tf(
                lang,
                Key::ServeCacheFull,
                &[&group_digits(f.heads), &group_digits(f.head_dim)],
            );
            let reused = (f.reused > 0).then(|| {
                let key = if f.allocated {
                    Key::ServeCacheReusedAllocated
                } else {
                    Key::ServeCacheReused
                };
                tf(lang, key, &[&group_digits(f.reused)])
            });
            match reused {
                Some(r) => format!("{heads} {r}"),
                None => heads,
            }
        });
        let indexer = e.cache.indexer.map(|k| {
            tf(
                lang,
                Key::ServeCacheIndexer,
                &[&group_digits(k.bytes), &group_digits(k.layers)],
            )
        });
        let latent = matches!(e.cache.kind, CacheKind::Latent { .. });
        html! {
            <p class="serve-cache" id="serve-cache" data-kind={if latent { "latent" } else { "keys-values" }}>
                { kind }
                { for sliding.map(|s| html! { <>{ " " }{ s }</> }) }
                { for full.map(|s| html! { <>{ " " }{ s }</> }) }
                { for indexer.map(|s| html! { <>{ " " }{ s }</> }) }
                { for linear.map(|s| html! { <>{ " " }{ s }</> }) }
                { for feed_forward.map(|s| html! { <>{ " " }{ s }</> }) }
            </p>
        }
    };
    let decode = e.decode.map(|d| {
        html! {
            <p class="serve-decode" id="serve-decode" data-value={format!("{:.0}", d.tokens_per_s)}>
                { tf(lang, Key::ServeDecode, &[
                    &group_digits(d.tokens_per_s.round() as u64),
                    &format!("{:.0}", d.bandwidth_gbs),
                    &bytes(d.bytes_per_step, units),
                    &group_digits(d.sequences),
                ]) }
            </p>
        }
    });
    let answers = (!props.compact)
        .then_some(v.answers.as_ref())
        .flatten()
        .map(|a| answers_card(a, c.engine, lang));
    html! {
        <>
            { notice }
            <div id="results" class={classes!("results", props.stale.then_some("stale"))}
                data-state={if props.stale { "stale" } else { "fresh" }} data-engine={c.engine.id()}>
                <p class="summary" id="summary">
                    <span class="model-name" translate="no">{ v.model_name.clone() }</span>
                    { " · " }<span translate="no">{ engine }</span>
                </p>
                <LinkExtras extras={props.extras.clone()} on_clear={on_clear} />
                { for verdict }
                <section class="card" id="serve-terms" aria-labelledby="serve-title">
                    <h2 id="serve-title" class="card-title">{ tf(lang, Key::ServeTitle, &[engine]) }</h2>
                    <p class="card-sub" id="serve-setting">{ setting }</p>
                    <div class="stats">{ for v.terms().into_iter().map(tile) }</div>
                    { layout }
                    { for pool }
                    { for decode }
                </section>
                { for answers }
                if !props.compact {
                    <LaunchCommand command={v.launch.clone()} engine={engine} />
                }
            </div>
        </>
    }
}
