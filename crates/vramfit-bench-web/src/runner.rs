//! Running a plan step by step: one kernel family or layer in one type at a
//! time, so the page gets progress between steps and a cancel or a lost
//! device ends the run at once (each step is raced against the
//! [`StopSignal`]).

use vramfit_bench::report::BenchReport;
use vramfit_bench::suite::{BenchPlan, run_suite};
use vramfit_bench::{DType, GpuContext};

use crate::outcome::Failure;
use crate::signal::StopSignal;

/// Where a run is, for the progress bar.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Progress {
    /// Steps finished.
    pub done: usize,
    /// Steps in the run.
    pub total: usize,
    /// What runs now (`matmul f32`) or just finished (`matmul tiled f32`).
    pub label: String,
}

/// The note the report carries when `f16` was asked for and could not run.
pub const NO_F16_NOTE: &str = "f16 skipped: the adapter lacks shader-f16";

/// One step: a single kernel family or layer in one type.
fn steps(plan: &BenchPlan, shader_f16: bool) -> Vec<(String, BenchPlan)> {
    let runnable = plan
        .dtypes
        .iter()
        .copied()
        .filter(|&d| d != DType::F16 || shader_f16);
    let mut out = Vec::new();
    for dtype in runnable.clone() {
        for &kernel in &plan.kernels {
            let step = BenchPlan {
                dtypes: vec![dtype],
                kernels: vec![kernel],
                layers: Vec::new(),
                ..plan.clone()
            };
            out.push((format!("{} {dtype}", kernel.name()), step));
        }
    }
    for dtype in runnable {
        for &layer in &plan.layers {
            let step = BenchPlan {
                dtypes: vec![dtype],
                kernels: Vec::new(),
                layers: vec![layer],
                ..plan.clone()
            };
            out.push((format!("{} {dtype}", layer.name()), step));
        }
    }
    out
}

/// Runs `plan` on `ctx` step by step, reporting [`Progress`] before and
/// after each step and stopping between and during steps when `signal`
/// stops; returns the combined report.
///
/// # Errors
///
/// The first step's error as a [`Failure`], or the stop (cancel, device
/// lost) as one.
pub async fn run_plan(
    ctx: &GpuContext,
    plan: &BenchPlan,
    clock: &dyn Fn() -> f64,
    signal: &StopSignal,
    progress: &mut dyn FnMut(&Progress),
) -> Result<BenchReport, Failure> {
    let summary = ctx.summary();
    let steps = steps(plan, summary.shader_f16);
    let total = steps.len();
    let mut results = Vec::new();
    let mut layers = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    if plan.dtypes.contains(&DType::F16) && !summary.shader_f16 {
        notes.push(NO_F16_NOTE.into());
    }
    for (done, (label, step)) in steps.into_iter().enumerate() {
        if let Some(stop) = signal.stopped() {
            return Err(Failure::from_stop(&stop));
        }
        progress(&Progress {
            done,
            total,
            label: label.clone(),
        });
        let mut finished = |r: &vramfit_bench::report::KernelResult| {
            progress(&Progress {
                done,
                total,
                label: format!("{} {}", r.name(), r.dtype),
            });
        };
        let report = signal
            .race(run_suite(ctx, &step, clock, &mut finished))
            .await
            .map_err(|stop| Failure::from_stop(&stop))?
            // A step that failed because the device was lost reports the loss.
            .map_err(|error| {
                signal.stopped().map_or_else(
                    || Failure::from_bench(&error),
                    |stop| Failure::from_stop(&stop),
                )
            })?;
        results.extend(report.results);
        layers.extend(report.layers);
        for note in report.notes {
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
    }
    progress(&Progress {
        done: total,
        total,
        label: String::new(),
    });
    let adapter = vramfit_bench::report::AdapterReport::from(&summary);
    Ok(BenchReport::new(adapter, plan.size.name(), results, notes).with_layers(layers))
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::{NO_F16_NOTE, run_plan, steps};
    use crate::options::RunOptions;
    use crate::outcome::FailureKind;
    use crate::signal::{Stop, StopSignal};
    use vramfit_bench::testing::gpu_or_skip;
    use vramfit_bench::timing::native_clock;

    fn options(json: &str) -> vramfit_bench::suite::BenchPlan {
        serde_json::from_str::<RunOptions>(json)
            .unwrap()
            .plan()
            .unwrap()
    }

    #[test]
    fn steps_split_by_type_kernel_and_layer_and_drop_f16_without_shader_f16() {
        let plan =
            options(r#"{"dtypes":["f32","f16"],"kernels":["matmul","gelu"],"layers":["resnet"]}"#);
        let names = |f16| {
            steps(&plan, f16)
                .into_iter()
                .map(|(label, _)| label)
                .collect::<Vec<_>>()
        };
        assert_eq!(names(false), ["matmul f32", "gelu f32", "resnet f32"]);
        assert_eq!(names(true).len(), 6);
    }

    #[test]
    fn a_quick_run_reports_progress_and_results_with_the_no_f16_note_when_needed() {
        let Some(ctx) = gpu_or_skip() else { return };
        let plan = options(r#"{"dtypes":["f32","f16"],"kernels":["gelu"],"quick":true}"#);
        let mut seen = Vec::new();
        let report = pollster::block_on(run_plan(
            &ctx,
            &plan,
            &native_clock,
            &StopSignal::new(),
            &mut |p| seen.push(p.clone()),
        ))
        .unwrap();
        let f16 = ctx.summary().shader_f16;
        assert_eq!(report.results.len(), if f16 { 2 } else { 1 });
        assert_eq!(report.notes.iter().any(|n| n == NO_F16_NOTE), !f16);
        let last = seen.last().unwrap();
        assert_eq!(last.done, last.total);
        assert!(seen.iter().any(|p| p.label == "gelu tanh f32"), "{seen:?}");
    }

    #[test]
    fn a_cancelled_signal_stops_the_run_before_the_first_step() {
        let Some(ctx) = gpu_or_skip() else { return };
        let signal = StopSignal::new();
        signal.stop(Stop::Cancelled);
        let plan = options(r#"{"kernels":["gelu"],"quick":true}"#);
        let failure =
            pollster::block_on(run_plan(&ctx, &plan, &native_clock, &signal, &mut |_| {}))
                .unwrap_err();
        assert_eq!(failure.kind, FailureKind::Cancelled);
    }
}
