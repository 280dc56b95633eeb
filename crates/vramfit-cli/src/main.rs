//! The `vramfit` binary: parse arguments, run the command, map errors to exit codes.

mod args;
mod report;

use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    match args::parse(&argv).and_then(|cmd| report::run(&cmd)) {
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
