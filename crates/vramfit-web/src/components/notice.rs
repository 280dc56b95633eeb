//! A one-line message above the results: stale result or estimator problem.

use yew::prelude::*;

/// Props of [`Notice`].
#[derive(Properties, PartialEq)]
pub struct NoticeProps {
    /// `info` (a polite status) or `error` (an alert).
    pub kind: AttrValue,
    /// The message, as a sentence.
    pub text: AttrValue,
}

/// A message box; errors are announced to screen readers at once.
#[function_component]
pub fn Notice(props: &NoticeProps) -> Html {
    let role = if props.kind == "error" {
        "alert"
    } else {
        "status"
    };
    html! {
        <div id="notice" class={classes!("notice", format!("notice-{}", props.kind))} role={role}>
            { props.text.clone() }
        </div>
    }
}
