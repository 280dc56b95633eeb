//! DeepSpeed's own model-state estimators, reproduced exactly, so users can
//! hold vramfit's per-GPU simulation against the numbers DeepSpeed prints.
//! They count only model states (no activations, temporaries or overheads).
//!
//! Source: `deepspeed/runtime/zero/stage_1_and_2.py`
//! (`estimate_zero2_model_states_mem_needs`, with the 2 + 18/N split of
//! PR #5099) and `deepspeed/runtime/zero/stage3.py`
//! (`estimate_zero3_model_states_mem_needs`), DeepSpeed @38327e0. The
//! `*_all_live` / `*_all_cold` wrappers feed them the model's parameter count
//! and its largest layer; `additional_buffer_factor` (1.5) applies to CPU memory only.

use serde::Serialize;

/// DeepSpeed's CPU buffer factor (`additional_buffer_factor`).
pub const ADDITIONAL_BUFFER_FACTOR: f64 = 1.5;

/// Which parts ZeRO offloads to the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ZeroOffload {
    /// `offload_optimizer: cpu`.
    pub optimizer: bool,
    /// `offload_param: cpu` (ZeRO-3 only).
    pub params: bool,
}

/// One line of DeepSpeed's estimator table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ZeroEstimate {
    /// Host memory in bytes.
    pub cpu_bytes: u64,
    /// Memory per GPU in bytes.
    pub gpu_bytes: u64,
}

/// `estimate_zero2_model_states_mem_needs(total_params, num_gpus_per_node,
/// num_nodes, cpu_offload, additional_buffer_factor=1.5)`.
pub fn zero2(total_params: u64, gpus_per_node: u64, nodes: u64, cpu_offload: bool) -> ZeroEstimate {
    let p = total_params as f64;
    let total_gpus = (gpus_per_node * nodes).max(1);
    let (cpu, gpu) = if cpu_offload {
        let cpu = p * (4 * total_gpus).max(16) as f64 * ADDITIONAL_BUFFER_FACTOR;
        (cpu, 2 * total_params)
    } else {
        let cpu = p * 4.0 * gpus_per_node as f64 * ADDITIONAL_BUFFER_FACTOR;
        // `int(18 * total_params / total_gpus)`: Python's true division, then truncation.
        (
            cpu,
            2 * total_params + (18.0 * p / total_gpus as f64) as u64,
        )
    };
    ZeroEstimate {
        cpu_bytes: cpu as u64,
        gpu_bytes: gpu,
    }
}

/// `estimate_zero3_model_states_mem_needs(total_params, largest_layer_params,
/// num_gpus_per_node, num_nodes, cpu_offload, cpu_offload_params, zero_init,
/// additional_buffer_factor=1.5)`.
pub fn zero3(
    total_params: u64,
    largest_layer_params: u64,
    gpus_per_node: u64,
    nodes: u64,
    offload: ZeroOffload,
    zero_init: bool,
) -> ZeroEstimate {
    let p = total_params as f64;
    let nodes_f = nodes.max(1) as f64;
    let gpus_factor = 1.0 / nodes_f;
    let total_gpus = (gpus_per_node * nodes).max(1) as f64;
    let largest = 4 * largest_layer_params;
    let per_node = gpus_per_node as f64;
    let (cpu, gpu) = match (offload.optimizer, offload.params) {
        (true, true) => {
            let factor = if zero_init {
                18.0 * gpus_factor
            } else {
                (4.0 * per_node).max(18.0 * gpus_factor)
            };
            (p * factor * ADDITIONAL_BUFFER_FACTOR, largest)
        }
        (true, false) => {
            let factor = if zero_init {
                16.0 * gpus_factor
            } else {
                (4.0 * per_node).max(16.0 * gpus_factor)
            };
            (
                p * factor * ADDITIONAL_BUFFER_FACTOR,
                largest + (2.0 * p / total_gpus) as u64,
            )
        }
        (false, _) => {
            let cpu = if zero_init {
                largest_layer_params as f64 * 4.0 * per_node
            } else {
                p * 4.0 * per_node
            };
            (
                cpu * ADDITIONAL_BUFFER_FACTOR,
                largest + (18.0 * p / total_gpus) as u64,
            )
        }
    };
    ZeroEstimate {
        cpu_bytes: cpu as u64,
        gpu_bytes: gpu,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DeepSpeed prints `bytes / 2**30` with two decimals ("GB") and `/ 2**20` ("MB").
    fn gib(b: u64) -> String {
        format!("{:.2}", b as f64 / (1u64 << 30) as f64)
    }

    fn mib(b: u64) -> String {
        format!("{:.0}", b as f64 / (1u64 << 20) as f64)
    }

    // t5-3b as DeepSpeed's docs/code-docs/source/memory.rst feeds it to the
    // `*_all_cold` estimators: total_params=2851e6, largest_layer_params=32e6.
    const T5_3B: u64 = 2_851_000_000;
    const T5_3B_LARGEST: u64 = 32_000_000;

    #[test]
    fn zero3_matches_deepspeeds_published_t5_3b_table() {
        let both = zero3(
            T5_3B,
            T5_3B_LARGEST,
            8,
            1,
            ZeroOffload {
                optimizer: true,
                params: true,
            },
            true,
        );
        assert_eq!(
            (gib(both.gpu_bytes), gib(both.cpu_bytes)),
            ("0.12".into(), "71.69".into())
        );
        let opt = zero3(
            T5_3B,
            T5_3B_LARGEST,
            8,
            1,
            ZeroOffload {
                optimizer: true,
                params: false,
            },
            true,
        );
        assert_eq!(
            (gib(opt.gpu_bytes), gib(opt.cpu_bytes)),
            ("0.78".into(), "63.72".into())
        );
        let none = zero3(
            T5_3B,
            T5_3B_LARGEST,
            8,
            1,
            ZeroOffload {
                optimizer: false,
                params: false,
            },
            true,
        );
        assert_eq!(
            (gib(none.gpu_bytes), gib(none.cpu_bytes)),
            ("6.09".into(), "1.43".into())
        );
        let cold = zero3(
            T5_3B,
            T5_3B_LARGEST,
            8,
            1,
            ZeroOffload {
                optimizer: false,
                params: false,
            },
            false,
        );
        assert_eq!(gib(cold.cpu_bytes), "127.45");
    }

    #[test]
    fn zero3_matches_deepspeeds_published_t5_large_cases() {
        // t5-large: 737.67M parameters, 32.90M largest layer, 1 node × 4 GPUs.
        let (p, l) = (737_668_096, 32_899_072);
        let none = zero3(
            p,
            l,
            4,
            1,
            ZeroOffload {
                optimizer: false,
                params: false,
            },
            true,
        );
        let both = zero3(
            p,
            l,
            4,
            1,
            ZeroOffload {
                optimizer: true,
                params: true,
            },
            true,
        );
        let opt = zero3(
            p,
            l,
            4,
            1,
            ZeroOffload {
                optimizer: true,
                params: false,
            },
            true,
        );
        assert_eq!(
            (mib(none.gpu_bytes), mib(opt.gpu_bytes)),
            ("3291".into(), "477".into())
        );
        // The published 125 MB is 4 × 32,899,072 B = exactly 125.5 MiB, truncated.
        assert_eq!(both.gpu_bytes, 4 * l);
        assert_eq!(both.gpu_bytes >> 20, 125);
    }

    #[test]
    fn zero2_matches_deepspeed_for_t5_3b() {
        let off = zero2(T5_3B, 8, 1, true);
        assert_eq!(
            (gib(off.gpu_bytes), gib(off.cpu_bytes)),
            ("5.31".into(), "127.45".into())
        );
        // memory.rst still prints 15.93 GB from the pre-#5099 formula (4P + 16P/N);
        // the current code gives 2P + 18P/N.
        let none = zero2(T5_3B, 8, 1, false);
        assert_eq!(gib(none.gpu_bytes), "11.28");
        let old = 4 * T5_3B + 16 * T5_3B / 8;
        assert_eq!(gib(old), "15.93");
    }
}

#[cfg(test)]
mod reference {
    use super::*;

    /// `tests/reference/deepspeed_estimates.csv`: DeepSpeed's estimator
    /// functions run from the PyPI package (see `tests/reference/README.md`).
    const CSV: &str = include_str!("../../../tests/reference/deepspeed_estimates.csv");

    #[test]
    fn every_row_of_deepspeeds_own_output_is_reproduced_exactly() {
        let mut rows = 0;
        for line in CSV.lines().skip(1).filter(|l| !l.trim().is_empty()) {
            let f: Vec<u64> = line.split(',').map(|x| x.trim().parse().unwrap()).collect();
            let [
                stage,
                p,
                largest,
                gpn,
                nodes,
                off_opt,
                off_par,
                zero_init,
                cpu,
                gpu,
            ] = f[..]
            else {
                panic!("bad row {line}")
            };
            let ours = if stage == 2 {
                zero2(p, gpn, nodes, off_opt == 1)
            } else {
                zero3(
                    p,
                    largest,
                    gpn,
                    nodes,
                    ZeroOffload {
                        optimizer: off_opt == 1,
                        params: off_par == 1,
                    },
                    zero_init == 1,
                )
            };
            assert_eq!((ours.cpu_bytes, ours.gpu_bytes), (cpu, gpu), "row {line}");
            rows += 1;
        }
        assert!(rows >= 100, "{rows} rows");
    }
}
