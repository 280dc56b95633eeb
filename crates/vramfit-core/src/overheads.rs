//! Memory beyond the model's own tensors: the CUDA context, cuBLAS and cuDNN
//! workspaces, and the share of the GPU a process may use. A leaf of the
//! core: the simulation, the reports and the planner read it.

use crate::config::Mode;
use crate::error::Error;
use crate::gpus::{Arch, GpuPreset};
use crate::units::{Bytes, MIB};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// `PYTORCH_CUDA_ALLOC_CONF` as far as it changes what the caching allocator
/// reserves (read as `c10/cuda/CUDAAllocatorConfig.cpp` parses it:
/// comma-separated `key:value` options).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AllocatorConf {
    /// `max_split_size_mb`: cached blocks of this many MiB or more are not
    /// split (unlimited when unset). PyTorch requires more than 20.
    pub max_split_size_mb: Option<u64>,
    /// `expandable_segments:True`.
    pub expandable_segments: bool,
    /// `garbage_collection_threshold` in (0, 1); acts only with a memory fraction.
    pub garbage_collection_threshold: Option<f64>,
}

/// Options PyTorch accepts that change nothing the model counts (host
/// pinned memory, locking).
const NEUTRAL_OPTIONS: &[&str] = &[
    "release_lock_on_cudamalloc",
    "pinned_use_cuda_host_register",
    "pinned_num_register_threads",
    "pinned_use_background_threads",
];

impl FromStr for AllocatorConf {
    type Err = Error;

    /// Reads `key:value[,key:value…]`; an empty string is the default.
    ///
    /// # Errors
    /// [`Error::AllocatorConf`] naming the option: unknown, malformed, out
    /// of PyTorch's range, or one the model does not reproduce
    /// (`roundup_power2_divisions`, `backend:cudaMallocAsync`).
    fn from_str(s: &str) -> Result<AllocatorConf, Error> {
        let bad = |m: String| Error::AllocatorConf(m);
        let mut conf = AllocatorConf::default();
        for option in s.split(',').map(str::trim).filter(|o| !o.is_empty()) {
            let (key, value) = option
                .split_once(':')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| bad(format!("'{option}' is not key:value")))?;
            match key {
                "max_split_size_mb" => {
                    let mb: u64 = value.parse().map_err(|_| {
                        bad(format!(
                            "max_split_size_mb '{value}' is not a whole number of MiB"
                        ))
                    })?;
                    // CUDAAllocatorConfig: "must be > kLargeBuffer / MiB".
                    if mb <= LARGE_BUFFER_MIB {
                        return Err(bad(format!(
                            "max_split_size_mb {mb} is too small: PyTorch requires more than {LARGE_BUFFER_MIB}"
                        )));
                    }
                    conf.max_split_size_mb = Some(mb.min(1 << 30));
                }
                "expandable_segments" => {
                    conf.expandable_segments = match value {
                        "True" | "true" => true,
                        "False" | "false" => false,
                        _ => {
                            return Err(bad(format!(
                                "expandable_segments '{value}': expected True or False"
                            )));
                        }
                    };
                }
                "garbage_collection_threshold" => {
                    let t: f64 = value.parse().map_err(|_| {
                        bad(format!(
                            "garbage_collection_threshold '{value}' is not a number"
                        ))
                    })?;
                    if !(t > 0.0 && t < 1.0) {
                        return Err(bad(format!(
                            "garbage_collection_threshold {value}: PyTorch requires a value between 0 and 1"
                        )));
                    }
                    conf.garbage_collection_threshold = Some(t);
                }
                "backend" if value == "native" => {}
                "backend" => {
                    return Err(bad(format!(
                        "backend:{value} is not modelled (only the native caching allocator is)"
                    )));
                }
                "roundup_power2_divisions" => {
                    return Err(bad(
                        "roundup_power2_divisions is not modelled yet: it rounds allocated sizes too"
                            .to_string(),
                    ));
                }
                k if NEUTRAL_OPTIONS.contains(&k) => {}
                _ => {
                    return Err(bad(format!(
                        "unknown option '{key}': expected max_split_size_mb, expandable_segments, garbage_collection_threshold, backend or {}",
                        NEUTRAL_OPTIONS.join(", ")
                    )));
                }
            }
        }
        Ok(conf)
    }
}

impl fmt::Display for AllocatorConf {
    /// The options set, as `PYTORCH_CUDA_ALLOC_CONF` takes them (empty for the default).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(mb) = self.max_split_size_mb {
            parts.push(format!("max_split_size_mb:{mb}"));
        }
        if self.expandable_segments {
            parts.push("expandable_segments:True".to_string());
        }
        if let Some(t) = self.garbage_collection_threshold {
            parts.push(format!("garbage_collection_threshold:{t}"));
        }
        f.write_str(&parts.join(","))
    }
}

/// How the allocator is configured (`PYTORCH_CUDA_ALLOC_CONF`, read by
/// `c10/cuda/CUDAAllocatorConfig.cpp`) and how much it may reserve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AllocatorSettings {
    /// `max_split_size_mb` in bytes (`u64::MAX`, the default: unlimited).
    /// Blocks of at least this size are not split, serve only requests of at
    /// least this size less than 20 MiB (`kLargeBuffer`) smaller than themselves,
    /// and are the first returned to the driver when `cudaMalloc` fails.
    pub max_split: u64,
    /// `expandable_segments:True`: one segment per pool that grows by pages
    /// (2 MiB small, 20 MiB large) instead of a segment per `cudaMalloc`.
    pub expandable: bool,
    /// Reserved bytes past which `cudaMalloc` fails (`u64::MAX`: no limit).
    pub limit: u64,
    /// `garbage_collection_threshold`, which acts only under
    /// `set_per_process_memory_fraction`: past this share of the allowed
    /// memory (the limit), a request that finds no cached block first
    /// returns idle whole segments (`None`: off).
    pub gc_threshold: Option<f64>,
}

impl Default for AllocatorSettings {
    fn default() -> AllocatorSettings {
        AllocatorSettings {
            max_split: u64::MAX,
            expandable: false,
            limit: u64::MAX,
            gc_threshold: None,
        }
    }
}

/// `kLargeBuffer` in MiB: `max_split_size_mb` must exceed it.
const LARGE_BUFFER_MIB: u64 = 20;

/// How the CUDA runtime loads kernels, which sets the context's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModuleLoading {
    /// `CUDA_MODULE_LOADING=LAZY`: PyTorch sets it since 1.13 (CUDA ≥ 11.7).
    Lazy,
    /// Eager loading (CUDA < 11.7, or `CUDA_MODULE_LOADING=EAGER`).
    Eager,
}

impl ModuleLoading {
    /// The default CUDA context size. Lazy: 400 MiB — PyTorch maintainers
    /// report "~300 MB" / "around 400 MB" with lazy loading (pytorch/pytorch
    /// #107667, #109888), measured 256 MiB on an RTX 3090 (invoke-ai/InvokeAI
    /// #9413) and 426 MiB on an RTX 6000 Ada (unslothai/unsloth-zoo #1053).
    /// Eager: 1000 MiB — "> 1000 MB" before CUDA 11.7 (#107667), 1001 MiB on
    /// an RTX 3090 with CUDA 11.1 (#54564).
    pub fn context(self) -> Bytes {
        match self {
            ModuleLoading::Lazy => Bytes(400 * MIB),
            ModuleLoading::Eager => Bytes(1000 * MIB),
        }
    }

    /// The CUDA context on `gpu`: the stack memory the driver reserves for
    /// every thread the GPU can hold at once (`cudaLimitStackSize`, 1 KiB by
    /// default, × SMs × resident threads per SM: 216 MiB on an A100, as
    /// reported in arcs-skku/EMDC_llvm#13; the formula in cms-sw/cmssw#51395)
    /// plus the rest of the context, which depends on how kernels load.
    /// The rest is the published measurements less their GPU's stack:
    /// lazy 173 MiB, the mean of 256 − 123 MiB (RTX 3090, torch 2.7.1,
    /// invoke-ai/InvokeAI#9413) and 426 − 213 MiB (RTX 6000 Ada,
    /// unslothai/unsloth-zoo#1053); eager 1077 MiB, the mean of
    /// 1343 − 160 MiB (V100, CUDA 11.2, Hugging Face's single-GPU guide),
    /// 1001 − 123 MiB (RTX 3090, CUDA 11.1, pytorch/pytorch#54564) and
    /// 1687 − 123 MB / 721 − 40 MB (RTX 3090 / GTX 1080, torch 1.8.2,
    /// pytorch/pytorch#55277). GPUs of other vendors, and GPUs without a
    /// known SM count, take [`ModuleLoading::context`].
    ///
    /// On Hopper the rest is measured ([`HOPPER_CONTEXT_REST_LAZY`],
    /// [`HOPPER_CONTEXT_REST_EAGER`]): about twice the published rest of
    /// Ampere and Ada, which is why the Hopper runs of milabench read some
    /// 300 MiB above an estimate that took it.
    pub fn context_on(self, gpu: &GpuPreset) -> Bytes {
        let (sms, threads) = gpu.cuda_cores;
        if sms == 0 {
            return self.context();
        }
        let stack = u64::from(sms) * u64::from(threads) * STACK_PER_THREAD;
        let rest = match (gpu.arch, self) {
            (Arch::Hopper, ModuleLoading::Lazy) => HOPPER_CONTEXT_REST_LAZY,
            (Arch::Hopper, ModuleLoading::Eager) => HOPPER_CONTEXT_REST_EAGER,
            (_, ModuleLoading::Lazy) => 173 * MIB,
            (_, ModuleLoading::Eager) => 1077 * MIB,
        };
        Bytes(rest + stack)
    }

    /// The kernel images a training step's libraries load onto `gpu`
    /// outside PyTorch's allocator, beyond the context and the cuBLAS
    /// handles' own memory: measured on Hopper ([`HOPPER_KERNEL_IMAGES_LAZY`],
    /// [`HOPPER_KERNEL_IMAGES_EAGER`]), 0 elsewhere, where the published
    /// contexts are the only readings and no library was measured apart.
    pub fn kernel_images(self, arch: Arch) -> Bytes {
        match (arch, self) {
            (Arch::Hopper, ModuleLoading::Lazy) => HOPPER_KERNEL_IMAGES_LAZY,
            (Arch::Hopper, ModuleLoading::Eager) => HOPPER_KERNEL_IMAGES_EAGER,
            _ => Bytes::ZERO,
        }
    }

    /// How the CUDA toolkit PyTorch was built with loads kernels: lazily
    /// from CUDA 11.7 on (PyTorch sets `CUDA_MODULE_LOADING=LAZY` since 1.13),
    /// eagerly before.
    pub fn for_cuda(major: u32, minor: u32) -> ModuleLoading {
        if (major, minor) >= (11, 7) {
            ModuleLoading::Lazy
        } else {
            ModuleLoading::Eager
        }
    }
}

/// `cudaLimitStackSize`'s default: 1 KiB per thread. `memory_truth.py` read
/// it after every step of its H200 runs (`stack_per_thread_bytes`): it
/// stayed 1024, so no kernel of a training step grew it.
const STACK_PER_THREAD: u64 = 1024;

// Measured by `tests/gpu/memory_truth.py`'s libraries probe on an H200
// (132 SMs × 2048 threads: a 264 MiB stack), torch 2.11.0+cu130, driver
// 580.159.04, each loading mode in a fresh process: NVML's used less the
// idle GPU's, less what PyTorch's allocator held
// (`tests/reference/real_gpu/measured/libraries/`).

/// The lazily loaded context on Hopper less its stack: 648,871,936 B
/// (618.8 MiB) after CUDA initialised, less 264 MiB.
const HOPPER_CONTEXT_REST_LAZY: u64 = 648_871_936 - 264 * MIB;
/// The eagerly loaded context on Hopper less its stack: 1,319,960,576 B
/// (1258.8 MiB), less 264 MiB.
const HOPPER_CONTEXT_REST_EAGER: u64 = 1_319_960_576 - 264 * MIB;
/// One cuBLAS handle's own device memory on Hopper, taken by `cublasCreate`
/// with `cudaMalloc` (pytorch/pytorch#128601): the autograd thread's handle,
/// created at a training step's first backward, added 64 MiB with lazy
/// loading (the first handle 66 MiB, with its first kernels).
pub const HOPPER_CUBLAS_HANDLE: Bytes = Bytes(64 * MIB);
/// Lazy loading: everything outside the allocator after the probe's
/// matmuls, convolutions, attention and transformer training step
/// (766.8 MiB), less the context and two handles.
const HOPPER_KERNEL_IMAGES_LAZY: Bytes = Bytes(20 * MIB);
/// Eager loading: the same (2056.8 MiB) less the eager context and two
/// handles; cuBLAS's images alone took 416 MiB, cuDNN's 212 MiB.
const HOPPER_KERNEL_IMAGES_EAGER: Bytes = Bytes(670 * MIB);

/// cuBLAS workspace per handle before Hopper: `CUBLAS_WORKSPACE_CONFIG`
/// default `:4096:2:16:8` = 4096 KiB × 2 + 16 KiB × 8 (`aten/src/ATen/cuda/CublasHandlePool.cpp`).
pub const CUBLAS_WORKSPACE_DEFAULT: Bytes = Bytes(4096 * 1024 * 2 + 16 * 1024 * 8);
/// cuBLAS workspace per handle on Hopper and Blackwell (compute capability 9, 10, 12): 32 MiB.
pub const CUBLAS_WORKSPACE_HOPPER: Bytes = Bytes(32 * MIB);

/// Memory beyond the model's own tensors, each a named term the user can change.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Overheads {
    /// CUDA context and loaded kernels, outside PyTorch's allocator (seen by nvidia-smi only).
    pub cuda_context: Bytes,
    /// Size of one cuBLAS workspace. Since PyTorch 2.0 it is taken from the
    /// caching allocator and kept per (handle, stream), so it counts in
    /// allocated and reserved memory.
    pub cublas_workspace: Bytes,
    /// cuBLAS handles holding a workspace: training uses two (the forward
    /// thread's and the autograd engine's).
    pub cublas_handles: u32,
    /// Each cuBLAS handle's own device memory, which `cublasCreate` takes
    /// outside PyTorch's allocator (seen by nvidia-smi only): 64 MiB on
    /// Hopper, measured; 0 where not measured.
    pub cublas_handle_memory: Bytes,
    /// Kernel images the libraries load as a step first calls them, outside
    /// the allocator ([`ModuleLoading::kernel_images`]).
    pub kernel_images: Bytes,
    /// cuDNN workspace taken from the caching allocator for the duration of
    /// each convolution (forward and backward) and returned after it. Its size
    /// depends on the algorithm cuDNN picks (with `cudnn.benchmark=True` it may
    /// try up to all free memory); no typical value is published, so the
    /// default is 0 and users who know theirs can set it.
    pub cudnn_workspace: Bytes,
    /// `torch.cuda.set_per_process_memory_fraction`: share of the GPU usable (0–1].
    pub memory_fraction: f64,
    /// `PYTORCH_CUDA_ALLOC_CONF`: how the caching allocator reserves.
    pub allocator: AllocatorConf,
}

impl Default for Overheads {
    fn default() -> Self {
        Overheads {
            cuda_context: ModuleLoading::Lazy.context(),
            cublas_workspace: CUBLAS_WORKSPACE_DEFAULT,
            cublas_handles: 2,
            cublas_handle_memory: Bytes::ZERO,
            kernel_images: Bytes::ZERO,
            cudnn_workspace: Bytes::ZERO,
            memory_fraction: 1.0,
            allocator: AllocatorConf::default(),
        }
    }
}

impl Overheads {
    /// The defaults for a GPU (its cuBLAS workspace size).
    pub fn for_gpu(gpu: &GpuPreset) -> Overheads {
        Overheads {
            cuda_context: ModuleLoading::Lazy.context_on(gpu),
            cublas_workspace: cublas_workspace(gpu.arch),
            cublas_handle_memory: cublas_handle_memory(gpu.arch),
            kernel_images: ModuleLoading::Lazy.kernel_images(gpu.arch),
            ..Overheads::default()
        }
    }

    /// The cuBLAS handles a step of `mode` creates: inference runs no
    /// autograd thread, so one at most.
    pub fn cublas_handles_for(&self, mode: Mode) -> u32 {
        match mode {
            Mode::Inference => self.cublas_handles.min(1),
            Mode::Train | Mode::FinetuneLora | Mode::FinetuneQlora => self.cublas_handles,
        }
    }

    /// Device memory outside PyTorch's allocator in a step of `mode`: the
    /// CUDA context, the cuBLAS handles' own memory and the kernel images.
    pub fn outside_allocator(&self, mode: Mode) -> Bytes {
        let handles = u64::from(self.cublas_handles_for(mode));
        Bytes(
            self.cuda_context
                .0
                .saturating_add(handles.saturating_mul(self.cublas_handle_memory.0))
                .saturating_add(self.kernel_images.0),
        )
    }

    /// The allocator model's settings: the configuration, with garbage
    /// collection only under a memory fraction (PyTorch collects only when
    /// `set_per_process_memory_fraction` was called).
    pub fn allocator_settings(&self) -> AllocatorSettings {
        AllocatorSettings {
            max_split: self
                .allocator
                .max_split_size_mb
                .map_or(u64::MAX, |mb| mb.saturating_mul(MIB)),
            expandable: self.allocator.expandable_segments,
            limit: u64::MAX,
            gc_threshold: self
                .allocator
                .garbage_collection_threshold
                .filter(|_| self.memory_fraction < 1.0),
        }
    }

    /// Checks the memory fraction.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] when it is not in (0, 1].
    pub fn validate(&self) -> Result<(), Error> {
        if !(self.memory_fraction > 0.0 && self.memory_fraction <= 1.0) {
            return Err(Error::OutOfRange {
                field: "memory-fraction",
                value: self.memory_fraction.to_string(),
                min: 0,
                max: 1,
            });
        }
        Ok(())
    }
}

/// The cuBLAS workspace PyTorch keeps per handle on a GPU of this
/// architecture: 32 MiB on compute capability 9.0 and above (Hopper,
/// Blackwell), `:4096:2:16:8` (8.125 MiB) before
/// (`aten/src/ATen/cuda/CublasHandlePool.cpp`, `getChosenWorkspaceSize`).
/// Other vendors' GPUs and unknown ones take the default size: no
/// per-vendor figure is modelled.
pub fn cublas_workspace(arch: Arch) -> Bytes {
    match arch {
        Arch::Hopper | Arch::Blackwell => CUBLAS_WORKSPACE_HOPPER,
        Arch::Pascal
        | Arch::Volta
        | Arch::Turing
        | Arch::Ampere
        | Arch::Ada
        | Arch::Cdna2
        | Arch::Cdna3
        | Arch::Rdna3
        | Arch::XeLp
        | Arch::XeHpg
        | Arch::Xe2
        | Arch::AppleM1
        | Arch::AppleM2
        | Arch::AppleM3
        | Arch::AppleM4
        | Arch::Unknown => CUBLAS_WORKSPACE_DEFAULT,
    }
}

/// Each cuBLAS handle's own device memory on a GPU of this architecture:
/// [`HOPPER_CUBLAS_HANDLE`] on Hopper, 0 elsewhere (not measured apart).
pub fn cublas_handle_memory(arch: Arch) -> Bytes {
    match arch {
        Arch::Hopper => HOPPER_CUBLAS_HANDLE,
        _ => Bytes::ZERO,
    }
}

/// Usable bytes of a GPU: what a process may use by default
/// ([`GpuPreset::default_usable`]: all of a discrete GPU's memory, Metal's
/// working set of Apple's unified memory) under the memory fraction.
pub fn usable(gpu: &GpuPreset, o: &Overheads) -> Bytes {
    Bytes((gpu.default_usable().0 as f64 * o.memory_fraction) as u64)
}

/// The share of usable memory kept free when choosing a batch to use: the
/// planner's default and `vramfit max-batch`'s, and the page's "Use N".
/// Fragmentation across steps, other processes and library versions move a
/// real peak by a few percent around the estimate.
pub const SAFETY_MARGIN: f64 = 0.05;

/// `capacity` less the [`SAFETY_MARGIN`].
pub fn with_margin(capacity: Bytes) -> Bytes {
    Bytes((capacity.0 as f64 * (1.0 - SAFETY_MARGIN)) as u64)
}

/// Device memory (reserved plus what lies outside the allocator in a step
/// of `mode`) when it is at most `limit`, from `reserved_within`, which
/// answers for a limit on reserved bytes.
pub fn device_used_within(
    limit: u64,
    overheads: &Overheads,
    mode: Mode,
    reserved_within: impl FnOnce(Bytes) -> Option<Bytes>,
) -> Option<u64> {
    let context = overheads.outside_allocator(mode).0;
    let reserved = reserved_within(Bytes(limit.checked_sub(context)?))?;
    Some(reserved.0.saturating_add(context))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpus::gpu_presets;

    #[test]
    fn the_cublas_workspace_follows_the_architecture_not_a_list_of_ids() {
        for gpu in gpu_presets() {
            let hopper_or_newer = matches!(gpu.arch, Arch::Hopper | Arch::Blackwell);
            let want = if hopper_or_newer {
                32 * MIB
            } else {
                4096 * 1024 * 2 + 16 * 1024 * 8
            };
            assert_eq!(
                Overheads::for_gpu(&gpu).cublas_workspace.0,
                want,
                "{}",
                gpu.id
            );
        }
        // The presets of compute capability 9.0 and above.
        for id in ["h100-sxm", "h100-pcie", "h200", "b200", "rtx-5090"] {
            let gpu = crate::gpus::gpu_preset(id).unwrap();
            assert_eq!(
                Overheads::for_gpu(&gpu).cublas_workspace,
                CUBLAS_WORKSPACE_HOPPER
            );
        }
    }

    #[test]
    fn a_memory_fraction_outside_zero_to_one_is_refused() {
        for f in [0.0, -0.5, 1.01, f64::NAN] {
            let o = Overheads {
                memory_fraction: f,
                ..Overheads::default()
            };
            assert!(o.validate().is_err(), "{f}");
        }
        assert!(Overheads::default().validate().is_ok());
    }
}
