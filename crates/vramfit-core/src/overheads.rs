//! Memory beyond the model's own tensors: the CUDA context, cuBLAS and cuDNN
//! workspaces, and the share of the GPU a process may use. A leaf of the
//! core: the simulation, the reports and the planner read it.

use crate::error::Error;
use crate::gpus::{Arch, GpuPreset};
use crate::units::{Bytes, MIB};
use serde::{Deserialize, Serialize};

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
}

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
    /// cuDNN workspace taken from the caching allocator for the duration of
    /// each convolution (forward and backward) and returned after it. Its size
    /// depends on the algorithm cuDNN picks (with `cudnn.benchmark=True` it may
    /// try up to all free memory); no typical value is published, so the
    /// default is 0 and users who know theirs can set it.
    pub cudnn_workspace: Bytes,
    /// `torch.cuda.set_per_process_memory_fraction`: share of the GPU usable (0–1].
    pub memory_fraction: f64,
}

impl Default for Overheads {
    fn default() -> Self {
        Overheads {
            cuda_context: ModuleLoading::Lazy.context(),
            cublas_workspace: CUBLAS_WORKSPACE_DEFAULT,
            cublas_handles: 2,
            cudnn_workspace: Bytes::ZERO,
            memory_fraction: 1.0,
        }
    }
}

impl Overheads {
    /// The defaults for a GPU (its cuBLAS workspace size).
    pub fn for_gpu(gpu: &GpuPreset) -> Overheads {
        Overheads {
            cublas_workspace: cublas_workspace(gpu.arch),
            ..Overheads::default()
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

/// Device memory (reserved plus the CUDA context) when it is at most
/// `limit`, from `reserved_within`, which answers for a limit on reserved bytes.
pub fn device_used_within(
    limit: u64,
    overheads: &Overheads,
    reserved_within: impl FnOnce(Bytes) -> Option<Bytes>,
) -> Option<u64> {
    let context = overheads.cuda_context.0;
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
