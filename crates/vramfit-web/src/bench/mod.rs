//! The Benchmark tab: runs real network layers and kernels on the user's
//! GPU through WebGPU, in a separate wasm module (`vramfit-bench-web`,
//! `dist/bench/`) loaded only when the tab opens.
//!
//! [`model`] mirrors the module's JSON answers (adapter, progress,
//! failures, the `vramfit.bench/1` report, the projection); [`rows`]
//! turns a report into table rows with percentages of a confirmed GPU
//! preset's peak and matches adapters to presets; [`state`] is the tab's
//! reducer; [`js`] loads and calls the module; [`hook`] ties them together
//! as `use_bench`. All but `js` and `hook` are tested natively.

pub mod hook;
pub mod js;
pub mod model;
pub mod rows;
pub mod state;
