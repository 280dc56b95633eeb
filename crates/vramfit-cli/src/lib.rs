//! The `vramfit` command line as a library: [`args`] parses raw flags into a
//! typed [`args::Command`] with the one table of flags in [`flags`] (which
//! also writes their help), [`report`] runs it over `vramfit-core` and
//! renders the output (a serving engine's in [`serve`], its `max-batch` answers in [`serve_answers`]), wording the core's typed messages with [`words`]
//! (and [`json`] for the `--json` forms). The binary (`main.rs`) is the
//! glue around them; the library exists so that the fuzz targets (`fuzz/`)
//! can drive the same parser and estimate path without a subprocess.

pub mod args;
pub mod flags;
pub mod json;
pub mod measured;
pub mod report;
pub mod serve;
pub mod serve_answers;
pub mod suggest;
pub mod words;
