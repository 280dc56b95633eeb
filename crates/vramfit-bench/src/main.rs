//! `vramfit-bench`: checks the saxpy kernel against its CPU reference, then
//! benchmarks the neural-network kernels on this machine's GPU
//! (`vramfit-bench --help` for the flags; `vramfit bench` takes the same).
//!
//! Exit codes: 0 on success, 1 on a saxpy mismatch, 2 if no GPU could be
//! used or a flag is wrong. Native only: in a browser the web front end
//! drives the same library, so on wasm this binary is an empty stub that
//! keeps workspace builds working.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    native::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::process::ExitCode;

    use vramfit_bench::args::{BENCH_USAGE, parse_bench_args};
    use vramfit_bench::{GpuContext, check, suite, timing};

    /// Elements of the saxpy self-check: not a multiple of the workgroup
    /// size, and enough to span several hundred workgroups.
    const LEN: usize = 100_003;
    /// Fixed so that every run checks the same data.
    const SEED: u64 = 0x5EED;

    pub(crate) fn main() -> ExitCode {
        let argv: Vec<String> = std::env::args().skip(1).collect();
        if argv.iter().any(|a| a == "--help" || a == "-h") {
            println!("vramfit-bench [flags]\n\n{BENCH_USAGE}");
            return ExitCode::SUCCESS;
        }
        let args = match parse_bench_args(&argv) {
            Ok(args) => args,
            Err(error) => return fail(&error, 2),
        };
        let ctx = match GpuContext::new_native() {
            Ok(ctx) => ctx,
            Err(error) => return fail(&error, 2),
        };
        eprintln!("adapter: {}", ctx.summary());
        match pollster::block_on(check::check_saxpy(&ctx, LEN, SEED)) {
            Ok(comparison) if comparison.passed() => {}
            Ok(comparison) => {
                eprintln!("saxpy: mismatch vs CPU reference: {comparison}");
                return ExitCode::from(1);
            }
            Err(error) => return fail(&error, 2),
        }
        let mut progress = |r: &vramfit_bench::report::KernelResult| {
            eprintln!(
                "  {} {} {}: {:.3} ms, {:.1} GFLOP/s, {:.1} GB/s",
                r.name(),
                r.dtype,
                r.shape,
                r.median_ms,
                r.gflops,
                r.gbs
            );
        };
        let report = match pollster::block_on(suite::run_suite(
            &ctx,
            &args.plan,
            &timing::native_clock,
            &mut progress,
        )) {
            Ok(report) => report,
            Err(error) => return fail(&error, 2),
        };
        if args.json {
            match report.to_json() {
                Ok(json) => println!("{json}"),
                Err(error) => return fail(&error, 2),
            }
        } else {
            print!("{}", report.to_markdown());
        }
        ExitCode::SUCCESS
    }

    /// Prints `error` with its chain of causes and returns exit code `code`.
    fn fail(error: &dyn std::error::Error, code: u8) -> ExitCode {
        eprint!("error: {error}");
        let mut source = error.source();
        while let Some(cause) = source {
            eprint!(": {cause}");
            source = cause.source();
        }
        eprintln!();
        ExitCode::from(code)
    }
}
