//! The app state: what the user typed, a message per invalid field, and the
//! last valid report. [`Action`]s change one input; the reducer re-validates
//! and re-estimates. An invalid input never clears the report on screen: the
//! report is marked stale instead, so the page keeps showing the last result
//! next to a specific message.

pub use crate::fields::{Field, FieldErrors, parse_count};

use crate::catalog::Catalog;
use crate::labels;
use crate::present;
use std::rc::Rc;
use vramfit_core::models::InputKind;
use vramfit_core::{Error, Estimate, Optimizer, Overheads, Precision, TrainConfig, estimate};
use yew::Reducible;

/// What the user has entered, kept as typed so an invalid field stays editable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inputs {
    /// Model preset id.
    pub model: String,
    /// Batch size, as typed.
    pub batch: String,
    /// Sequence length, as typed (used by text models).
    pub seq: String,
    /// Image size, as typed (used by vision models).
    pub image: String,
    /// Precision mode.
    pub precision: Precision,
    /// Optimizer.
    pub optimizer: Optimizer,
    /// GPU preset id.
    pub gpu: String,
}

impl Default for Inputs {
    fn default() -> Self {
        Inputs {
            model: "gpt2".to_string(),
            batch: "8".to_string(),
            seq: "512".to_string(),
            image: "224".to_string(),
            precision: Precision::AmpBf16,
            optimizer: Optimizer::AdamW,
            gpu: "rtx-4090".to_string(),
        }
    }
}

impl Inputs {
    /// The raw text of a count field.
    pub fn get(&self, field: Field) -> &str {
        match field {
            Field::Batch => &self.batch,
            Field::Seq => &self.seq,
            Field::Image => &self.image,
        }
    }

    fn set(&mut self, field: Field, value: String) {
        match field {
            Field::Batch => self.batch = value,
            Field::Seq => self.seq = value,
            Field::Image => self.image = value,
        }
    }
}

/// An estimate together with the names of what it was made for.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The core's report.
    pub estimate: Estimate,
    /// Display name of the model.
    pub model_name: String,
    /// Display name of the GPU.
    pub gpu_name: String,
    /// The input-size field the model used, if any.
    pub input: Option<Field>,
}

impl Report {
    /// One line naming the configuration: model, parameters, batch and input
    /// size, precision and optimizer.
    pub fn summary(&self) -> String {
        let cfg = &self.estimate.config;
        let shape = match self.input {
            Some(Field::Seq) => format!("batch {} × {} tokens", cfg.batch, cfg.seq),
            Some(Field::Image) => format!("batch {} at {}×{} px", cfg.batch, cfg.image, cfg.image),
            _ => format!("batch {}", cfg.batch),
        };
        format!(
            "{} · {} parameters · {shape} · {} · {}",
            self.model_name,
            present::count(self.estimate.parameter_count),
            labels::precision(cfg.precision),
            labels::optimizer(cfg.optimizer),
        )
    }
}

/// A change the user made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Pick a model preset by id.
    SetModel(String),
    /// Type into a count field.
    SetField(Field, String),
    /// Pick a precision mode.
    SetPrecision(Precision),
    /// Pick an optimizer.
    SetOptimizer(Optimizer),
    /// Pick a GPU preset by id.
    SetGpu(String),
}

/// Everything the page shows.
#[derive(Clone, Debug, PartialEq)]
pub struct AppState {
    /// The presets and choices offered.
    pub catalog: Rc<Catalog>,
    /// What the user entered.
    pub inputs: Inputs,
    /// Messages for invalid fields.
    pub errors: FieldErrors,
    /// A problem not tied to one field (an estimator error), as a sentence.
    pub problem: Option<String>,
    /// The last valid report.
    pub report: Option<Rc<Report>>,
    /// Whether `report` is older than the current inputs (they are invalid).
    pub stale: bool,
}

impl Default for AppState {
    fn default() -> Self {
        AppState::new(Inputs::default())
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
    /// A state for these inputs, estimated.
    pub fn new(inputs: Inputs) -> AppState {
        let mut s = AppState {
            catalog: Rc::new(Catalog::load()),
            inputs,
            errors: FieldErrors::default(),
            problem: None,
            report: None,
            stale: false,
        };
        s.recompute();
        s
    }

    /// Applies one change and re-estimates.
    pub fn apply(&mut self, action: Action) {
        match action {
            Action::SetModel(id) => self.inputs.model = id,
            Action::SetField(field, value) => self.inputs.set(field, value),
            Action::SetPrecision(p) => self.inputs.precision = p,
            Action::SetOptimizer(o) => self.inputs.optimizer = o,
            Action::SetGpu(id) => self.inputs.gpu = id,
        }
        self.recompute();
    }

    /// The input-size field the selected model uses: sequence length for
    /// text, image size for vision, none for feature vectors.
    pub fn input_field(&self) -> Option<Field> {
        let model = self.catalog.model(&self.inputs.model)?;
        match model.spec.input_kind() {
            InputKind::Tokens => Some(Field::Seq),
            InputKind::Image => Some(Field::Image),
            InputKind::Features => None,
        }
    }

    /// The count fields shown for the selected model, in form order.
    pub fn visible_fields(&self) -> Vec<Field> {
        std::iter::once(Field::Batch).chain(self.input_field()).collect()
    }

    fn recompute(&mut self) {
        self.errors = FieldErrors::default();
        self.problem = None;
        match self.try_report() {
            Some(report) => {
                self.report = Some(Rc::new(report));
                self.stale = false;
            }
            None => self.stale = true,
        }
    }

    /// Validates the visible fields and estimates; on failure records why
    /// (in `errors` or `problem`) and returns `None`.
    fn try_report(&mut self) -> Option<Report> {
        let mut cfg = TrainConfig { precision: self.inputs.precision, optimizer: self.inputs.optimizer, ..TrainConfig::default() };
        for field in self.visible_fields() {
            match parse_count(field, self.inputs.get(field)) {
                Ok(n) => match field {
                    Field::Batch => cfg.batch = n,
                    Field::Seq => cfg.seq = n,
                    Field::Image => cfg.image = n,
                },
                Err(message) => self.errors.set(field, message),
            }
        }
        if !self.errors.is_empty() {
            return None;
        }
        let catalog = Rc::clone(&self.catalog);
        let Some(model) = catalog.model(&self.inputs.model) else {
            self.problem = Some(format!("Unknown model “{}”: pick one from the list.", self.inputs.model));
            return None;
        };
        let Some(gpu) = catalog.gpu(&self.inputs.gpu) else {
            self.problem = Some(format!("Unknown GPU “{}”: pick one from the list.", self.inputs.gpu));
            return None;
        };
        match estimate(&model.spec, &cfg, &Overheads::default(), Some(gpu)) {
            Ok(estimate) => {
                Some(Report { estimate, model_name: model.name.to_string(), gpu_name: gpu.name.to_string(), input: self.input_field() })
            }
            Err(e) => {
                self.place(&e);
                None
            }
        }
    }

    /// Shows a core error next to the field it is about, else as a problem.
    fn place(&mut self, e: &Error) {
        let field = match e {
            Error::OutOfRange { field, .. } => Field::from_core(field),
            // The only inputs a preset model can reject are its input size.
            Error::NotApplicable(_) => self.input_field(),
            _ => None,
        };
        let message = sentence(&e.to_string());
        match field {
            Some(f) => self.errors.set(f, message),
            None => self.problem = Some(message),
        }
    }
}

/// Capitalises a core message and ends it with a full stop.
fn sentence(message: &str) -> String {
    let mut chars = message.chars();
    let mut out: String = chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default();
    if !out.is_empty() && !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
    out
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
