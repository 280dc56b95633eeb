//! The Benchmark tab's state: a plain type with an [`BenchAction`] enum and
//! a `Reducible` impl, tested natively like the calculator's.

use std::rc::Rc;

use yew::Reducible;

use super::model::{Adapter, Failure, FailureKind, Progress, Projection, Report, RunOutput};

/// Problem sizes offered (the module's size presets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Size {
    /// Safe on phones and integrated GPUs (matmul 256³): the default.
    #[default]
    Small,
    /// A laptop or desktop GPU (matmul 1024³).
    Default,
    /// A data-centre GPU (matmul 4096³).
    Large,
}

impl Size {
    /// Every size, in the order offered.
    pub const ALL: [Size; 3] = [Size::Small, Size::Default, Size::Large];

    /// The module's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Size::Small => "small",
            Size::Default => "default",
            Size::Large => "large",
        }
    }
}

/// The kernel families and layers, in the order offered.
pub const KERNELS: [&str; 7] = [
    "matmul",
    "conv2d",
    "layernorm",
    "softmax",
    "gelu",
    "attention",
    "adam",
];
/// The layers, in the order offered.
pub const LAYERS: [&str; 2] = ["transformer", "resnet"];

/// Where the tab is.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Phase {
    /// Downloading the module and asking for the adapter.
    #[default]
    Detecting,
    /// The adapter is known; nothing is running.
    Ready,
    /// A run is in progress.
    Running(Progress),
}

/// A finished run: the report and its exports.
#[derive(Clone, Debug, PartialEq)]
pub struct Finished {
    /// The parsed report.
    pub report: Report,
    /// The JSON export.
    pub json: String,
    /// The Markdown export.
    pub markdown: String,
}

/// The tab's state.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchState {
    /// Where the tab is.
    pub phase: Phase,
    /// The detected adapter, once known.
    pub adapter: Option<Adapter>,
    /// The GPU preset the user confirmed or picked for percentages of peak
    /// (`None`: unknown, no percentages).
    pub preset: Option<String>,
    /// Also run f16 (only offered with `shader-f16`).
    pub f16: bool,
    /// Problem sizes.
    pub size: Size,
    /// 1 warm-up and 3 runs per case instead of 3 and 10.
    pub quick: bool,
    /// The kernel families and layers chosen (names from [`KERNELS`] and [`LAYERS`]).
    pub chosen: Vec<&'static str>,
    /// The last finished run.
    pub finished: Option<Rc<Finished>>,
    /// The calculator's step at the measured rate.
    pub projection: Option<Projection>,
    /// Why the last detection or run failed (cancelling included).
    pub failure: Option<Failure>,
}

impl Default for BenchState {
    fn default() -> Self {
        Self {
            phase: Phase::Detecting,
            adapter: None,
            preset: None,
            f16: false,
            size: Size::Small,
            quick: false,
            chosen: KERNELS.iter().chain(LAYERS.iter()).copied().collect(),
            finished: None,
            projection: None,
            failure: None,
        }
    }
}

/// What can happen to the tab.
#[derive(Clone, Debug, PartialEq)]
pub enum BenchAction {
    /// The module answered `detect`; `preset` is the name-matched preset.
    Detected(Result<Adapter, Failure>, Option<String>),
    /// The user picked a preset (or none).
    SetPreset(Option<String>),
    /// The f16 choice.
    SetF16(bool),
    /// The size choice.
    SetSize(Size),
    /// The quick-run choice.
    SetQuick(bool),
    /// A kernel or layer ticked or not.
    Toggle(&'static str, bool),
    /// Start pressed and the run began.
    Started,
    /// The module reported progress.
    Progress(Progress),
    /// The run ended.
    Finished(Result<RunOutput, Failure>),
    /// The projection for the current configuration (or none).
    Projected(Option<Projection>),
}

impl BenchState {
    /// Whether Start can be pressed.
    pub fn can_start(&self) -> bool {
        self.phase == Phase::Ready && self.adapter.is_some() && !self.chosen.is_empty()
    }

    /// Whether f16 can run on this adapter.
    pub fn f16_available(&self) -> bool {
        self.adapter.as_ref().is_some_and(|a| a.shader_f16)
    }

    /// The JSON options for the module's `run`, for the calculator's `query`.
    pub fn run_options(&self, query: &str) -> String {
        let dtypes: Vec<&str> = if self.f16 && self.f16_available() {
            vec!["f32", "f16"]
        } else {
            vec!["f32"]
        };
        let kernels: Vec<&str> = self
            .chosen
            .iter()
            .copied()
            .filter(|k| KERNELS.contains(k))
            .collect();
        let layers: Vec<&str> = self
            .chosen
            .iter()
            .copied()
            .filter(|k| LAYERS.contains(k))
            .collect();
        serde_json::json!({
            "dtypes": dtypes, "kernels": kernels, "layers": layers,
            "size": self.size.name(), "quick": self.quick, "query": query,
        })
        .to_string()
    }
}

impl Reducible for BenchState {
    type Action = BenchAction;

    fn reduce(self: Rc<Self>, action: BenchAction) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            BenchAction::Detected(Ok(adapter), preset) => {
                next.f16 = adapter.shader_f16;
                next.adapter = Some(adapter);
                next.preset = preset;
                next.phase = Phase::Ready;
                next.failure = None;
            }
            BenchAction::Detected(Err(failure), _) => {
                next.phase = Phase::Ready;
                next.failure = Some(failure);
            }
            BenchAction::SetPreset(preset) => next.preset = preset,
            BenchAction::SetF16(f16) => next.f16 = f16,
            BenchAction::SetSize(size) => next.size = size,
            BenchAction::SetQuick(quick) => next.quick = quick,
            BenchAction::Toggle(name, on) => {
                next.chosen.retain(|k| *k != name);
                if on {
                    next.chosen.push(name);
                }
            }
            BenchAction::Started => {
                next.phase = Phase::Running(Progress::default());
                next.failure = None;
            }
            BenchAction::Progress(progress) => {
                if matches!(next.phase, Phase::Running(_)) {
                    next.phase = Phase::Running(progress);
                }
            }
            BenchAction::Finished(result) => {
                next.phase = Phase::Ready;
                match result.and_then(|out| Report::parse(&out.json).map(|report| (report, out))) {
                    Ok((report, out)) => {
                        next.finished = Some(Rc::new(Finished {
                            report,
                            json: out.json,
                            markdown: out.markdown,
                        }));
                        next.projection = None;
                    }
                    Err(failure) => {
                        // A module that trapped cannot run again until the page reloads.
                        if failure.kind == FailureKind::Crashed {
                            next.adapter = None;
                        }
                        next.failure = Some(failure);
                    }
                }
            }
            BenchAction::Projected(projection) => next.projection = projection,
        }
        Rc::new(next)
    }
}

impl Failure {
    /// A failure of `kind` with `message`.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// Whether the benchmark cannot run at all here (as opposed to one run
    /// failing): Start stays disabled and the CLI is suggested.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self.kind,
            FailureKind::NoWebgpu
                | FailureKind::NoAdapter
                | FailureKind::RequestDevice
                | FailureKind::LoadFailed
                | FailureKind::Crashed
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{BenchAction, BenchState, Phase, Size};
    use crate::bench::model::{Adapter, Failure, FailureKind, Progress, RunOutput};
    use std::rc::Rc;
    use yew::Reducible;

    fn ready(f16: bool) -> Rc<BenchState> {
        let adapter = Adapter {
            shader_f16: f16,
            ..Adapter::default()
        };
        Rc::new(BenchState::default()).reduce(BenchAction::Detected(Ok(adapter), None))
    }

    #[test]
    fn without_shader_f16_only_f32_runs_even_if_f16_was_asked_for() {
        let state = ready(false).reduce(BenchAction::SetF16(true));
        let options: serde_json::Value = serde_json::from_str(&state.run_options("v=1")).unwrap();
        assert_eq!(options["dtypes"], serde_json::json!(["f32"]));
        assert_eq!(options["size"], "small");
        let with = ready(true);
        assert!(with.f16, "f16 is on by default where it exists");
        let options: serde_json::Value = serde_json::from_str(&with.run_options("v=1")).unwrap();
        assert_eq!(options["dtypes"], serde_json::json!(["f32", "f16"]));
    }

    #[test]
    fn a_run_goes_from_progress_to_a_report_or_a_failure() {
        let state = ready(false)
            .reduce(BenchAction::SetSize(Size::Default))
            .reduce(BenchAction::Started);
        assert!(!state.can_start());
        let progress = Progress {
            done: 1,
            total: 4,
            label: "gelu f32".into(),
        };
        let state = state.reduce(BenchAction::Progress(progress.clone()));
        assert_eq!(state.phase, Phase::Running(progress));
        let cancelled = state.clone().reduce(BenchAction::Finished(Err(Failure::new(
            FailureKind::Cancelled,
            "cancelled",
        ))));
        assert!(cancelled.can_start() && cancelled.finished.is_none());
        assert_eq!(
            cancelled.failure.as_ref().map(|f| f.kind),
            Some(FailureKind::Cancelled)
        );
        let out = RunOutput {
            json: r#"{"schema":"vramfit.bench/1","results":[]}"#.into(),
            markdown: "## x".into(),
        };
        let done = state.reduce(BenchAction::Finished(Ok(out)));
        assert_eq!(
            done.finished.as_ref().map(|f| f.report.schema.as_str()),
            Some("vramfit.bench/1")
        );
    }

    #[test]
    fn no_webgpu_is_fatal_and_deselecting_everything_disables_start() {
        let state = Rc::new(BenchState::default()).reduce(BenchAction::Detected(
            Err(Failure::new(
                FailureKind::NoWebgpu,
                "navigator.gpu is missing",
            )),
            None,
        ));
        assert!(state.failure.as_ref().is_some_and(Failure::is_fatal));
        assert!(!state.can_start());
        let mut state = ready(false);
        for k in super::KERNELS.iter().chain(super::LAYERS.iter()) {
            state = state.reduce(BenchAction::Toggle(k, false));
        }
        assert!(!state.can_start());
    }
}
