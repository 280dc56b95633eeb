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
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let (name, inline) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (flag.as_str(), None),
        };
        match name {
            "--json" => json = true,
            "--quick" => plan.timing = TimingOptions::quick(),
            "--dtype" | "--kernels" | "--size" | "--matmul-size" => {
                let value = inline.or_else(|| it.next().cloned()).ok_or_else(|| BenchError::InvalidChoice {
                    what: "flag value",
                    value: name.to_string(),
                    accepted: "a value after the flag",
                })?;
                match name {
                    "--dtype" => plan.dtypes = list(&value)?,
                    "--kernels" => plan.kernels = list(&value)?,
                    "--size" => plan.size = value.parse::<SizePreset>()?,
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
                    accepted: "--dtype, --kernels, --size, --matmul-size, --quick, --json",
                });
            }
        }
    }
    Ok(BenchArgs { plan, json })
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
        assert!(parse(&["--kernels", "matmul,fft"]).unwrap_err().to_string().contains("fft"));
        assert!(parse(&["--matmul-size", "0"]).is_err());
        assert!(parse(&["--dtype"]).is_err());
    }
}
