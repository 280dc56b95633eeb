//! "Describe a model by its dimensions": architecture, layers, widths and
//! vocabulary become a `config.json` ([`crate::custom`]) that goes through
//! the import box like a pasted one.

use crate::custom::{Activation, DimError, DimField, Dims, Family, Layout};
use crate::hooks::use_prefs;
use crate::i18n::{Key, Lang, t};
use crate::state::Action;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// Props of [`CustomModel`].
#[derive(Properties, PartialEq)]
pub struct CustomModelProps {
    /// Emits [`Action::ImportConfig`] with the generated `config.json`.
    pub on_action: Callback<Action>,
    /// Whether the form is rendered: `false` in the app's first render
    /// (prerendered and hydrated: the summary line only), until that has
    /// been painted; see [`super::SelectField`]'s `full`.
    pub built: bool,
}

/// The collapsible custom-model form.
#[function_component]
pub fn CustomModel(props: &CustomModelProps) -> Html {
    let lang = use_prefs().lang;
    let dims = use_state(Dims::default);
    if !props.built {
        return html! {
            <details class="import custom-model">
                <summary>{ t(lang, Key::CustomTitle) }</summary>
            </details>
        };
    }
    let result = dims.config_json();
    let error = result.as_ref().err().map(|e| message(e, lang));
    let field = |f: DimField, label: Key, value: &str| {
        let id = format!("custom-{}", field_id(f));
        // Lists (widths, blocks per stage) take commas: not the numeric keypad.
        let inputmode = if matches!(f, DimField::Depths | DimField::Widths) {
            "text"
        } else {
            "numeric"
        };
        let oninput = {
            let dims = dims.clone();
            Callback::from(move |e: InputEvent| {
                if let Some(input) = e.target_dyn_into::<HtmlInputElement>() {
                    let mut d = (*dims).clone();
                    *slot(&mut d, f) = input.value();
                    dims.set(d);
                }
            })
        };
        // Fields that may be blank say what blank means.
        let placeholder = match f {
            DimField::HeadDim => Some(t(lang, Key::CustomHeadDimBlank)),
            DimField::Window | DimField::SharedExperts | DimField::DenseLayers => {
                Some(t(lang, Key::CustomWindowBlank))
            }
            DimField::Experts => Some(t(lang, Key::CustomExpertsBlank)),
            DimField::ExpertWidth => Some(t(lang, Key::CustomExpertWidthBlank)),
            _ => None,
        };
        html! {
            <div class="field">
                <label for={id.clone()}>{ t(lang, label) }</label>
                <input id={id} type="text" {inputmode} autocomplete="off" {placeholder} value={value.to_string()} {oninput} />
            </div>
        }
    };
    // A select's new value turned into new dimensions (`None`: ignored).
    let on_select = |update: fn(&Dims, &str) -> Option<Dims>| {
        let dims = dims.clone();
        Callback::from(move |e: Event| {
            if let Some(d) = e
                .target_dyn_into::<HtmlSelectElement>()
                .and_then(|s| update(&dims, &s.value()))
            {
                dims.set(d);
            }
        })
    };
    let onfamily = on_select(|d, v| Family::parse(v).map(|family| d.with_family(family)));
    let onblock = on_select(|d, v| {
        Some(Dims {
            bottleneck: v == "bottleneck",
            ..d.clone()
        })
    });
    let onlayout = on_select(|d, v| Layout::parse(v).map(|layout| d.with_layout(layout)));
    let ontied = {
        let dims = dims.clone();
        Callback::from(move |e: Event| {
            if let Some(input) = e.target_dyn_into::<HtmlInputElement>() {
                dims.set(Dims {
                    tied: input.checked(),
                    ..(*dims).clone()
                });
            }
        })
    };
    let onactivation = on_select(|d, v| {
        Activation::parse(v).map(|activation| Dims {
            activation,
            ..d.clone()
        })
    });
    let onsubmit = {
        let on_action = props.on_action.clone();
        let json = result.clone().ok();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            if let Some(json) = json.clone() {
                on_action.emit(Action::ImportConfig(json));
            }
        })
    };
    html! {
        <details class="import custom-model">
            <summary>{ t(lang, Key::CustomTitle) }</summary>
            <form class="import-body custom-body" {onsubmit}>
                <div class="field">
                    <label for="custom-family">{ t(lang, Key::CustomFamily) }</label>
                    <select id="custom-family" onchange={onfamily}>
                        { for Family::ALL.into_iter().map(|f| html! {
                            <option value={f.id()} selected={f == dims.family}>{ t(lang, family_label(f)) }</option>
                        }) }
                    </select>
                </div>
                <div class="custom-grid">
                    if dims.family == Family::Llama {
                        <div class="field field-wide">
                            <label for="custom-layout">{ t(lang, Key::CustomLayout) }</label>
                            <select id="custom-layout" onchange={onlayout}>
                                { for Layout::ALL.into_iter().map(|l| html! {
                                    <option value={l.id()} selected={l == dims.layout}>{ t(lang, layout_label(l).0) }</option>
                                }) }
                            </select>
                            <p class="field-hint">{ t(lang, layout_label(dims.layout).1) }</p>
                        </div>
                    }
                    if dims.family.is_transformer() {
                        { field(DimField::Layers, Key::CustomLayers, &dims.layers) }
                        { field(DimField::Hidden, Key::CustomHidden, &dims.hidden) }
                        { field(DimField::Heads, Key::CustomHeads, &dims.heads) }
                        if dims.family.has_kv_heads() && dims.layout.has_kv_heads() {
                            { field(DimField::KvHeads, Key::CustomKvHeads, &dims.kv_heads) }
                        }
                        { field(DimField::Intermediate, Key::CustomIntermediate, &dims.intermediate) }
                        { field(DimField::Vocab, Key::CustomVocab, &dims.vocab) }
                    }
                    if dims.family == Family::Llama && dims.layout.has_kv_heads() {
                        { field(DimField::HeadDim, Key::CustomHeadDim, &dims.head_dim) }
                    }
                    if dims.family == Family::Llama {
                        if dims.layout.slides() {
                            { field(DimField::Window, Key::CustomWindow, &dims.window) }
                        }
                        if dims.layout == Layout::Llama {
                            { field(DimField::Experts, Key::CustomExperts, &dims.experts) }
                            if !dims.experts.trim().is_empty() {
                                { field(DimField::ExpertsPerToken, Key::CustomExpertsPerToken, &dims.experts_per_token) }
                                { field(DimField::ExpertWidth, Key::CustomExpertWidth, &dims.expert_width) }
                                { field(DimField::SharedExperts, Key::CustomSharedExperts, &dims.shared_experts) }
                                { field(DimField::DenseLayers, Key::CustomDenseLayers, &dims.dense_layers) }
                            }
                        }
                        <label class="custom-check field-wide" for="custom-tied">
                            <input id="custom-tied" type="checkbox" checked={dims.tied} onchange={ontied} />
                            { t(lang, Key::CustomTied) }
                        </label>
                    }
                    if dims.family == Family::ResNet {
                        { field(DimField::Depths, Key::CustomDepths, &dims.depths) }
                        <div class="field field-wide">
                            <label for="custom-block">{ t(lang, Key::CustomBlock) }</label>
                            <select id="custom-block" onchange={onblock}>
                                <option value="bottleneck" selected={dims.bottleneck}>{ t(lang, Key::CustomBottleneck) }</option>
                                <option value="basic" selected={!dims.bottleneck}>{ t(lang, Key::CustomBasic) }</option>
                            </select>
                        </div>
                    }
                    if dims.family == Family::Mlp {
                        { field(DimField::Input, Key::CustomInput, &dims.input) }
                        { field(DimField::Widths, Key::CustomWidths, &dims.widths) }
                        <div class="field">
                            <label for="custom-activation">{ t(lang, Key::CustomActivation) }</label>
                            <select id="custom-activation" onchange={onactivation}>
                                { for Activation::ALL.into_iter().map(|a| html! {
                                    <option value={a.id()} selected={a == dims.activation}>{ t(lang, activation_label(a)) }</option>
                                }) }
                            </select>
                        </div>
                    }
                    if !dims.family.is_transformer() {
                        { field(DimField::Classes, Key::CustomClasses, &dims.classes) }
                    }
                </div>
                if let Some(message) = error.clone() {
                    <p class="field-error" id="custom-error" role="alert">{ message }</p>
                }
                <button type="submit" class="link-button" id="custom-use" disabled={error.is_some()}>{ t(lang, Key::CustomUse) }</button>
            </form>
        </details>
    }
}

fn field_id(f: DimField) -> &'static str {
    match f {
        DimField::Layers => "layers",
        DimField::Hidden => "hidden",
        DimField::Heads => "heads",
        DimField::KvHeads => "kv-heads",
        DimField::HeadDim => "head-dim",
        DimField::Window => "window",
        DimField::Experts => "experts",
        DimField::ExpertsPerToken => "experts-per-token",
        DimField::ExpertWidth => "expert-width",
        DimField::SharedExperts => "shared-experts",
        DimField::DenseLayers => "dense-layers",
        DimField::Intermediate => "intermediate",
        DimField::Vocab => "vocab",
        DimField::Depths => "depths",
        DimField::Input => "input",
        DimField::Widths => "widths",
        DimField::Classes => "classes",
    }
}

fn activation_label(a: Activation) -> Key {
    match a {
        Activation::Relu => Key::CustomRelu,
        Activation::Gelu => Key::CustomGelu,
        Activation::None => Key::CustomActNone,
    }
}

fn slot(d: &mut Dims, f: DimField) -> &mut String {
    match f {
        DimField::Layers => &mut d.layers,
        DimField::Hidden => &mut d.hidden,
        DimField::Heads => &mut d.heads,
        DimField::KvHeads => &mut d.kv_heads,
        DimField::HeadDim => &mut d.head_dim,
        DimField::Window => &mut d.window,
        DimField::Experts => &mut d.experts,
        DimField::ExpertsPerToken => &mut d.experts_per_token,
        DimField::ExpertWidth => &mut d.expert_width,
        DimField::SharedExperts => &mut d.shared_experts,
        DimField::DenseLayers => &mut d.dense_layers,
        DimField::Intermediate => &mut d.intermediate,
        DimField::Vocab => &mut d.vocab,
        DimField::Depths => &mut d.depths,
        DimField::Input => &mut d.input,
        DimField::Widths => &mut d.widths,
        DimField::Classes => &mut d.classes,
    }
}

/// A layout's name and what its blocks do.
fn layout_label(l: Layout) -> (Key, Key) {
    match l {
        Layout::Llama => (Key::CustomLayoutLlama, Key::CustomAboutLlama),
        Layout::Qwen3 => (Key::CustomLayoutQwen3, Key::CustomAboutQwen3),
        Layout::Olmo2 => (Key::CustomLayoutOlmo2, Key::CustomAboutOlmo2),
        Layout::Gemma => (Key::CustomLayoutGemma, Key::CustomAboutGemma),
        Layout::Gemma2 => (Key::CustomLayoutGemma2, Key::CustomAboutGemma2),
        Layout::Gemma3 => (Key::CustomLayoutGemma3, Key::CustomAboutGemma3),
        Layout::Phi3 => (Key::CustomLayoutPhi3, Key::CustomAboutPhi3),
        Layout::GptNeox => (Key::CustomLayoutGptNeox, Key::CustomAboutGptNeox),
    }
}

fn family_label(f: Family) -> Key {
    match f {
        Family::Gpt2 => Key::CustomGpt2,
        Family::Llama => Key::CustomLlama,
        Family::Bert => Key::CustomBert,
        Family::ResNet => Key::CustomResnet,
        Family::Mlp => Key::CustomMlp,
    }
}

fn message(e: &DimError, lang: Lang) -> String {
    let label = |f: DimField| {
        t(
            lang,
            match f {
                DimField::Layers => Key::CustomLayers,
                DimField::Hidden => Key::CustomHidden,
                DimField::Heads => Key::CustomHeads,
                DimField::KvHeads => Key::CustomKvHeads,
                DimField::HeadDim => Key::CustomHeadDim,
                DimField::Window => Key::CustomWindow,
                DimField::Experts => Key::CustomExperts,
                DimField::ExpertsPerToken => Key::CustomExpertsPerToken,
                DimField::ExpertWidth => Key::CustomExpertWidth,
                DimField::SharedExperts => Key::CustomSharedExperts,
                DimField::DenseLayers => Key::CustomDenseLayers,
                DimField::Intermediate => Key::CustomIntermediate,
                DimField::Vocab => Key::CustomVocab,
                DimField::Depths => Key::CustomDepths,
                DimField::Input => Key::CustomInput,
                DimField::Widths => Key::CustomWidths,
                DimField::Classes => Key::CustomClasses,
            },
        )
    };
    let max = crate::present::group_digits(vramfit_core::config::MAX_DIMENSION);
    match e {
        DimError::Field(f, _) => crate::i18n::tf(lang, Key::CustomBadField, &[label(*f), &max]),
        DimError::List(f) => crate::i18n::tf(lang, Key::CustomBadList, &[label(*f), &max]),
        DimError::HeadsDoNotDivide => t(lang, Key::CustomHeadsDivide).to_string(),
        DimError::KvHeadsDoNotDivide => t(lang, Key::CustomKvDivide).to_string(),
        DimError::Stages => t(lang, Key::CustomStages).to_string(),
        DimError::TopKExceedsExperts => t(lang, Key::CustomTopKExceeds).to_string(),
        DimError::MoeCombination => t(lang, Key::CustomMoeCombination).to_string(),
    }
}
