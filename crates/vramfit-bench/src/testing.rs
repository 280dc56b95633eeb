//! The policy for tests that need a GPU, shared by every crate that has some.

use crate::context::GpuContext;
use crate::error::BenchError;

/// The environment variable that lets GPU tests skip when no adapter exists.
pub const ALLOW_NO_GPU_VAR: &str = "VRAMFIT_ALLOW_NO_GPU";

/// A native GPU for a test, or `None` if there is no adapter and
/// `VRAMFIT_ALLOW_NO_GPU=1` is set, in which case the test should return
/// early (it is reported as passed, with a note on stderr).
///
/// CI installs Mesa's lavapipe, so a missing adapter there is a broken
/// setup, not a reason to skip: without the variable this panics, failing
/// the test, and the message says what to install.
///
/// # Panics
///
/// If no device can be opened, unless the variable allows skipping.
pub fn gpu_or_skip() -> Option<GpuContext> {
    match GpuContext::new_native() {
        Ok(ctx) => {
            eprintln!("adapter: {}", ctx.summary());
            Some(ctx)
        }
        Err(error @ BenchError::NoAdapter { .. })
            if std::env::var(ALLOW_NO_GPU_VAR).as_deref() == Ok("1") =>
        {
            eprintln!("skipping GPU test ({ALLOW_NO_GPU_VAR}=1): {error}");
            None
        }
        Err(error) => {
            let cause = std::error::Error::source(&error)
                .map(|cause| format!(": {cause}"))
                .unwrap_or_default();
            panic!(
                "no usable GPU: {error}{cause}. Install mesa-vulkan-drivers and \
                 libvulkan1, or set {ALLOW_NO_GPU_VAR}=1 to skip GPU tests."
            )
        }
    }
}
