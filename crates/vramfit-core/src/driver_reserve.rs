//! Device memory the NVIDIA driver and the GPU's firmware keep for
//! themselves before any process runs, and which "used" figure counts it.
//!
//! NVML has two memory queries (`nvml.h`). `nvmlDeviceGetMemoryInfo` fills
//! `nvmlMemory_t`, whose `used` is the "Sum of Reserved and Allocated device
//! memory"; `nvmlDeviceGetMemoryInfo_v2` fills `nvmlMemory_v2_t`, which
//! reports `reserved` ("Device memory (in bytes) reserved for system use
//! (driver or firmware)") apart from `used` ("Allocated device memory").
//! nvidia-smi shows the second: its "Memory-Usage" column leaves the
//! reservation out and `nvidia-smi -q` lists it as "FB Memory Usage /
//! Reserved". The split came with the R510 drivers: before them the
//! reservation was left out of `total` as well as of `used` (a V100-SXM2
//! 16 GB reads 16160 MiB total on driver 460.91.03 in Hugging Face's guide,
//! and 16384 MiB total with 240 MiB reserved on 550.127.05), and since them
//! a v1 `used` counts it (gpustat #141: "308MB memory used even no process"
//! after updating to 515.76, while nvidia-smi shows none; rust-nvml/
//! nvml-wrapper #57: 912 MB by v1 against 7.8 MB by v2 on an idle A100).
//! Python's `nvidia-ml-py` calls v1 unless asked for a version
//! (`nvmlDeviceGetMemoryInfo(handle, version=None)` in 12.570.86), so tools
//! that read `pynvml.nvmlDeviceGetMemoryInfo(handle).used` — milabench's
//! monitor (voir 0.2.20, `voir/instruments/gpu/cuda.py`), Hugging Face's
//! `print_gpu_utilization` — include the reservation on a current driver.
//!
//! How big the reservation is depends on the GPU and on the driver, by no
//! documented rule: besides the 454 MiB below (driver 565.57.01), other
//! published `nvidia-smi -q` dumps of H100 80GB HBM3 machines read 328 MiB
//! (545.23.08) and 551 MiB (535.309.01) (public files found through a code
//! index that does not name their repository). So the sizes here are
//! readings of idle GPUs, one per preset, from one collection taken on the
//! 550–570 drivers: <https://github.com/thamada/gls> at e20f22d, whose
//! `gls/*_smi.py` hold captured `nvidia-smi -q` output; its H100 file's
//! `deviceQuery` twin reports 81106 MiB, the total less the reservation, as
//! CUDA's own total. A GPU without a
//! reading has no size: vramfit says "unknown" rather than guess.

use crate::units::{Bytes, MIB};
use serde::{Deserialize, Serialize};

/// Which "used" figure a device-memory number is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceReading {
    /// What nvidia-smi shows (NVML v2 `used`, or a process's own usage):
    /// the driver's reservation left out. vramfit's `device_used_bytes`.
    NvidiaSmi,
    /// NVML v1 `nvmlMemory_t.used` of the whole GPU, as
    /// `pynvml.nvmlDeviceGetMemoryInfo(handle).used` returns it: on drivers
    /// from R510 on it adds the driver's reservation ([`includes_reservation`]).
    NvmlV1Used,
}

/// The first driver branch whose NVML v1 `used` counts the reservation.
pub const FIRST_DRIVER_COUNTING_RESERVATION: u32 = 510;

/// Whether a reading includes the driver's reservation: NVML v1 `used` on a
/// driver of branch [`FIRST_DRIVER_COUNTING_RESERVATION`] or later. A
/// reading whose driver is not known is taken from a current driver.
pub fn includes_reservation(reading: DeviceReading, driver_branch: Option<u32>) -> bool {
    match reading {
        DeviceReading::NvidiaSmi => false,
        DeviceReading::NvmlV1Used => {
            driver_branch.is_none_or(|b| b >= FIRST_DRIVER_COUNTING_RESERVATION)
        }
    }
}

/// One idle GPU's `nvidia-smi -q` "FB Memory Usage" block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReservedReading {
    /// The vramfit GPU preset it stands for.
    pub preset: &'static str,
    /// The product name NVML printed.
    pub product: &'static str,
    /// The driver that printed it.
    pub driver: &'static str,
    /// "Total" (MiB): what NVML calls the GPU's memory.
    pub total_mib: u64,
    /// "Reserved" (MiB).
    pub reserved_mib: u64,
    /// The file in thamada/gls at e20f22d0eec076b6eeed628fdb1312d84a6fb663.
    pub file: &'static str,
}

/// The readings, one per preset (thamada/gls at e20f22d; `tests/reference/
/// real_gpu/driver_reserved.csv` keeps them with their URLs and the lines).
pub const READINGS: &[ReservedReading] = &[
    reading(
        "rtx-3080-10gb",
        "NVIDIA GeForce RTX 3080",
        "550.54.14",
        10240,
        239,
        "gls/RTX3080_smi.py",
    ),
    reading(
        "rtx-3090",
        "NVIDIA GeForce RTX 3090",
        "560.35.03",
        24576,
        422,
        "gls/RTX3090_smi.py",
    ),
    reading(
        "rtx-4090",
        "NVIDIA GeForce RTX 4090",
        "550.127.05",
        24564,
        354,
        "gls/RTX4090_smi.py",
    ),
    reading(
        "rtx-5090",
        "NVIDIA GeForce RTX 5090",
        "570.124.06",
        32607,
        487,
        "gls/RTX5090_smi.py",
    ),
    reading(
        "v100-16gb",
        "Tesla V100-SXM2-16GB",
        "550.127.05",
        16384,
        240,
        "gls/V100_x8_smi.py",
    ),
    reading(
        "a10",
        "NVIDIA A10",
        "550.90.12",
        23028,
        526,
        "gls/A10_smi.py",
    ),
    reading(
        "a100-80gb",
        "NVIDIA A100-SXM4-80GB",
        "555.42.02",
        81920,
        763,
        "gls/A100SXMx4_smi.py",
    ),
    reading("l4", "NVIDIA L4", "550.90.07", 23034, 556, "gls/L4_smi.py"),
    reading(
        "l40s",
        "NVIDIA L40S",
        "550.127.05",
        46068,
        479,
        "gls/L40S_smi.py",
    ),
    reading(
        "h100-sxm",
        "NVIDIA H100 80GB HBM3",
        "565.57.01",
        81559,
        454,
        "gls/H100SXMx8_smi.py",
    ),
    reading(
        "h200",
        "NVIDIA H200",
        "550.90.12",
        143771,
        700,
        "gls/H200_smi.py",
    ),
];

const fn reading(
    preset: &'static str,
    product: &'static str,
    driver: &'static str,
    total_mib: u64,
    reserved_mib: u64,
    file: &'static str,
) -> ReservedReading {
    ReservedReading {
        preset,
        product,
        driver,
        total_mib,
        reserved_mib,
        file,
    }
}

/// The memory the driver reserves on a GPU preset (NVML v2 `reserved`), or
/// `None` where no reading of that GPU is published.
pub fn driver_reserved(preset_id: &str) -> Option<Bytes> {
    READINGS
        .iter()
        .find(|r| r.preset == preset_id)
        .map(|r| Bytes(r.reserved_mib * MIB))
}

/// The memory CUDA itself reports on a preset's GPU (`cudaMemGetInfo`'s
/// total, deviceQuery's "Total amount of global memory"): NVML's total less
/// the driver's reservation, which no process can have (the H100 reading:
/// 81559 − 454 = 81105 MiB, and its deviceQuery twin printed 81106 MiB).
/// This, not the marketed capacity, is what an out-of-memory error is
/// decided against. `None` where no reading of that GPU is published.
pub fn cuda_total(preset_id: &str) -> Option<Bytes> {
    READINGS
        .iter()
        .find(|r| r.preset == preset_id)
        .map(|r| Bytes(r.total_mib.saturating_sub(r.reserved_mib) * MIB))
}

/// `device_used` (nvidia-smi's figure) as NVML v1 `used` reads it on a
/// current driver: plus the reservation, where its size is known.
pub fn nvml_v1_used(device_used: Bytes, reserved: Option<Bytes>) -> Option<Bytes> {
    reserved.map(|r| Bytes(device_used.0.saturating_add(r.0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpus::{Vendor, gpu_preset};

    #[test]
    fn every_reading_names_an_nvidia_preset_once() {
        for (i, r) in READINGS.iter().enumerate() {
            let gpu = gpu_preset(r.preset).unwrap();
            assert_eq!(gpu.vendor(), Vendor::Nvidia, "{}", r.preset);
            assert!(
                READINGS.iter().skip(i + 1).all(|o| o.preset != r.preset),
                "{} twice",
                r.preset
            );
            // The reservation is part of what NVML calls the total.
            assert!(r.reserved_mib < r.total_mib / 10, "{}", r.preset);
        }
    }

    #[test]
    fn only_nvml_v1_on_r510_or_later_counts_the_reservation() {
        use DeviceReading::*;
        assert!(!includes_reservation(NvidiaSmi, Some(565)));
        assert!(!includes_reservation(NvidiaSmi, None));
        // Hugging Face's V100 guide: driver 460.91.03.
        assert!(!includes_reservation(NvmlV1Used, Some(460)));
        assert!(includes_reservation(NvmlV1Used, Some(510)));
        assert!(includes_reservation(NvmlV1Used, None));
    }

    #[test]
    fn cuda_sees_the_total_less_the_reservation() {
        // deviceQuery on the same H100 printed 81106 MiB (the MiB rounding
        // of NVML's and CUDA's own figures differs by one).
        let h100 = cuda_total("h100-sxm").unwrap();
        assert!(h100.0.abs_diff(81106 * MIB) <= MIB, "{h100:?}");
        // An A10's NVML total is already under its marketed 24 GiB.
        assert_eq!(cuda_total("a10"), Some(Bytes((23028 - 526) * MIB)));
        assert_eq!(cuda_total("t4"), None);
    }

    #[test]
    fn a_gpu_without_a_reading_has_no_size_and_no_v1_figure() {
        assert_eq!(driver_reserved("t4"), None);
        assert_eq!(nvml_v1_used(Bytes(5 * MIB), driver_reserved("t4")), None);
        assert_eq!(
            nvml_v1_used(Bytes(1000 * MIB), driver_reserved("h100-sxm")),
            Some(Bytes(1454 * MIB))
        );
    }
}
