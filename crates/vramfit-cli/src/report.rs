//! Runs a parsed command and renders its output (table or JSON).

use crate::args::{CliError, Command, EstimateArgs, usage};
use crate::words;
use std::fmt::Write as _;
use vramfit_core::config::Mode;
use vramfit_core::engines::Engine;
use vramfit_core::models::InputKind;
use vramfit_core::share::{IMPORTED_MODEL, ShareState};
use vramfit_core::{
    Bytes, Estimate, ModelSpec, estimate, gpu_preset, gpu_presets, hf, model_preset, model_presets,
};

/// Runs a command, returning what to print on stdout.
///
/// # Errors
/// Usage, core and I/O errors, each with its exit code.
pub fn run(cmd: &Command) -> Result<String, CliError> {
    match cmd {
        Command::Help => Ok(usage()),
        Command::Version => Ok(format!("vramfit {}\n", env!("CARGO_PKG_VERSION"))),
        Command::Presets { json } => Ok(presets(*json)),
        Command::Estimate(a) => run_estimate(a),
        Command::Plan(a) => hf_only(a, "plan").and_then(|()| run_plan(a)),
        Command::MaxBatch(a) if a.serve.engine != Engine::Hf => {
            let (name, spec) = resolve_model(a)?;
            crate::serve_answers::run(a, &name, &spec)
        }
        Command::MaxBatch(a) => hf_only(a, "max-batch").and_then(|()| run_max_batch(a)),
        Command::Gpus(a) => hf_only(a, "gpus").and_then(|()| run_gpus(a)),
    }
}

/// `plan`, `max-batch` and `gpus` answer for Hugging Face's simulation;
/// the serving engines are `estimate`'s.
fn hf_only(a: &EstimateArgs, command: &str) -> Result<(), CliError> {
    a.serve.check(&a.config)?;
    if a.serve.engine != Engine::Hf {
        return Err(CliError::Usage(format!(
            "{command} answers for Hugging Face's simulation: run `vramfit estimate --engine {}`",
            a.serve.engine
        )));
    }
    Ok(())
}

/// A resolved model: its display name, architecture and, when it came from
/// a `config.json`, that text (which a share link carries).
struct Model {
    name: String,
    spec: ModelSpec,
    json: Option<String>,
}

/// A preset id, a path to a Hugging Face `config.json`, or the `config.json`
/// a `--from-url` link carried.
fn resolve_model(a: &EstimateArgs) -> Result<(String, ModelSpec), CliError> {
    resolve(a).map(|m| (m.name, m.spec))
}

/// Imports a `config.json`, warning on stderr of every assumption made
/// for a `model_type` read as a Llama-style decoder.
fn import(text: &str) -> Result<hf::Imported, CliError> {
    let imported = hf::import(text)?;
    for a in &imported.assumptions {
        eprintln!("warning: {a}");
    }
    Ok(imported)
}

fn resolve(a: &EstimateArgs) -> Result<Model, CliError> {
    let model = a.model.as_str();
    if let Some(text) = &a.model_json {
        let imported = import(text)?;
        return Ok(Model {
            name: imported.name,
            spec: imported.spec,
            json: Some(text.clone()),
        });
    }
    if let Ok(p) = model_preset(model) {
        return Ok(Model {
            name: p.name.to_string(),
            spec: p.spec,
            json: None,
        });
    }
    let path = std::path::Path::new(model);
    if path.is_file() || model.ends_with(".json") {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CliError::Io(format!("cannot read {model}: {e}")))?;
        let imported = import(&text)?;
        return Ok(Model {
            name: imported.name,
            spec: imported.spec,
            json: Some(text),
        });
    }
    Err(vramfit_core::Error::UnknownModel(model.to_string()).into())
}

/// The share link of an estimate's configuration (see `vramfit_core::share`).
fn share_url(a: &EstimateArgs, model: &Model) -> Result<String, CliError> {
    if a.overrides.any() {
        return Err(CliError::Usage(
            "a share link carries no overhead flags (--cuda-*, --cublas-*, --cudnn-*, --memory-fraction): the page uses the GPU's".into(),
        ));
    }
    let mut state = ShareState {
        train: a.config,
        serve: a.serve,
        config_json: model.json.clone(),
        ..ShareState::default()
    };
    if model.json.is_some() {
        state.model = IMPORTED_MODEL.to_string();
    } else {
        state.model.clone_from(&a.model);
    }
    if let Some(gpu) = &a.gpu {
        state.gpu = gpu_preset(gpu)?.id.to_string();
    }
    Ok(format!("{}\n", state.to_url(&a.base_url)))
}

/// What a launch command loads: the preset id, or the directory of a
/// `config.json` (a link's carries no path).
fn source(a: &EstimateArgs) -> String {
    if a.model_json.is_some() {
        return "<model>".to_string();
    }
    match a.model.strip_suffix("config.json") {
        Some("") => ".".to_string(),
        Some(dir) => dir.trim_end_matches('/').to_string(),
        None => a.model.clone(),
    }
}

fn run_estimate(a: &EstimateArgs) -> Result<String, CliError> {
    let model = resolve(a)?;
    if a.url {
        return share_url(a, &model);
    }
    a.serve.check(&a.config)?;
    if a.serve.engine != Engine::Hf || a.export.is_some() {
        if a.measured_memory.is_some() {
            return Err(CliError::Usage(
                "--measured compares with the training simulation (--engine hf), not a serving engine's estimate or an export".into(),
            ));
        }
        return crate::serve::run(a, &model.name, &model.spec, &source(a));
    }
    let Model { name, spec, .. } = model;
    let gpu = a.gpu.as_deref().map(gpu_preset).transpose()?;
    let overheads = a.overrides.resolve(gpu.as_ref());
    let e = estimate(&spec, &a.config, &overheads, gpu.as_ref())?;
    let comparison = a
        .measured_memory
        .as_ref()
        .map(|m| vramfit_core::measured::compare(m, &e));
    if a.json {
        let mut s = crate::json::estimate(&e, comparison.as_ref()).map_err(CliError::Io)?;
        s.push('\n');
        return Ok(s);
    }
    let mut out = table(&name, spec.input_kind(), &e);
    if let Some(c) = &comparison {
        out.push_str(&crate::measured::table(c));
    }
    Ok(out)
}

fn run_max_batch(a: &EstimateArgs) -> Result<String, CliError> {
    let (name, spec) = resolve_model(a)?;
    let gpu = gpu_preset(a.gpu.as_deref().unwrap_or_default())?;
    let overheads = a.overrides.resolve(Some(&gpu));
    // The usable memory less the safety margin.
    let cap = Bytes(
        (vramfit_core::overheads::usable(&gpu, &overheads).0 as f64 * (1.0 - a.margin)) as u64,
    );
    let mut session = vramfit_core::Session::default();
    let best = session.max_batch(&spec, &a.config, &overheads, cap)?;
    // The longest sequence (text) or largest image (vision) at the configured batch.
    let input = session.max_input(&spec, &a.config, &overheads, cap)?;
    let input_key = match spec.input_kind() {
        InputKind::Tokens => "max_seq",
        InputKind::Image => "max_image",
        InputKind::Features => "",
    };
    if a.json {
        let mut out = serde_json::json!({
            "schema": "vramfit.max-batch/1", "model": name, "gpu": gpu.id, "usable_bytes": cap, "margin": a.margin, "max_batch": best
        });
        if let (Some(v), Some(map)) = (input, out.as_object_mut()) {
            map.insert("batch".into(), a.config.batch.into());
            map.insert(input_key.into(), v.into());
        }
        return Ok(format!("{out}\n"));
    }
    let mut s = format!(
        "{name} on {}: largest micro-batch that fits in {cap}: {best}\n",
        gpu.name
    );
    let at = format!("at micro-batch {}", a.config.batch);
    match (spec.input_kind(), input) {
        (InputKind::Tokens, Some(0)) => {
            let _ = writeln!(s, "no sequence length fits {at}");
        }
        (InputKind::Tokens, Some(v)) => {
            let _ = writeln!(s, "longest sequence that fits {at}: {v} tokens");
        }
        (InputKind::Image, Some(0)) => {
            let _ = writeln!(s, "no image size fits {at}");
        }
        (InputKind::Image, Some(v)) => {
            let _ = writeln!(s, "largest image that fits {at}: {v}×{v} px");
        }
        _ => {}
    }
    Ok(s)
}

fn run_gpus(a: &EstimateArgs) -> Result<String, CliError> {
    let (name, spec) = resolve_model(a)?;
    let overheads = a.overrides.resolve(None);
    let options = vramfit_core::plan::which_gpus(&spec, &a.config, &overheads)?;
    if a.json {
        return Ok(format!(
            "{}\n",
            serde_json::json!({"schema": "vramfit.gpus/1", "model": name, "options": options})
        ));
    }
    let mut s = format!(
        "{name}, micro-batch {}: GPUs it fits on, smallest first\n",
        a.config.batch
    );
    if options.is_empty() {
        s.push_str("none of the presets, even with 8 GPUs\n");
    }
    for o in &options {
        let _ = writeln!(
            s,
            "  {:>2} × {:<28} {:>9} per GPU at batch {}{}; largest micro-batch {}{}",
            o.gpus,
            o.name,
            o.device_used_bytes.to_string(),
            a.config.batch,
            if o.fits { "" } else { " (too much)" },
            o.max_batch,
            expert_parallel(o.ep, o.etp)
        );
    }
    Ok(s)
}

/// ", expert parallel over N GPUs" for a degree above 1, and the expert
/// tensor parallelism when it is set (0: as `--tp`).
fn expert_parallel(ep: u64, etp: u64) -> String {
    let mut s = String::new();
    if ep > 1 {
        s = format!(", expert parallel over {ep} GPUs (--ep {ep})");
    }
    if etp > 0 {
        s.push_str(&format!(
            ", each expert split over {etp} GPUs (--etp {etp})"
        ));
    }
    s
}

fn run_plan(a: &EstimateArgs) -> Result<String, CliError> {
    let (name, spec) = resolve_model(a)?;
    let gpu = gpu_preset(a.gpu.as_deref().unwrap_or_default())?;
    let overheads = a.overrides.resolve(Some(&gpu));
    let req = vramfit_core::plan::PlanRequest {
        base: a.config,
        target_batch: a.target_batch.unwrap_or(1),
        gpus_per_node: a.config.parallel.gpus_per_node,
        nodes: a.config.parallel.nodes,
        margin: a.margin,
        dataset_samples: a.dataset_samples,
        max_plans: vramfit_core::plan::SHOWN,
        measured: a.measured,
    };
    if let Some(kind) = a
        .export
        .as_deref()
        .filter(|k| !["deepspeed", "hf", "accelerate", "pytorch", "megatron"].contains(k))
    {
        return Err(CliError::Usage(format!(
            "plan --export takes deepspeed|hf|accelerate|pytorch|megatron: {kind} is an engine's launch command (`vramfit estimate --mode inference --engine {kind} --export {kind}`)"
        )));
    }
    let result = vramfit_core::plan::plan(&spec, &gpu, &overheads, &req)?;
    let best = result.plans.first();
    if let (Some(kind), Some(p)) = (a.export.as_deref(), best) {
        let c = &p.config;
        // The JSON exports cannot carry a comment: the expert layout they
        // leave out is said on stderr (the text exports say it themselves).
        if let (Some(l), "deepspeed" | "hf") = (vramfit_core::export::expert_layout(c), kind) {
            eprintln!(
                "vramfit: warning: the {kind} export cannot express the experts split over ep = {} GPUs (etp = {}): use --export megatron, or DeepSpeed-MoE's deepspeed.moe.layer.MoE(..., ep_size={}) in the model code",
                l.ep, l.etp, l.ep
            );
        }
        return Ok(match kind {
            "deepspeed" => format!(
                "{}\n",
                serde_json::to_string_pretty(&vramfit_core::export::deepspeed(c))
                    .unwrap_or_default()
            ),
            "hf" => format!(
                "{}\n",
                serde_json::to_string_pretty(&vramfit_core::export::hf_training_arguments(c))
                    .unwrap_or_default()
            ),
            "accelerate" => vramfit_core::export::accelerate_yaml(c),
            "megatron" => vramfit_core::export::megatron_args(c),
            _ => vramfit_core::export::pytorch_snippet(c),
        });
    }
    if a.export.is_some() {
        return Err(CliError::Usage("no plan fits: nothing to export".into()));
    }
    let advice = vramfit_core::plan::advice(
        req.target_batch,
        best.map_or(1, |p| p.config.batch),
        vramfit_core::plan::uses_batchnorm(&spec),
    );
    if a.json {
        let v = crate::json::plan(&name, &gpu.id, &result, &advice);
        return Ok(format!("{v}\n"));
    }
    let mut s = format!(
        "{name} on {} × {}: target batch {} ({} per GPU), {} configurations tried\n",
        gpu.name,
        req.gpus_per_node * req.nodes,
        req.target_batch,
        result.per_gpu_batch,
        result.tried
    );
    if let Some(u) = &result.uneven {
        let _ = writeln!(s, "warning: {}", words::uneven(u));
    }
    if result.plans.is_empty() {
        let _ = writeln!(
            s,
            "no configuration fits; try more GPUs, offloading or a smaller model"
        );
    }
    if !result.timed {
        let _ = writeln!(
            s,
            "step times are relative to the fastest plan: a custom GPU has no throughput figures"
        );
    }
    let fastest = result
        .plans
        .first()
        .map_or(1.0, |p| p.step_seconds.max(f64::MIN_POSITIVE));
    for (i, p) in result.plans.iter().take(8).enumerate() {
        let c = &p.config;
        let time = if result.timed {
            format!("{:>8.3} s/step", p.step_seconds)
        } else {
            format!("{:>8.2}× time", p.step_seconds / fastest)
        };
        let _ = writeln!(
            s,
            "{:>2}. {time}{}  {:>9}  micro {} × accum {}, {}, {}, checkpointing {}, {}",
            i + 1,
            if p.epoch_seconds > 0.0 && result.timed {
                format!(" ({:.1} h/epoch)", p.epoch_seconds / 3600.0)
            } else {
                String::new()
            },
            p.device_used_bytes.to_string(),
            c.batch,
            c.grad_accum,
            c.precision,
            c.optimizer,
            c.checkpointing,
            c.parallel.strategy,
        );
        let experts = expert_parallel(c.parallel.ep, c.parallel.etp);
        if !experts.is_empty() {
            let _ = writeln!(s, "     {}", experts.trim_start_matches(", "));
        }
        let _ = writeln!(s, "      {}", words::tradeoff(&p.tradeoffs));
    }
    let _ = writeln!(s, "\nadvice:");
    for a in &advice {
        let _ = writeln!(s, "  - {}", words::advice(a));
    }
    Ok(s)
}

/// Byte counts saturate at `u64::MAX` rather than overflow (see `vramfit_core::Bytes`).
const SATURATED: vramfit_core::Bytes = vramfit_core::Bytes(u64::MAX);

/// A byte count for the table; a saturated one says so instead of a number.
fn shown(b: vramfit_core::Bytes) -> String {
    if b == SATURATED {
        "> 16 EiB".to_string()
    } else {
        b.to_string()
    }
}

fn table(name: &str, kind: InputKind, e: &Estimate) -> String {
    let c = &e.config;
    let mut s = String::new();
    if e.active_parameter_count < e.parameter_count {
        // Under expert parallelism a GPU holds only its experts (the next line).
        let resident = if c.parallel.ep > 1 || c.parallel.expert_tp() > 1 {
            ""
        } else {
            " (every expert is in memory)"
        };
        let _ = writeln!(
            s,
            "{name}: {} parameters, {} active per token{resident}",
            group(e.parameter_count),
            group(e.active_parameter_count)
        );
    } else {
        let _ = writeln!(s, "{name}: {} parameters", group(e.parameter_count));
    }
    if e.parameters_per_gpu < e.parameter_count {
        let _ = writeln!(
            s,
            "per GPU: {} parameters (its tensor-, pipeline- and expert-parallel share, ZeRO-3 / FSDP shard)",
            group(e.parameters_per_gpu)
        );
    }
    if let Some(r) = &e.routing {
        let rows = match r.every_expert {
            Some(n) => format!(
                "every token through all {n} experts (transformers' Llama 4 runs them as one bmm over the whole banks), nothing dispatched to pad"
            ),
            None => format!(
                "tokens × top-k rows whatever the routing; drop-and-pad at capacity factor {} would keep {} more",
                r.capacity_factor, r.padded_extra_bytes
            ),
        };
        let _ = writeln!(
            s,
            "routed experts: {} of activations a micro-batch, {rows}{}",
            r.expert_activation_bytes,
            if r.aux_loss {
                "; the auxiliary load-balancing loss is on (output_router_logits)"
            } else {
                ""
            }
        );
    }
    if let Some(l) = e.linear_attention.filter(|l| l.mamba2) {
        let _ = writeln!(
            s,
            "state-space layers: {} of {} layers are Mamba-2, estimated as transformers runs them without mamba-ssm and causal-conv1d (its PyTorch path keeps each chunk's pairwise decays, and B and C repeated to every head, in fp32 for backward); the fused kernels of mamba-ssm keep far less",
            l.layers, l.of
        );
    } else if let Some(l) = e.linear_attention {
        let _ = writeln!(
            s,
            "linear attention: {} of {} layers are Gated DeltaNet, estimated as transformers runs them without flash-linear-attention (its PyTorch path keeps every 64-token chunk's state in fp32 for backward); the fused kernels of flash-linear-attention keep far less",
            l.layers, l.of
        );
    }
    let input = match kind {
        InputKind::Tokens => format!("seq {}, attention {}", c.seq, c.attention),
        InputKind::Image => format!("image {0}×{0}", c.image),
        InputKind::Features => "feature vectors".to_string(),
    };
    // Inference has no optimizer, accumulation or checkpointing to name.
    let _ = match c.mode {
        Mode::Inference => writeln!(
            s,
            "batch {}, {input}, KV cache {} tokens, {}",
            c.batch,
            c.cache_tokens(),
            c.precision
        ),
        Mode::Train | Mode::FinetuneLora | Mode::FinetuneQlora => writeln!(
            s,
            "batch {} × accum {}, {input}, {}, {}, checkpointing {}",
            c.batch, c.grad_accum, c.precision, c.optimizer, c.checkpointing
        ),
    };
    if let Some(loop_line) = training_loop(c) {
        let _ = writeln!(s, "{loop_line}");
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "  {:<28}{:>12}", "at the peak", "");
    let p = &e.at_peak;
    for (label, v) in [
        ("parameters", p.parameters),
        ("gradients", p.gradients),
        ("optimizer states", p.optimizer_states),
        ("activations", p.activations),
        ("temporary", p.temporary),
        ("other (inputs, buffers)", p.other),
        ("KV cache", p.kv_cache),
    ] {
        let _ = writeln!(s, "  {label:<28}{:>12}", shown(v));
    }
    let _ = writeln!(
        s,
        "  {:<28}{:>12}",
        "peak allocated (PyTorch)",
        shown(e.peak_allocated_bytes)
    );
    let _ = writeln!(
        s,
        "  {:<28}{:>12}",
        "peak reserved (allocator)",
        shown(e.peak_reserved_bytes)
    );
    let _ = writeln!(
        s,
        "  {:<28}{:>12}",
        "device used (nvidia-smi)",
        shown(e.device_used_bytes)
    );
    let o = &e.overheads;
    let handles = o.cublas_handles_for(e.config.mode);
    let mut parts = vec![format!("CUDA context {}", shown(o.cuda_context))];
    if o.cublas_handle_memory > Bytes::ZERO && handles > 0 {
        parts.push(format!(
            "{handles} cuBLAS handle(s) {}",
            shown(Bytes(u64::from(handles) * o.cublas_handle_memory.0))
        ));
    }
    if o.kernel_images > Bytes::ZERO {
        parts.push(format!("kernel images {}", shown(o.kernel_images)));
    }
    let _ = writeln!(
        s,
        "  {:<28}{:>12} ({})",
        "  outside the allocator",
        shown(o.outside_allocator(e.config.mode)),
        parts.join(", ")
    );
    if let (Some([low, high]), Some(sp)) = (e.device_used_range_bytes, e.device_used_spread) {
        let _ = writeln!(
            s,
            "  {:<28}{:>12} to {} (published runs of this kind: {:+.0} % to {:+.0} %, {} runs)",
            "  range on real GPUs",
            shown(low),
            shown(high),
            100.0 * sp.below.min(0.0),
            100.0 * sp.above.max(0.0),
            sp.runs
        );
    }
    if let Some(n) = e.nccl_buffers {
        let _ = writeln!(
            s,
            "  {:<28}{:>12} to {} per GPU, not in device used ({})",
            "NCCL buffers",
            shown(n.low),
            shown(n.high),
            words::nccl(&n)
        );
        if n.nvls > Bytes::ZERO {
            let _ = writeln!(
                s,
                "  {:<28}{:>12} of the high end on an NVSwitch board (NVLink SHARP, set up once NCCL runs a collective through the switches)",
                "  NVLS buffers",
                shown(n.nvls)
            );
        }
    }
    if e.device_used_bytes == SATURATED {
        let _ = writeln!(
            s,
            "  (saturated: the true number is larger than 2^64 bytes, 16 EiB)"
        );
    }
    let phase = serde_json::to_value(e.peak_phase)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "\npeak in {phase} of step {} at {}",
        e.peak_step, e.peak_op
    );
    if e.host_ram_bytes.0 > 0 {
        let _ = writeln!(s, "host RAM per node for offloading: {}", e.host_ram_bytes);
    }
    if let Some(ds) = &e.deepspeed_estimate {
        let _ = writeln!(
            s,
            "DeepSpeed's own estimator: {} per GPU, {} CPU (model states only: it leaves out activations and temporaries)",
            vramfit_core::Bytes(ds.gpu_bytes),
            vramfit_core::Bytes(ds.cpu_bytes)
        );
    }
    if let Some(note) = &e.rank {
        let _ = writeln!(s, "per GPU: {}", words::rank_note(note));
    }
    if let Some(limit) = e.beyond_trained_context {
        let _ = writeln!(s, "warning: {}", words::beyond_trained(limit));
    }
    if let Some(g) = &e.gpu {
        let verdict = if g.fits { "fits" } else { "does NOT fit" };
        if let Some(instead) = g.without_bf16 {
            let _ = writeln!(s, "warning: {}", words::without_bf16(&g.id, instead));
        }
        if let Some(note) = words::memory_limit(g.limit, g.usable_bytes) {
            let _ = writeln!(s, "note: {note}");
        }
        if let Some(note) = words::runtime_memory(g) {
            let _ = writeln!(s, "note: {note}");
        }
        let _ = writeln!(
            s,
            "{}: {verdict} in {} usable; largest micro-batch that fits: {} ({} keeping {:.0} % free)",
            g.id,
            g.usable_bytes,
            g.max_batch,
            g.margin_batch,
            vramfit_core::overheads::SAFETY_MARGIN * 100.0
        );
        match (g.nvml_v1_used_bytes, g.driver_reserved_bytes) {
            (Some(v1), Some(reserved)) => {
                let _ = writeln!(
                    s,
                    "NVML v1 used (pynvml's nvmlDeviceGetMemoryInfo().used): {v1}, the device figure plus the {reserved} the driver reserves on this GPU"
                );
            }
            (None, None) if g.fits => {
                let _ = writeln!(
                    s,
                    "NVML v1 used (pynvml) reads more than the device figure by what the driver reserves on this GPU (no published reading)"
                );
            }
            _ => {}
        }
        if let Some(c) = g.max_context {
            let _ = writeln!(
                s,
                "longest context (KV-cache tokens) that fits at this batch: {c}"
            );
        }
    }
    s
}

/// `n` with thousands separators.
pub(crate) fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn presets(json: bool) -> String {
    if json {
        let models: Vec<_> = model_presets()
            .iter()
            .map(|p| {
                serde_json::json!({
                    "id": p.id, "name": p.name, "family": p.family,
                    "parameter_count": p.spec.parameter_count().ok(),
                })
            })
            .collect();
        let gpus: Vec<_> = gpu_presets()
            .iter()
            .map(|g| serde_json::json!({"id": g.id, "name": g.name, "vendor": g.vendor(), "memory_bytes": g.memory_bytes}))
            .collect();
        return format!("{}\n", serde_json::json!({"models": models, "gpus": gpus}));
    }
    let mut s = String::from("MODELS\n");
    for p in model_presets() {
        let _ = writeln!(s, "  {:<20} {:<40} {}", p.id, p.name, p.family);
    }
    s.push_str("\nGPUS\n");
    for g in gpu_presets() {
        let _ = writeln!(s, "  {:<16} {:<28} {}", g.id, g.name, g.memory_bytes);
    }
    s
}

/// The training loop's settings that differ from the defaults (how the
/// optimizer steps, what `zero_grad` and the loop keep, the PyTorch
/// release), as their flags: `None` when all are the defaults.
fn training_loop(c: &vramfit_core::TrainConfig) -> Option<String> {
    if c.mode == Mode::Inference {
        return None;
    }
    let d = vramfit_core::TrainConfig::default();
    let set: Vec<String> = [
        (
            "--optimizer-impl",
            c.optimizer_impl.to_string(),
            d.optimizer_impl.to_string(),
        ),
        (
            "--zero-grad",
            c.zero_grad.to_string(),
            d.zero_grad.to_string(),
        ),
        (
            "--loop-outputs",
            c.loop_outputs.to_string(),
            d.loop_outputs.to_string(),
        ),
        ("--pytorch", c.pytorch.to_string(), d.pytorch.to_string()),
        (
            "--autocast-region",
            c.autocast_region.to_string(),
            d.autocast_region.to_string(),
        ),
        (
            "--training-cache",
            c.training_cache.to_string(),
            d.training_cache.to_string(),
        ),
        (
            "--attention-mask",
            c.attention_mask.to_string(),
            d.attention_mask.to_string(),
        ),
    ]
    .into_iter()
    .filter(|(_, value, default)| value != default)
    .map(|(flag, value, _)| format!("{flag} {value}"))
    .collect();
    (!set.is_empty()).then(|| format!("training loop: {}", set.join(", ")))
}
