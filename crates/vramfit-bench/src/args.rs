//! The benchmark's command-line flags, parsed once here so that the
//! `vramfit bench` subcommand and the `vramfit-bench` binary agree.

use crate::error::{BenchError, Result};
use crate::suite::{BenchPlan, SizePreset};
use crate::timing::TimingOptions;

/// Usage of the benchmark flags.
pub const BENCH_USAGE: &str = "\
  --dtype f32,f16        element types (default both; f16 needs shader-f16)
  --kernels K,...        matmul,conv2d,layernorm,softmax,gelu,attention,adam (default all)
  --size S               small|default|large problem sizes (default: default; large = matmul 4096³)
  --matmul-size N        square matmul size, overriding the preset
  --layers L,...         transformer,resnet: layers forward+backward, saved bytes vs estimate
                         (alone, without --kernels, runs only the layers)
  --model M              transformer preset for the block's hidden size and heads (default gpt2)
  --seq N, --batch N     the layers' sequence length and batch (default 256 and 2)
  --image N              image side for the ResNet bottleneck (layer1.1, side N/4; default 224)
  --quick                1 warm-up and 3 short runs instead of 3 and 10
  --json                 print the vramfit.bench/1 JSON report instead of Markdown";

/// Parsed benchmark flags.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchArgs {
    /// What to run.
    pub plan: BenchPlan,
    /// Print JSON instead of Markdown.
    pub json: bool,
}

/// Parses the flags after `bench`.
///
/// # Errors
///
/// [`BenchError::InvalidChoice`] naming the flag's accepted values, for
/// unknown flags, missing values and bad values.
///
/// # Example
///
/// ```
/// use vramfit_bench::args::parse_bench_args;
///
/// let args: Vec<String> = ["--dtype", "f16", "--kernels", "matmul,gelu", "--json"].map(String::from).to_vec();
/// let parsed = parse_bench_args(&args).unwrap();
/// assert!(parsed.json);
/// assert_eq!(parsed.plan.kernels.len(), 2);
/// assert!(parse_bench_args(&["--size".to_string(), "huge".to_string()]).is_err());
/// ```
pub fn parse_bench_args(argv: &[String]) -> Result<BenchArgs> {
    let mut plan = BenchPlan::default();
    let mut json = false;
    let mut kernels_given = false;
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let (name, inline) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (flag.as_str(), None),
        };
        match name {
            "--json" => json = true,
            "--quick" => plan.timing = TimingOptions::quick(),
            "--dtype" | "--kernels" | "--size" | "--matmul-size" | "--layers" | "--model"
            | "--seq" | "--batch" | "--image" => {
                let value = inline.or_else(|| it.next().cloned()).ok_or_else(|| {
                    BenchError::InvalidChoice {
                        what: "flag value",
                        value: name.to_string(),
                        accepted: "a value after the flag",
                    }
                })?;
                match name {
                    "--dtype" => plan.dtypes = list(&value)?,
                    "--kernels" => {
                        plan.kernels = list(&value)?;
                        kernels_given = true;
                    }
                    "--size" => plan.size = value.parse::<SizePreset>()?,
                    "--layers" => plan.layers = list(&value)?,
                    "--model" => plan.layer_config.model = value,
                    "--seq" => plan.layer_config.seq = positive(name, value)?,
                    "--batch" => plan.layer_config.batch = positive(name, value)?,
                    "--image" => plan.layer_config.image = positive(name, value)?,
                    _ => {
                        let size = value.parse::<usize>().ok().filter(|&n| n > 0);
                        plan.matmul_size = Some(size.ok_or(BenchError::InvalidChoice {
                            what: "--matmul-size",
                            value,
                            accepted: "a positive whole number",
                        })?);
                    }
                }
            }
            _ => {
                return Err(BenchError::InvalidChoice {
                    what: "flag",
                    value: flag.clone(),
                    accepted: "--dtype, --kernels, --size, --matmul-size, --layers, --model, --seq, --batch, --image, --quick, --json",
                });
            }
        }
    }
    if !plan.layers.is_empty() && !kernels_given {
        plan.kernels.clear();
    }
    Ok(BenchArgs { plan, json })
}

/// `value` as a positive whole number for flag `what`.
fn positive(what: &str, value: String) -> Result<usize> {
    value
        .parse::<usize>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or(BenchError::InvalidChoice {
            what: if what == "--seq" {
                "--seq"
            } else if what == "--batch" {
                "--batch"
            } else {
                "--image"
            },
            value,
            accepted: "a positive whole number",
        })
}

/// A comma-separated list of `T`, without duplicates, in the given order.
fn list<T: std::str::FromStr<Err = BenchError> + PartialEq>(value: &str) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let parsed = item.parse::<T>()?;
        if !out.contains(&parsed) {
            out.push(parsed);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse_bench_args;
    use crate::{DType, suite::SizePreset};

    fn parse(args: &[&str]) -> Result<super::BenchArgs, crate::BenchError> {
        parse_bench_args(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn bench_args_parse_lists_and_inline_values() {
        let a = parse(&["--dtype=f32", "--size", "large", "--matmul-size=512"]).unwrap();
        assert_eq!(a.plan.dtypes, [DType::F32]);
        assert_eq!(a.plan.size, SizePreset::Large);
        assert_eq!(a.plan.matmul_size, Some(512));
    }

    #[test]
    fn bench_args_reject_unknown_flags_and_values() {
        assert!(parse(&["--bogus"]).is_err());
        assert!(
            parse(&["--kernels", "matmul,fft"])
                .unwrap_err()
                .to_string()
                .contains("fft")
        );
        assert!(parse(&["--matmul-size", "0"]).is_err());
        assert!(parse(&["--dtype"]).is_err());
        assert!(parse(&["--seq", "0"]).is_err());
        assert!(parse(&["--layers", "lstm"]).is_err());
    }

    #[test]
    fn bench_args_layers_alone_run_only_the_layers() {
        use crate::layers::LayerId;
        let a = parse(&[
            "--layers",
            "transformer,resnet",
            "--model",
            "gpt2-medium",
            "--seq",
            "128",
            "--batch=4",
            "--image",
            "112",
        ])
        .unwrap();
        assert_eq!(a.plan.layers, [LayerId::Transformer, LayerId::Resnet]);
        assert!(a.plan.kernels.is_empty());
        assert_eq!(
            (
                a.plan.layer_config.model.as_str(),
                a.plan.layer_config.seq,
                a.plan.layer_config.batch,
                a.plan.layer_config.image
            ),
            ("gpt2-medium", 128, 4, 112)
        );
        let both = parse(&["--layers", "resnet", "--kernels", "gelu"]).unwrap();
        assert_eq!(both.plan.kernels.len(), 1);
    }
}
