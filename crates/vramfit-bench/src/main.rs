//! `vramfit-bench`: runs the saxpy kernel on this machine's GPU and checks it
//! against the CPU reference.
//!
//! Exit codes: 0 on a match, 1 on a mismatch, 2 if no GPU could be used.
//! Native only: in a browser the web front end drives the same library, so
//! on wasm this binary is an empty stub that keeps workspace builds working.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    native::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::process::ExitCode;

    use vramfit_bench::{GpuContext, check};

    /// Elements per check: not a multiple of the workgroup size, and enough
    /// to span several hundred workgroups.
    const LEN: usize = 100_003;
    /// Fixed so that every run checks the same data.
    const SEED: u64 = 0x5EED;

    pub(crate) fn main() -> ExitCode {
        let ctx = match GpuContext::new_native() {
            Ok(ctx) => ctx,
            Err(error) => return fail(&error, 2),
        };
        println!("adapter: {}", ctx.summary());
        match pollster::block_on(check::check_saxpy(&ctx, LEN, SEED)) {
            Ok(comparison) if comparison.passed() => {
                println!("saxpy: {LEN} elements, max abs error {:e}", comparison.max_abs_error);
                ExitCode::SUCCESS
            }
            Ok(comparison) => {
                eprintln!("saxpy: mismatch vs CPU reference: {comparison}");
                ExitCode::from(1)
            }
            Err(error) => fail(&error, 2),
        }
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
