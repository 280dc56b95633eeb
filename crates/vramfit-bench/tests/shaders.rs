//! CPU-only checks of every WGSL file under the workspace's `shaders/`
//! directory: naga must parse and validate it, and its header comment must
//! list every binding the shader declares (see `shaders/README.md`).

#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "tests fail by panicking"
)]

use std::path::{Path, PathBuf};

/// The workspace's `shaders/` directory.
fn shaders_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shaders")
}

/// Every `.wgsl` file under `dir`, recursively, sorted for stable output.
fn wgsl_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(wgsl_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "wgsl") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// What naga is allowed to assume: WebGPU's baseline plus `f16`, which
/// kernels may use behind `enable f16;` when the adapter has `SHADER_F16`.
fn capabilities() -> naga::valid::Capabilities {
    naga::valid::Capabilities::default() | naga::valid::Capabilities::SHADER_FLOAT16
}

/// Parses and validates `source`, returning naga's rendered message on failure.
fn parse_and_validate(path: &str, source: &str) -> Result<naga::Module, String> {
    let module = naga::front::wgsl::parse_str(source)
        .map_err(|e| e.emit_to_string_with_path(source, path))?;
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities())
        .validate(&module)
        .map_err(|e| e.emit_to_string_with_path(source, path))?;
    Ok(module)
}

/// The leading `//` comment block of a WGSL file.
fn header(source: &str) -> String {
    source
        .lines()
        .map(str::trim)
        .take_while(|line| line.is_empty() || line.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Problems with `module`'s header comment, one message per problem.
fn header_problems(source: &str, module: &naga::Module) -> Vec<String> {
    let header = header(source);
    let mut problems = Vec::new();
    for required in ["Bindings:", "Workgroup size:"] {
        if !header.contains(required) {
            problems.push(format!("header has no `{required}` section"));
        }
    }
    for (_, var) in module.global_variables.iter() {
        if let Some(binding) = &var.binding {
            let entry = format!("group {}, binding {}:", binding.group, binding.binding);
            if !header.contains(&entry) {
                let name = var.name.as_deref().unwrap_or("?");
                problems.push(format!(
                    "header does not list `{entry}` (variable `{name}`)"
                ));
            }
        }
    }
    problems
}

#[test]
fn every_wgsl_file_parses_validates_and_documents_its_bindings() {
    let dir = shaders_dir();
    let files = wgsl_files(&dir);
    assert!(
        !files.is_empty(),
        "no .wgsl files found under {}",
        dir.display()
    );

    let mut failures = Vec::new();
    for path in &files {
        let name = path
            .strip_prefix(&dir)
            .unwrap_or(path)
            .display()
            .to_string();
        let source =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {name}: {e}"));
        match parse_and_validate(&name, &source) {
            Err(message) => failures.push(format!("{name}: naga rejected it:\n{message}")),
            Ok(module) => failures.extend(
                header_problems(&source, &module)
                    .into_iter()
                    .map(|problem| format!("{name}: {problem}")),
            ),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} shader(s) failed:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

#[test]
fn validation_reports_the_file_name_and_naga_message() {
    // Guards the failure path above: a broken shader must be reported with
    // its name, not just as "validation failed".
    let broken = "@compute @workgroup_size(1) fn main() { let x: f32 = 1u; }";
    let message = parse_and_validate("broken.wgsl", broken).unwrap_err();
    assert!(message.contains("broken.wgsl"), "{message}");
}

#[test]
fn header_check_catches_an_undocumented_binding() {
    let source = "// Bindings:\n// Workgroup size: 1\n\
                  @group(0) @binding(3) var<storage, read> x: array<f32>;\n\
                  @compute @workgroup_size(1) fn main() { _ = x[0]; }";
    let module = parse_and_validate("undocumented.wgsl", source).unwrap();
    let problems = header_problems(source, &module);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("group 0, binding 3:"), "{problems:?}");
}

#[test]
fn every_kernel_with_a_scalar_alias_also_validates_as_f16() {
    let dir = shaders_dir();
    let mut failures = Vec::new();
    let mut specialised = 0;
    for path in wgsl_files(&dir) {
        let name = path
            .strip_prefix(&dir)
            .unwrap_or(&path)
            .display()
            .to_string();
        let source = std::fs::read_to_string(&path).unwrap();
        if !source.contains(vramfit_bench::SCALAR_ALIAS_F32) {
            continue;
        }
        specialised += 1;
        let f16 = vramfit_bench::DType::F16
            .specialize("test", &source)
            .unwrap();
        if let Err(message) = parse_and_validate(&format!("{name} (f16)"), &f16) {
            failures.push(message);
        }
    }
    assert!(
        specialised >= 8,
        "only {specialised} kernels declare `{}`",
        vramfit_bench::SCALAR_ALIAS_F32
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The value of the `u32` constant `name` in `file`.
fn const_u32(file: &str, name: &str) -> u32 {
    let source = std::fs::read_to_string(shaders_dir().join(file)).unwrap();
    let module = naga::front::wgsl::parse_str(&source).unwrap();
    let (_, constant) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("{file} has no {name}"));
    match module.global_expressions[constant.init] {
        naga::Expression::Literal(naga::Literal::U32(value)) => value,
        ref other => panic!("{file}: {name} is {other:?}, not a u32 literal"),
    }
}

#[test]
fn constants_mirrored_on_the_host_agree_with_the_wgsl() {
    use vramfit_bench::kernels::{ATTENTION_MAX_HEAD_DIM, MATMUL_TILED_OUTPUTS};
    assert_eq!(const_u32("matmul_tiled.wgsl", "TM"), MATMUL_TILED_OUTPUTS);
    assert_eq!(const_u32("matmul_tiled.wgsl", "TN"), MATMUL_TILED_OUTPUTS);
    assert_eq!(
        const_u32("attention_flash.wgsl", "MAX_D") as usize,
        ATTENTION_MAX_HEAD_DIM
    );
}
