//! Command-line parsing: raw flags first, then validation into a typed command.

use std::fmt;
use vramfit_core::share::{self, IMPORTED_MODEL};
use vramfit_core::{
    Attention, Bytes, Checkpointing, Error, ModuleLoading, Optimizer, Overheads, Precision,
    TrainConfig, units::MIB,
};

/// A parsed command.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `vramfit estimate ...`
    Estimate(Box<EstimateArgs>),
    /// `vramfit plan ...`: rank configurations that reach a target batch.
    Plan(Box<EstimateArgs>),
    /// `vramfit max-batch ...`: the largest micro-batch that fits.
    MaxBatch(Box<EstimateArgs>),
    /// `vramfit gpus ...`: which GPUs (and how many) the configuration fits on.
    Gpus(Box<EstimateArgs>),
    /// `vramfit presets [--json]`
    Presets {
        /// Print JSON.
        json: bool,
    },
    /// `vramfit help` / `--help`
    Help,
    /// `vramfit --version`
    Version,
}

impl Command {
    /// What the command's arguments had that could not be used (a `--from-url`
    /// link's ignored parts), one message each, for stderr.
    pub fn warnings(&self) -> &[String] {
        match self {
            Command::Estimate(a) | Command::Plan(a) | Command::MaxBatch(a) | Command::Gpus(a) => {
                &a.warnings
            }
            _ => &[],
        }
    }
}

/// Arguments of `vramfit estimate`.
#[derive(Debug, Clone, PartialEq)]
pub struct EstimateArgs {
    /// A preset id or a path to a Hugging Face `config.json`.
    pub model: String,
    /// The training configuration.
    pub config: TrainConfig,
    /// Overrides of the device overheads (the rest follows the GPU).
    pub overrides: OverheadArgs,
    /// A GPU preset id.
    pub gpu: Option<String>,
    /// Print JSON.
    pub json: bool,
    /// `plan`: samples per optimizer step across all GPUs.
    pub target_batch: Option<u64>,
    /// `plan`: export the best plan (`deepspeed|hf|accelerate|pytorch`).
    pub export: Option<String>,
    /// `plan` and `max-batch`: fraction of GPU memory kept free.
    pub margin: f64,
    /// `plan`: samples per epoch.
    pub dataset_samples: u64,
    /// `plan --bench-report`: the throughput `vramfit bench --json` measured.
    pub measured: Option<vramfit_core::plan::Throughput>,
    /// The `config.json` text a `--from-url` link carried (the model is then [`IMPORTED_MODEL`]).
    pub model_json: Option<String>,
    /// `--url`: print the share link instead of the estimate.
    pub url: bool,
    /// `--base-url`: where the calculator the link opens is published.
    pub base_url: String,
    /// What a `--from-url` link had that could not be used, one message each.
    pub warnings: Vec<String>,
}

/// Overhead flags; unset ones take the GPU's (or the general) default.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OverheadArgs {
    /// `--cuda-context-mib`.
    pub context_mib: Option<u64>,
    /// `--cuda-loading`.
    pub loading: Option<ModuleLoading>,
    /// `--cublas-workspace-kib`.
    pub cublas_kib: Option<u64>,
    /// `--memory-fraction`.
    pub memory_fraction: Option<f64>,
    /// `--cudnn-workspace-mib`.
    pub cudnn_mib: Option<u64>,
}

impl OverheadArgs {
    /// Whether any overhead flag was given (a share link cannot carry them).
    pub fn any(&self) -> bool {
        *self != OverheadArgs::default()
    }

    /// The overheads for an optional GPU with these overrides applied.
    pub fn resolve(&self, gpu: Option<&vramfit_core::GpuPreset>) -> Overheads {
        let mut o = gpu.map(Overheads::for_gpu).unwrap_or_default();
        if let Some(l) = self.loading {
            o.cuda_context = l.context();
        }
        if let Some(m) = self.context_mib {
            o.cuda_context = Bytes(m.saturating_mul(MIB));
        }
        if let Some(k) = self.cublas_kib {
            o.cublas_workspace = Bytes(k.saturating_mul(1024));
        }
        if let Some(m) = self.cudnn_mib {
            o.cudnn_workspace = Bytes(m.saturating_mul(MIB));
        }
        if let Some(f) = self.memory_fraction {
            o.memory_fraction = f;
        }
        o
    }
}

/// A CLI failure with its exit code.
#[derive(Debug)]
pub enum CliError {
    /// Bad usage: unknown flag, missing or invalid value (exit 2).
    Usage(String),
    /// The core rejected the input (exit 2).
    Core(Error),
    /// A file could not be read (exit 1).
    Io(String),
}

impl CliError {
    /// Process exit code.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) | CliError::Core(_) => 2,
            CliError::Io(_) => 1,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) | CliError::Io(m) => f.write_str(m),
            CliError::Core(e) => write!(f, "{e}"),
        }
    }
}

impl From<Error> for CliError {
    fn from(e: Error) -> Self {
        CliError::Core(e)
    }
}

/// Usage text.
pub const USAGE: &str = "\
vramfit — how much GPU memory does training this model need?

USAGE:
  vramfit estimate --model <preset-id|config.json> [options]
  vramfit plan --model M --gpu G --target-batch N [--gpus N] [--margin F] [--dataset-samples N] [--bench-report FILE]
               [--export deepspeed|hf|accelerate|pytorch] [options] [--json]
  vramfit max-batch --model M --gpu G [--margin F] [options] [--json]
               also the longest sequence (text) or largest image (vision) at --batch
  vramfit gpus --model M [options] [--json]     which GPUs, and how many, it fits on
  vramfit presets [--json]

ESTIMATE OPTIONS:
  --batch N              micro-batch size (default 8)
  --seq N                sequence length in tokens (default 512)
  --image N              image side in pixels (default 224)
  --precision P          fp32|fp16|bf16|amp-fp16|amp-bf16 (default fp32)
  --optimizer O          sgd|sgd-momentum|adam|adamw|adamw-8bit|adafactor|lion (default adamw)
  --checkpointing C      none|full|selective|every-K (default none)
  --attention A          eager|sdpa|flash (default eager)
  --grad-accum N         gradient-accumulation steps (default 1)
  --gpu ID               a GPU preset: adds fits / max_batch
  --mode M               train|finetune-lora|finetune-qlora|inference (default train)
  --lora-rank N          LoRA rank on every linear layer in the blocks (default 16)
  --weights W            fp32|fp16|bf16|int8|int4 weights (int8/int4: block linears, frozen modes)
  --context N            KV-cache tokens for inference (default: the sequence length)
  --strategy S           single|ddp|zero1|zero2|zero3|fsdp-full|fsdp-grad-op|fsdp-hybrid|fsdp-no-shard
  --gpus-per-node N      GPUs per node (default 1)
  --nodes N              nodes (default 1)
  --offload O            none|optimizer|optimizer+params (ZeRO / FSDP)
  --zero-bucket N        DeepSpeed reduce_bucket_size in elements (default 500000000)
  --ddp-bucket-view      DDP with gradient_as_bucket_view=True (no bucket copy)
  --tp N / --pp N        Megatron tensor / pipeline parallel sizes (default 1)
  --vpp N                virtual pipeline stages (interleaved 1F1B, default 1)
  --sp on|off            Megatron sequence parallelism (needs --tp > 1)
  --freeze N             freeze the embeddings and the first N blocks
  --keep-attention F     structured pruning: kept fraction of attention heads
  --keep-mlp F           structured pruning: kept fraction of MLP neurons
  --keep-conv F          structured pruning: kept fraction of CNN block channels
  --lora-fp32 on|off     LoRA adapters in fp32 (PEFT default, on) or the model's dtype
  --cuda-loading L       lazy|eager CUDA module loading: context 400 or 1000 MiB (default lazy)
  --cuda-context-mib N   CUDA context size in MiB (overrides --cuda-loading)
  --cublas-workspace-kib N  cuBLAS workspace per handle (default 8320, 32768 on Hopper/Blackwell)
  --cudnn-workspace-mib N  transient cuDNN workspace per convolution (default 0: unknown)
  --memory-fraction F    torch.cuda.set_per_process_memory_fraction (default 1.0)
  --json                 print one JSON object (schema vramfit.estimate/1)

SHARE LINKS (the web calculator's URL: same model, GPU and settings, same numbers):
  --url                  print the share link for this configuration instead of the estimate
                         (without --gpu the link uses the page's default GPU, rtx-4090)
  --base-url URL         where the calculator is published (default https://vramfit.github.io/vramfit/)
  --from-url LINK        start from a share link; other flags override what it sets
";

fn number(flag: &str, value: &str) -> Result<u64, CliError> {
    value.parse::<u64>().map_err(|_| {
        CliError::Usage(format!(
            "invalid value '{value}' for {flag}: expected a whole number"
        ))
    })
}

fn choice<T: std::str::FromStr<Err = Error>>(flag: &str, value: &str) -> Result<T, CliError> {
    value.parse::<T>().map_err(|e| match e {
        Error::InvalidChoice { accepted, .. } => CliError::Usage(format!(
            "invalid value '{value}' for {flag}: expected {accepted}"
        )),
        other => CliError::Core(other),
    })
}

/// Parses the arguments after the program name.
///
/// # Errors
/// [`CliError::Usage`] naming the flag and the accepted values.
pub fn parse(argv: &[String]) -> Result<Command, CliError> {
    let Some(cmd) = argv.first() else {
        return Ok(Command::Help);
    };
    let rest = argv.get(1..).unwrap_or(&[]);
    match cmd.as_str() {
        "estimate" => parse_estimate(rest, cmd, &[]).map(|a| Command::Estimate(Box::new(a))),
        "plan" | "max-batch" | "gpus" if rest.iter().any(|a| a == "--url") => Err(CliError::Usage(
            format!("--url is for estimate, not {cmd}: run `vramfit estimate ... --url`"),
        )),
        "plan" => {
            let a = parse_estimate(rest, cmd, PLAN_FLAGS)?;
            if a.target_batch.is_none() || a.gpu.is_none() {
                return Err(CliError::Usage(
                    "plan needs --gpu <gpu-id> and --target-batch N".into(),
                ));
            }
            Ok(Command::Plan(Box::new(a)))
        }
        "gpus" => parse_estimate(rest, cmd, &[]).map(|a| Command::Gpus(Box::new(a))),
        "max-batch" => {
            let mut a = parse_estimate(rest, cmd, &["--margin"])?;
            if a.gpu.is_none() {
                return Err(CliError::Usage("max-batch needs --gpu <gpu-id>".into()));
            }
            // Without --margin the whole usable memory counts (as `estimate --gpu` does).
            if !rest
                .iter()
                .any(|f| f == "--margin" || f.starts_with("--margin="))
            {
                a.margin = 0.0;
            }
            Ok(Command::MaxBatch(Box::new(a)))
        }
        "presets" => {
            let mut json = false;
            for a in rest {
                match a.as_str() {
                    "--json" => json = true,
                    other => {
                        return Err(CliError::Usage(format!(
                            "unknown flag '{other}' for presets: expected --json"
                        )));
                    }
                }
            }
            Ok(Command::Presets { json })
        }
        "help" | "--help" | "-h" => Ok(Command::Help),
        "--version" | "-V" => Ok(Command::Version),
        other => Err(CliError::Usage(format!(
            "unknown command '{other}': expected estimate|plan|max-batch|gpus|presets|help"
        ))),
    }
}

/// The flags `plan` takes besides the estimate's.
const PLAN_FLAGS: &[&str] = &[
    "--target-batch",
    "--gpus",
    "--export",
    "--margin",
    "--dataset-samples",
    "--bench-report",
];

/// The estimate's flags, plus `extra` (some of [`PLAN_FLAGS`]) for the
/// commands that take them; `cmd` names the command in messages.
fn parse_estimate(argv: &[String], cmd: &str, extra: &[&str]) -> Result<EstimateArgs, CliError> {
    let mut target_batch = None;
    let mut export = None;
    let mut margin = 0.05;
    let mut dataset_samples = 0;
    let mut measured = None;
    let mut model = None;
    let mut cfg = TrainConfig::default();
    let mut overrides = OverheadArgs::default();
    let mut gpu = None;
    let mut json = false;
    let mut url = false;
    let mut base_url = share::DEFAULT_BASE_URL.to_string();
    let mut model_json = None;
    let mut warnings = Vec::new();
    // A link sets the starting point, wherever it stands; the other flags override it.
    if let Some(link) = flag_value(argv, "--from-url")? {
        let decoded = share::decode(&link);
        warnings = decoded
            .warnings
            .iter()
            .map(|w| format!("the link's {w}"))
            .collect();
        let state = decoded.state;
        cfg = state.train;
        gpu = Some(state.gpu);
        model_json = state.config_json.filter(|_| state.model == IMPORTED_MODEL);
        model = Some(state.model);
    }
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        if flag == "--json" {
            json = true;
            continue;
        }
        if flag == "--url" {
            url = true;
            continue;
        }
        if flag == "--from-url" {
            it.next();
            continue;
        }
        if flag.starts_with("--from-url=") {
            continue;
        }
        if !extra.is_empty() {
            let (name, inline) = match flag.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (flag.as_str(), None),
            };
            if extra.contains(&name) {
                let value = match inline {
                    Some(v) => v,
                    None => it
                        .next()
                        .cloned()
                        .ok_or_else(|| CliError::Usage(format!("{name} needs a value")))?,
                };
                match name {
                    "--target-batch" => target_batch = Some(number(name, &value)?),
                    "--gpus" => cfg.parallel.gpus_per_node = number(name, &value)?,
                    "--dataset-samples" => dataset_samples = number(name, &value)?,
                    "--bench-report" => measured = Some(bench_throughput(&value)?),
                    "--margin" => {
                        margin = value.parse::<f64>().ok().filter(|m| (0.0..0.9).contains(m)).ok_or_else(|| {
                            CliError::Usage(format!("invalid value '{value}' for --margin: expected a fraction in [0, 0.9)"))
                        })?
                    }
                    _ => {
                        if !["deepspeed", "hf", "accelerate", "pytorch"].contains(&value.as_str()) {
                            return Err(CliError::Usage(format!(
                                "invalid value '{value}' for --export: expected deepspeed|hf|accelerate|pytorch"
                            )));
                        }
                        export = Some(value);
                    }
                }
                continue;
            }
        }
        if flag == "--ddp-bucket-view" {
            cfg.parallel.bucket_view = true;
            continue;
        }
        if flag == "--help" || flag == "-h" {
            return Err(CliError::Usage(USAGE.trim_end().to_string()));
        }
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (flag.as_str(), None),
        };
        const KNOWN: [&str; 34] = [
            "--model",
            "--base-url",
            "--batch",
            "--seq",
            "--image",
            "--precision",
            "--optimizer",
            "--checkpointing",
            "--attention",
            "--grad-accum",
            "--gpu",
            "--mode",
            "--lora-rank",
            "--weights",
            "--context",
            "--tp",
            "--pp",
            "--sp",
            "--freeze",
            "--keep-attention",
            "--keep-mlp",
            "--keep-conv",
            "--lora-fp32",
            "--zero-bucket",
            "--vpp",
            "--strategy",
            "--gpus-per-node",
            "--nodes",
            "--offload",
            "--cuda-context-mib",
            "--cuda-loading",
            "--cublas-workspace-kib",
            "--cudnn-workspace-mib",
            "--memory-fraction",
        ];
        if !KNOWN.contains(&name) {
            let known: Vec<&str> = KNOWN.iter().chain(extra).copied().collect();
            return Err(CliError::Usage(format!(
                "unknown flag '{flag}' for {cmd}: expected one of {} or --json",
                known.join(", ")
            )));
        }
        let value = match inline {
            Some(v) => v,
            None => it
                .next()
                .cloned()
                .ok_or_else(|| CliError::Usage(format!("{name} needs a value")))?,
        };
        match name {
            "--model" => {
                model = Some(value);
                model_json = None;
            }
            "--base-url" => {
                if !(value.starts_with("https://") || value.starts_with("http://")) {
                    return Err(CliError::Usage(format!("invalid value '{value}' for --base-url: expected an http(s):// URL")));
                }
                base_url = value;
            }
            "--batch" => cfg.batch = number(name, &value)?,
            "--seq" => cfg.seq = number(name, &value)?,
            "--image" => cfg.image = number(name, &value)?,
            "--precision" => cfg.precision = choice::<Precision>(name, &value)?,
            "--optimizer" => cfg.optimizer = choice::<Optimizer>(name, &value)?,
            "--checkpointing" => cfg.checkpointing = choice::<Checkpointing>(name, &value)?,
            "--attention" => cfg.attention = choice::<Attention>(name, &value)?,
            "--grad-accum" => cfg.grad_accum = number(name, &value)?,
            "--gpu" => gpu = Some(value),
            "--mode" => cfg.mode = choice::<vramfit_core::config::Mode>(name, &value)?,
            "--lora-rank" => cfg.lora_rank = number(name, &value)?,
            "--weights" => match value.as_str() {
                // A plain floating-point format is the model's precision.
                "fp32" | "fp16" | "bf16" => {
                    cfg.precision = choice::<Precision>(name, &value)?;
                    cfg.weights = vramfit_core::config::WeightFormat::Native;
                }
                _ => {
                    cfg.weights = choice::<vramfit_core::config::WeightFormat>(name, &value)
                        .map_err(|_| CliError::Usage(format!("invalid value '{value}' for --weights: expected fp32|fp16|bf16|int8|int4")))?
                }
            },
            "--tp" => cfg.parallel.tp = number(name, &value)?,
            "--zero-bucket" => cfg.parallel.zero_bucket = number(name, &value)?,
            "--vpp" => cfg.parallel.vpp = number(name, &value)?,
            "--pp" => cfg.parallel.pp = number(name, &value)?,
            "--sp" => {
                cfg.parallel.sp = match value.as_str() {
                    "on" | "true" | "1" => true,
                    "off" | "false" | "0" => false,
                    _ => return Err(CliError::Usage(format!("invalid value '{value}' for --sp: expected on|off"))),
                }
            }
            "--freeze" => cfg.frozen_blocks = number(name, &value)?,
            "--lora-fp32" => {
                cfg.lora_fp32 = match value.as_str() {
                    "on" | "true" | "1" => true,
                    "off" | "false" | "0" => false,
                    _ => return Err(CliError::Usage(format!("invalid value '{value}' for --lora-fp32: expected on|off"))),
                }
            }
            "--keep-attention" | "--keep-mlp" | "--keep-conv" => {
                let f = value
                    .parse::<f64>()
                    .ok()
                    .filter(|f| *f > 0.0 && *f <= 1.0)
                    .ok_or_else(|| CliError::Usage(format!("invalid value '{value}' for {name}: expected a fraction in (0, 1]")))?;
                match name {
                    "--keep-attention" => cfg.keep_attention = f,
                    "--keep-mlp" => cfg.keep_mlp = f,
                    _ => cfg.keep_conv = f,
                }
            }
            "--context" => cfg.context = number(name, &value)?,
            "--strategy" => cfg.parallel.strategy = choice::<vramfit_core::parallel::Strategy>(name, &value)?,
            "--offload" => cfg.parallel.offload = choice::<vramfit_core::parallel::Offload>(name, &value)?,
            "--gpus-per-node" => cfg.parallel.gpus_per_node = number(name, &value)?,
            "--nodes" => cfg.parallel.nodes = number(name, &value)?,
            "--cuda-context-mib" => overrides.context_mib = Some(number(name, &value)?),
            "--cublas-workspace-kib" => overrides.cublas_kib = Some(number(name, &value)?),
            "--cudnn-workspace-mib" => overrides.cudnn_mib = Some(number(name, &value)?),
            "--cuda-loading" => {
                overrides.loading = Some(match value.as_str() {
                    "lazy" => ModuleLoading::Lazy,
                    "eager" => ModuleLoading::Eager,
                    _ => return Err(CliError::Usage(format!("invalid value '{value}' for --cuda-loading: expected lazy|eager"))),
                })
            }
            "--memory-fraction" => {
                let f = value.parse::<f64>().ok().filter(|f| *f > 0.0 && *f <= 1.0);
                overrides.memory_fraction = Some(f.ok_or_else(|| {
                    CliError::Usage(format!("invalid value '{value}' for --memory-fraction: expected a number in (0, 1]"))
                })?);
            }
            _ => {}
        }
    }
    let model = model.ok_or_else(|| {
        CliError::Usage(
            "estimate needs --model <preset-id|config.json> (see `vramfit presets`)".into(),
        )
    })?;
    cfg.validate().map_err(|e| match e {
        Error::OutOfRange {
            field,
            value,
            min,
            max,
        } => CliError::Usage(format!(
            "invalid value '{value}' for --{field}: expected a whole number in {min}..={max}"
        )),
        other => CliError::Core(other),
    })?;
    if url && json {
        return Err(CliError::Usage(
            "--url prints a link, --json an estimate: choose one".into(),
        ));
    }
    Ok(EstimateArgs {
        model,
        config: cfg,
        overrides,
        gpu,
        json,
        target_batch,
        export,
        margin,
        dataset_samples,
        measured,
        model_json,
        url,
        base_url,
        warnings,
    })
}

/// The training throughput in a `vramfit bench --json` report (its layers'
/// forward + backward rate per type).
fn bench_throughput(path: &str) -> Result<vramfit_core::plan::Throughput, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("cannot read --bench-report {path}: {e}")))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| CliError::Usage(format!("--bench-report {path} is not JSON: {e}")))?;
    let rate = |key: &str| {
        value
            .pointer(&format!("/throughput/{key}"))
            .and_then(serde_json::Value::as_f64)
            .filter(|r| *r > 0.0)
    };
    match (rate("fp32_flops_per_s"), rate("fp16_flops_per_s")) {
        (Some(fp32), Some(fp16)) => Ok(vramfit_core::plan::Throughput {
            fp32_flops_per_s: fp32,
            fp16_flops_per_s: fp16,
        }),
        _ => Err(CliError::Usage(format!(
            "--bench-report {path} has no measured throughput: run `vramfit bench --layers transformer --json` (the layers measure it)"
        ))),
    }
}

/// The value of `flag` (`--flag V` or `--flag=V`), if given.
///
/// # Errors
/// [`CliError::Usage`] when the flag has no value.
fn flag_value(argv: &[String], flag: &str) -> Result<Option<String>, CliError> {
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        if a == flag {
            return it
                .next()
                .cloned()
                .map(Some)
                .ok_or_else(|| CliError::Usage(format!("{flag} needs a value")));
        }
        if let Some(v) = a.strip_prefix(flag).and_then(|rest| rest.strip_prefix('=')) {
            return Ok(Some(v.to_string()));
        }
    }
    Ok(None)
}
