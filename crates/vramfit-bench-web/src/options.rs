//! The options the page sends to [`run`](crate::runner::run_plan), as JSON,
//! validated into a [`BenchPlan`].

use vramfit_bench::layers::{LayerConfig, LayerId};
use vramfit_bench::suite::{BenchPlan, KernelId, SizePreset};
use vramfit_bench::timing::TimingOptions;
use vramfit_bench::{BenchError, DType};
use vramfit_core::share;

/// What the page asks for. Every field may be omitted.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct RunOptions {
    /// `f32`, `f16`; empty means `f32` only.
    pub dtypes: Vec<String>,
    /// Kernel families (`matmul`, `conv2d`, ...); empty means all.
    pub kernels: Vec<String>,
    /// `transformer`, `resnet`; empty means none.
    pub layers: Vec<String>,
    /// `small` (default: safe on phones and integrated GPUs), `default`
    /// or `large`.
    pub size: String,
    /// 1 warm-up and 3 short runs per case instead of 3 and 10.
    pub quick: bool,
    /// The calculator's share-link query: the layers take its model (when
    /// a transformer preset), sequence length, batch and image size.
    pub query: String,
}

impl RunOptions {
    /// The plan these options describe.
    ///
    /// # Errors
    ///
    /// [`BenchError::InvalidChoice`] naming the bad value.
    ///
    /// # Example
    ///
    /// ```
    /// use vramfit_bench_web::options::RunOptions;
    ///
    /// let options: RunOptions = serde_json::from_str(r#"{"kernels":["matmul"],"quick":true}"#).unwrap();
    /// let plan = options.plan().unwrap();
    /// assert_eq!(plan.kernels.len(), 1);
    /// assert!(RunOptions { size: "huge".into(), ..RunOptions::default() }.plan().is_err());
    /// ```
    pub fn plan(&self) -> Result<BenchPlan, BenchError> {
        let size = if self.size.is_empty() {
            SizePreset::Small
        } else {
            self.size.parse()?
        };
        let dtypes: Vec<DType> = parse_all(&self.dtypes)?;
        let kernels: Vec<KernelId> = parse_all(&self.kernels)?;
        Ok(BenchPlan {
            dtypes: if dtypes.is_empty() {
                vec![DType::F32]
            } else {
                dtypes
            },
            kernels: if kernels.is_empty() && self.layers.is_empty() {
                KernelId::ALL.to_vec()
            } else {
                kernels
            },
            size,
            matmul_size: None,
            timing: if self.quick {
                TimingOptions::quick()
            } else {
                TimingOptions::default()
            },
            layers: parse_all::<LayerId>(&self.layers)?,
            layer_config: layer_config(&self.query, size),
        })
    }
}

/// Each of `names` parsed, duplicates dropped, order kept.
fn parse_all<T: std::str::FromStr<Err = BenchError> + PartialEq>(
    names: &[String],
) -> Result<Vec<T>, BenchError> {
    let mut out = Vec::new();
    for name in names {
        let value = name.trim().parse::<T>()?;
        if !out.contains(&value) {
            out.push(value);
        }
    }
    Ok(out)
}

/// The layers' sizes for the calculator's configuration in `query`: its
/// model when that is a transformer preset (GPT-2 otherwise), its sequence
/// length, batch and image. The `small` preset caps them (batch 1, 128
/// tokens, 112 px) so a phone finishes in seconds; `fit_to_device` scales
/// down further where the adapter's limits require it.
pub fn layer_config(query: &str, size: SizePreset) -> LayerConfig {
    let state = share::decode(&format!("?{}", query.trim_start_matches('?'))).state;
    let transformer = vramfit_core::model_preset(&state.model)
        .is_ok_and(|preset| matches!(preset.spec, vramfit_core::ModelSpec::Transformer(_)));
    let model = if transformer {
        state.model
    } else {
        LayerConfig::default().model
    };
    let as_usize = |v: u64| usize::try_from(v).unwrap_or(usize::MAX).max(1);
    let (batch, seq, image) = (
        as_usize(state.train.batch),
        as_usize(state.train.seq),
        as_usize(state.train.image),
    );
    match size {
        SizePreset::Small => LayerConfig {
            model,
            batch: 1,
            seq: seq.min(128),
            image: image.min(112),
        },
        _ => LayerConfig {
            model,
            batch,
            seq,
            image,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::{RunOptions, layer_config};
    use vramfit_bench::DType;
    use vramfit_bench::suite::{KernelId, SizePreset};

    #[test]
    fn empty_options_run_every_kernel_in_f32_at_the_small_size() {
        let plan = RunOptions::default().plan().unwrap();
        assert_eq!(plan.dtypes, [DType::F32]);
        assert_eq!(plan.kernels, KernelId::ALL);
        assert_eq!(plan.size, SizePreset::Small);
        assert!(plan.layers.is_empty());
    }

    #[test]
    fn layers_alone_run_no_kernels_and_bad_names_are_rejected() {
        let layers = RunOptions {
            layers: vec!["transformer".into()],
            ..RunOptions::default()
        };
        assert!(layers.plan().unwrap().kernels.is_empty());
        let bad = RunOptions {
            dtypes: vec!["bf16".into()],
            ..RunOptions::default()
        };
        assert!(bad.plan().unwrap_err().to_string().contains("bf16"));
    }

    #[test]
    fn layer_sizes_follow_the_calculator_and_are_capped_when_small() {
        let big = layer_config("v=1&m=gpt2-medium&b=4&s=1024", SizePreset::Default);
        assert_eq!(
            (big.model.as_str(), big.batch, big.seq),
            ("gpt2-medium", 4, 1024)
        );
        let small = layer_config("?v=1&m=gpt2-medium&b=4&s=1024", SizePreset::Small);
        assert_eq!((small.batch, small.seq), (1, 128));
        // A CNN in the calculator: the transformer block falls back to GPT-2.
        assert_eq!(
            layer_config("v=1&m=resnet50", SizePreset::Small).model,
            "gpt2"
        );
    }
}
