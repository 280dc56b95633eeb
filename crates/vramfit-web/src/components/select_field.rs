//! A labelled `<select>` whose options may be grouped with `<optgroup>`.

use crate::catalog::{Choice, ChoiceGroup};
use crate::hooks::use_select_value;
use std::rc::Rc;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

/// Props of [`SelectField`].
#[derive(Properties, PartialEq)]
pub struct SelectFieldProps {
    /// Element id (also the name).
    pub id: AttrValue,
    /// Visible label.
    pub label: AttrValue,
    /// The options; groups with an empty label render as plain options.
    pub groups: Rc<Vec<ChoiceGroup>>,
    /// The selected value.
    pub value: AttrValue,
    /// Whether the options are product names, which translation tools and
    /// the language switch leave alone.
    #[prop_or_default]
    pub proper_names: bool,
    /// Help shown under the field, if any.
    #[prop_or_default]
    pub hint: Option<AttrValue>,
    /// Emits the newly selected value.
    pub onchange: Callback<String>,
}

/// A select box.
#[function_component]
pub fn SelectField(props: &SelectFieldProps) -> Html {
    let node = use_node_ref();
    use_select_value(node.clone(), props.value.clone());
    let onchange = {
        let emit = props.onchange.clone();
        Callback::from(move |e: Event| {
            if let Some(select) = e.target_dyn_into::<HtmlSelectElement>() {
                emit.emit(select.value());
            }
        })
    };
    let translate = props.proper_names.then_some("no");
    let option = |c: &Choice| {
        html! { <option value={c.value.clone()} {translate} selected={c.value == props.value.as_str()}>{ c.label.clone() }</option> }
    };
    let hint_id = format!("{}-hint", props.id);
    html! {
        <div class="field">
            <label for={props.id.clone()}>{ props.label.clone() }</label>
            <select
                ref={node}
                id={props.id.clone()}
                name={props.id.clone()}
                aria-describedby={props.hint.as_ref().map(|_| hint_id.clone())}
                {onchange}
            >
                { for props.groups.iter().map(|g| if g.label.is_empty() {
                    html! { <>{ for g.choices.iter().map(option) }</> }
                } else {
                    html! { <optgroup label={g.label.clone()}>{ for g.choices.iter().map(option) }</optgroup> }
                }) }
            </select>
            if let Some(hint) = &props.hint {
                <p class="field-hint" id={hint_id}>{ hint.clone() }</p>
            }
        </div>
    }
}
