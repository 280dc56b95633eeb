//! `vramfit bench`: runs the GPU kernel benchmark of `vramfit-bench` on this
//! machine (and, with `--layers`, the GPT-2 / ResNet layers forward and
//! backward with their saved bytes next to the estimate) and prints its
//! Markdown or JSON report. Flags are parsed by
//! `vramfit_bench::args`, so they match the `vramfit-bench` binary.

use std::process::ExitCode;

use vramfit_bench::args::{BENCH_USAGE, parse_bench_args};
use vramfit_bench::{GpuContext, suite, timing};

/// Runs `vramfit bench <argv>`: exit 0 on success, 2 on bad flags or when no
/// GPU can be used.
pub fn run(argv: &[String]) -> ExitCode {
    if argv.iter().any(|a| a == "--help" || a == "-h") {
        println!(
            "vramfit bench [flags]: time the WGSL kernels (and layers) on this machine's GPU\n\n{BENCH_USAGE}"
        );
        return ExitCode::SUCCESS;
    }
    let args = match parse_bench_args(argv) {
        Ok(args) => args,
        Err(e) => return fail(&e),
    };
    let ctx = match GpuContext::new_native() {
        Ok(ctx) => ctx,
        Err(e) => return fail(&e),
    };
    eprintln!("vramfit: adapter {}", ctx.summary());
    let mut progress = |r: &vramfit_bench::report::KernelResult| {
        eprintln!(
            "vramfit: {} {} {}: {:.3} ms",
            r.name(),
            r.dtype,
            r.shape,
            r.median_ms
        )
    };
    let report = match pollster::block_on(suite::run_suite(
        &ctx,
        &args.plan,
        &timing::native_clock,
        &mut progress,
    )) {
        Ok(report) => report,
        Err(e) => return fail(&e),
    };
    if args.json {
        match report.to_json() {
            Ok(json) => println!("{json}"),
            Err(e) => return fail(&e),
        }
    } else {
        print!("{}", report.to_markdown());
    }
    ExitCode::SUCCESS
}

/// Prints `e` with its causes and returns exit code 2.
fn fail(e: &dyn std::error::Error) -> ExitCode {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    eprintln!("vramfit: {message}");
    ExitCode::from(2)
}
