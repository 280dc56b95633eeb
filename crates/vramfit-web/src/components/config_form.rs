//! The configuration card: model, batch, input size, precision, optimizer, GPU.

use super::{NumberField, SelectField};
use crate::catalog::Catalog;
use crate::state::{Action, Field, FieldErrors, Inputs};
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`ConfigForm`].
#[derive(Properties, PartialEq)]
pub struct ConfigFormProps {
    /// The choices offered.
    pub catalog: Rc<Catalog>,
    /// What the user entered.
    pub inputs: Inputs,
    /// Messages for invalid fields.
    pub errors: FieldErrors,
    /// The count fields the selected model uses, in order.
    pub fields: Vec<Field>,
    /// Emits each change.
    pub on_action: Callback<Action>,
}

/// The inputs. A `<section>`, not a `<form>`: there is nothing to submit, and
/// Enter in a lone text field would otherwise reload the page.
#[function_component]
pub fn ConfigForm(props: &ConfigFormProps) -> Html {
    // Turns a select's or field's new text into an action; `None` ignores it.
    let emit = |make: fn(String) -> Option<Action>| {
        let on_action = props.on_action.clone();
        Callback::from(move |value: String| {
            if let Some(action) = make(value) {
                on_action.emit(action);
            }
        })
    };
    let number = |field: Field| {
        let on_action = props.on_action.clone();
        html! {
            <NumberField
                id={field.id()}
                label={field.label()}
                hint={field.hint()}
                unit={field.unit().map(AttrValue::from)}
                value={props.inputs.get(field).to_string()}
                error={props.errors.get(field).map(|e| AttrValue::from(e.to_string()))}
                oninput={Callback::from(move |v: String| on_action.emit(Action::SetField(field, v)))}
            />
        }
    };
    let c = &props.catalog;
    html! {
        <section class="card config" aria-labelledby="config-title">
            <h2 id="config-title" class="card-title">{ "Configuration" }</h2>
            <SelectField
                id="model"
                label="Model"
                groups={c.model_groups.clone()}
                value={props.inputs.model.clone()}
                onchange={emit(|v| Some(Action::SetModel(v)))}
            />
            <div class="field-row">{ for props.fields.iter().copied().map(number) }</div>
            <div class="field-row">
                <SelectField
                    id="precision"
                    label="Precision"
                    groups={c.precisions.clone()}
                    value={props.inputs.precision.id()}
                    onchange={emit(|v| v.parse().ok().map(Action::SetPrecision))}
                />
                <SelectField
                    id="optimizer"
                    label="Optimizer"
                    groups={c.optimizers.clone()}
                    value={props.inputs.optimizer.id()}
                    onchange={emit(|v| v.parse().ok().map(Action::SetOptimizer))}
                />
            </div>
            <SelectField
                id="gpu"
                label="GPU"
                groups={c.gpu_groups.clone()}
                value={props.inputs.gpu.clone()}
                hint="Marketed memory; the driver reports a little less"
                onchange={emit(|v| Some(Action::SetGpu(v)))}
            />
        </section>
    }
}
