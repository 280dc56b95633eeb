//! The app state: what the user typed, why any of it is invalid, the
//! imported `config.json`, the display preferences and the last valid
//! report. [`Action`]s change one thing; the reducer re-validates and
//! re-estimates when an input changed. An invalid input never clears the
//! report on screen: the report is marked stale instead, so the page keeps
//! showing the last result next to a specific message.

pub use crate::fields::{Field, FieldError, FieldErrors, parse_count};
pub use crate::inputs::{CheckpointChoice, IMPORTED_MODEL, Inputs, Shape};

use crate::catalog::Catalog;
use crate::i18n::{Key, Lang, t, tf};
use crate::import::{ImportError, ImportState};
use crate::layers::{LayerColumn, LayerSort};
use crate::messages::core_error;
use crate::prefs::{Prefs, Theme, Units};
use crate::present::Glance;
use crate::report::{Memo, Report};
use crate::serve_report::ServeView;
use crate::serving::ServeInputs;
use crate::url::Link;
use std::rc::Rc;
use vramfit_core::config::Mode;
use vramfit_core::engines::{Engine, KvDtype, Serving};
use vramfit_core::error::ServeFault;
use vramfit_core::models::InputKind;
use vramfit_core::parallel::{Offload, Strategy};
use vramfit_core::share::{Setting, ShareState, Warning};
use vramfit_core::{Attention, Error, ModelSpec, Optimizer, Precision, TrainConfig};
use yew::Reducible;

/// A problem not tied to one field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// No model preset has this id.
    UnknownModel(String),
    /// No GPU preset has this id.
    UnknownGpu(String),
    /// The imported model is selected but nothing was imported.
    NoImportedModel,
    /// The estimator rejected the configuration.
    Core(Error),
}

impl Problem {
    /// The problem as a sentence in `lang` (the core's free-text errors
    /// keep their English after a translated explanation).
    pub fn message(&self, lang: Lang) -> String {
        match self {
            Problem::UnknownModel(id) => tf(lang, Key::UnknownModel, &[id]),
            Problem::UnknownGpu(id) => tf(lang, Key::UnknownGpu, &[id]),
            Problem::NoImportedModel => t(lang, Key::NoImportedModel).to_string(),
            Problem::Core(e) => tf(lang, Key::EstimatorRejected, &[&core_error(e, lang)]),
        }
    }
}

/// A change the user made.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Pick a model preset by id (or [`IMPORTED_MODEL`]).
    SetModel(String),
    /// Type into a count field.
    SetField(Field, String),
    /// Pick a precision mode.
    SetPrecision(Precision),
    /// Pick an optimizer.
    SetOptimizer(Optimizer),
    /// Pick `torch.optim`'s implementation of the step.
    SetOptimizerImpl(vramfit_core::OptimizerImpl),
    /// The training loop: what `zero_grad` leaves.
    SetZeroGrad(vramfit_core::config::ZeroGrad),
    /// The training loop: what it keeps of the model's outputs.
    SetLoopOutputs(vramfit_core::config::LoopOutputs),
    /// The training loop: what runs inside `torch.autocast`.
    SetAutocastRegion(vramfit_core::config::AutocastRegion),
    /// transformers' key–value cache in training.
    SetTrainingCache(vramfit_core::config::TrainingCache),
    /// What SDPA attention is given (a padding mask or none).
    SetAttentionMask(vramfit_core::config::AttentionMask),
    /// The training loop: the PyTorch release.
    SetPytorch(vramfit_core::config::TorchRelease),
    /// Pick a checkpointing choice.
    SetCheckpointing(CheckpointChoice),
    /// Pick an attention implementation.
    SetAttention(Attention),
    /// Pick a GPU preset by id.
    SetGpu(String),
    /// Pick a data-parallel strategy.
    SetStrategy(Strategy),
    /// Pick what is offloaded to host memory.
    SetOffload(Offload),
    /// Pick training, fine-tuning or inference.
    SetMode(Mode),
    /// Pick the serving engine (inference mode).
    SetEngine(Engine),
    /// Pick the engine's weights, by `--weights` id.
    SetServeWeights(String),
    /// Pick the engine's KV cache type.
    SetKvDtype(KvDtype),
    /// Paste, type or drop `config.json` text.
    ImportConfig(String),
    /// A dropped or chosen file could not be used.
    ImportFailed(ImportError),
    /// Take over a configuration (a technique of the comparison strip).
    Adopt(TrainConfig),
    /// Run the planner for this effective batch (all GPUs).
    FindPlans(u64),
    /// Find the longest sequence (text) or largest image (vision) that fits
    /// at the current batch.
    FindMaxInput,
    /// List the GPU presets (and counts) the configuration fits on.
    FindGpus,
    /// Take a GPU preset, a GPU count and its expert-parallel and expert
    /// tensor-parallel degrees from that list (several GPUs keep the chosen
    /// strategy, or shard with FSDP if it was a single GPU).
    UseGpus(String, u64, u64, u64),
    /// Take over a plan: its batch, accumulation, precision, checkpointing,
    /// optimizer, strategy and offload (the plans stay on screen).
    AdoptPlan(TrainConfig),
    /// Switch the language.
    SetLang(Lang),
    /// Switch byte units.
    SetUnits(Units),
    /// Switch the colour theme.
    SetTheme(Theme),
    /// Sort the per-layer table by a column (again: reverse it).
    SortLayers(LayerColumn),
    /// Add the batch curve and the comparison to the report on screen (sent
    /// once it is shown, so the verdict never waits for them).
    CompleteReport,
    /// Hide the list of what the page's link had that could not be used.
    DismissLinkWarnings,
    /// Reset the settings the form does not show (set by a link) to their defaults.
    ClearExtras,
}

/// Everything the page shows.
#[derive(Clone, Debug, PartialEq)]
pub struct AppState {
    /// The presets offered.
    pub catalog: Rc<Catalog>,
    /// What the user entered.
    pub inputs: Inputs,
    /// The `config.json` box.
    pub import: ImportState,
    /// Language, units and theme.
    pub prefs: Prefs,
    /// Why fields are invalid.
    pub errors: FieldErrors,
    /// A problem not tied to a field.
    pub problem: Option<Problem>,
    /// The last valid report of Hugging Face's simulation.
    pub report: Option<Rc<Report>>,
    /// The last valid answer of a serving engine (vLLM, SGLang, llama.cpp).
    pub serving: Option<Rc<ServeView>>,
    /// Whether `report` is older than the current inputs (they are invalid).
    pub stale: bool,
    /// How the per-layer table is sorted.
    pub layer_sort: LayerSort,
    /// Simulations kept between recomputes.
    memo: Memo,
    /// Counts recomputes, so each new report gets its completion scheduled.
    pub generation: u64,
    /// What the page's link had that could not be used (shown until dismissed).
    pub link_warnings: Vec<Warning>,
    /// The planner's last answer, until an input changes.
    pub plans: Option<Rc<crate::planner::Plans>>,
    /// The longest sequence or largest image that fits at the current
    /// batch (0: none), once asked for, until an input changes.
    pub max_input: Option<u64>,
    /// The GPUs the configuration fits on, once asked for, until an input changes.
    pub gpu_options: Option<Rc<crate::planner::GpuOptions>>,
    /// Whether the cards below the peak breakdown are shown: from the first
    /// complete report on. The page's first verdict renders (and answers
    /// typing) without them; they follow with the batch curve and the
    /// comparison, in the next task.
    pub revealed: bool,
}

impl Action {
    /// The id of the element that takes keyboard focus once this action's
    /// result is on screen: applying a technique, a plan or a GPU from a
    /// card below the verdict changes the verdict, which may be a screen
    /// away (and a technique's or GPU's button is gone with its row), so
    /// focus moves to it. `None`: focus stays where it is.
    pub fn focus_after(&self) -> Option<&'static str> {
        match self {
            Action::Adopt(_) | Action::AdoptPlan(_) | Action::UseGpus(..) => Some("verdict"),
            _ => None,
        }
    }
}

impl Default for AppState {
    fn default() -> Self {
        AppState::new(Inputs::default(), Prefs::default())
    }
}

/// The share keys of the settings the form shows for a model reading `kind`.
fn form_keys(kind: InputKind) -> &'static [&'static str] {
    match kind {
        InputKind::Tokens => &["m", "g", "b", "s", "a", "p", "o", "c", "at"],
        InputKind::Image => &["m", "g", "b", "i", "a", "p", "o", "c"],
        InputKind::Features => &["m", "g", "b", "a", "p", "o", "c"],
    }
}

impl Reducible for AppState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut next = (*self).clone();
        next.apply(action);
        Rc::new(next)
    }
}

impl AppState {
    /// A state for these inputs and preferences, estimated.
    pub fn new(inputs: Inputs, prefs: Prefs) -> AppState {
        AppState::build(
            inputs,
            prefs,
            ImportState::default(),
            Vec::new(),
            Memo::default(),
        )
    }

    /// The state a page address describes: its inputs (and `config.json`),
    /// its display settings over the browser's, and what it had that could
    /// not be used.
    pub fn from_link(link: &Link, browser: Prefs) -> AppState {
        AppState::from_link_edited(link, browser, Vec::new(), None)
    }

    /// [`AppState::from_link`] with `edits` typed over the link's fields
    /// before the first estimate (what was typed into the prerendered page),
    /// and the largest batches that page showed, which the first estimate
    /// takes without searching where they check out ([`Memo::seeded`]).
    /// Edits that do not estimate (a field cleared to type another number)
    /// are the link's first edit instead, as any later one: the link's
    /// answer stays, marked stale, beside the field's error.
    pub fn from_link_edited(
        link: &Link,
        browser: Prefs,
        edits: Vec<(Field, String)>,
        largest: Option<(u64, u64)>,
    ) -> AppState {
        let edited = AppState::from_link_with(link, browser, edits.clone(), largest);
        if !edited.stale || edits.is_empty() {
            return edited;
        }
        let mut s = AppState::from_link_with(link, browser, Vec::new(), largest);
        for (field, value) in edits {
            s.apply(Action::SetField(field, value));
        }
        s
    }

    /// [`AppState::from_link_edited`]'s state with `edits` set before the
    /// first estimate, whatever it gives.
    fn from_link_with(
        link: &Link,
        browser: Prefs,
        edits: Vec<(Field, String)>,
        largest: Option<(u64, u64)>,
    ) -> AppState {
        let mut import = ImportState::default();
        if let Some(json) = &link.share.config_json {
            import.set_text(json.clone());
        }
        let mut inputs = Inputs::from_share(&link.share);
        for (field, value) in edits {
            inputs.set(field, value);
        }
        let mut s = AppState::build(
            inputs,
            link.view.apply(browser),
            import,
            link.warnings.clone(),
            Memo::seeded(largest),
        );
        // The form drops an expert split for a model without experts (the
        // field is hidden): say so rather than reset it unseen.
        if s.model()
            .is_ok_and(|(_, spec)| spec.routed_experts().is_none())
        {
            let mut share = link.share.clone();
            let dropped = vramfit_core::share::drop_expert_split(&mut share);
            s.link_warnings.extend(dropped);
        }
        s
    }

    fn build(
        inputs: Inputs,
        prefs: Prefs,
        import: ImportState,
        link_warnings: Vec<Warning>,
        memo: Memo,
    ) -> AppState {
        let mut s = AppState {
            catalog: Rc::new(Catalog::load()),
            inputs,
            import: ImportState::default(),
            prefs,
            errors: FieldErrors::default(),
            problem: None,
            report: None,
            serving: None,
            stale: false,
            layer_sort: LayerSort::default(),
            memo,
            generation: 0,
            link_warnings,
            plans: None,
            max_input: None,
            gpu_options: None,
            revealed: false,
        };
        s.import = import;
        s.recompute();
        s
    }

    /// What a share link of the result on screen holds; `None` while the
    /// inputs are invalid or rejected (the address then keeps the last good state).
    pub fn share_state(&self) -> Option<ShareState> {
        if self.stale || self.problem.is_some() {
            return None;
        }
        let (train, serve) = self.inputs.settings(self.shape()).ok()?;
        let imported = self.inputs.model == IMPORTED_MODEL;
        Some(ShareState {
            model: self.inputs.model.clone(),
            config_json: imported.then(|| self.import.valid_text.clone()),
            gpu: self.inputs.gpu_id(),
            train,
            serve,
        })
    }

    /// The engine whose answer the page shows: the form's in inference
    /// mode, else the link's (which the core refuses outside inference).
    pub fn engine(&self) -> Engine {
        if self.inputs.mode == Mode::Inference {
            self.inputs.serve.engine
        } else {
            self.inputs.serve.rest.engine
        }
    }

    /// The verdict at a glance: the answer the page shows (the engine's or
    /// the simulation's) on its GPU; `None` without a GPU or an answer.
    pub fn glance(&self) -> Option<Glance> {
        if self.engine() == Engine::Hf {
            Glance::of(&self.report.as_ref()?.estimate)
        } else {
            let e = &self.serving.as_ref()?.estimate;
            let fit = e.fit.as_ref()?;
            Some(Glance {
                fits: fit.fits,
                used: e.device_used_bytes,
                usable: fit.usable_bytes,
            })
        }
    }

    /// The settings in effect that the form does not show (set by a link).
    pub fn extras(&self) -> Vec<Setting> {
        // The form's fields override their counterparts in `rest`, and are filtered out.
        let mut shown = form_keys(self.input_kind()).to_vec();
        // `ep` is the form's for a model with experts and 1 for the others.
        shown.extend(["mo", "st", "gn", "of", "ep"]);
        if self.inputs.mode == Mode::Inference {
            shown.extend(self.inputs.serve.keys());
        }
        if self.shows_optimizer_impl() {
            shown.push("oi");
        }
        shown.extend(self.inputs.loop_keys());
        if self.inputs.trains() && self.input_kind() == InputKind::Tokens {
            shown.extend(["tc", "am"]);
        }
        shown.extend(
            self.inputs
                .fields(self.shape())
                .iter()
                .filter_map(|f| match f {
                    Field::LoraRank => Some("r"),
                    Field::Context => Some("ctx"),
                    _ => None,
                }),
        );
        ShareState {
            train: self.inputs.rest,
            serve: self.inputs.serve.rest,
            ..ShareState::default()
        }
        .settings()
        .into_iter()
        .filter(|s| !shown.contains(&s.key))
        .collect()
    }

    /// Whether the form offers the optimizer's implementation (training with
    /// an optimizer that has several).
    fn shows_optimizer_impl(&self) -> bool {
        self.inputs.trains() && self.inputs.optimizer_has_impls()
    }

    /// The settings in effect that the widget's form does not show: those of
    /// [`AppState::extras`] plus the layout and mode the page's form shows.
    pub fn widget_extras(&self) -> Vec<Setting> {
        let kind = self.input_kind();
        let (train, serve) = self
            .inputs
            .settings(self.shape())
            .unwrap_or((self.inputs.rest, self.inputs.serve.rest));
        let shown = form_keys(kind);
        ShareState {
            train,
            serve,
            ..ShareState::default()
        }
        .settings()
        .into_iter()
        .filter(|s| !shown.contains(&s.key))
        .collect()
    }

    /// Applies one change; re-estimates when it changed an input.
    pub fn apply(&mut self, action: Action) {
        match action {
            Action::SetModel(id) => self.inputs.model = id,
            Action::SetField(field, value) => self.inputs.set(field, value),
            Action::SetPrecision(p) => self.inputs.precision = p,
            Action::SetOptimizer(o) => self.inputs.optimizer = o,
            Action::SetOptimizerImpl(i) => self.inputs.rest.optimizer_impl = i,
            Action::SetZeroGrad(z) => self.inputs.rest.zero_grad = z,
            Action::SetLoopOutputs(o) => self.inputs.rest.loop_outputs = o,
            Action::SetAutocastRegion(r) => self.inputs.rest.autocast_region = r,
            Action::SetTrainingCache(c) => self.inputs.rest.training_cache = c,
            Action::SetAttentionMask(m) => self.inputs.rest.attention_mask = m,
            Action::SetPytorch(r) => self.inputs.rest.pytorch = r,
            Action::SetCheckpointing(c) => self.inputs.checkpointing = c,
            Action::SetAttention(a) => self.inputs.attention = a,
            Action::SetGpu(id) => self.inputs.gpu = id,
            Action::SetStrategy(st) => self.inputs.strategy = st,
            Action::SetOffload(of) => self.inputs.offload = of,
            Action::SetMode(mo) => self.inputs.mode = mo,
            Action::SetEngine(e) => self.inputs.serve.set_engine(e),
            Action::SetServeWeights(w) => self.inputs.serve.weights = w,
            Action::SetKvDtype(kv) => self.inputs.serve.kv = kv,
            Action::Adopt(cfg) => self.inputs.adopt(&cfg),
            Action::FindPlans(target) => return self.find_plans(target),
            Action::FindMaxInput => return self.find_max_input(),
            Action::FindGpus => return self.find_gpus(),
            Action::UseGpus(id, count, ep, etp) => {
                self.inputs.gpu = id;
                self.inputs.set(Field::Gpus, count.to_string());
                self.inputs.set(Field::Ep, ep.to_string());
                self.inputs.set(Field::Etp, etp.to_string());
                if count <= 1 {
                    self.inputs.strategy = Strategy::Single;
                    self.inputs.offload = Offload::None;
                } else if self.inputs.strategy == Strategy::Single {
                    self.inputs.strategy = Strategy::FsdpFull;
                }
            }
            Action::AdoptPlan(cfg) => {
                self.inputs.adopt(&cfg);
                self.inputs.set(Field::Ep, cfg.parallel.ep.to_string());
                self.inputs.set(Field::Etp, cfg.parallel.etp.to_string());
                let plans = self.plans.take();
                self.recompute();
                self.plans = plans;
                return;
            }
            Action::ImportConfig(text) => {
                if self.import.set_text(text) {
                    self.inputs.model = IMPORTED_MODEL.to_string();
                } else {
                    // The last valid import (if selected) is still what is estimated.
                    return;
                }
            }
            Action::ImportFailed(e) => return self.import.fail(e),
            Action::SetLang(lang) => return self.prefs.lang = lang,
            Action::SetUnits(units) => return self.prefs.units = units,
            Action::SetTheme(theme) => return self.prefs.theme = theme,
            Action::SortLayers(column) => return self.layer_sort = self.layer_sort.toggled(column),
            Action::CompleteReport => return self.complete_report(),
            Action::DismissLinkWarnings => return self.link_warnings.clear(),
            Action::ClearExtras => {
                // What the form shows of `rest` stays.
                let kept = self.inputs.rest;
                self.inputs.rest = ShareState::default().train;
                if self.shows_optimizer_impl() {
                    self.inputs.rest.optimizer_impl = kept.optimizer_impl;
                }
                self.inputs.keep_loop_settings(&kept);
                self.inputs.serve.rest = Serving::default();
                if self.inputs.mode != Mode::Inference {
                    // The engine's fields are hidden: their link values go too.
                    self.inputs.serve = ServeInputs::default();
                }
            }
        }
        self.recompute();
    }

    /// Runs the planner for `target` samples per step over the current
    /// model, sizes, GPU and GPU count (nothing while the inputs are invalid).
    fn find_plans(&mut self, target: u64) {
        let (Ok(cfg), Ok((_, spec))) = (self.inputs.config(self.shape()), self.model()) else {
            return;
        };
        let catalog = Rc::clone(&self.catalog);
        let Some(gpu) = catalog.gpu(&self.inputs.gpu_id()) else {
            return;
        };
        self.plans = Some(Rc::new(crate::planner::Plans::find(
            &spec, &cfg, &gpu, target,
        )));
    }

    /// Searches the largest input (sequence length or image side) that fits
    /// the GPU at the current batch (nothing while the inputs are invalid;
    /// an error, already shown by the estimate, leaves it unknown).
    fn find_max_input(&mut self) {
        let Some((cfg, spec, gpu)) = self.estimated() else {
            return;
        };
        let overheads = vramfit_core::Overheads::for_gpu(&gpu);
        let usable = vramfit_core::overheads::usable(&gpu, &overheads);
        self.max_input = vramfit_core::max_input_for(&spec, &cfg, &overheads, usable)
            .ok()
            .flatten();
    }

    /// Lists the GPU presets and counts the current configuration fits on
    /// (nothing while the inputs are invalid).
    fn find_gpus(&mut self) {
        let Some((cfg, spec, _)) = self.estimated() else {
            return;
        };
        self.gpu_options = Some(Rc::new(crate::planner::GpuOptions::find(&spec, &cfg)));
    }

    /// The configuration, model and GPU of the report on screen, when it is
    /// the current inputs' (valid inputs, nothing refused).
    fn estimated(&self) -> Option<(TrainConfig, ModelSpec, vramfit_core::GpuPreset)> {
        if self.stale {
            return None;
        }
        let cfg = self.inputs.config(self.shape()).ok()?;
        let (_, spec) = self.model().ok()?;
        Some((cfg, spec, self.catalog.gpu(&self.inputs.gpu_id())?))
    }

    /// Whether the report on screen still waits for its curve and comparison.
    pub fn incomplete(&self) -> bool {
        self.engine() == Engine::Hf && self.report.as_ref().is_some_and(|r| !r.complete)
    }

    fn complete_report(&mut self) {
        // The first verdict has been on screen: the cards below it follow,
        // whether or not the curve and comparison can be computed.
        self.revealed = true;
        let Some(report) = self.report.clone().filter(|r| !r.complete) else {
            return;
        };
        let catalog = Rc::clone(&self.catalog);
        let (Ok((_, spec)), Some(gpu)) = (
            self.model(),
            catalog.gpu(report.estimate.gpu.as_ref().map_or("", |g| g.id.as_str())),
        ) else {
            return;
        };
        match report.completed(&spec, &gpu, &mut self.memo) {
            Ok(r) => self.report = Some(Rc::new(r)),
            Err(e) => self.problem = Some(Problem::Core(e)),
        }
    }

    /// The selected model: its name and architecture, if it exists.
    fn model(&self) -> Result<(String, ModelSpec), Problem> {
        if self.inputs.model == IMPORTED_MODEL {
            return self
                .import
                .model
                .as_ref()
                .map(|m| (m.name.clone(), m.spec.clone()))
                .ok_or(Problem::NoImportedModel);
        }
        self.catalog
            .model(&self.inputs.model)
            .map(|m| (m.name.to_string(), m.spec.clone()))
            .ok_or_else(|| Problem::UnknownModel(self.inputs.model.clone()))
    }

    /// What the selected model takes as input (text for an unknown model,
    /// whose error is shown anyway).
    pub fn input_kind(&self) -> InputKind {
        self.model()
            .map_or(InputKind::Tokens, |(_, spec)| spec.input_kind())
    }

    /// What the form's fields depend on in the selected model.
    pub fn shape(&self) -> Shape {
        Shape {
            kind: self.input_kind(),
            experts: self
                .model()
                .is_ok_and(|(_, spec)| spec.routed_experts().is_some()),
        }
    }

    /// The count fields shown for the selected model, in form order.
    pub fn visible_fields(&self) -> Vec<Field> {
        self.inputs.fields(self.shape())
    }

    /// The input-size field the selected model uses: sequence length for
    /// text, image size for vision, none for feature vectors.
    pub fn input_field(&self) -> Option<Field> {
        Field::input_size(self.input_kind())
    }

    fn recompute(&mut self) {
        self.generation += 1;
        // Plans and the largest input answer the inputs they were asked for.
        self.plans = None;
        self.max_input = None;
        self.gpu_options = None;
        self.errors = FieldErrors::default();
        self.problem = None;
        if self.engine() != Engine::Hf {
            match self.try_serve() {
                Some(view) => {
                    // Nothing follows an engine's answer: what comes below it shows now.
                    self.revealed = true;
                    self.serving = Some(Rc::new(view));
                    self.stale = false;
                }
                None => self.stale = true,
            }
            return;
        }
        match self.try_report() {
            Some(report) => {
                self.revealed |= report.complete;
                self.report = Some(Rc::new(report));
                self.stale = false;
            }
            None => self.stale = true,
        }
    }

    /// Validates and asks the engine; on failure records why and returns `None`.
    fn try_serve(&mut self) -> Option<ServeView> {
        let (cfg, serving) = match self.inputs.settings(self.shape()) {
            Ok(s) => s,
            Err(errors) => {
                self.errors = errors;
                return None;
            }
        };
        let (name, spec) = match self.model() {
            Ok(m) => m,
            Err(p) => {
                self.problem = Some(p);
                return None;
            }
        };
        let catalog = Rc::clone(&self.catalog);
        let Some(gpu) = catalog.gpu(&self.inputs.gpu_id()) else {
            self.problem = Some(Problem::UnknownGpu(self.inputs.gpu_id()));
            return None;
        };
        // The launch command loads the preset by id; an imported model is
        // the user's to name, as in the CLI.
        let source = if self.inputs.model == IMPORTED_MODEL {
            "<model>"
        } else {
            self.inputs.model.as_str()
        };
        match ServeView::new(&spec, &name, source, &gpu, &cfg, &serving) {
            Ok(view) => Some(view),
            Err(e) => {
                self.place(e);
                None
            }
        }
    }

    /// Validates and estimates; on failure records why (in `errors` or
    /// `problem`) and returns `None`.
    fn try_report(&mut self) -> Option<Report> {
        let cfg = match self.inputs.settings(self.shape()) {
            Ok((cfg, serving)) => {
                // Hugging Face's own limits (its weights, a 16-bit cache, one sequence).
                if let Err(e) = serving.check(&cfg) {
                    self.place(e);
                    return None;
                }
                cfg
            }
            Err(errors) => {
                self.errors = errors;
                return None;
            }
        };
        let (name, spec) = match self.model() {
            Ok(m) => m,
            Err(p) => {
                self.problem = Some(p);
                return None;
            }
        };
        let catalog = Rc::clone(&self.catalog);
        let Some(gpu) = catalog.gpu(&self.inputs.gpu_id()) else {
            self.problem = Some(Problem::UnknownGpu(self.inputs.gpu_id()));
            return None;
        };
        let previous = self.report.clone();
        // Only the verdict and the numbers beside it in this render: the
        // batch curve and the comparison follow in the next task, after the
        // frame that shows the verdict (`CompleteReport`). With the largest
        // batch and a curve already known for this model, layout and GPU (a
        // batch edit) that completion is a few replays of recorded
        // simulations, but redrawing the cards below still costs a frame.
        match Report::first(
            &spec,
            &cfg,
            &gpu,
            &name,
            self.input_field(),
            &mut self.memo,
            previous.as_deref(),
        ) {
            Ok(report) => Some(report),
            Err(e) => {
                self.place(e);
                None
            }
        }
    }

    /// Whether the form asks for one GPU's training, without offloading.
    fn plain_layout(&self) -> bool {
        self.inputs.strategy == Strategy::Single
            && self.inputs.offload == Offload::None
            && self.inputs.mode == Mode::Train
    }

    /// Shows a core error next to the field it is about, else as a problem.
    fn place(&mut self, e: Error) {
        match &e {
            Error::Serve(ServeFault::GpuLayers { most, .. }) => {
                return self
                    .errors
                    .set(Field::GpuLayers, FieldError::TooLarge(*most));
            }
            Error::OutOfRange {
                field,
                min,
                max,
                value,
            } => {
                if let Some(Field::Utilization) = Field::from_core(field) {
                    return self.errors.set(Field::Utilization, FieldError::NotFraction);
                }
                if let Some(f) = Field::from_core(field) {
                    let too_small = value.parse::<u64>().is_ok_and(|v| v < *min);
                    return self.errors.set(
                        f,
                        if too_small {
                            FieldError::TooSmall(*min)
                        } else {
                            FieldError::TooLarge(*max)
                        },
                    );
                }
            }
            // With the default layout and mode, the only form input a model can
            // reject as not applicable is its input size; otherwise (or with
            // settings from a link) it may be one of those. A model whose
            // step is not simulated at all is no field's fault: said above
            // the results.
            Error::NotApplicable(why)
                if self.extras().is_empty()
                    && self.plain_layout()
                    && *why != vramfit_core::error::Inapplicable::SparseAttentionIndexer =>
            {
                if let Some(f) = self.input_field() {
                    return self.errors.set(f, FieldError::NotApplicable(why.clone()));
                }
            }
            _ => {}
        }
        self.problem = Some(Problem::Core(e));
    }
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "url_tests.rs"]
mod url_tests;
