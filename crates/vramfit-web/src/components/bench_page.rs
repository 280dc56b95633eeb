//! The Benchmark page (`bench.html`): the Benchmark tab's content as its own
//! page, shown in the calculator's Benchmark tab through a frame
//! ([`BenchFrame`](super::BenchFrame)) so that the calculator's first load
//! does not carry it. The configuration and display settings come from its
//! address, then from the calculator's messages ([`crate::frame`]).

use super::BenchTab;
use crate::browser;
use crate::prefs::Prefs;
use crate::url;
use yew::prelude::*;

/// The page's root.
#[function_component]
pub fn BenchPage() -> Html {
    let browser_prefs = *use_memo((), |_| browser::initial_prefs());
    let link = use_state(|| url::read(&browser::address()));
    {
        let link = link.clone();
        use_effect_with((), move |_| {
            let listener =
                crate::frame::listen_to_calculator(Callback::from(move |query: String| {
                    link.set(url::read(&query))
                }));
            move || drop(listener)
        });
    }
    let prefs: Prefs = link.view.apply(browser_prefs);
    use_effect_with(prefs, |prefs| browser::reflect(*prefs));
    let query = use_memo(link.share.clone(), |share| share.to_query());
    html! {
        <ContextProvider<Prefs> context={prefs}>
            <main class="bench-page">
                <BenchTab query={Some((*query).clone())} />
            </main>
        </ContextProvider<Prefs>>
    }
}
