//! The flags of `estimate`, `plan`, `max-batch` and `gpus`, each defined
//! once: its name, value, help line, accepted values (taken from the core's
//! enums), default, the commands that take it and how it sets the arguments.
//! The help's option sections, the unknown-flag message and the parser
//! ([`crate::args`]) all read this one table — the way ripgrep defines its
//! flags (`crates/core/flags/`).
//!
//! The [`Section::Estimate`] flags are exactly the settings a share link
//! carries: [`Flag::link`] finds each one's key in [`share::KEYS`] (the tests
//! check that the two tables match and accept the same values).

mod estimate;
mod other;
mod value;

use crate::args::{CliError, EstimateArgs};
use vramfit_core::share::{self, Key};

/// A command that takes these flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmd {
    /// `vramfit estimate`.
    Estimate,
    /// `vramfit plan`.
    Plan,
    /// `vramfit max-batch`.
    MaxBatch,
    /// `vramfit gpus`.
    Gpus,
}

impl Cmd {
    /// Every such command, in the help's order.
    pub const ALL: &'static [Cmd] = &[Cmd::Estimate, Cmd::Plan, Cmd::MaxBatch, Cmd::Gpus];

    /// The command as typed.
    pub fn name(self) -> &'static str {
        match self {
            Cmd::Estimate => "estimate",
            Cmd::Plan => "plan",
            Cmd::MaxBatch => "max-batch",
            Cmd::Gpus => "gpus",
        }
    }

    /// The command typed as `name`, if it takes these flags.
    pub fn from_name(name: &str) -> Option<Cmd> {
        Cmd::ALL.iter().copied().find(|c| c.name() == name)
    }
}

/// What a flag's value is.
#[derive(Clone, Copy)]
pub enum Kind {
    /// No value: the flag alone turns something on.
    Switch,
    /// A whole number (`N`).
    Count,
    /// A fraction of something (`F`).
    Fraction,
    /// `on` or `off` (also `true|false|1|0`).
    OnOff,
    /// One of a list of ids: the value's name in the help, and the accepted
    /// ids `|`-separated (from the core's enums where it has one).
    Choice(&'static str, fn() -> String),
    /// A file to read: the value's name in the help.
    Path(&'static str),
    /// Text the setter or the command checks (a preset id, a URL): the
    /// value's name in the help.
    Text(&'static str),
}

impl Kind {
    /// The value's name in the help (`N`, `on|off`), none for a switch.
    pub fn value_name(self) -> Option<&'static str> {
        match self {
            Kind::Switch => None,
            Kind::Count => Some("N"),
            Kind::Fraction => Some("F"),
            Kind::OnOff => Some("on|off"),
            Kind::Choice(name, _) | Kind::Path(name) | Kind::Text(name) => Some(name),
        }
    }
}

/// Where the help lists a flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// The training configuration and the GPU: what a share link carries.
    Estimate,
    /// The device overheads (the GPU's unless set).
    Overhead,
    /// The planner's (and `max-batch`'s) own flags.
    Plan,
    /// Share links.
    Share,
    /// How the output is printed.
    Output,
}

impl Section {
    /// Every section, in the help's order.
    pub const ALL: &'static [Section] = &[
        Section::Estimate,
        Section::Overhead,
        Section::Plan,
        Section::Share,
        Section::Output,
    ];

    /// The heading, without the commands and the colon.
    pub fn heading(self) -> &'static str {
        match self {
            Section::Estimate => "ESTIMATE OPTIONS",
            Section::Overhead => {
                "OVERHEAD OPTIONS (the GPU's unless set; a share link carries none)"
            }
            Section::Plan => "PLAN OPTIONS",
            Section::Share => {
                "SHARE LINKS (the web calculator's URL: same model, GPU and settings, same numbers)"
            }
            Section::Output => "OUTPUT",
        }
    }

    /// The commands that take the section's flags (a flag may say otherwise).
    pub fn commands(self) -> &'static [Cmd] {
        match self {
            Section::Plan => &[Cmd::Plan],
            _ => Cmd::ALL,
        }
    }
}

/// Why a setter refused a value.
#[derive(Debug)]
pub enum Refused {
    /// What the value should have been: the parser words the message
    /// ("invalid value 'V' for --flag: expected ...").
    Expected(String),
    /// A message of the setter's own (a file that cannot be read).
    Error(CliError),
}

/// How a flag sets the arguments from its value (`""` for a switch).
pub type Setter = fn(&mut EstimateArgs, &str) -> Result<(), Refused>;

/// One flag: everything the help, the parser and the messages know of it.
#[derive(Clone, Copy)]
pub struct Flag {
    /// The flag as typed (`--batch`).
    pub name: &'static str,
    /// What its value is.
    pub kind: Kind,
    /// The help line after the accepted values (`\n` starts another line).
    pub help: &'static str,
    /// The default the help shows, if it shows one.
    pub default: Option<fn() -> String>,
    /// Where the help lists it.
    pub section: Section,
    /// The commands that take it.
    pub commands: &'static [Cmd],
    /// How it sets the arguments.
    pub set: Setter,
}

impl Flag {
    /// Whether `cmd` takes this flag.
    pub fn takes(&self, cmd: Cmd) -> bool {
        self.commands.contains(&cmd)
    }

    /// The share-link key that sets the same thing, if a link carries it.
    pub fn link(&self) -> Option<&'static Key> {
        share::KEYS.iter().find(|k| k.flag == self.name)
    }

    /// Sets `value` into `args`.
    ///
    /// # Errors
    /// [`CliError::Usage`] naming the flag, the value and what was expected.
    pub fn apply(&self, args: &mut EstimateArgs, value: &str) -> Result<(), CliError> {
        (self.set)(args, value).map_err(|why| match why {
            Refused::Expected(e) => CliError::Usage(format!(
                "invalid value '{value}' for {}: expected {e}",
                self.name
            )),
            Refused::Error(e) => e,
        })
    }

    /// The help row: flag and value, then accepted values, help, default and
    /// (when they differ from the section's) the commands in brackets.
    fn row(&self) -> String {
        let left = match self.kind.value_name() {
            Some(v) => format!("{} {v}", self.name),
            None => self.name.to_string(),
        };
        let mut text = match self.kind {
            Kind::Choice(_, accepted) if self.help.is_empty() => accepted(),
            Kind::Choice(_, accepted) => format!("{} {}", accepted(), self.help),
            _ => self.help.to_string(),
        };
        if let Some(default) = self.default {
            let at = text.find('\n').unwrap_or(text.len());
            text.insert_str(at, &format!(" (default {})", default()));
        }
        if self.commands != self.section.commands() {
            let at = text.find('\n').unwrap_or(text.len());
            text.insert_str(at, &format!(" {}", bracketed(self.commands)));
        }
        let mut lines = text.lines();
        let mut row = format!("  {left:<21}  {}\n", lines.next().unwrap_or_default());
        for more in lines {
            row.push_str(&format!("{:25}{more}\n", ""));
        }
        row
    }
}

/// `[plan, max-batch]`.
fn bracketed(commands: &[Cmd]) -> String {
    let names: Vec<&str> = commands.iter().map(|c| c.name()).collect();
    format!("[{}]", names.join(", "))
}

/// Every flag, in the help's order.
pub fn all() -> impl Iterator<Item = &'static Flag> {
    estimate::FLAGS.iter().chain(other::FLAGS)
}

/// The flag `name` if `cmd` takes it.
pub fn find(name: &str, cmd: Cmd) -> Option<&'static Flag> {
    all().find(|f| f.name == name && f.takes(cmd))
}

/// The `--from-url` flag, which the parser applies before the others.
pub const FROM_URL: &Flag = &other::FROM_URL;

/// The error for `arg`, which `cmd` does not take: it lists the flags `cmd` takes.
pub fn unknown(arg: &str, cmd: Cmd) -> CliError {
    let known: Vec<&str> = all().filter(|f| f.takes(cmd)).map(|f| f.name).collect();
    CliError::Usage(format!(
        "unknown flag '{arg}' for {}: expected one of {} (see `vramfit --help`)",
        cmd.name(),
        known.join(", ")
    ))
}

/// The help's option sections, each flag under its section's heading.
pub fn help() -> String {
    let names: Vec<&str> = Cmd::ALL.iter().map(|c| c.name()).collect();
    let mut out = format!(
        "Options are for {}; [brackets] name the commands when only some take one.\n",
        names.join(", ")
    );
    for &section in Section::ALL {
        out.push('\n');
        out.push_str(section.heading());
        if section.commands() != Cmd::ALL {
            out.push(' ');
            out.push_str(&bracketed(section.commands()));
        }
        out.push_str(":\n");
        for flag in all().filter(|f| f.section == section) {
            out.push_str(&flag.row());
        }
    }
    out
}
