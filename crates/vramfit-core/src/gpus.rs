//! Built-in GPU presets: memory, bandwidth and peak throughput.
//!
//! Values come from vendor datasheets and whitepapers as collected in
//! `shared/research/webgpu.md` §4 (each row names its source and confidence:
//! `datasheet` = vendor figure, `derived` = units × 2 × boost clock).
//! Checked against vendor figures and reproductions on 2026-11-29; FP32 is the
//! non-packed vector rate everywhere (the realistic ceiling of scalar shaders).
//! `memory_bytes` is the marketed capacity in GiB; the driver reports slightly
//! less once ECC and reserved memory are taken out, and what a process can
//! use is [`GpuPreset::runtime_memory`].

use crate::error::Error;
use crate::units::{Bytes, GIB};
use serde::Serialize;
use std::borrow::Cow;

/// A GPU preset.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GpuPreset {
    /// Stable id (CLI, URLs): a preset's, or `custom-<GiB>` ([`custom_gpu`]).
    pub id: Cow<'static, str>,
    /// Display name.
    pub name: Cow<'static, str>,
    /// The chip's architecture (its vendor follows from it: [`GpuPreset::vendor`]).
    pub arch: Arch,
    /// Memory capacity.
    pub memory_bytes: Bytes,
    /// Memory bandwidth in GB/s.
    pub bandwidth_gbs: f64,
    /// Peak FP32 (non-tensor) TFLOP/s.
    pub fp32_tflops: f64,
    /// Peak FP16 on shader cores (what WebGPU can reach) TFLOP/s.
    pub fp16_tflops: f64,
    /// Peak dense FP16/BF16 tensor-core TFLOP/s (0 when none).
    pub tensor_tflops: f64,
    /// Whether the GPU has bf16 matrix math: [`Arch::has_bf16`].
    pub bf16: bool,
    /// Where the figures come from.
    pub source: &'static str,
    /// NVIDIA GPUs: streaming multiprocessors and the most threads resident
    /// on one (by compute capability: 2048 on 6.x, 7.0, 8.0, 9.0, 10.0; 1024
    /// on 7.5; 1536 on 8.6, 8.9, 12.0), which size the stack memory the
    /// driver reserves in each CUDA context; `(0, 0)` for other vendors.
    pub cuda_cores: (u32, u32),
    /// Integrated graphics sharing the system's memory (one per machine).
    pub integrated: bool,
}

/// A GPU's maker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    /// NVIDIA (CUDA).
    Nvidia,
    /// AMD (ROCm, or WebGPU on Radeon).
    Amd,
    /// Intel.
    Intel,
    /// Apple silicon (unified memory).
    Apple,
    /// A GPU the user gave by its memory alone.
    Custom,
}

impl Vendor {
    /// The lower-case id, as `GPUAdapterInfo.vendor` names the vendor.
    pub fn id(self) -> &'static str {
        match self {
            Vendor::Nvidia => "nvidia",
            Vendor::Amd => "amd",
            Vendor::Intel => "intel",
            Vendor::Apple => "apple",
            Vendor::Custom => "custom",
        }
    }
}

/// A GPU architecture: what decides library behaviour that depends on the
/// chip generation (the cuBLAS workspace PyTorch keeps, see
/// `overheads::cublas_workspace`), and the vendor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arch {
    /// NVIDIA Pascal (compute capability 6.x): GTX 10 series.
    Pascal,
    /// NVIDIA Volta (7.0): V100.
    Volta,
    /// NVIDIA Turing (7.5): RTX 20 series, T4.
    Turing,
    /// NVIDIA Ampere (8.0, 8.6): RTX 30 series, A100, A10.
    Ampere,
    /// NVIDIA Ada Lovelace (8.9): RTX 40 series, L4, L40S.
    Ada,
    /// NVIDIA Hopper (9.0): H100, H200.
    Hopper,
    /// NVIDIA Blackwell (10.0 datacenter, 12.0 consumer): B200, RTX 50 series.
    Blackwell,
    /// AMD CDNA 2: Instinct MI200 series.
    Cdna2,
    /// AMD CDNA 3: Instinct MI300 series.
    Cdna3,
    /// AMD RDNA 3: Radeon 7000 series and the 780M integrated GPU.
    Rdna3,
    /// Intel Xe-LP: Iris Xe integrated graphics.
    XeLp,
    /// Intel Xe-HPG: Arc A series.
    XeHpg,
    /// Intel Xe2: Arc 140V (Lunar Lake) and B series.
    Xe2,
    /// Apple M1 family.
    AppleM1,
    /// Apple M2 family.
    AppleM2,
    /// Apple M3 family.
    AppleM3,
    /// Apple M4 family.
    AppleM4,
    /// Not known: a GPU given by its memory alone ([`custom_gpu`]).
    Unknown,
}

impl Arch {
    /// Whether chips of this architecture have bf16 matrix math. NVIDIA
    /// added BF16 to the tensor cores with Ampere (NVIDIA A100 Tensor Core
    /// GPU Architecture whitepaper, 2020); Pascal, Volta and Turing (the GTX
    /// 10 series, V100, T4, RTX 20 series) have fp16 only, so mixed precision
    /// there is fp16 with a gradient scaler, and bf16 runs without the tensor
    /// cores if at all. Apple added bf16 to its GPUs with the M2 (Metal's
    /// `bfloat` needs the Apple 8 GPU family or later); the M1 has fp16 only.
    /// Other vendors' chips here have bf16; an unknown GPU is taken to.
    pub fn has_bf16(self) -> bool {
        match self {
            Arch::Pascal | Arch::Volta | Arch::Turing | Arch::AppleM1 => false,
            Arch::Ampere
            | Arch::Ada
            | Arch::Hopper
            | Arch::Blackwell
            | Arch::Cdna2
            | Arch::Cdna3
            | Arch::Rdna3
            | Arch::XeLp
            | Arch::XeHpg
            | Arch::Xe2
            | Arch::AppleM2
            | Arch::AppleM3
            | Arch::AppleM4
            | Arch::Unknown => true,
        }
    }

    /// Who makes chips of this architecture.
    pub fn vendor(self) -> Vendor {
        match self {
            Arch::Pascal
            | Arch::Volta
            | Arch::Turing
            | Arch::Ampere
            | Arch::Ada
            | Arch::Hopper
            | Arch::Blackwell => Vendor::Nvidia,
            Arch::Cdna2 | Arch::Cdna3 | Arch::Rdna3 => Vendor::Amd,
            Arch::XeLp | Arch::XeHpg | Arch::Xe2 => Vendor::Intel,
            Arch::AppleM1 | Arch::AppleM2 | Arch::AppleM3 | Arch::AppleM4 => Vendor::Apple,
            Arch::Unknown => Vendor::Custom,
        }
    }
}

macro_rules! gpu {
    ($id:literal, $name:literal, $arch:expr, $gib:expr, $bw:expr, $fp32:expr, $fp16:expr, $tensor:expr, $src:literal) => {
        gpu!($id, $name, $arch, $gib, $bw, $fp32, $fp16, $tensor, $src, sms: 0, threads: 0)
    };
    ($id:literal, $name:literal, $arch:expr, $gib:expr, $bw:expr, $fp32:expr, $fp16:expr, $tensor:expr, $src:literal, integrated) => {
        GpuPreset {
            integrated: true,
            ..gpu!($id, $name, $arch, $gib, $bw, $fp32, $fp16, $tensor, $src)
        }
    };
    ($id:literal, $name:literal, $arch:expr, $gib:expr, $bw:expr, $fp32:expr, $fp16:expr, $tensor:expr, $src:literal, sms: $sms:expr, threads: $threads:expr) => {
        GpuPreset {
            id: Cow::Borrowed($id),
            name: Cow::Borrowed($name),
            arch: $arch,
            memory_bytes: Bytes(($gib as f64 * GIB as f64) as u64),
            bandwidth_gbs: $bw as f64,
            fp32_tflops: $fp32 as f64,
            fp16_tflops: $fp16 as f64,
            tensor_tflops: $tensor as f64,
            bf16: $arch.has_bf16(),
            source: $src,
            cuda_cores: ($sms, $threads),
            integrated: false,
        }
    };
}

/// All GPU presets, consumer first, then datacenter, Apple, Intel and AMD.
pub fn gpu_presets() -> Vec<GpuPreset> {
    vec![
        gpu!(
            "gtx-1060-6gb",
            "GeForce GTX 1060 6GB",
            Arch::Pascal,
            6,
            192,
            4.4,
            0.07,
            0,
            "NVIDIA datasheet; FP16 at 1/64 rate (derived)",
            sms: 10,
            threads: 2048
        ),
        gpu!(
            "gtx-1080-ti",
            "GeForce GTX 1080 Ti",
            Arch::Pascal,
            11,
            484,
            11.3,
            0.18,
            0,
            "NVIDIA datasheet; FP16 at 1/64 rate (derived)",
            sms: 28,
            threads: 2048
        ),
        gpu!(
            "rtx-2080-ti",
            "GeForce RTX 2080 Ti",
            Arch::Turing,
            11,
            616,
            13.4,
            26.9,
            53.8,
            "NVIDIA Turing whitepaper (tensor: FP32 accumulate)",
            sms: 68,
            threads: 1024
        ),
        gpu!(
            "rtx-3060-12gb",
            "GeForce RTX 3060 12GB",
            Arch::Ampere,
            12,
            360,
            12.7,
            12.7,
            25.5,
            "derived: 3584 cores × 2 × 1.777 GHz; NVIDIA Ampere whitepaper ratios",
            sms: 28,
            threads: 1536
        ),
        gpu!(
            "rtx-3080-10gb",
            "GeForce RTX 3080 10GB",
            Arch::Ampere,
            10,
            760,
            29.8,
            29.8,
            59.5,
            "NVIDIA Ampere GA102 whitepaper",
            sms: 68,
            threads: 1536
        ),
        gpu!(
            "rtx-3090",
            "GeForce RTX 3090",
            Arch::Ampere,
            24,
            936,
            35.6,
            35.6,
            71,
            "NVIDIA Ampere GA102 whitepaper",
            sms: 82,
            threads: 1536
        ),
        gpu!(
            "rtx-4060",
            "GeForce RTX 4060",
            Arch::Ada,
            8,
            272,
            15.1,
            15.1,
            30,
            "derived: 3072 cores × 2 × 2.46 GHz; Ada whitepaper ratios",
            sms: 24,
            threads: 1536
        ),
        gpu!(
            "rtx-4070",
            "GeForce RTX 4070",
            Arch::Ada,
            12,
            504,
            29.1,
            29.1,
            58,
            "derived: 5888 cores × 2 × 2.475 GHz; Ada whitepaper ratios",
            sms: 46,
            threads: 1536
        ),
        gpu!(
            "rtx-4080",
            "GeForce RTX 4080",
            Arch::Ada,
            16,
            717,
            48.7,
            48.7,
            97.5,
            "NVIDIA Ada Lovelace whitepaper (tensor: FP32 accumulate)",
            sms: 76,
            threads: 1536
        ),
        gpu!(
            "rtx-4090",
            "GeForce RTX 4090",
            Arch::Ada,
            24,
            1008,
            82.6,
            82.6,
            165,
            "NVIDIA Ada Lovelace whitepaper (tensor: FP32 accumulate)",
            sms: 128,
            threads: 1536
        ),
        gpu!(
            "rtx-5090",
            "GeForce RTX 5090",
            Arch::Blackwell,
            32,
            1792,
            104.8,
            104.8,
            209.5,
            "NVIDIA RTX Blackwell whitepaper (tensor: FP32 accumulate)",
            sms: 170,
            threads: 1536
        ),
        gpu!(
            "t4",
            "Tesla T4",
            Arch::Turing,
            16,
            320,
            8.1,
            16.2,
            65,
            "NVIDIA T4 datasheet",
            sms: 40,
            threads: 1024
        ),
        gpu!(
            "v100-16gb",
            "Tesla V100 SXM2 16GB",
            Arch::Volta,
            16,
            900,
            15.7,
            31.4,
            125,
            "NVIDIA V100 datasheet",
            sms: 80,
            threads: 2048
        ),
        gpu!(
            "v100-32gb",
            "Tesla V100 SXM2 32GB",
            Arch::Volta,
            32,
            900,
            15.7,
            31.4,
            125,
            "NVIDIA V100 datasheet",
            sms: 80,
            threads: 2048
        ),
        gpu!(
            "a10",
            "A10",
            Arch::Ampere,
            24,
            600,
            31.2,
            31.2,
            125,
            "NVIDIA A10 datasheet",
            sms: 72,
            threads: 1536
        ),
        gpu!(
            "a100-40gb",
            "A100 40GB SXM",
            Arch::Ampere,
            40,
            1555,
            19.5,
            78,
            312,
            "NVIDIA A100 datasheet",
            sms: 108,
            threads: 2048
        ),
        gpu!(
            "a100-80gb",
            "A100 80GB SXM",
            Arch::Ampere,
            80,
            2039,
            19.5,
            78,
            312,
            "NVIDIA A100 datasheet",
            sms: 108,
            threads: 2048
        ),
        gpu!(
            "l4",
            "L4",
            Arch::Ada,
            24,
            300,
            30.3,
            30.3,
            121,
            "NVIDIA L4 datasheet",
            sms: 58,
            threads: 1536
        ),
        gpu!(
            "l40s",
            "L40S",
            Arch::Ada,
            48,
            864,
            91.6,
            91.6,
            362,
            "NVIDIA L40S datasheet",
            sms: 142,
            threads: 1536
        ),
        gpu!(
            "h100-sxm",
            "H100 SXM 80GB",
            Arch::Hopper,
            80,
            3350,
            67,
            134,
            989,
            "NVIDIA H100 datasheet",
            sms: 132,
            threads: 2048
        ),
        gpu!(
            "h100-pcie",
            "H100 PCIe 80GB",
            Arch::Hopper,
            80,
            2000,
            51,
            102,
            756,
            "NVIDIA H100 datasheet",
            sms: 114,
            threads: 2048
        ),
        gpu!(
            "h200",
            "H200 SXM 141GB",
            Arch::Hopper,
            141,
            4800,
            67,
            134,
            989,
            "NVIDIA H200 datasheet",
            sms: 132,
            threads: 2048
        ),
        gpu!(
            "b200",
            "B200 (HGX)",
            Arch::Blackwell,
            180,
            7700,
            75,
            150,
            2250,
            "NVIDIA HGX B200 spec table (FP32 75; the Blackwell technical brief says 80); FP16 shader derived",
            sms: 148,
            threads: 2048
        ),
        gpu!(
            "mi250x",
            "AMD Instinct MI250X",
            Arch::Cdna2,
            128,
            3277,
            47.9,
            95.7,
            383,
            "AMD ROCm MI250 table (two GCDs): FP32 non-packed (95.7 packed); FP16 shader derived as the packed rate"
        ),
        gpu!(
            "mi300x",
            "AMD Instinct MI300X",
            Arch::Cdna3,
            192,
            5300,
            81.7,
            163.4,
            1307,
            "AMD ROCm MI300 table: FP32 non-packed (163.4 packed); FP16 shader derived as the packed rate"
        ),
        gpu!(
            "arc-a770-16gb",
            "Intel Arc A770 16GB",
            Arch::XeHpg,
            16,
            560,
            17.2,
            34.4,
            138,
            "derived: 4096 ALUs × 2 × 2.1 GHz; XMX from Intel"
        ),
        gpu!(
            "iris-xe-96eu",
            "Intel Iris Xe (96 EU)",
            Arch::XeLp,
            8,
            68,
            2.1,
            4.2,
            0,
            "derived: 768 ALUs × 2 × 1.35 GHz; shared memory, 8 GiB assumed",
            integrated
        ),
        gpu!(
            "arc-140v",
            "Intel Arc 140V",
            Arch::Xe2,
            16,
            136,
            4,
            8,
            32,
            "derived, uncertain; shared memory, 16 GiB assumed",
            integrated
        ),
        gpu!(
            "radeon-780m",
            "AMD Radeon 780M",
            Arch::Rdna3,
            8,
            100,
            4.1,
            8.3,
            0,
            "derived (non-dual-issue FP32); shared memory, 8 GiB assumed",
            integrated
        ),
        gpu!(
            "apple-m1",
            "Apple M1 (16 GB)",
            Arch::AppleM1,
            16,
            68,
            2.6,
            2.6,
            0,
            "Apple; unified memory, usable share is lower"
        ),
        gpu!(
            "apple-m1-max",
            "Apple M1 Max (64 GB)",
            Arch::AppleM1,
            64,
            400,
            10.4,
            10.4,
            0,
            "Apple"
        ),
        gpu!(
            "apple-m2",
            "Apple M2 (24 GB)",
            Arch::AppleM2,
            24,
            100,
            3.6,
            3.6,
            0,
            "Apple"
        ),
        gpu!(
            "apple-m2-max",
            "Apple M2 Max (96 GB)",
            Arch::AppleM2,
            96,
            400,
            13.6,
            13.6,
            0,
            "Apple"
        ),
        gpu!(
            "apple-m3-max",
            "Apple M3 Max 40c (128 GB)",
            Arch::AppleM3,
            128,
            400,
            14.1,
            14.1,
            0,
            "derived: 5120 ALUs × 2 × 1.380 GHz (powermetrics top GPU state)"
        ),
        gpu!(
            "apple-m4-max",
            "Apple M4 Max 40c (128 GB)",
            Arch::AppleM4,
            128,
            546,
            16.2,
            16.2,
            0,
            "derived: 5120 ALUs × 2 × 1.578 GHz (powermetrics; Apple publishes no figure)"
        ),
    ]
}

impl GpuPreset {
    /// Datasheet peak FLOP/s for training at `precision`: in half precision
    /// the tensor cores when the preset lists them, else the plain fp16 rate;
    /// in fp32, and in bf16 on a GPU without bf16 matrix math, the fp32 rate.
    pub fn peak_flops_per_s(&self, precision: crate::config::Precision) -> f64 {
        use crate::config::Precision;
        let half = match precision {
            Precision::Fp32 => false,
            Precision::Bf16 | Precision::AmpBf16 => self.bf16,
            Precision::Fp16 | Precision::AmpFp16 => true,
        };
        let tflops = if half && self.tensor_tflops > 0.0 {
            self.tensor_tflops
        } else if half {
            self.fp16_tflops
        } else {
            self.fp32_tflops
        };
        tflops * 1e12
    }
}

/// How much of a GPU's memory one process may use by default (before
/// `torch.cuda.set_per_process_memory_fraction`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum MemoryLimit {
    /// Dedicated memory: all of it.
    Dedicated,
    /// Apple silicon's unified memory: Metal lets the GPU keep at most its
    /// `recommendedMaxWorkingSetSize` resident, by default this share of
    /// the RAM ([`apple_working_set`]).
    WorkingSet {
        /// The share's numerator.
        numerator: u64,
        /// The share's denominator.
        denominator: u64,
    },
}

impl MemoryLimit {
    /// The bytes usable of `memory` under this limit.
    pub fn of(self, memory: Bytes) -> Bytes {
        match self {
            MemoryLimit::Dedicated => memory,
            MemoryLimit::WorkingSet {
                numerator,
                denominator,
            } => Bytes(
                (u128::from(memory.0) * u128::from(numerator) / u128::from(denominator.max(1)))
                    as u64,
            ),
        }
    }
}

/// RAM above which macOS gives the GPU three quarters of it, not two thirds.
pub const APPLE_LARGE_RAM: Bytes = Bytes(32 * GIB);

/// macOS's default GPU working set (`MTLDevice.recommendedMaxWorkingSetSize`)
/// on a Mac with `ram` of unified memory: two thirds of it up to 32 GiB,
/// three quarters above, as Metal reports it — 10922.67 MB of 16 GB
/// (ggml-org/llama.cpp #2209), 21845.34 MB of 32 GB (llama.cpp #2011,
/// ollama/ollama #434), 49152 MiB of 64 GB (llama.cpp #1870). Newer macOS
/// releases report more on some machines (17.76 GiB of 24 GB,
/// sgl-project/sglang #29949; 107.52 GiB of 128 GiB on macOS 26,
/// antirez/ds4 #893), so this rule errs low there; `sysctl
/// iogpu.wired_limit_mb` raises the limit by hand.
pub fn apple_working_set(ram: Bytes) -> MemoryLimit {
    let (numerator, denominator) = if ram.0 > APPLE_LARGE_RAM.0 {
        (3, 4)
    } else {
        (2, 3)
    };
    MemoryLimit::WorkingSet {
        numerator,
        denominator,
    }
}

impl GpuPreset {
    /// How much of its memory a process may use by default: all of a
    /// discrete GPU's, Metal's working set of an Apple GPU's unified memory.
    pub fn memory_limit(&self) -> MemoryLimit {
        match self.arch.vendor() {
            Vendor::Apple => apple_working_set(self.memory_bytes),
            Vendor::Nvidia | Vendor::Amd | Vendor::Intel | Vendor::Custom => MemoryLimit::Dedicated,
        }
    }

    /// The memory the GPU's runtime offers: on an NVIDIA GPU with a
    /// published reading, CUDA's own total — NVML's total less the driver's
    /// reservation ([`crate::driver_reserve::cuda_total`]), a few hundred
    /// MiB under the marketed capacity, more on some boards (an A10's
    /// NVML total is 23028 MiB of "24 GB"); elsewhere the marketed capacity.
    pub fn runtime_memory(&self) -> Bytes {
        match self.arch.vendor() {
            Vendor::Nvidia => {
                crate::driver_reserve::cuda_total(&self.id).unwrap_or(self.memory_bytes)
            }
            Vendor::Apple | Vendor::Amd | Vendor::Intel | Vendor::Custom => self.memory_bytes,
        }
    }

    /// The bytes a process may use by default ([`GpuPreset::memory_limit`]
    /// of [`GpuPreset::runtime_memory`]).
    pub fn default_usable(&self) -> Bytes {
        self.memory_limit().of(self.runtime_memory())
    }
}

/// Looks a GPU preset up by id; `custom-<GiB>` is a [`custom_gpu`].
///
/// # Errors
/// [`Error::UnknownGpu`] when no preset has this id (or a custom GPU's
/// memory is not a whole number of GiB in [`CUSTOM_GIB`]).
pub fn gpu_preset(id: &str) -> Result<GpuPreset, Error> {
    if let Some(gib) = id.strip_prefix(CUSTOM_PREFIX) {
        return gib
            .parse::<u64>()
            .ok()
            .filter(|g| CUSTOM_GIB.contains(g) && gib == g.to_string())
            .map(custom_gpu)
            .ok_or_else(|| Error::UnknownGpu(id.to_string()));
    }
    gpu_presets()
        .into_iter()
        .find(|g| g.id == id)
        .ok_or_else(|| Error::UnknownGpu(id.to_string()))
}

/// The id prefix of a GPU given by its memory alone.
pub const CUSTOM_PREFIX: &str = "custom-";

/// The memory a custom GPU may have, GiB.
pub const CUSTOM_GIB: std::ops::RangeInclusive<u64> = 1..=4096;

/// A GPU known only by its memory (`custom-<GiB>`): what is not in the
/// presets. Its throughput is unknown (zero), so step times priced from the
/// datasheet are not available for it; it is taken to have bf16.
pub fn custom_gpu(gib: u64) -> GpuPreset {
    GpuPreset {
        cuda_cores: (0, 0),
        integrated: false,
        id: Cow::Owned(format!("{CUSTOM_PREFIX}{gib}")),
        name: Cow::Owned(format!("custom GPU with {gib} GiB")),
        arch: Arch::Unknown,
        memory_bytes: Bytes(gib.saturating_mul(GIB)),
        bandwidth_gbs: 0.0,
        fp32_tflops: 0.0,
        fp16_tflops: 0.0,
        tensor_tflops: 0.0,
        bf16: true,
        source: "memory given by the user; no throughput figures",
    }
}

impl GpuPreset {
    /// Whether this GPU is known only by its memory ([`custom_gpu`]).
    pub fn is_custom(&self) -> bool {
        self.arch == Arch::Unknown
    }

    /// Whether several of this GPU make one machine for multi-GPU training or
    /// serving: discrete cards do; Apple silicon (one GPU per Mac) and
    /// integrated graphics (one per processor) do not.
    pub fn clusters(&self) -> bool {
        !self.integrated && self.vendor() != Vendor::Apple
    }

    /// Who makes it.
    pub fn vendor(&self) -> Vendor {
        self.arch.vendor()
    }
}
