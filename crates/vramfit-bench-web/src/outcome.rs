//! What every call of the JavaScript API resolves to: a value or a
//! [`Failure`], as JSON data, never a thrown exception, so the page shows a
//! specific message for each way a benchmark can fail.

use vramfit_bench::BenchError;

use crate::signal::Stop;

/// Which way a call failed; the page words a message and what to do for
/// each kind (in `vramfit-web`'s translation table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The browser has no WebGPU (`navigator.gpu` is missing).
    NoWebgpu,
    /// WebGPU exists but offered no adapter (blocked GPU, disabled flag).
    NoAdapter,
    /// The adapter refused to open a device.
    RequestDevice,
    /// The device's limits are below what the kernels need.
    Limits,
    /// A buffer could not be allocated (an out-of-memory error scope).
    OutOfMemory,
    /// A shader failed to compile or a pipeline to build.
    Shader,
    /// Any other GPU validation error.
    Validation,
    /// The device was lost during the run.
    DeviceLost,
    /// The user cancelled the run.
    Cancelled,
    /// The options or the report handed in were not valid.
    Invalid,
    /// Anything else (read-back failures and the like).
    Other,
}

/// A failed call: its kind and the technical message (the error and its
/// causes), shown under the page's own explanation.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Failure {
    /// Which way it failed.
    pub kind: FailureKind,
    /// The technical details.
    pub message: String,
}

impl Failure {
    /// A failure of `kind` with `message`.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// Classifies a benchmark error; the message is the error with its causes.
    pub fn from_bench(error: &BenchError) -> Self {
        let message = chain(error);
        let kind = match error {
            BenchError::NoAdapter { .. } => FailureKind::NoAdapter,
            BenchError::RequestDevice { .. } => FailureKind::RequestDevice,
            BenchError::UnsupportedLimit { .. } | BenchError::InputTooLarge { .. } => {
                FailureKind::Limits
            }
            BenchError::OutOfMemory { .. } => FailureKind::OutOfMemory,
            BenchError::ShaderTemplate { .. } => FailureKind::Shader,
            BenchError::Validation { message, .. } if mentions_shader(message) => {
                FailureKind::Shader
            }
            BenchError::Validation { .. } => FailureKind::Validation,
            BenchError::InvalidChoice { .. } => FailureKind::Invalid,
            // Mapping fails, or its callback is dropped unrun, when the
            // device goes away mid-run.
            BenchError::MapCallbackDropped | BenchError::BufferMap(_) => FailureKind::DeviceLost,
            _ => FailureKind::Other,
        };
        Self { kind, message }
    }

    /// The failure for a run that stopped early.
    pub fn from_stop(stop: &Stop) -> Self {
        match stop {
            Stop::Cancelled => Self::new(FailureKind::Cancelled, "cancelled"),
            Stop::DeviceLost(message) => Self::new(FailureKind::DeviceLost, message.clone()),
        }
    }
}

/// Whether a validation message is about a shader module or pipeline
/// (WGSL parse and validation errors, and objects made invalid by them).
fn mentions_shader(message: &str) -> bool {
    let lower = message.to_lowercase();
    ["shader", "wgsl", "pipeline"]
        .iter()
        .any(|w| lower.contains(w))
}

/// `error: cause: cause ...`.
fn chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    out
}

/// The JSON every API call resolves to: `{"ok": value}` or
/// `{"err": {"kind": ..., "message": ...}}`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome<T> {
    /// The call worked.
    Ok(T),
    /// The call failed.
    Err(Failure),
}

impl<T: serde::Serialize> Outcome<T> {
    /// `result` as an outcome.
    pub fn of(result: Result<T, Failure>) -> Self {
        match result {
            Ok(value) => Outcome::Ok(value),
            Err(failure) => Outcome::Err(failure),
        }
    }

    /// The JSON text; a value that cannot be serialised (never the case
    /// for these plain types) becomes an [`FailureKind::Other`] failure.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|error| {
            let failure = Failure::new(
                FailureKind::Other,
                format!("serialising the result failed: {error}"),
            );
            serde_json::to_string(&Outcome::<()>::Err(failure)).unwrap_or_default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Failure, FailureKind, Outcome};
    use crate::signal::Stop;
    use vramfit_bench::BenchError;

    #[test]
    fn bench_errors_map_to_the_kinds_the_page_explains() {
        let oom = BenchError::OutOfMemory {
            kernel: "matmul",
            message: "allocation failed".into(),
        };
        assert_eq!(Failure::from_bench(&oom).kind, FailureKind::OutOfMemory);
        let shader = BenchError::Validation {
            kernel: "timing",
            message: "Invalid ShaderModule \"gelu\"".into(),
        };
        assert_eq!(Failure::from_bench(&shader).kind, FailureKind::Shader);
        let other = BenchError::Validation {
            kernel: "timing",
            message: "buffer usage".into(),
        };
        assert_eq!(Failure::from_bench(&other).kind, FailureKind::Validation);
        let limit = BenchError::UnsupportedLimit {
            kernel: "matmul",
            limit: "max_compute_invocations_per_workgroup",
            required: 256,
            available: 64,
        };
        let failure = Failure::from_bench(&limit);
        assert_eq!(failure.kind, FailureKind::Limits);
        assert!(failure.message.contains("256"), "{}", failure.message);
        assert_eq!(
            Failure::from_bench(&BenchError::MapCallbackDropped).kind,
            FailureKind::DeviceLost
        );
        assert_eq!(
            Failure::from_stop(&Stop::Cancelled).kind,
            FailureKind::Cancelled
        );
    }

    #[test]
    fn outcomes_serialise_as_ok_or_err_objects() {
        assert_eq!(Outcome::of(Ok::<_, Failure>(3)).to_json(), r#"{"ok":3}"#);
        let err = Outcome::<u8>::of(Err(Failure::new(
            FailureKind::NoWebgpu,
            "navigator.gpu is missing",
        )));
        assert_eq!(
            err.to_json(),
            r#"{"err":{"kind":"no-webgpu","message":"navigator.gpu is missing"}}"#
        );
    }
}
