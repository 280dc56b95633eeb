//! Command-line parsing: raw flags first, then validation into a typed command.
//! The flags themselves (names, values, help, setters) are defined once, in
//! [`crate::flags`].

use crate::flags::{self, Cmd, Kind};
use std::fmt;
use vramfit_core::engines::Serving;
use vramfit_core::share;
use vramfit_core::{Bytes, Error, ModuleLoading, Overheads, TrainConfig, units::MIB};

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
    /// The serving engine and its settings (`--engine`, `--kv-dtype`, ...).
    pub serve: Serving,
    /// Overrides of the device overheads (the rest follows the GPU).
    pub overrides: OverheadArgs,
    /// A GPU preset id.
    pub gpu: Option<String>,
    /// Print JSON.
    pub json: bool,
    /// `plan`: samples per optimizer step across all GPUs.
    pub target_batch: Option<u64>,
    /// `plan`: export the best plan (`deepspeed|hf|accelerate|pytorch|megatron`);
    /// `estimate`: the engine's launch command (`vllm|llama.cpp|sglang`).
    pub export: Option<String>,
    /// `plan` and `max-batch`: fraction of GPU memory kept free.
    pub margin: f64,
    /// `plan`: samples per epoch.
    pub dataset_samples: u64,
    /// `plan --bench-report`: the throughput `vramfit bench --json` measured.
    pub measured: Option<vramfit_core::plan::Throughput>,
    /// `estimate --measured`: a memory snapshot or `memory_stats()` JSON,
    /// read, to compare with the estimate.
    pub measured_memory: Option<vramfit_core::measured::Measurement>,
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
    /// `--allocator-conf`.
    pub allocator: Option<vramfit_core::overheads::AllocatorConf>,
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
            o.cuda_context = gpu.map_or_else(|| l.context(), |g| l.context_on(g));
            o.kernel_images = gpu.map_or(Bytes::ZERO, |g| l.kernel_images(g.arch));
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
        if let Some(c) = self.allocator {
            o.allocator = c;
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
            CliError::Core(e) => {
                write!(f, "{e}")?;
                let offered = match e {
                    Error::UnknownGpu(id) => {
                        let gpus = vramfit_core::gpu_presets();
                        crate::suggest::nearest(id, gpus.iter().map(|g| g.id.as_ref()))
                            .into_iter()
                            .map(String::from)
                            .collect()
                    }
                    Error::UnknownModel(id) => {
                        let models = vramfit_core::model_presets();
                        crate::suggest::nearest(id, models.iter().map(|m| m.id))
                            .into_iter()
                            .map(String::from)
                            .collect()
                    }
                    _ => Vec::new(),
                };
                if offered.is_empty() {
                    Ok(())
                } else {
                    write!(f, " (did you mean {}?)", offered.join(", "))
                }
            }
        }
    }
}

impl From<Error> for CliError {
    fn from(e: Error) -> Self {
        CliError::Core(e)
    }
}

/// The usage text's synopsis; the option sections follow from [`flags::help`].
const SYNOPSIS: &str = "\
vramfit — how much GPU memory does training this model need?

USAGE:
  vramfit estimate --model <preset-id|config.json> [options]
  vramfit plan --model M --gpu G --target-batch N [--gpus N] [--margin F] [--dataset-samples N] [--bench-report FILE]
               [--export deepspeed|hf|accelerate|pytorch|megatron] [options] [--json]
  vramfit max-batch --model M --gpu G [--margin F] [options] [--json]
               also the longest sequence (text) or largest image (vision) at --batch;
               --mode inference --engine vllm|sglang|llama.cpp: the longest --context at --concurrency,
               the most sequences at --context and the fewest tensor-parallel GPUs (1, 2, 4, 8)
  vramfit gpus --model M [options] [--json]     which GPUs, and how many, it fits on
  vramfit presets [--json]
";

/// The usage text: the synopsis, then every flag by section.
pub fn usage() -> String {
    format!("{SYNOPSIS}\n{}", flags::help())
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
    if let Some(c) = Cmd::from_name(cmd) {
        return parse_command(c, rest);
    }
    match cmd.as_str() {
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

/// A command that estimates: its flags, then what the command needs besides.
fn parse_command(cmd: Cmd, rest: &[String]) -> Result<Command, CliError> {
    if cmd != Cmd::Estimate && rest.iter().any(|a| a == "--url") {
        return Err(CliError::Usage(format!(
            "--url is for estimate, not {}: run `vramfit estimate ... --url`",
            cmd.name()
        )));
    }
    let mut a = parse_estimate(rest, cmd)?;
    match cmd {
        Cmd::Estimate => Ok(Command::Estimate(Box::new(a))),
        Cmd::Gpus => Ok(Command::Gpus(Box::new(a))),
        Cmd::Plan => {
            if a.target_batch.is_none() || a.gpu.is_none() {
                return Err(CliError::Usage(
                    "plan needs --gpu <gpu-id> and --target-batch N".into(),
                ));
            }
            Ok(Command::Plan(Box::new(a)))
        }
        Cmd::MaxBatch => {
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
    }
}

/// The arguments before any flag.
fn blank() -> EstimateArgs {
    EstimateArgs {
        model: String::new(),
        config: TrainConfig::default(),
        serve: Serving::default(),
        overrides: OverheadArgs::default(),
        gpu: None,
        json: false,
        target_batch: None,
        export: None,
        margin: vramfit_core::overheads::SAFETY_MARGIN,
        dataset_samples: 0,
        measured: None,
        measured_memory: None,
        model_json: None,
        url: false,
        base_url: share::DEFAULT_BASE_URL.to_string(),
        warnings: Vec::new(),
    }
}

/// The flags `cmd` takes (see [`crate::flags`]), then the checks across them.
fn parse_estimate(argv: &[String], cmd: Cmd) -> Result<EstimateArgs, CliError> {
    let mut a = blank();
    // A link sets the starting point, wherever it stands; the other flags override it.
    let mut has_model = false;
    if let Some(link) = flag_value(argv, flags::FROM_URL.name)? {
        flags::FROM_URL.apply(&mut a, &link)?;
        has_model = true;
    }
    has_model |= read_flags(argv, cmd, &mut a)?;
    if !has_model {
        return Err(CliError::Usage(
            "estimate needs --model <preset-id|config.json> (see `vramfit presets`)".into(),
        ));
    }
    a.config
        .validate()
        .and_then(|()| a.serve.validate())
        .map_err(|e| match e {
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
    if a.url && a.json {
        return Err(CliError::Usage(
            "--url prints a link, --json an estimate: choose one".into(),
        ));
    }
    a.warnings.extend(unread_flags(argv, &a));
    Ok(a)
}

/// The flags typed in `argv` that the configuration does not read, one
/// warning each, naming what does:
/// - inference has no optimizer step, backward pass or training loop, so
///   the optimizer, accumulation, checkpointing and the loop's settings are
///   not read; the adapter's settings are read only when fine-tuning one;
/// - a serving engine (not Hugging Face's simulation) serves
///   `--concurrency` sequences (not a batch) and splits the model over
///   `--tp` GPUs (no data-parallel strategy, no optimizer to offload;
///   `--gpus-per-node` and `--nodes` count the GPUs `--tp` divides), and vLLM
///   and SGLang take the weights' type from `--weights` and run their own
///   attention kernels.
///
/// A link's values are not warned about (the page keeps them for the other modes).
fn unread_flags(argv: &[String], a: &EstimateArgs) -> Vec<String> {
    use vramfit_core::config::Mode;
    use vramfit_core::engines::Engine;
    let mode = a.config.mode;
    let inference = mode == Mode::Inference;
    let engine = Some(a.serve.engine).filter(|e| inference && *e != Engine::Hf);
    let torch = matches!(engine, Some(Engine::Vllm | Engine::Sglang));
    let why = |flag: &str| -> Option<String> {
        let by_engine =
            |reason: &str| engine.map(|e| format!("{flag} is not read by {e}: {reason}"));
        match flag {
            "--batch" => by_engine("its sequences in flight are --concurrency"),
            "--strategy" | "--offload" | "--pp" | "--vpp" | "--ep" | "--etp" | "--sp" => {
                by_engine("it splits the model over --tp GPUs (of --gpus-per-node × --nodes)")
            }
            "--precision" if torch => by_engine("the weights' type is --weights"),
            "--attention" if torch => by_engine("it runs its own attention kernels"),
            "--optimizer" | "--optimizer-impl" | "--grad-accum" | "--checkpointing"
            | "--zero-grad" | "--loop-outputs" | "--training-cache" | "--attention-mask"
            | "--pytorch" | "--freeze" | "--zero-bucket" | "--ddp-bucket-view"
                if inference =>
            {
                Some(format!(
                    "{flag} is not read in inference: it sets a training step, which inference does not run"
                ))
            }
            "--lora-rank" | "--lora-fp32" | "--lora-base"
                if !matches!(mode, Mode::FinetuneLora | Mode::FinetuneQlora) =>
            {
                Some(format!(
                    "{flag} is not read in --mode {}: it is read with --mode finetune-lora or finetune-qlora",
                    mode.id()
                ))
            }
            _ => None,
        }
    };
    let mut warned: Vec<&str> = Vec::new();
    let mut warnings = Vec::new();
    for arg in argv {
        let flag = arg.split_once('=').map_or(arg.as_str(), |(f, _)| f);
        if let Some(warning) = why(flag).filter(|_| !warned.contains(&flag)) {
            warned.push(flag);
            warnings.push(warning);
        }
    }
    warnings
}

/// Applies each flag in `argv` (`--flag V` or `--flag=V`; a switch alone)
/// in order, all but `--from-url`; whether `--model` was among them.
///
/// # Errors
/// [`CliError::Usage`] for `--help`, a flag `cmd` does not take, a missing
/// or invalid value.
fn read_flags(argv: &[String], cmd: Cmd, a: &mut EstimateArgs) -> Result<bool, CliError> {
    let mut has_model = false;
    let mut it = argv.iter();
    while let Some(arg) = it.next() {
        if arg == "--help" || arg == "-h" {
            return Err(CliError::Usage(usage().trim_end().to_string()));
        }
        // Applied first, by `parse_estimate`.
        if arg == flags::FROM_URL.name {
            it.next();
            continue;
        }
        if arg.starts_with("--from-url=") {
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (arg.as_str(), None),
        };
        let Some(flag) = flags::find(name, cmd) else {
            return Err(flags::unknown(arg, cmd));
        };
        let value = match (flag.kind, inline) {
            // A switch takes no `=value`.
            (Kind::Switch, Some(_)) => return Err(flags::unknown(arg, cmd)),
            (Kind::Switch, None) => "",
            (_, Some(v)) => v,
            (_, None) => it
                .next()
                .ok_or_else(|| CliError::Usage(format!("{name} needs a value")))?,
        };
        flag.apply(a, value)?;
        has_model |= flag.name == "--model";
    }
    Ok(has_model)
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
