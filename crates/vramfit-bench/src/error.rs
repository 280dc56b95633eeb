//! The error type shared by everything in this crate.

/// Everything that can go wrong while acquiring a GPU or running a kernel.
///
/// wgpu's own error types are kept as sources where they are plain data; the
/// errors reported through error scopes are turned into their message, so
/// that `BenchError` is `Send + Sync` on every target (on wasm, wgpu's
/// scope errors are not).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// No adapter matched the requested backends.
    ///
    /// Natively this usually means no Vulkan driver is installed (in CI,
    /// Mesa's lavapipe from `mesa-vulkan-drivers`); in a browser, that WebGPU
    /// is disabled or unsupported.
    #[error("no GPU adapter found for backends {backends:?}")]
    NoAdapter {
        /// The backends that were searched.
        backends: wgpu::Backends,
        /// Why wgpu found nothing.
        #[source]
        source: wgpu::RequestAdapterError,
    },

    /// The adapter refused to create a device with the requested features
    /// and limits.
    #[error("requesting a device from adapter {adapter:?} failed")]
    RequestDevice {
        /// The adapter's name, as reported by the driver.
        adapter: String,
        /// wgpu's reason.
        #[source]
        source: wgpu::RequestDeviceError,
    },

    /// The device cannot run a kernel as configured, e.g. the workgroup size
    /// exceeds `max_compute_invocations_per_workgroup`.
    #[error("{kernel}: {limit} is {available}, but the kernel needs {required}")]
    UnsupportedLimit {
        /// The kernel that needs the limit.
        kernel: &'static str,
        /// The name of the `wgpu::Limits` field.
        limit: &'static str,
        /// What the kernel needs.
        required: u64,
        /// What the device offers.
        available: u64,
    },

    /// Two input slices that must have equal lengths do not.
    #[error("{kernel}: input lengths differ ({left} vs {right})")]
    LengthMismatch {
        /// The kernel that was called.
        kernel: &'static str,
        /// Length of the first slice.
        left: usize,
        /// Length of the second slice.
        right: usize,
    },

    /// The input is larger than one dispatch or one buffer binding allows.
    #[error("{kernel}: {len} elements exceed the device limit of {max}")]
    InputTooLarge {
        /// The kernel that was called.
        kernel: &'static str,
        /// The number of elements requested.
        len: usize,
        /// The largest number of elements this device can handle in one call.
        max: u64,
    },

    /// A tensor handed to a kernel does not hold as many elements as the
    /// shape says it must.
    #[error("{kernel}: {tensor} has {actual} elements, but the shape needs {expected}")]
    ShapeMismatch {
        /// The kernel that was called.
        kernel: &'static str,
        /// Which operand.
        tensor: &'static str,
        /// The elements the shape needs.
        expected: usize,
        /// The elements the tensor has.
        actual: usize,
    },

    /// A tensor's element type differs from the one the kernel was built for.
    #[error("{kernel}: {tensor} is {actual}, but the kernel was built for {expected}")]
    DTypeMismatch {
        /// The kernel that was called.
        kernel: &'static str,
        /// Which operand.
        tensor: &'static str,
        /// The type the kernel expects.
        expected: crate::DType,
        /// The tensor's type.
        actual: crate::DType,
    },

    /// A shape parameter is outside what the kernel supports (e.g. a zero
    /// dimension, or a head size above the attention kernel's maximum).
    #[error("{kernel}: {what}")]
    InvalidShape {
        /// The kernel that was called.
        kernel: &'static str,
        /// What is wrong, in words.
        what: String,
    },

    /// The device lacks a feature the kernel needs, e.g. `SHADER_F16` for
    /// the `f16` variants.
    #[error("{kernel}: the device lacks {feature:?}")]
    MissingFeature {
        /// The kernel that was requested.
        kernel: &'static str,
        /// The missing feature.
        feature: wgpu::Features,
    },

    /// A kernel's WGSL lacks the line its `f16` specialisation rewrites.
    #[error("{kernel}: the WGSL has no `{missing}` line to specialise")]
    ShaderTemplate {
        /// The kernel whose source is malformed.
        kernel: &'static str,
        /// The line that was expected.
        missing: &'static str,
    },

    /// A name on the command line or in a plan is not one of the accepted
    /// values.
    #[error("invalid {what} '{value}': expected {accepted}")]
    InvalidChoice {
        /// What was being chosen (`dtype`, `kernel`, `size`).
        what: &'static str,
        /// The value given.
        value: String,
        /// The accepted values, `|`-separated.
        accepted: &'static str,
    },

    /// The device reported a validation error (an API misuse or an invalid
    /// shader) while the kernel was set up or run.
    #[error("GPU validation error in {kernel}: {message}")]
    Validation {
        /// The kernel that was running.
        kernel: &'static str,
        /// wgpu's description of the error.
        message: String,
    },

    /// The device ran out of memory while allocating the kernel's buffers.
    #[error("GPU out of memory in {kernel}: {message}")]
    OutOfMemory {
        /// The kernel that was running.
        kernel: &'static str,
        /// wgpu's description of the error.
        message: String,
    },

    /// Waiting for the device to finish failed (device lost, or a timeout).
    #[error("waiting for the GPU failed")]
    Poll(#[source] wgpu::PollError),

    /// Mapping a buffer for reading failed.
    #[error("mapping a GPU buffer for reading failed")]
    BufferMap(#[source] wgpu::BufferAsyncError),

    /// The buffer was mapped but its contents could not be viewed.
    #[error("reading a mapped GPU buffer failed")]
    MappedRange(#[source] wgpu::MapRangeError),

    /// wgpu dropped a buffer-map callback without calling it, so the result
    /// will never arrive (typically because the device was lost).
    #[error("the GPU buffer map callback was dropped without a result")]
    MapCallbackDropped,

    /// `vramfit-core` could not estimate the layer the measurement is
    /// compared with (e.g. a sequence beyond the model's positions).
    #[error("the estimator rejected the comparison model")]
    Estimate(#[source] vramfit_core::Error),
}

/// Shorthand for results in this crate.
pub type Result<T, E = BenchError> = core::result::Result<T, E>;
