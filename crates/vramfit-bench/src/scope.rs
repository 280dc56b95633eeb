//! Turning wgpu's error scopes into [`BenchError`]s.
//!
//! Without a scope, a validation or out-of-memory error goes to the device's
//! uncaptured-error handler, which panics natively. Wrapping each kernel's
//! setup and submission in scopes makes those errors values instead, which
//! matters most on wasm, where a panic takes down the page.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use crate::error::{BenchError, Result};

/// Runs `work` inside out-of-memory and validation error scopes on `device`
/// and returns its output, or the first error the device reported.
///
/// # Errors
///
/// [`BenchError::Validation`] or [`BenchError::OutOfMemory`], labelled with
/// `kernel`, if the device reported such an error while `work` ran.
pub(crate) async fn catch_gpu_errors<T>(
    device: &wgpu::Device,
    kernel: &'static str,
    work: impl FnOnce() -> T,
) -> Result<T> {
    let (output, validation, oom) = scoped(device, work);
    into_result(kernel, validation.await, oom.await)?;
    Ok(output)
}

/// Like [`catch_gpu_errors`], for setup code that cannot be `async`.
///
/// wgpu-core (native) resolves error scopes immediately, so there every
/// error is caught. The browser resolves them later; those are dropped here,
/// which is safe because an object that failed to create is invalid, and
/// using it later fails inside [`catch_gpu_errors`] instead.
///
/// # Errors
///
/// As [`catch_gpu_errors`], for the errors that are known immediately.
pub(crate) fn catch_gpu_errors_now<T>(
    device: &wgpu::Device,
    kernel: &'static str,
    work: impl FnOnce() -> T,
) -> Result<T> {
    let (output, validation, oom) = scoped(device, work);
    into_result(
        kernel,
        poll_once(validation).flatten(),
        poll_once(oom).flatten(),
    )?;
    Ok(output)
}

/// Runs `work` between pushing and popping the scopes; returns its output and
/// the pending results of the validation and out-of-memory scopes.
fn scoped<T>(
    device: &wgpu::Device,
    work: impl FnOnce() -> T,
) -> (
    T,
    impl Future<Output = Option<wgpu::Error>>,
    impl Future<Output = Option<wgpu::Error>>,
) {
    let oom_scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation_scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let output = work();
    // Pop both (innermost first) before anyone awaits either: the scope
    // guards are not `Send`, and holding one across an `.await` would make
    // every kernel's `run` future non-`Send` too.
    let validation = validation_scope.pop();
    let oom = oom_scope.pop();
    (output, validation, oom)
}

/// The first of the two scope errors, as a [`BenchError`].
fn into_result(
    kernel: &'static str,
    validation: Option<wgpu::Error>,
    oom: Option<wgpu::Error>,
) -> Result<()> {
    if let Some(error) = validation {
        return Err(BenchError::Validation {
            kernel,
            message: error.to_string(),
        });
    }
    if let Some(error) = oom {
        return Err(BenchError::OutOfMemory {
            kernel,
            message: error.to_string(),
        });
    }
    Ok(())
}

/// Polls `future` once; `None` if it is not ready yet.
fn poll_once<F: Future>(future: F) -> Option<F::Output> {
    let future = pin!(future);
    match future.poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::{catch_gpu_errors, catch_gpu_errors_now};
    use crate::error::BenchError;
    use crate::testing::gpu_or_skip;

    /// WGSL that parses but does not validate.
    fn make_invalid_shader(device: &wgpu::Device) -> wgpu::ShaderModule {
        device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("invalid test shader"),
            source: wgpu::ShaderSource::Wgsl("fn f() -> f32 { return 1u; }".into()),
        })
    }

    #[test]
    fn catch_gpu_errors_now_turns_a_bad_shader_into_a_validation_error() {
        let Some(ctx) = gpu_or_skip() else { return };
        let result =
            catch_gpu_errors_now(ctx.device(), "test", || make_invalid_shader(ctx.device()));
        assert!(
            matches!(result, Err(BenchError::Validation { kernel: "test", .. })),
            "{result:?}"
        );
    }

    #[test]
    fn catch_gpu_errors_turns_a_bad_shader_into_a_validation_error() {
        let Some(ctx) = gpu_or_skip() else { return };
        let result = pollster::block_on(catch_gpu_errors(ctx.device(), "test", || {
            make_invalid_shader(ctx.device())
        }));
        assert!(
            matches!(result, Err(BenchError::Validation { kernel: "test", .. })),
            "{result:?}"
        );
    }

    #[test]
    fn catch_gpu_errors_passes_valid_work_through() {
        let Some(ctx) = gpu_or_skip() else { return };
        let result = catch_gpu_errors_now(ctx.device(), "test", || 42);
        assert!(matches!(result, Ok(42)), "{result:?}");
    }
}
