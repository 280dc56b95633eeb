//! # vramfit-bench-web
//!
//! The benchmark in the browser: [`vramfit_bench`] compiled to its own
//! WebAssembly module behind a small JavaScript API, so the calculator's
//! first load stays small. `scripts/build-web.sh` builds it into
//! `dist/bench/`; the page's Benchmark tab loads it with a dynamic
//! `import()` only when the tab is opened.
//!
//! The API (in the wasm build; every call resolves to JSON, never throws):
//!
//! - `detect()` → `{"ok": `[`AdapterDetails`](adapter::AdapterDetails)`}`:
//!   name, vendor, architecture, `shader-f16`, `timestamp-query` and the
//!   limits the kernels need, or `{"err": `[`Failure`](outcome::Failure)`}`.
//! - `run(options, onProgress)`: [`RunOptions`](options::RunOptions) as
//!   JSON in; [`Progress`](runner::Progress) JSON to the callback between
//!   steps; `{"ok": {"json", "markdown"}}` (the `vramfit.bench/1` report in
//!   both renderings) or a failure.
//! - `cancel()`: stops the run in progress at once.
//! - `project(report, query)`: the calculator's configuration (its
//!   share-link query) priced at the measured layer throughput
//!   ([`Projection`](project::Projection)).
//!
//! Everything but the bindings is plain Rust and tested natively:
//! [`options`] (validation into a `BenchPlan`), [`runner`] (the suite step
//! by step, raced against [`signal`]'s cancel / device-lost flag),
//! [`outcome`] (failures as data), [`adapter`] and [`project`].

// Tests fail by panicking; everywhere else the workspace denies these.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod adapter;
#[cfg(target_arch = "wasm32")]
mod js_api;
pub mod options;
pub mod outcome;
pub mod project;
pub mod runner;
pub mod signal;
