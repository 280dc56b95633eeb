//! A labelled text field for a whole number, with a hint or an error message.

use web_sys::HtmlInputElement;
use yew::prelude::*;

/// Props of [`NumberField`].
#[derive(Properties, PartialEq)]
pub struct NumberFieldProps {
    /// Element id (also the name); the message gets `<id>-error` / `<id>-hint`.
    pub id: AttrValue,
    /// Visible label.
    pub label: AttrValue,
    /// Help shown under the field while it is valid.
    pub hint: AttrValue,
    /// Unit shown inside the field (`tokens`, `px`), if any.
    #[prop_or_default]
    pub unit: Option<AttrValue>,
    /// The text as typed.
    pub value: AttrValue,
    /// Why the value is invalid, if it is.
    #[prop_or_default]
    pub error: Option<AttrValue>,
    /// Emits the new text on every keystroke.
    pub oninput: Callback<String>,
}

/// A numeric field. It is a text input with a numeric keyboard rather than
/// `type="number"`, so what the user typed (even "abc") reaches the state and
/// gets a specific message instead of being silently emptied by the browser.
#[function_component]
pub fn NumberField(props: &NumberFieldProps) -> Html {
    let oninput = {
        let emit = props.oninput.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(input) = e.target_dyn_into::<HtmlInputElement>() {
                emit.emit(input.value());
            }
        })
    };
    let (message_id, message) = match &props.error {
        Some(error) => {
            let id = format!("{}-error", props.id);
            (
                id.clone(),
                html! { <p class="field-error" id={id}>{ error.clone() }</p> },
            )
        }
        None => {
            let id = format!("{}-hint", props.id);
            (
                id.clone(),
                html! { <p class="field-hint" id={id}>{ props.hint.clone() }</p> },
            )
        }
    };
    let invalid = props.error.is_some();
    html! {
        <div class={classes!("field", invalid.then_some("invalid"))}>
            <label for={props.id.clone()}>{ props.label.clone() }</label>
            <div class={classes!("input-wrap", props.unit.is_some().then_some("has-unit"))}>
                <input
                    id={props.id.clone()}
                    name={props.id.clone()}
                    type="text"
                    inputmode="numeric"
                    autocomplete="off"
                    spellcheck="false"
                    value={props.value.clone()}
                    aria-invalid={invalid.then_some("true")}
                    aria-describedby={message_id}
                    {oninput}
                />
                if let Some(unit) = &props.unit {
                    <span class="unit" aria-hidden="true">{ unit.clone() }</span>
                }
            </div>
            { message }
        </div>
    }
}
