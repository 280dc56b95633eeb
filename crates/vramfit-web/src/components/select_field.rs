//! A labelled `<select>` whose options may be grouped with `<optgroup>`,
//! optionally with a search box that narrows the options as you type
//! (Enter picks the first match).

use crate::catalog::{Choice, ChoiceGroup, filter_groups, finds_nothing};
use crate::hooks::use_select_value;
use std::rc::Rc;
use web_sys::{HtmlInputElement, HtmlSelectElement};
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
    /// A search box above the list: its accessible label, its placeholder
    /// and the message when nothing matches (`{0}`: the query).
    #[prop_or_default]
    pub search: Option<Search>,
    /// Emits the newly selected value.
    pub onchange: Callback<String>,
    /// Whether the list holds every option; `false`: only the selected one.
    /// The calculator's first render (the page prerendered into index.html
    /// and hydrated) is such a list: a select cannot change anything before
    /// the app starts, and the long lists (the models', the GPUs') are a
    /// third of that page's elements, each built, hydrated and rendered
    /// again before the inputs answer. The rest follow in the task after
    /// that render's paint, whatever the report (a link whose configuration
    /// is refused still gets every option to fix it with).
    #[prop_or(true)]
    pub full: bool,
}

/// The texts of a [`SelectField`]'s search box.
#[derive(Clone, Debug, PartialEq)]
pub struct Search {
    /// Accessible label of the box.
    pub label: AttrValue,
    /// Placeholder (an example query).
    pub placeholder: AttrValue,
    /// Shown when nothing matches.
    pub no_match: AttrValue,
}

/// A select box.
#[function_component]
pub fn SelectField(props: &SelectFieldProps) -> Html {
    let node = use_node_ref();
    use_select_value(node.clone(), props.value.clone());
    let query = use_state(String::new);
    let groups = use_memo(
        (props.groups.clone(), (*query).clone(), props.value.clone()),
        |(groups, query, value)| filter_groups(groups, query, value),
    );
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
    let search_box = props.search.as_ref().map(|search| {
        let search_id = format!("{}-search", props.id);
        let oninput = {
            let query = query.setter();
            Callback::from(move |e: InputEvent| {
                if let Some(input) = e.target_dyn_into::<HtmlInputElement>() {
                    query.set(input.value());
                }
            })
        };
        // Enter takes the first match other than the current choice.
        let onkeydown = {
            let emit = props.onchange.clone();
            let first = groups.iter().flat_map(|g| g.choices.iter()).find(|c| c.value != props.value.as_str()).map(|c| c.value.clone());
            let searching = !query.trim().is_empty();
            Callback::from(move |e: KeyboardEvent| {
                if e.key() == "Enter" {
                    e.prevent_default();
                    if let (true, Some(v)) = (searching, first.clone()) {
                        emit.emit(v);
                    }
                }
            })
        };
        let nothing = finds_nothing(&props.groups, &query);
        html! {
            <>
                <input
                    id={search_id.clone()}
                    class="select-search"
                    type="search"
                    autocomplete="off"
                    spellcheck="false"
                    aria-label={search.label.clone()}
                    aria-controls={props.id.clone()}
                    placeholder={search.placeholder.clone()}
                    value={(*query).clone()}
                    {oninput}
                    {onkeydown}
                />
                if nothing {
                    <p class="field-hint" id={format!("{search_id}-none")} role="status">{ crate::i18n::fill(&search.no_match, &[query.trim()]) }</p>
                }
            </>
        }
    });
    html! {
        <div class="field">
            <label for={props.id.clone()}>{ props.label.clone() }</label>
            { search_box.unwrap_or_default() }
            <select
                ref={node}
                id={props.id.clone()}
                name={props.id.clone()}
                aria-describedby={props.hint.as_ref().map(|_| hint_id.clone())}
                {onchange}
            >
                if props.full {
                    { for groups.iter().map(|g| if g.label.is_empty() {
                        html! { <>{ for g.choices.iter().map(option) }</> }
                    } else {
                        html! { <optgroup label={g.label.clone()}>{ for g.choices.iter().map(option) }</optgroup> }
                    }) }
                } else {
                    { for groups.iter().flat_map(|g| g.choices.iter()).filter(|c| c.value == props.value.as_str()).take(1).map(option) }
                }
            </select>
            if let Some(hint) = &props.hint {
                <p class="field-hint" id={hint_id}>{ hint.clone() }</p>
            }
        </div>
    }
}
