//! The flag table against what it generates and what it must agree with:
//! the help lists every flag, and each flag it lists parses for exactly the
//! commands it names; the unknown-flag message lists the same flags; the
//! estimate flags are the share link's keys and accept the same values.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use std::collections::BTreeSet;
use vramfit_cli::args::{CliError, Command, EstimateArgs, parse, usage};
use vramfit_cli::flags::{self, Cmd, Kind, Section};
use vramfit_core::share::{self, KEYS, ShareState};

/// One flag row of the help: the flag, its value's name, its text and the
/// commands the row (or else its section heading) names.
struct Row {
    flag: String,
    value: Option<String>,
    text: String,
    commands: Vec<Cmd>,
}

/// `[plan, max-batch]` at the end of `text`, as commands.
fn bracketed(text: &str) -> Option<Vec<Cmd>> {
    let inner = text.trim_end().strip_suffix(']')?;
    let (_, names) = inner.rsplit_once('[')?;
    names
        .split(", ")
        .map(Cmd::from_name)
        .collect::<Option<Vec<_>>>()
}

/// Walks the generated help: the option sections after the synopsis.
fn help_rows() -> Vec<Row> {
    let help = usage();
    let (_, options) = help.split_once("\nESTIMATE OPTIONS").unwrap();
    let mut rows = Vec::new();
    let mut section = Vec::new();
    for line in format!("ESTIMATE OPTIONS{options}").lines() {
        if let Some(heading) = line.strip_suffix(':') {
            section = bracketed(heading).unwrap_or_else(|| Cmd::ALL.to_vec());
            continue;
        }
        let Some(row) = line.strip_prefix("  --") else {
            continue;
        };
        let (left, text) = row.split_once("  ").unwrap();
        let mut left = left.split(' ');
        rows.push(Row {
            flag: format!("--{}", left.next().unwrap()),
            value: left.next().map(str::to_string),
            text: text.trim().to_string(),
            commands: bracketed(text).unwrap_or_else(|| section.clone()),
        });
    }
    rows
}

/// A value the row's flag takes, from the value's name (a choice: its first id).
fn sample(row: &Row, report: &str) -> Option<String> {
    let value = row.value.as_deref()?;
    Some(match value {
        "N" => "1".into(),
        "F" => "0.5".into(),
        "on|off" => "off".into(),
        "MODEL" => "gpt2".into(),
        "ID" => "rtx-4090".into(),
        "URL" => "https://example.org/vramfit/".into(),
        "LINK" => "?v=1&m=gpt2&b=4".into(),
        "FILE" => report.into(),
        "CONF" => "expandable_segments:True".into(),
        _ => {
            assert_eq!(value.len(), 1, "{}: unknown value name {value}", row.flag);
            row.text.split(['|', ' ']).next().unwrap().to_string()
        }
    })
}

/// What every command needs before the flag under test.
fn base(cmd: Cmd) -> Vec<String> {
    let extra: &[&str] = match cmd {
        Cmd::Plan => &["--gpu", "rtx-4090", "--target-batch", "8"],
        Cmd::MaxBatch => &["--gpu", "rtx-4090"],
        Cmd::Estimate | Cmd::Gpus => &[],
    };
    [cmd.name(), "--model", "gpt2"]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
}

fn is(cmd: Cmd, parsed: &Command) -> bool {
    matches!(
        (cmd, parsed),
        (Cmd::Estimate, Command::Estimate(_))
            | (Cmd::Plan, Command::Plan(_))
            | (Cmd::MaxBatch, Command::MaxBatch(_))
            | (Cmd::Gpus, Command::Gpus(_))
    )
}

/// A file every `FILE` flag reads: a `vramfit bench --json` report reduced
/// to the part `plan --bench-report` reads, with the two peaks `estimate
/// --measured` needs of `memory_stats()` JSON.
fn bench_report() -> String {
    let dir = std::env::temp_dir().join(format!("vramfit-flags-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bench.json");
    std::fs::write(
        &path,
        r#"{"throughput": {"fp32_flops_per_s": 1e12, "fp16_flops_per_s": 2e12},
            "allocated_bytes.all.peak": 1000, "reserved_bytes.all.peak": 2000}"#,
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn every_flag_the_help_lists_parses_for_the_commands_it_names_and_only_those() {
    let report = bench_report();
    let rows = help_rows();
    for row in &rows {
        for &cmd in Cmd::ALL {
            let mut argv = base(cmd);
            argv.push(row.flag.clone());
            argv.extend(sample(row, &report));
            let parsed = parse(&argv);
            if row.commands.contains(&cmd) {
                let parsed = parsed.unwrap_or_else(|e| panic!("{argv:?}: {e}"));
                assert!(is(cmd, &parsed), "{argv:?} parsed as {parsed:?}");
            } else {
                let Err(err) = parsed else {
                    panic!("{argv:?} should be refused");
                };
                let err = err.to_string();
                let unknown = format!("unknown flag '{}' for {}", row.flag, cmd.name());
                assert!(
                    err.starts_with(&unknown) || err.starts_with("--url is for estimate"),
                    "{argv:?}: {err}"
                );
            }
        }
    }
    // The ESTIMATE OPTIONS are every estimating command's.
    let estimate: Vec<&Row> = rows
        .iter()
        .take_while(|r| r.flag != "--cuda-loading")
        .collect();
    assert!(estimate.len() > 20 && estimate.iter().all(|r| r.commands == Cmd::ALL));
}

#[test]
fn the_help_lists_each_flag_once_and_the_unknown_flag_message_the_same_flags() {
    let rows = help_rows();
    let listed: Vec<&str> = rows.iter().map(|r| r.flag.as_str()).collect();
    let table: Vec<&str> = flags::all().map(|f| f.name).collect();
    assert_eq!(listed, table);
    for &cmd in Cmd::ALL {
        let mut argv = base(cmd);
        argv.push("--frobnicate".into());
        let err = parse(&argv).unwrap_err().to_string();
        let (_, list) = err.split_once("expected one of ").unwrap();
        let list = list.trim_end_matches(" (see `vramfit --help`)");
        let named: BTreeSet<&str> = list.split(", ").collect();
        let help: BTreeSet<&str> = rows
            .iter()
            .filter(|r| r.commands.contains(&cmd))
            .map(|r| r.flag.as_str())
            .collect();
        assert_eq!(named, help, "{}", cmd.name());
    }
}

#[test]
fn the_estimate_options_are_the_share_links_keys() {
    let section: BTreeSet<&str> = flags::all()
        .filter(|f| f.section == Section::Estimate)
        .map(|f| f.name)
        .collect();
    let keys: BTreeSet<&str> = KEYS.iter().map(|k| k.flag).collect();
    assert_eq!(section, keys);
    for f in flags::all() {
        assert_eq!(
            f.link().is_some(),
            f.section == Section::Estimate,
            "{}",
            f.name
        );
    }
}

/// How the CLI took `flag value`: `Some(args)` accepted, `None` refused as
/// an invalid value; a cross-setting error (`--sp on` without `--tp`)
/// counts as accepted, with nothing to compare.
fn cli(flag: &str, value: Option<&str>) -> Option<Option<EstimateArgs>> {
    let mut argv: Vec<String> = [
        "estimate",
        "--model",
        "gpt2",
        "--gpu",
        "rtx-4090",
        "--precision",
        "amp-bf16",
        flag,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    argv.extend(value.map(str::to_string));
    match parse(&argv) {
        Ok(Command::Estimate(a)) => Some(Some(*a)),
        Err(CliError::Core(_)) => Some(None),
        Err(CliError::Usage(m)) if m.starts_with("invalid value") => None,
        other => panic!("{argv:?}: {other:?}"),
    }
}

/// The values to try for a flag of this kind.
fn samples(kind: Kind) -> Vec<String> {
    let fixed: &[&str] = match kind {
        Kind::Count => &[
            "0",
            "1",
            "2",
            "+5",
            "-1",
            "abc",
            "",
            "1024",
            "1025",
            "65536",
            "65537",
            "100000",
            "100001",
            "16777216",
            "16777217",
            "1099511627776",
            "1099511627777",
        ],
        Kind::Fraction => &["0", "0.25", "1", "1.5", "-0.5", "nan", "inf", "abc", ""],
        Kind::OnOff => &["on", "off", "true", "false", "1", "0", "yes", ""],
        Kind::Choice(_, _) => &[
            "every-3",
            "every-0",
            "every-65536",
            "every-65537",
            "native",
            "bogus",
            "",
        ],
        _ => &[],
    };
    let mut v: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
    if let Kind::Choice(_, accepted) = kind {
        v.extend(accepted().split('|').map(str::to_string));
    }
    v
}

/// The link's setting for `key` in a state (none when it is the default).
fn setting(state: &ShareState, key: &str) -> Option<String> {
    state
        .settings()
        .into_iter()
        .find(|s| s.key == key)
        .map(|s| s.value)
}

#[test]
fn each_estimate_flag_accepts_what_its_link_key_accepts() {
    for flag in flags::all() {
        let Some(key) = flag.link() else { continue };
        let values: Vec<String> = match (flag.kind, key.key) {
            // The CLI checks the model and the GPU when the command runs (a
            // model may be a config.json path): compare the presets only.
            (_, "m") => vec!["gpt2".into(), "resnet50".into()],
            (_, "g") => vec!["a100-80gb".into(), "custom-48".into()],
            (Kind::Switch, _) => vec!["1".into()],
            (kind, _) => samples(kind),
        };
        for v in values {
            let typed = match flag.kind {
                Kind::Switch => None,
                _ => Some(v.as_str()),
            };
            // `--weights fp16` is the model's precision: the link has `p` for that.
            if key.key == "w" && v.parse::<vramfit_core::Precision>().is_ok() {
                continue;
            }
            let decoded = share::decode(&format!("?v=2&{}={}", key.key, share::percent_encode(&v)));
            let by_link = decoded.warnings.is_empty();
            let by_cli = cli(flag.name, typed);
            assert_eq!(
                by_cli.is_some(),
                by_link,
                "{} {v:?} / {}={v:?}",
                flag.name,
                key.key
            );
            if let Some(Some(a)) = by_cli {
                let state = ShareState {
                    model: a.model,
                    gpu: a.gpu.unwrap(),
                    train: a.config,
                    serve: a.serve,
                    config_json: None,
                };
                assert_eq!(
                    setting(&state, key.key),
                    setting(&decoded.state, key.key),
                    "{} {v:?}",
                    flag.name
                );
            }
        }
    }
}
