//! The flags a share link does not carry: the device overheads, the
//! planner's, the links' own and the output's.

use super::value::{
    base_url, bench_throughput, count, export, exports, loading, loadings, margin, measured_memory,
    set_from_url, unit,
};
use super::{Cmd, Flag, Kind, Refused, Section};
use vramfit_core::Overheads;
use vramfit_core::overheads::{CUBLAS_WORKSPACE_DEFAULT, CUBLAS_WORKSPACE_HOPPER};
use vramfit_core::share::DEFAULT_BASE_URL;

/// `--from-url`: applied before the other flags, wherever it stands.
pub(super) const FROM_URL: Flag = Flag {
    name: "--from-url",
    kind: Kind::Text("LINK"),
    help: "start from a share link; other flags override what it sets",
    default: None,
    section: Section::Share,
    commands: Cmd::ALL,
    set: set_from_url,
};

/// The flags, in the help's order.
pub(super) const FLAGS: &[Flag] = &[
    Flag {
        name: "--cuda-loading",
        kind: Kind::Choice("L", loadings),
        help: "CUDA module loading (lazy from CUDA 11.7): the context's kernels; on an NVIDIA GPU\nplus its stack reservation (1 KiB × SMs × threads per SM)",
        default: Some(|| "lazy".into()),
        section: Section::Overhead,
        commands: Cmd::ALL,
        set: |a, v| loading(v).map(|l| a.overrides.loading = Some(l)),
    },
    Flag {
        name: "--cuda-context-mib",
        kind: Kind::Count,
        help: "CUDA context size in MiB (overrides --cuda-loading)",
        default: None,
        section: Section::Overhead,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.overrides.context_mib = Some(n)),
    },
    Flag {
        name: "--cublas-workspace-kib",
        kind: Kind::Count,
        help: "cuBLAS workspace per handle",
        default: Some(|| {
            format!(
                "{}, {} on Hopper/Blackwell",
                CUBLAS_WORKSPACE_DEFAULT.0 / 1024,
                CUBLAS_WORKSPACE_HOPPER.0 / 1024
            )
        }),
        section: Section::Overhead,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.overrides.cublas_kib = Some(n)),
    },
    Flag {
        name: "--cudnn-workspace-mib",
        kind: Kind::Count,
        help: "transient cuDNN workspace per convolution (default 0: unknown)",
        default: None,
        section: Section::Overhead,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.overrides.cudnn_mib = Some(n)),
    },
    Flag {
        name: "--memory-fraction",
        kind: Kind::Fraction,
        help: "torch.cuda.set_per_process_memory_fraction",
        default: Some(|| format!("{:.1}", Overheads::default().memory_fraction)),
        section: Section::Overhead,
        commands: Cmd::ALL,
        set: |a, v| unit(v, "a number in (0, 1]").map(|f| a.overrides.memory_fraction = Some(f)),
    },
    Flag {
        name: "--allocator-conf",
        kind: Kind::Text("CONF"),
        help: "PYTORCH_CUDA_ALLOC_CONF as the run sets it, e.g. expandable_segments:True or\nmax_split_size_mb:128,garbage_collection_threshold:0.8 (the last acts with --memory-fraction)",
        default: None,
        section: Section::Overhead,
        commands: Cmd::ALL,
        set: |a, v| {
            v.parse()
                .map(|c| a.overrides.allocator = Some(c))
                .map_err(|e| Refused::Error(e.into()))
        },
    },
    Flag {
        name: "--target-batch",
        kind: Kind::Count,
        help: "samples per optimizer step across all GPUs (required)",
        default: None,
        section: Section::Plan,
        commands: &[Cmd::Plan],
        set: |a, v| count(v).map(|n| a.target_batch = Some(n)),
    },
    Flag {
        name: "--gpus",
        kind: Kind::Count,
        help: "GPUs per node, as --gpus-per-node",
        default: None,
        section: Section::Plan,
        commands: &[Cmd::Plan],
        set: |a, v| count(v).map(|n| a.config.parallel.gpus_per_node = n),
    },
    Flag {
        name: "--margin",
        kind: Kind::Fraction,
        help: "fraction of GPU memory kept free (default 0.05; max-batch: 0)",
        default: None,
        section: Section::Plan,
        commands: &[Cmd::Plan, Cmd::MaxBatch],
        set: |a, v| margin(v).map(|m| a.margin = m),
    },
    Flag {
        name: "--dataset-samples",
        kind: Kind::Count,
        help: "samples per epoch, for the epoch time (default 0: not shown)",
        default: None,
        section: Section::Plan,
        commands: &[Cmd::Plan],
        set: |a, v| count(v).map(|n| a.dataset_samples = n),
    },
    Flag {
        name: "--bench-report",
        kind: Kind::Path("FILE"),
        help: "price the steps at the throughput `vramfit bench --json` measured",
        default: None,
        section: Section::Plan,
        commands: &[Cmd::Plan],
        set: |a, v| bench_throughput(v).map(|t| a.measured = Some(t)),
    },
    Flag {
        name: "--export",
        kind: Kind::Choice("E", exports),
        help: "plan: the best plan's configuration for that framework\n\
               (deepspeed|hf|accelerate|pytorch|megatron); estimate: the engine's launch command\n\
               (vllm|llama.cpp|sglang, with the same --engine)",
        default: None,
        section: Section::Plan,
        commands: &[Cmd::Estimate, Cmd::Plan],
        set: |a, v| export(v).map(|e| a.export = Some(e)),
    },
    Flag {
        name: "--url",
        kind: Kind::Switch,
        help: "print the share link for this configuration instead of the estimate\n\
               (without --gpu the link uses the page's default GPU, rtx-4090)",
        default: None,
        section: Section::Share,
        commands: &[Cmd::Estimate],
        set: |a, _| {
            a.url = true;
            Ok(())
        },
    },
    Flag {
        name: "--base-url",
        kind: Kind::Text("URL"),
        help: "where the calculator is published",
        default: Some(|| DEFAULT_BASE_URL.into()),
        section: Section::Share,
        commands: Cmd::ALL,
        set: |a, v| base_url(v).map(|u| a.base_url = u),
    },
    FROM_URL,
    Flag {
        name: "--measured",
        kind: Kind::Path("FILE"),
        help: "compare with a measurement: a CUDA memory snapshot pickle\n\
               (torch.cuda.memory._dump_snapshot) or json.dumps(torch.cuda.memory_stats())",
        default: None,
        section: Section::Output,
        commands: &[Cmd::Estimate],
        set: |a, v| measured_memory(v).map(|m| a.measured_memory = Some(m)),
    },
    Flag {
        name: "--json",
        kind: Kind::Switch,
        help: "print one JSON object (schema vramfit.estimate/1)",
        default: None,
        section: Section::Output,
        commands: Cmd::ALL,
        set: |a, _| {
            a.json = true;
            Ok(())
        },
    },
];
