//! What the page shows about the adapter, and whether its limits are
//! enough for the kernels.

/// The adapter as the page shows it; the user matches it to a GPU preset.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AdapterDetails {
    /// The driver's name for the adapter (often empty in browsers, which
    /// withhold it for privacy).
    pub name: String,
    /// `GPUAdapterInfo.vendor`, e.g. `nvidia` (empty natively).
    pub vendor: String,
    /// `GPUAdapterInfo.architecture`, e.g. `lovelace` (empty natively).
    pub architecture: String,
    /// `GPUAdapterInfo.description` (usually empty without Chrome's
    /// developer flag).
    pub description: String,
    /// The wgpu backend, e.g. `webgpu` or `vulkan`.
    pub backend: String,
    /// A software or fallback adapter (SwiftShader, lavapipe).
    pub fallback: bool,
    /// `shader-f16`: whether the f16 kernels can run.
    pub shader_f16: bool,
    /// `timestamp-query`: GPU timestamps instead of the wall clock.
    pub timestamp_query: bool,
    /// The limits the kernels depend on.
    pub limits: LimitsSummary,
}

impl AdapterDetails {
    /// The details wgpu knows of `ctx`'s adapter and device; a browser adds
    /// vendor, architecture and description (see the `js_api` module).
    pub fn of(ctx: &vramfit_bench::GpuContext) -> Self {
        let summary = ctx.summary();
        let info = ctx.adapter().get_info();
        Self {
            name: summary.name,
            vendor: String::new(),
            architecture: String::new(),
            description: String::new(),
            backend: summary.backend.to_string(),
            fallback: info.device_type == wgpu::DeviceType::Cpu,
            shader_f16: summary.shader_f16,
            timestamp_query: summary.timestamp_query,
            limits: LimitsSummary::of(&ctx.device().limits()),
        }
    }
}

/// The device limits the kernels depend on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LimitsSummary {
    /// `maxBufferSize`, bytes.
    pub max_buffer_size: u64,
    /// `maxStorageBufferBindingSize`, bytes.
    pub max_storage_buffer_binding_size: u64,
    /// `maxComputeWorkgroupStorageSize`, bytes.
    pub max_compute_workgroup_storage_size: u32,
    /// `maxComputeInvocationsPerWorkgroup`.
    pub max_compute_invocations_per_workgroup: u32,
    /// `maxStorageBuffersPerShaderStage`.
    pub max_storage_buffers_per_shader_stage: u32,
}

/// The least the suite needs: WebGPU's default limits, which the kernels'
/// workgroup sizes, shared-memory tiles and bindings are written for.
/// Every WebGPU device has at least these, so a device below them is
/// broken or deliberately restricted.
pub const REQUIRED: LimitsSummary = LimitsSummary {
    max_buffer_size: 256 << 20,
    max_storage_buffer_binding_size: 128 << 20,
    max_compute_workgroup_storage_size: 16 << 10,
    max_compute_invocations_per_workgroup: 256,
    max_storage_buffers_per_shader_stage: 8,
};

impl LimitsSummary {
    /// The fields of `limits` the kernels depend on.
    pub fn of(limits: &wgpu::Limits) -> Self {
        Self {
            max_buffer_size: limits.max_buffer_size,
            max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
            max_compute_workgroup_storage_size: limits.max_compute_workgroup_storage_size,
            max_compute_invocations_per_workgroup: limits.max_compute_invocations_per_workgroup,
            max_storage_buffers_per_shader_stage: limits.max_storage_buffers_per_shader_stage,
        }
    }

    /// Each limit below [`REQUIRED`], as `name: have < need`; empty when
    /// the device is good enough.
    ///
    /// # Example
    ///
    /// ```
    /// use vramfit_bench_web::adapter::REQUIRED;
    ///
    /// assert!(REQUIRED.shortfalls().is_empty());
    /// let small = vramfit_bench_web::adapter::LimitsSummary { max_compute_invocations_per_workgroup: 64, ..REQUIRED };
    /// assert_eq!(small.shortfalls(), ["maxComputeInvocationsPerWorkgroup: 64 < 256"]);
    /// ```
    pub fn shortfalls(&self) -> Vec<String> {
        let checks = [
            (
                "maxBufferSize",
                self.max_buffer_size,
                REQUIRED.max_buffer_size,
            ),
            (
                "maxStorageBufferBindingSize",
                self.max_storage_buffer_binding_size,
                REQUIRED.max_storage_buffer_binding_size,
            ),
            (
                "maxComputeWorkgroupStorageSize",
                u64::from(self.max_compute_workgroup_storage_size),
                u64::from(REQUIRED.max_compute_workgroup_storage_size),
            ),
            (
                "maxComputeInvocationsPerWorkgroup",
                u64::from(self.max_compute_invocations_per_workgroup),
                u64::from(REQUIRED.max_compute_invocations_per_workgroup),
            ),
            (
                "maxStorageBuffersPerShaderStage",
                u64::from(self.max_storage_buffers_per_shader_stage),
                u64::from(REQUIRED.max_storage_buffers_per_shader_stage),
            ),
        ];
        checks
            .iter()
            .filter(|(_, have, need)| have < need)
            .map(|(name, have, need)| format!("{name}: {have} < {need}"))
            .collect()
    }
}
