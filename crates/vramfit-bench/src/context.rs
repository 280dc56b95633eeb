//! Acquiring a GPU: instance, adapter, device and queue in one value.

use std::fmt;

use crate::error::{BenchError, Result};

/// The backends [`GpuContext::request`] should search on this target:
/// Vulkan natively (lavapipe in CI), the browser's WebGPU on wasm.
#[cfg(not(target_arch = "wasm32"))]
pub const DEFAULT_BACKENDS: wgpu::Backends = wgpu::Backends::VULKAN;

/// The backends [`GpuContext::request`] should search on this target:
/// Vulkan natively (lavapipe in CI), the browser's WebGPU on wasm.
#[cfg(target_arch = "wasm32")]
pub const DEFAULT_BACKENDS: wgpu::Backends = wgpu::Backends::BROWSER_WEBGPU;

/// Optional features that kernels may use when the adapter has them. They are
/// requested only if available, so their absence never fails device creation.
fn optional_features() -> wgpu::Features {
    wgpu::Features::SHADER_F16 | wgpu::Features::TIMESTAMP_QUERY
}

/// A GPU ready for work: the adapter it came from, its device and queue.
///
/// Acquiring it is the only step that differs between native and wasm:
/// natively `GpuContext::new_native` (not compiled on wasm) blocks on
/// [`GpuContext::request`]; in a browser, await [`GpuContext::request`] from
/// `spawn_local`. Kernels only ever take `&GpuContext`.
#[derive(Debug)]
pub struct GpuContext {
    /// Kept so that the adapter (and the instance behind it) outlive the
    /// device on every backend.
    instance: wgpu::Instance,
    adapter: wgpu::Adapter,
    device: wgpu::Device,
    queue: wgpu::Queue,
}

impl GpuContext {
    /// Acquires a device on this target's [`DEFAULT_BACKENDS`], blocking
    /// the current thread.
    ///
    /// # Errors
    ///
    /// [`BenchError::NoAdapter`] if no adapter is found,
    /// [`BenchError::RequestDevice`] if the adapter refuses to open a device.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new_native() -> Result<Self> {
        pollster::block_on(Self::request(DEFAULT_BACKENDS))
    }

    /// Acquires the first adapter on `backends` and opens a device on it
    /// with the adapter's full limits and any of `SHADER_F16` /
    /// `TIMESTAMP_QUERY` it offers.
    ///
    /// # Errors
    ///
    /// [`BenchError::NoAdapter`] if no adapter is found,
    /// [`BenchError::RequestDevice`] if the adapter refuses to open a device.
    pub async fn request(backends: wgpu::Backends) -> Result<Self> {
        let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle();
        descriptor.backends = backends;
        let instance = wgpu::Instance::new(descriptor);
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                ..Default::default()
            })
            .await
            .map_err(|source| BenchError::NoAdapter { backends, source })?;
        Self::from_adapter(instance, adapter).await
    }

    /// Opens a device on an adapter the caller has already chosen, e.g. in a
    /// test that wants a specific one.
    ///
    /// # Errors
    ///
    /// [`BenchError::RequestDevice`] if the adapter refuses to open a device.
    pub async fn from_adapter(instance: wgpu::Instance, adapter: wgpu::Adapter) -> Result<Self> {
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("vramfit-bench device"),
                required_features: adapter.features() & optional_features(),
                // A memory benchmark wants the largest buffers the adapter
                // allows, not WebGPU's conservative defaults.
                required_limits: adapter.limits(),
                ..Default::default()
            })
            .await
            .map_err(|source| BenchError::RequestDevice {
                adapter: adapter.get_info().name,
                source,
            })?;
        Ok(Self {
            instance,
            adapter,
            device,
            queue,
        })
    }

    /// The instance the adapter was found on.
    pub fn instance(&self) -> &wgpu::Instance {
        &self.instance
    }

    /// The adapter the device was opened on.
    pub fn adapter(&self) -> &wgpu::Adapter {
        &self.adapter
    }

    /// The logical device; use it to create resources.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue to submit work to.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// A short description of the adapter; see [`AdapterSummary`].
    pub fn summary(&self) -> AdapterSummary {
        AdapterSummary::of(&self.adapter)
    }
}

/// What the benchmarks need to know about an adapter, in a printable form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterSummary {
    /// The driver's name for the adapter, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub name: String,
    /// The backend the adapter runs on.
    pub backend: wgpu::Backend,
    /// Whether the adapter supports `f16` in shaders (`SHADER_F16`); if not,
    /// half-precision kernels must fall back to `f32`.
    pub shader_f16: bool,
    /// Whether the adapter supports GPU timestamps (`TIMESTAMP_QUERY`); if
    /// not, timings fall back to wall-clock time.
    pub timestamp_query: bool,
}

impl AdapterSummary {
    /// Summarises `adapter`.
    pub fn of(adapter: &wgpu::Adapter) -> Self {
        let info = adapter.get_info();
        let features = adapter.features();
        Self {
            name: info.name,
            backend: info.backend,
            shader_f16: features.contains(wgpu::Features::SHADER_F16),
            timestamp_query: features.contains(wgpu::Features::TIMESTAMP_QUERY),
        }
    }
}

impl fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let yes_no = |flag: bool| if flag { "yes" } else { "no" };
        write!(
            f,
            "{} ({}; shader-f16: {}, timestamp-query: {})",
            self.name,
            self.backend,
            yes_no(self.shader_f16),
            yes_no(self.timestamp_query),
        )
    }
}
