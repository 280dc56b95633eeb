//! Hooks that connect components to the browser: the measured width of an
//! element (charts draw at their real size, so text stays readable from a
//! phone to a wide screen), and the address kept equal to the state.

use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use yew::prelude::*;

/// The width in CSS pixels of the element behind `node`, kept current with a
/// `ResizeObserver`; `None` until it is first measured.
#[hook]
pub fn use_width(node: NodeRef) -> Option<u32> {
    let width = use_state_eq(|| None::<u32>);
    {
        let width = width.clone();
        use_effect_with(node, move |node| {
            let observed = node.cast::<web_sys::Element>().and_then(|el| {
                let measure = {
                    let el = el.clone();
                    move || width.set(u32::try_from(el.client_width()).ok().filter(|w| *w > 0))
                };
                measure();
                let closure = Closure::<dyn FnMut()>::new(measure);
                let observer =
                    web_sys::ResizeObserver::new(closure.as_ref().unchecked_ref()).ok()?;
                observer.observe(&el);
                Some((observer, closure))
            });
            move || {
                if let Some((observer, _closure)) = observed {
                    observer.disconnect();
                }
            }
        });
    }
    *width
}

/// The display preferences provided by the app (defaults outside it).
#[hook]
pub fn use_prefs() -> crate::prefs::Prefs {
    use_context::<crate::prefs::Prefs>().unwrap_or_default()
}

/// Keeps a `<select>`'s selection equal to `value`. Re-rendering `selected`
/// attributes is not enough: once the user has picked an option the browser
/// stops following the attribute, so a change made elsewhere (a technique
/// applied, a batch adopted) would not show.
#[hook]
pub fn use_select_value(node: NodeRef, value: AttrValue) {
    use_effect_with(value, move |value| {
        if let Some(select) = node.cast::<web_sys::HtmlSelectElement>() {
            if select.value() != value.as_str() {
                select.set_value(value);
            }
        }
    });
}

/// Keeps the page's address equal to `query` with `history.replaceState`
/// (one entry for the page, not one per keystroke; at most four updates a
/// second while typing, see [`crate::browser::update_query`]); `None`
/// leaves it as it is. The address changes in a following task, after any
/// task queued before (call this after [`use_app_actions`]: the report
/// completes first; the address is not something the reader watches).
#[hook]
pub fn use_url_state(query: Option<String>) {
    use_effect_with(query, |query| {
        if let Some(q) = query.clone() {
            crate::browser::update_query(q);
        }
    });
}

/// The dispatcher of the page's (or widget's) state as a callback, plus the
/// effect that completes a report: once a new verdict is on screen, the batch
/// curve and the comparison are computed in a following task.
#[hook]
pub fn use_app_actions(
    state: &UseReducerHandle<crate::state::AppState>,
) -> Callback<crate::state::Action> {
    {
        let dispatcher = state.dispatcher();
        use_effect_with(
            (state.generation, state.incomplete()),
            move |(_, incomplete)| {
                if *incomplete {
                    crate::browser::soon(move || {
                        dispatcher.dispatch(crate::state::Action::CompleteReport)
                    });
                }
            },
        );
    }
    // The same callback every render (the dispatcher is the reducer's for
    // its lifetime): children that take it are not re-rendered for it.
    use_callback(
        state.dispatcher(),
        |action: crate::state::Action, dispatcher| {
            let focus = action.focus_after();
            dispatcher.dispatch(action);
            if let Some(id) = focus {
                crate::browser::soon(move || crate::browser::focus(id));
            }
        },
    )
}

/// A drop target for one file ([`use_file_drop`]): whether a drag is over
/// it, and its handlers.
pub struct FileDrop {
    /// A file is being dragged over the target.
    pub dragging: bool,
    /// Accepts the drag (what makes an element a drop target).
    pub ondragover: Callback<DragEvent>,
    /// The drag left.
    pub ondragleave: Callback<DragEvent>,
    /// Hands the dropped file (the first, if several) to the target.
    pub ondrop: Callback<DragEvent>,
}

/// Makes an element a drop target that passes the dropped file to `on_file`.
#[hook]
pub fn use_file_drop(on_file: Callback<web_sys::File>) -> FileDrop {
    let dragging = use_state_eq(|| false);
    let ondragover = {
        let dragging = dragging.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            dragging.set(true);
        })
    };
    let ondragleave = {
        let dragging = dragging.clone();
        Callback::from(move |_: DragEvent| dragging.set(false))
    };
    let ondrop = {
        let dragging = dragging.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            dragging.set(false);
            if let Some(file) = e
                .data_transfer()
                .and_then(|d| d.files())
                .and_then(|f| f.get(0))
            {
                on_file.emit(file);
            }
        })
    };
    FileDrop {
        dragging: *dragging,
        ondragover,
        ondragleave,
        ondrop,
    }
}
