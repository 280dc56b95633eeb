//! Any bytes, split at NUL into command-line arguments, parse to a command or
//! a usage error; a command whose model is a preset (or a `--from-url` link's
//! config.json) runs through the same report code as the binary to output or
//! to an error with a message and an exit code, never a panic. Models named
//! by a path are not run: that would read files.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vramfit_cli::args::{self, Command};
use vramfit_cli::report;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let argv: Vec<String> = text.split('\0').map(str::to_string).collect();
    let cmd = match args::parse(&argv) {
        Ok(cmd) => cmd,
        Err(e) => {
            assert!(!e.to_string().is_empty() && e.exit_code() != 0);
            return;
        }
    };
    if let Command::Estimate(a) | Command::Plan(a) | Command::MaxBatch(a) | Command::Gpus(a) = &cmd
    {
        if a.model_json.is_none() && vramfit_core::model_preset(&a.model).is_err() {
            return;
        }
    }
    match report::run(&cmd) {
        Ok(out) => assert!(!out.is_empty()),
        Err(e) => assert!(!e.to_string().is_empty() && e.exit_code() != 0),
    }
});
