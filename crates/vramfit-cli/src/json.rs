//! The `--json` outputs that carry the core's typed messages. Each keeps,
//! next to the typed value, the English sentence earlier versions printed
//! under the old key (`rank_note`; a plan's `tradeoff`, the result's
//! `warning`, each advice's `text`), so existing readers keep working.

use crate::words;
use serde::Serialize;
use serde_json::{Value, json};
use vramfit_core::Estimate;
use vramfit_core::measured::Comparison;
use vramfit_core::plan::{Advice, PlanResult};

/// An estimate as `vramfit.estimate/1` JSON: the core's fields, then `rank_note`.
#[derive(Serialize)]
struct EstimateJson<'a> {
    #[serde(flatten)]
    estimate: &'a Estimate,
    rank_note: Option<String>,
    /// `--measured`: the comparison, with each difference worded.
    #[serde(skip_serializing_if = "Option::is_none")]
    measured: Option<MeasuredJson<'a>>,
}

/// A comparison with a measurement and its differences in words.
#[derive(Serialize)]
struct MeasuredJson<'a> {
    #[serde(flatten)]
    comparison: &'a Comparison,
    differences_text: Vec<String>,
}

/// The JSON of an estimate, on one line, with the comparison with a
/// measurement under `measured` when there is one.
///
/// # Errors
/// A serialization failure, as its message.
pub fn estimate(e: &Estimate, measured: Option<&Comparison>) -> Result<String, String> {
    serde_json::to_string(&EstimateJson {
        estimate: e,
        rank_note: e.rank.as_ref().map(words::rank_note),
        measured: measured.map(|c| MeasuredJson {
            comparison: c,
            differences_text: c
                .differences
                .iter()
                .map(crate::measured::difference)
                .collect(),
        }),
    })
    .map_err(|err| err.to_string())
}

/// The `vramfit.plan/1` JSON of a planner run and its advice.
pub fn plan(model: &str, gpu: &str, result: &PlanResult, advice: &[Advice]) -> Value {
    let mut result_json = json!(result);
    if let Some(map) = result_json.as_object_mut() {
        map.insert(
            "warning".into(),
            result.uneven.as_ref().map(words::uneven).into(),
        );
        if let Some(plans) = map.get_mut("plans").and_then(Value::as_array_mut) {
            for (p, v) in result.plans.iter().zip(plans) {
                if let Some(plan) = v.as_object_mut() {
                    plan.insert("tradeoff".into(), words::tradeoff(&p.tradeoffs).into());
                }
            }
        }
    }
    let advice: Vec<Value> = advice
        .iter()
        .map(|a| {
            let mut v = json!(a);
            if let Some(map) = v.as_object_mut() {
                map.insert("text".into(), words::advice(a).into());
            }
            v
        })
        .collect();
    json!({"schema": "vramfit.plan/1", "model": model, "gpu": gpu, "result": result_json, "advice": advice})
}
