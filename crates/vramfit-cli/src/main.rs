//! The `vramfit` binary: parse arguments, run the command, map errors to exit codes.

#[cfg(all(not(target_arch = "wasm32"), feature = "bench"))]
mod bench;

use vramfit_cli::{args, report};

use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    // `bench` talks to the GPU, not to the estimator; it has its own flags.
    #[cfg(all(not(target_arch = "wasm32"), feature = "bench"))]
    if argv.first().map(String::as_str) == Some("bench") {
        return bench::run(argv.get(1..).unwrap_or(&[]));
    }
    let run = |cmd: args::Command| {
        for w in cmd.warnings() {
            eprintln!("vramfit: warning: {w}");
        }
        report::run(&cmd)
    };
    match args::parse(&argv).and_then(run) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("vramfit: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
