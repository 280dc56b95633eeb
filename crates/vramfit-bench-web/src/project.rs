//! The calculator's configuration priced at the measured throughput.

use vramfit_bench::layers::{MeasuredThroughput, project_step_seconds};
use vramfit_bench::report::BenchReport;
use vramfit_core::share::{self, IMPORTED_MODEL};
use vramfit_core::{ModelSpec, Precision};

use crate::outcome::{Failure, FailureKind};

/// A projected step time.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Projection {
    /// Seconds per optimizer step (forward, backward, recomputation and
    /// accumulation, plus any offload traffic).
    pub step_seconds: f64,
    /// The measured rate used, FLOP/s.
    pub flops_per_s: f64,
    /// Whether that was the `f16` rate (half-precision training) or `f32`.
    pub half: bool,
}

/// Prices the configuration in the share-link `query` at the throughput
/// the layers reached in `report_json` (a `vramfit.bench/1` report).
///
/// # Errors
///
/// [`FailureKind::Invalid`] if the report does not parse or measured no
/// layer, or if the model cannot be built for the configuration.
pub fn project(report_json: &str, query: &str) -> Result<Projection, Failure> {
    let invalid = |message: String| Failure::new(FailureKind::Invalid, message);
    let report: BenchReport = serde_json::from_str(report_json)
        .map_err(|e| invalid(format!("the report does not parse: {e}")))?;
    let throughput: MeasuredThroughput = report
        .throughput
        .ok_or_else(|| invalid("the report has no layer measurement to project from".into()))?;
    let state = share::decode(&format!("?{}", query.trim_start_matches('?'))).state;
    let spec: ModelSpec = if state.model == IMPORTED_MODEL {
        let json = state.config_json.as_deref().unwrap_or_default();
        vramfit_core::hf::import(json)
            .map_err(|e| invalid(e.to_string()))?
            .spec
    } else {
        vramfit_core::model_preset(&state.model)
            .map_err(|e| invalid(e.to_string()))?
            .spec
    };
    let graph = spec
        .lower(&state.train)
        .map_err(|e| invalid(e.to_string()))?;
    let precision = state.train.precision;
    Ok(Projection {
        step_seconds: project_step_seconds(&graph, &state.train, &throughput),
        flops_per_s: throughput.flops_per_s(precision),
        half: precision != Precision::Fp32,
    })
}

#[cfg(test)]
mod tests {
    use super::project;
    use crate::outcome::FailureKind;
    use vramfit_bench::layers::MeasuredThroughput;
    use vramfit_bench::report::{AdapterReport, BenchReport};

    fn report(throughput: Option<MeasuredThroughput>) -> String {
        let adapter = AdapterReport {
            name: "test".into(),
            backend: "webgpu".into(),
            shader_f16: false,
            timestamp_query: false,
        };
        let mut report = BenchReport::new(adapter, "small", vec![], vec![]);
        report.throughput = throughput;
        report.to_json().unwrap()
    }

    #[test]
    fn a_faster_measurement_projects_a_shorter_step() {
        let slow = MeasuredThroughput {
            fp32_flops_per_s: 1e12,
            fp16_flops_per_s: 2e12,
        };
        let fast = MeasuredThroughput {
            fp32_flops_per_s: 4e12,
            fp16_flops_per_s: 8e12,
        };
        let query = "v=1&m=gpt2&b=8&s=512";
        let (a, b) = (
            project(&report(Some(slow)), query).unwrap(),
            project(&report(Some(fast)), query).unwrap(),
        );
        assert!(
            a.step_seconds > 0.0 && (a.step_seconds / b.step_seconds - 4.0).abs() < 1e-6,
            "{a:?} {b:?}"
        );
        // The first screen trains in AMP bf16: the f16 rate is used.
        assert!(a.half);
        assert_eq!(a.flops_per_s, 2e12);
    }

    #[test]
    fn no_layers_or_a_broken_report_is_an_invalid_request() {
        assert_eq!(
            project(&report(None), "v=1").unwrap_err().kind,
            FailureKind::Invalid
        );
        assert_eq!(project("{", "v=1").unwrap_err().kind, FailureKind::Invalid);
    }
}
