//! The widget's inputs: each editable or, when the embedding page locked
//! it (`lock=`), shown as read-only text.

use super::{NumberField, SelectField};
use crate::catalog::{self, ChoiceGroup};
use crate::hooks::use_prefs;
use crate::i18n::{Key, t};
use crate::labels;
use crate::state::{Action, AppState, CheckpointChoice, Field};
use crate::url::WidgetOptions;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`WidgetForm`].
#[derive(Properties, PartialEq)]
pub struct WidgetFormProps {
    /// The widget's state.
    pub state: Rc<AppState>,
    /// Which inputs are locked.
    pub options: WidgetOptions,
    /// Emits each change.
    pub on_action: Callback<Action>,
}

/// The compact form.
#[function_component]
pub fn WidgetForm(props: &WidgetFormProps) -> Html {
    let prefs = use_prefs();
    let lang = prefs.lang;
    let s = &props.state;
    let inputs = &s.inputs;
    let locked = |key: &str| props.options.is_locked(key);
    let fixed = |key: &'static str, label: Key, value: String| {
        html! {
            <div class="locked-field" data-key={key}>
                <span class="field-label">{ t(lang, label) }</span>
                <span class="locked-value">{ value }</span>
            </div>
        }
    };
    let select = |key: &'static str,
                  id: &'static str,
                  label: Key,
                  groups: Vec<ChoiceGroup>,
                  value: String,
                  make: fn(String) -> Option<Action>| {
        let on_action = props.on_action.clone();
        let onchange = Callback::from(move |v: String| {
            if let Some(a) = make(v) {
                on_action.emit(a);
            }
        });
        let proper_names = matches!(key, "m" | "g");
        html! { <SelectField {id} label={t(lang, label)} groups={Rc::new(groups)} {value} {proper_names} {onchange} /> }
    };
    let number = |field: Field| {
        let on_action = props.on_action.clone();
        html! {
            <NumberField
                id={field.id()}
                label={t(lang, field.label())}
                hint={AttrValue::default()}
                unit={field.unit().map(|u| AttrValue::from(t(lang, u)))}
                value={inputs.get(field).to_string()}
                error={s.errors.get(field).map(|e| AttrValue::from(e.message(field, lang)))}
                oninput={Callback::from(move |v: String| on_action.emit(Action::SetField(field, v)))}
            />
        }
    };
    let imported = s.import.model.as_ref().map(|m| m.name.clone());
    let model_name = s
        .catalog
        .model(&inputs.model)
        .map(|m| m.name.to_string())
        .or_else(|| imported.clone())
        .unwrap_or_else(|| inputs.model.clone());
    let gpu_name = s.catalog.gpu(&inputs.gpu_id()).map_or_else(
        || inputs.gpu_id(),
        |g| crate::labels::gpu_name(&g.id, &g.name, prefs.lang),
    );
    let mut items = Vec::new();
    items.push(if locked("m") {
        fixed("m", Key::Model, model_name)
    } else {
        select(
            "m",
            "model",
            Key::Model,
            s.catalog.model_groups(imported.as_deref(), lang),
            inputs.model.clone(),
            |v| Some(Action::SetModel(v)),
        )
    });
    items.push(if locked("g") {
        fixed("g", Key::Gpu, gpu_name)
    } else {
        // The widget has no memory field: a custom GPU is offered only when a link chose one.
        let mut groups = s.catalog.gpu_groups(prefs.units, prefs.lang);
        if inputs.gpu != crate::inputs::CUSTOM_GPU {
            groups.pop();
        }
        select("g", "gpu", Key::Gpu, groups, inputs.gpu.clone(), |v| {
            Some(Action::SetGpu(v))
        })
    });
    for (key, field) in [
        ("b", Field::Batch),
        ("s", Field::Seq),
        ("i", Field::Image),
        ("a", Field::Accum),
    ] {
        if !s.visible_fields().contains(&field) {
            continue;
        }
        items.push(if locked(key) {
            fixed(key, field.label(), inputs.get(field).to_string())
        } else {
            number(field)
        });
    }
    // What the answer reads: no optimizer or checkpointing in inference, and
    // vLLM and SGLang choose the weights' type and attention themselves.
    let torch_engine = inputs.engine_picks_kernels();
    if !torch_engine {
        items.push(if locked("p") {
            fixed(
                "p",
                Key::Precision,
                labels::precision(inputs.precision, lang).to_string(),
            )
        } else {
            select(
                "p",
                "precision",
                Key::Precision,
                catalog::precisions(lang),
                inputs.precision.id().to_string(),
                |v| v.parse().ok().map(Action::SetPrecision),
            )
        });
    }
    if inputs.trains() {
        items.push(if locked("o") {
            fixed(
                "o",
                Key::Optimizer,
                labels::optimizer(inputs.optimizer, lang).to_string(),
            )
        } else {
            select(
                "o",
                "optimizer",
                Key::Optimizer,
                catalog::optimizers(lang),
                inputs.optimizer.id().to_string(),
                |v| v.parse().ok().map(Action::SetOptimizer),
            )
        });
        let every_k = inputs.checkpointing == CheckpointChoice::EveryK;
        items.push(if locked("c") {
            let mut value = labels::checkpointing(inputs.checkpointing, lang).to_string();
            if every_k {
                value = format!("{value} (K = {})", inputs.every_k);
            }
            fixed("c", Key::Checkpointing, value)
        } else {
            select(
                "c",
                "checkpointing",
                Key::Checkpointing,
                catalog::checkpointing(lang),
                inputs.checkpointing.id().to_string(),
                |v| CheckpointChoice::parse(&v).map(Action::SetCheckpointing),
            )
        });
        if every_k && !locked("c") {
            items.push(number(Field::EveryK));
        }
    }
    if s.input_field() == Some(Field::Seq) && !torch_engine {
        items.push(if locked("at") {
            fixed(
                "at",
                Key::Attention,
                labels::attention(inputs.attention, lang).to_string(),
            )
        } else {
            select(
                "at",
                "attention",
                Key::Attention,
                catalog::attentions(lang),
                inputs.attention.id().to_string(),
                |v| v.parse().ok().map(Action::SetAttention),
            )
        });
    }
    html! { <div class="widget-form">{ for items }</div> }
}
