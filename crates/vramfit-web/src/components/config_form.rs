//! The configuration card: model (or an imported `config.json`), batch,
//! input size, accumulation, precision, optimizer, checkpointing, attention
//! and GPU; in inference mode the serving engine and its settings.

use super::select_field::Search;
use super::{CustomModel, ImportBox, ModeSwitch, NumberField, SelectField};
use crate::catalog::{self, Catalog};
use crate::hooks::use_prefs;
use crate::i18n::{Key, t, tf};
use crate::import::ImportState;
use crate::state::{Action, CheckpointChoice, Field, FieldErrors, IMPORTED_MODEL, Inputs};
use std::rc::Rc;
use vramfit_core::config::Mode;
use vramfit_core::engines::Engine;
use yew::prelude::*;

/// Props of [`ConfigForm`].
#[derive(Properties, PartialEq)]
pub struct ConfigFormProps {
    /// The presets offered.
    pub catalog: Rc<Catalog>,
    /// What the user entered.
    pub inputs: Inputs,
    /// The `config.json` box.
    pub import: ImportState,
    /// Why fields are invalid.
    pub errors: FieldErrors,
    /// The count fields the selected model uses, in order.
    pub fields: Vec<Field>,
    /// Whether the model reads tokens (attention applies).
    pub tokens: bool,
    /// Whether the selects list every option (see [`SelectField`]'s `full`)
    /// and the collapsed import and custom-model boxes have their bodies:
    /// `false` only in the app's first render, until that has been painted.
    pub built: bool,
    /// Emits each change.
    pub on_action: Callback<Action>,
}

/// The batch field's text as typed, given by a context rather than in
/// [`ConfigFormProps::inputs`] (which holds [`Inputs::without_batch`]): a
/// batch edit, the commonest, then re-renders that field, not the whole
/// form, before its verdict is painted.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchText(pub AttrValue);

/// Props of [`BatchField`]: [`NumberField`]'s but its value.
#[derive(Properties, PartialEq)]
struct BatchFieldProps {
    label: AttrValue,
    hint: AttrValue,
    error: Option<AttrValue>,
    oninput: Callback<String>,
}

/// The batch's [`NumberField`], its value from [`BatchText`].
#[function_component]
fn BatchField(props: &BatchFieldProps) -> Html {
    let value = use_context::<BatchText>().map(|b| b.0).unwrap_or_default();
    html! {
        <NumberField
            id={Field::Batch.id()}
            label={props.label.clone()}
            hint={props.hint.clone()}
            {value}
            error={props.error.clone()}
            oninput={props.oninput.clone()}
        />
    }
}

/// The inputs. A `<section>`, not a `<form>`: there is nothing to submit, and
/// Enter in a lone text field would otherwise reload the page.
#[function_component]
pub fn ConfigForm(props: &ConfigFormProps) -> Html {
    let prefs = use_prefs();
    let lang = prefs.lang;
    let imported = props.import.model.as_ref().map(|m| m.name.clone());
    let models = {
        let catalog = props.catalog.clone();
        use_memo((lang, imported), move |(lang, imported)| {
            catalog.model_groups(imported.as_deref(), *lang)
        })
    };
    let gpus = {
        let catalog = props.catalog.clone();
        use_memo((prefs.units, lang), move |(units, lang)| {
            catalog.gpu_groups(*units, *lang)
        })
    };
    let choices = use_memo(lang, |lang| {
        (
            Rc::new(catalog::precisions(*lang)),
            Rc::new(catalog::optimizers(*lang)),
            Rc::new(catalog::checkpointing(*lang)),
            Rc::new(catalog::attentions(*lang)),
            Rc::new(catalog::optimizer_impls(*lang)),
        )
    });
    let (precisions, optimizers, checkpointing, attentions, impls) = (*choices).clone();
    let inference = props.inputs.mode == Mode::Inference;
    let parallel_choices = use_memo(
        (lang, inference, props.inputs.strategy, props.inputs.offload),
        |(lang, inference, strategy, offload)| {
            (
                Rc::new(catalog::strategies(*lang, *inference, *strategy)),
                Rc::new(catalog::offloads(*lang, *inference, *offload)),
            )
        },
    );
    let (strategies, offloads) = (*parallel_choices).clone();
    let loop_choices = use_memo(lang, |lang| catalog::loop_choices(*lang).map(Rc::new));
    let [
        zero_grads,
        loop_outputs,
        autocast_regions,
        pytorch_releases,
        training_caches,
        attention_masks,
    ] = (*loop_choices).clone();
    // The training-loop section opens once a setting in it differs from the
    // default (a link's) and then stays as the user leaves it: picking the
    // default again must not fold it away under the pointer.
    let loop_open = use_mut_ref(|| false);
    if props.inputs.loop_changed() {
        *loop_open.borrow_mut() = true;
    }
    let loop_open = *loop_open.borrow();
    let serve = &props.inputs.serve;
    let serve_choices = use_memo(
        (lang, serve.engine, serve.weights.clone(), serve.kv),
        |(lang, engine, weights, kv)| {
            (
                Rc::new(catalog::engines(*lang)),
                Rc::new(catalog::serve_weights(*engine, weights, *lang)),
                Rc::new(catalog::kv_dtypes(*engine, *kv)),
            )
        },
    );
    let (engines, serve_weights, kv_dtypes) = (*serve_choices).clone();
    let handlers = use_memo(props.on_action.clone(), Handlers::new);
    // A serving engine (not Hugging Face's simulation) reads only its own
    // settings: its sequences are the concurrency (not the batch), its GPUs
    // split the model (no data-parallel strategy, no optimizer to offload),
    // and vLLM and SGLang pick the weights' type and attention themselves.
    let engine = props.inputs.engine();
    let torch_engine = props.inputs.engine_picks_kernels();
    let number = |field: Field| {
        let label = match (field, engine) {
            (Field::Gpus, Some(_)) => Key::GpusServing,
            (Field::Context, Some(_)) => Key::ContextLength,
            _ => field.label(),
        };
        // An engine's context of 0 is the sequence length: the field shows
        // that length, and its error.
        let shows = if field == Field::Context && props.inputs.context_is_seq() {
            Field::Seq
        } else {
            field
        };
        let hint = match (field, props.inputs.effective_batch()) {
            (Field::Gpus, _) if engine == Some(Engine::LlamaCpp) => {
                t(lang, Key::GpusLayerSplitHint).to_string()
            }
            (Field::Gpus, _) if engine.is_some() => {
                t(lang, Key::GpusTensorParallelHint).to_string()
            }
            (Field::Context, _) if engine.is_some() => t(lang, Key::ContextServingHint).to_string(),
            (Field::Accum, Some((effective, batch, accum))) if accum > 1 => tf(
                lang,
                Key::EffectiveBatch,
                &[
                    &effective.to_string(),
                    &batch.to_string(),
                    &accum.to_string(),
                ],
            ),
            // Inference runs no backward pass.
            (Field::Batch, _) if !props.inputs.trains() => {
                t(lang, Key::BatchHintInference).to_string()
            }
            (Field::Seq, _) if !props.inputs.trains() => t(lang, Key::SeqHintInference).to_string(),
            _ => t(lang, field.hint()).to_string(),
        };
        let error = props
            .errors
            .get(shows)
            .map(|e| AttrValue::from(e.message(shows, lang)));
        if field == Field::Batch {
            return html! {
                <BatchField label={t(lang, field.label())} {hint} {error} oninput={handlers.number(field)} />
            };
        }
        html! {
            <NumberField
                id={field.id()}
                label={t(lang, label)}
                {hint}
                unit={field.unit().map(|u| AttrValue::from(t(lang, u)))}
                value={props.inputs.get(shows).to_string()}
                {error}
                oninput={handlers.number(field)}
            />
        }
    };
    let shown = |f: Field| props.fields.contains(&f);
    let size = [Field::Seq, Field::Image].into_iter().find(|f| shown(*f));
    let import_open = props.inputs.model == IMPORTED_MODEL || props.import.error.is_some();
    html! {
        <section class="card config" aria-labelledby="config-title">
            <h2 id="config-title" class="card-title">{ t(lang, Key::Configuration) }</h2>
            <ModeSwitch mode={props.inputs.mode} onchange={handlers.mode.clone()} />
            <SelectField
                full={props.built}
                id="model"
                label={t(lang, Key::Model)}
                groups={models}
                proper_names=true
                search={Search { label: t(lang, Key::SearchModels).into(), placeholder: t(lang, Key::SearchModelsHint).into(), no_match: t(lang, Key::SearchNone).into() }}
                value={props.inputs.model.clone()}
                onchange={handlers.model.clone()}
            />
            <ImportBox import={props.import.clone()} open={import_open} built={props.built} on_action={props.on_action.clone()} />
            <CustomModel built={props.built} on_action={props.on_action.clone()} />
            <div class="field-row">
                if engine.is_some() {
                    { number(Field::Concurrency) }
                    { number(Field::Context) }
                } else {
                    { number(Field::Batch) }
                    { for size.map(number) }
                }
            </div>
            if shown(Field::Accum) {
                { number(Field::Accum) }
            }
            if !torch_engine {
                <div class="field-row">
                    <SelectField
                        full={props.built}
                        id="precision"
                        label={t(lang, Key::Precision)}
                        groups={precisions}
                        value={props.inputs.precision.id()}
                        onchange={handlers.precision.clone()}
                    />
                    if props.inputs.trains() {
                        <SelectField
                            full={props.built}
                            id="optimizer"
                            label={t(lang, Key::Optimizer)}
                            groups={optimizers}
                            value={props.inputs.optimizer.id()}
                            onchange={handlers.optimizer.clone()}
                        />
                    }
                </div>
            }
            if props.inputs.trains() && props.inputs.optimizer_has_impls() {
                <SelectField
                    full={props.built}
                    id="optimizer-impl"
                    label={t(lang, Key::OptimizerImpl)}
                    groups={impls}
                    value={props.inputs.rest.optimizer_impl.id()}
                    hint={AttrValue::from(t(lang, Key::OptimizerImplHint))}
                    onchange={handlers.optimizer_impl.clone()}
                />
            }
            if props.inputs.trains() {
                <div class="field-row">
                    <SelectField
                        full={props.built}
                        id="checkpointing"
                        label={t(lang, Key::Checkpointing)}
                        groups={checkpointing}
                        value={props.inputs.checkpointing.id()}
                        onchange={handlers.checkpointing.clone()}
                    />
                    if shown(Field::EveryK) {
                        { number(Field::EveryK) }
                    }
                </div>
            }
            if props.tokens && !torch_engine {
                <SelectField
                    full={props.built}
                    id="attention"
                    label={t(lang, Key::Attention)}
                    groups={attentions}
                    value={props.inputs.attention.id()}
                    hint={AttrValue::from(t(lang, if engine == Some(Engine::LlamaCpp) { Key::AttentionLlamaCppHint } else { Key::AttentionHint }))}
                    onchange={handlers.attention.clone()}
                />
            }
            if props.inputs.trains() {
                <details class="import loop-group" id="loop-group" open={loop_open}>
                    <summary>{ t(lang, Key::LoopGroup) }</summary>
                    <div class="import-body loop-body">
                        <p class="field-hint">{ t(lang, Key::LoopGroupHint) }</p>
                        if props.inputs.shows_zero_grad() {
                            <SelectField
                                full={props.built}
                                id="zero-grad"
                                label={t(lang, Key::ZeroGradField)}
                                groups={zero_grads}
                                value={props.inputs.rest.zero_grad.id()}
                                hint={AttrValue::from(t(lang, Key::ZeroGradHint))}
                                onchange={handlers.zero_grad.clone()}
                            />
                        }
                        <SelectField
                            full={props.built}
                            id="loop-outputs"
                            label={t(lang, Key::LoopOutputsField)}
                            groups={loop_outputs}
                            value={props.inputs.rest.loop_outputs.id()}
                            hint={AttrValue::from(t(lang, Key::LoopOutputsHint))}
                            onchange={handlers.loop_outputs.clone()}
                        />
                        if props.inputs.shows_autocast_region() {
                            <SelectField
                                full={props.built}
                                id="autocast-region"
                                label={t(lang, Key::AutocastRegionField)}
                                groups={autocast_regions}
                                value={props.inputs.rest.autocast_region.id()}
                                hint={AttrValue::from(t(lang, Key::AutocastRegionHint))}
                                onchange={handlers.autocast_region.clone()}
                            />
                        }
                        <SelectField
                            full={props.built}
                            id="pytorch"
                            label={t(lang, Key::PytorchField)}
                            groups={pytorch_releases}
                            value={props.inputs.rest.pytorch.id()}
                            hint={AttrValue::from(t(lang, Key::PytorchHint))}
                            onchange={handlers.pytorch.clone()}
                        />
                        if props.tokens {
                            <SelectField
                                full={props.built}
                                id="training-cache"
                                label={t(lang, Key::TrainingCacheField)}
                                groups={training_caches}
                                value={props.inputs.rest.training_cache.id()}
                                hint={AttrValue::from(t(lang, Key::TrainingCacheHint))}
                                onchange={handlers.training_cache.clone()}
                            />
                            <SelectField
                                full={props.built}
                                id="attention-mask"
                                label={t(lang, Key::AttentionMaskField)}
                                groups={attention_masks}
                                value={props.inputs.rest.attention_mask.id()}
                                hint={AttrValue::from(t(lang, Key::AttentionMaskHint))}
                                onchange={handlers.attention_mask.clone()}
                            />
                        }
                    </div>
                </details>
            }
            <SelectField
                full={props.built}
                id="gpu"
                label={t(lang, Key::Gpu)}
                groups={gpus}
                proper_names=true
                search={Search { label: t(lang, Key::SearchGpus).into(), placeholder: t(lang, Key::SearchGpusHint).into(), no_match: t(lang, Key::SearchNone).into() }}
                value={props.inputs.gpu.clone()}
                hint={AttrValue::from(t(lang, Key::GpuHint))}
                onchange={handlers.gpu.clone()}
            />
            if shown(Field::GpuMemory) {
                { number(Field::GpuMemory) }
            }
            if engine.is_some() {
                { number(Field::Gpus) }
            } else {
                <fieldset class="field-group" id="parallel-group">
                    <legend>{ t(lang, Key::GpusGroup) }</legend>
                    { number(Field::Gpus) }
                    if shown(Field::Ep) {
                        { number(Field::Ep) }
                    }
                    if shown(Field::Etp) {
                        { number(Field::Etp) }
                    }
                    <div class="field-row">
                        <SelectField
                            full={props.built}
                            id="strategy"
                            label={t(lang, Key::Strategy)}
                            groups={strategies}
                            value={props.inputs.strategy.id()}
                            onchange={handlers.strategy.clone()}
                        />
                        <SelectField
                            full={props.built}
                            id="offload"
                            label={t(lang, Key::Offload)}
                            groups={offloads}
                            value={props.inputs.offload.id()}
                            onchange={handlers.offload.clone()}
                        />
                    </div>
                </fieldset>
            }
            if engine.is_none() && (shown(Field::LoraRank) || shown(Field::Context)) {
                <div class="field-row">
                    if shown(Field::LoraRank) {
                        { number(Field::LoraRank) }
                    }
                    if shown(Field::Context) {
                        { number(Field::Context) }
                    }
                </div>
            }
            if props.inputs.mode == Mode::Inference {
                <fieldset class="field-group" id="serving-group">
                    <legend>{ t(lang, Key::ServingGroup) }</legend>
                    <SelectField
                        full={props.built}
                        id="engine"
                        label={t(lang, Key::Engine)}
                        groups={engines}
                        proper_names=true
                        value={serve.engine.id()}
                        hint={AttrValue::from(t(lang, Key::EngineHint))}
                        onchange={handlers.engine.clone()}
                    />
                    if serve.engine != Engine::Hf {
                        <div class="field-row">
                            <SelectField
                                full={props.built}
                                id="serve-weights"
                                label={t(lang, Key::ServeWeights)}
                                groups={serve_weights}
                                proper_names=true
                                value={serve.weights.clone()}
                                onchange={handlers.serve_weights.clone()}
                            />
                            <SelectField
                                full={props.built}
                                id="kv-dtype"
                                label={t(lang, Key::KvDtype)}
                                groups={kv_dtypes}
                                proper_names=true
                                value={serve.kv.id()}
                                onchange={handlers.kv.clone()}
                            />
                        </div>
                        <p class="field-hint" id="serving-hint">{ t(lang, Key::ServeWeightsHint) }{ " " }{ t(lang, Key::KvDtypeHint) }</p>
                        <div class="field-row">
                            if shown(Field::Utilization) {
                                { number(Field::Utilization) }
                            }
                            if shown(Field::GpuLayers) {
                                { number(Field::GpuLayers) }
                            }
                        </div>
                    }
                </fieldset>
            }
        </section>
    }
}

/// The form's callbacks, made once per `on_action`: a new callback on every
/// render would make every field's props differ, so each select would
/// render its options again on each keystroke.
struct Handlers {
    model: Callback<String>,
    precision: Callback<String>,
    optimizer: Callback<String>,
    optimizer_impl: Callback<String>,
    zero_grad: Callback<String>,
    loop_outputs: Callback<String>,
    autocast_region: Callback<String>,
    pytorch: Callback<String>,
    training_cache: Callback<String>,
    attention_mask: Callback<String>,
    checkpointing: Callback<String>,
    attention: Callback<String>,
    gpu: Callback<String>,
    strategy: Callback<String>,
    offload: Callback<String>,
    mode: Callback<Mode>,
    engine: Callback<String>,
    serve_weights: Callback<String>,
    kv: Callback<String>,
    /// One per number field.
    numbers: Vec<(Field, Callback<String>)>,
}

impl Handlers {
    fn new(on_action: &Callback<Action>) -> Handlers {
        // Turns a select's new value into an action; `None` ignores it.
        let select = |make: fn(String) -> Option<Action>| {
            let on_action = on_action.clone();
            Callback::from(move |value: String| {
                if let Some(action) = make(value) {
                    on_action.emit(action);
                }
            })
        };
        let numbers = [
            Field::Batch,
            Field::Seq,
            Field::Image,
            Field::Accum,
            Field::EveryK,
            Field::Gpus,
            Field::Ep,
            Field::Etp,
            Field::GpuMemory,
            Field::LoraRank,
            Field::Context,
            Field::Concurrency,
            Field::Utilization,
            Field::GpuLayers,
        ]
        .into_iter()
        .map(|field| {
            let on_action = on_action.clone();
            (
                field,
                Callback::from(move |v: String| on_action.emit(Action::SetField(field, v))),
            )
        })
        .collect();
        Handlers {
            model: select(|v| Some(Action::SetModel(v))),
            precision: select(|v| v.parse().ok().map(Action::SetPrecision)),
            optimizer: select(|v| v.parse().ok().map(Action::SetOptimizer)),
            optimizer_impl: select(|v| v.parse().ok().map(Action::SetOptimizerImpl)),
            zero_grad: select(|v| v.parse().ok().map(Action::SetZeroGrad)),
            loop_outputs: select(|v| v.parse().ok().map(Action::SetLoopOutputs)),
            autocast_region: select(|v| v.parse().ok().map(Action::SetAutocastRegion)),
            pytorch: select(|v| v.parse().ok().map(Action::SetPytorch)),
            training_cache: select(|v| v.parse().ok().map(Action::SetTrainingCache)),
            attention_mask: select(|v| v.parse().ok().map(Action::SetAttentionMask)),
            checkpointing: select(|v| CheckpointChoice::parse(&v).map(Action::SetCheckpointing)),
            attention: select(|v| v.parse().ok().map(Action::SetAttention)),
            gpu: select(|v| Some(Action::SetGpu(v))),
            strategy: select(|v| v.parse().ok().map(Action::SetStrategy)),
            offload: select(|v| v.parse().ok().map(Action::SetOffload)),
            mode: {
                let on_action = on_action.clone();
                Callback::from(move |m: Mode| on_action.emit(Action::SetMode(m)))
            },
            engine: select(|v| v.parse().ok().map(Action::SetEngine)),
            serve_weights: select(|v| Some(Action::SetServeWeights(v))),
            kv: select(|v| v.parse().ok().map(Action::SetKvDtype)),
            numbers,
        }
    }

    /// The number field's callback.
    fn number(&self, field: Field) -> Callback<String> {
        self.numbers
            .iter()
            .find(|(f, _)| *f == field)
            .map_or_else(Callback::noop, |(_, c)| c.clone())
    }
}
