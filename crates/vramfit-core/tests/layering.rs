//! The core's top-level modules depend on each other in one direction
//! (ARCHITECTURE.md, "The core's layers"): no module imports, directly or
//! through others, a module that imports it. Read from the sources: every
//! `crate::module` path outside comments and `#[cfg(test)]` code.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without its comments and its test module (which
/// sits at the end of the file).
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap();
    text.lines()
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names that follow `crate::` in `code`, a `{…}` group's first
/// segment of each path included.
fn crate_paths(code: &str) -> Vec<String> {
    paths_after(code, "crate::")
}

/// The names that follow `prefix` in `code`, a `{…}` group's first segment
/// of each path included.
fn paths_after(code: &str, prefix: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        // Only a path's start: `super::x` inside `crate::a::super::x` cannot occur,
        // but `crate::` must not match inside another identifier.
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group, split at commas outside nested braces.
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.push(std::mem::take(&mut item));
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            names.push(item);
        } else {
            names.push(rest.to_string());
        }
    }
    names
        .iter()
        .map(|n| {
            n.trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|n| !n.is_empty())
        .collect()
}

#[test]
fn the_core_modules_import_each_other_in_one_direction() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    // module -> the modules it names.
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let module_of = |path: &Path| -> Option<String> {
        let rel = path.strip_prefix(&src).unwrap();
        let first = rel.components().next()?.as_os_str().to_str()?;
        let name = first.trim_end_matches(".rs");
        (name != "lib").then(|| name.to_string())
    };
    let modules: BTreeSet<String> = files.iter().filter_map(|f| module_of(f)).collect();
    let mut stray = Vec::new();
    for file in &files {
        let Some(module) = module_of(file) else {
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for name in crate_paths(&code(&text)) {
            if name == module {
                continue;
            }
            if modules.contains(&name) {
                deps.entry(module.clone()).or_default().insert(name);
            } else {
                // A crate-root re-export hides which module it comes from.
                stray.push(format!("{}: crate::{name}", file.display()));
            }
        }
    }
    assert!(
        stray.is_empty(),
        "name the module, not the crate root's re-export: {stray:#?}"
    );
    assert_no_cycle(&modules, &deps);
    // The check reads real imports: the engine names the simulation.
    assert!(deps["session"].contains("simulate"), "{deps:#?}");
    assert_layers_hold(&modules, &deps);
}

/// ARCHITECTURE.md draws the core's layers: each module imports only from
/// the lines below its own, or from modules to its right on its line. Every
/// module is on the map, and the map holds.
fn assert_layers_hold(modules: &BTreeSet<String>, deps: &BTreeMap<String, BTreeSet<String>>) {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ARCHITECTURE.md"),
    )
    .unwrap();
    let map = doc
        .split("The core's modules")
        .nth(1)
        .and_then(|rest| rest.split("```").nth(1))
        .expect("ARCHITECTURE.md draws the core's modules in a code block");
    // module -> (line, position on the line); lines that start with a space explain.
    let mut place = BTreeMap::new();
    for (line, text) in map.lines().filter(|l| !l.starts_with(' ')).enumerate() {
        let names = text.split("  ").next().unwrap_or_default();
        for (position, name) in names.split_whitespace().enumerate() {
            place.insert(name.to_string(), (line, position));
        }
    }
    let missing: Vec<&String> = modules.iter().filter(|m| !place.contains_key(*m)).collect();
    assert!(
        missing.is_empty(),
        "not on ARCHITECTURE.md's map: {missing:?}"
    );
    for (module, named) in deps {
        for other in named {
            let (a, b) = (place[module], place[other]);
            assert!(
                b.0 > a.0 || (b.0 == a.0 && b.1 > a.1),
                "{module} imports {other}, which ARCHITECTURE.md's map puts above it"
            );
        }
    }
}

/// Fails naming a cycle of `deps` among `modules`, if there is one.
fn assert_no_cycle(modules: &BTreeSet<String>, deps: &BTreeMap<String, BTreeSet<String>>) {
    // Depth-first search for a path back to where it started.
    fn back_to(
        deps: &BTreeMap<String, BTreeSet<String>>,
        start: &str,
        at: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in deps.get(at).into_iter().flatten() {
            path.push(next.clone());
            if next == start {
                return true;
            }
            if seen.insert(next.clone()) && back_to(deps, start, next, path, seen) {
                return true;
            }
            path.pop();
        }
        false
    }
    for module in modules {
        let mut path = vec![module.clone()];
        if back_to(deps, module, module, &mut path, &mut BTreeSet::new()) {
            panic!("import cycle: {}", path.join(" -> "));
        }
    }
}

/// Inside a module folder (`models/`, `simulate/`, `share/`), the files
/// below its `mod.rs` depend on each other in one direction too: a model
/// family's module names the registry's types, the registry names the
/// families.
#[test]
fn sibling_modules_import_each_other_in_one_direction() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut checked = 0;
    for entry in std::fs::read_dir(&src).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let parent = dir.file_name().unwrap().to_str().unwrap().to_string();
        let children: BTreeSet<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .map(|p| p.file_stem().unwrap().to_str().unwrap().to_string())
            .filter(|n| n != "mod")
            .collect();
        let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for child in &children {
            let text = std::fs::read_to_string(dir.join(format!("{child}.rs"))).unwrap();
            let code = code(&text);
            let named = paths_after(&code, "super::")
                .into_iter()
                .chain(paths_after(&code, &format!("crate::{parent}::")));
            for name in named {
                if name != *child && children.contains(&name) {
                    deps.entry(child.clone()).or_default().insert(name);
                }
            }
        }
        assert_no_cycle(&children, &deps);
        checked += children.len();
    }
    assert!(checked > 10, "read {checked} sibling modules");
}

#[test]
fn the_path_reader_sees_groups_and_skips_comments_and_tests() {
    let text = "use crate::a::X;\nuse crate::{b::Y, c::{D, E}};\n// crate::f\n\
                fn g() { crate::h::i(); }\n#[cfg(test)]\nmod tests { use crate::j; }";
    assert_eq!(crate_paths(&code(text)), ["a", "b", "c", "h"]);
    assert_eq!(
        paths_after("use super::{d::E, f};\nx::super::g", "super::"),
        ["d", "f"]
    );
}
