//! The Benchmark tab's frame: the Benchmark page ([`crate::frame::PAGE`]),
//! loaded when the tab is first opened, kept (with its results) while the
//! calculator is shown, told of every change of configuration or display
//! settings, and as tall as its content.

use crate::frame;
use crate::i18n::{Key, t};
use crate::prefs::Prefs;
use yew::prelude::*;

/// Props of [`BenchFrame`].
#[derive(Properties, PartialEq)]
pub struct BenchFrameProps {
    /// The configuration and display settings as a page query (the last
    /// valid configuration: the page keeps its own while the form is invalid).
    pub query: String,
}

/// The frame.
#[function_component]
pub fn BenchFrame(props: &BenchFrameProps) -> Html {
    let lang = use_context::<Prefs>().unwrap_or_default().lang;
    let node = use_node_ref();
    // The address is set once: a new one would reload the page and lose its results.
    let src = use_memo((), {
        let query = props.query.clone();
        move |_| format!("{}?{query}", frame::PAGE)
    });
    let height = use_state(|| None::<f64>);
    // The latest query, for the page's `ready` (which may come after changes).
    let latest = use_mut_ref(String::new);
    latest.borrow_mut().clone_from(&props.query);
    {
        let (node, height, latest) = (node.clone(), height.clone(), latest.clone());
        use_effect_with((), move |_| {
            let on_ready = {
                let node = node.clone();
                Callback::from(move |()| frame::send_config(&node, &latest.borrow()))
            };
            let listener =
                frame::listen_to_page(node, on_ready, Callback::from(move |h| height.set(Some(h))));
            move || drop(listener)
        });
    }
    {
        let node = node.clone();
        use_effect_with(props.query.clone(), move |query| {
            frame::send_config(&node, query)
        });
    }
    let style = height.map(|h| format!("height:{}px", h.ceil()));
    html! {
        <iframe ref={node} id="bench-frame" class="bench-frame" src={(*src).clone()} title={t(lang, Key::TabBenchmark)} {style}></iframe>
    }
}
