#!/usr/bin/env bash
# Runs every test of vramfit: lints, core/CLI/bench/web unit and property
# tests (the bench crate's shader on a real Vulkan device: Mesa lavapipe),
# then builds the site and drives it in headless Chromium. The share-link
# decoder's fuzz target (fuzz/, nightly) is run by hand, not here.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

step() { printf '\n==> %s\n' "$*"; }

step "no HTML-string insertion (innerHTML and the like) in Rust or page scripts"
if grep -rnE 'from_html_unchecked|inner_html|innerHTML|outerHTML|insertAdjacentHTML|document\.write' crates www --include='*.rs' --include='*.js' --include='*.html' --exclude-dir=node_modules; then
  echo "error: build DOM nodes (Yew's html!, textContent, createElement) instead of parsing HTML strings" >&2
  exit 1
fi

step "rustfmt"
cargo fmt --all -- --check
step "clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo clippy -p vramfit-web -p vramfit-core -p vramfit-bench -p vramfit-bench-web --lib --target wasm32-unknown-unknown --locked -- -D warnings
# The page's first-edit module: the web crate without the app (see build-web.sh).
cargo clippy -p vramfit-web --no-default-features --features first-edit --bin vramfit-first-edit --target wasm32-unknown-unknown --locked -- -D warnings
step "native tests (core, CLI as a subprocess, bench shaders on Vulkan, web state)"
cargo test --workspace --locked
# The first-edit module's tests: its feature, not the workspace's default.
cargo test -p vramfit-web --no-default-features --features first-edit --lib --locked first_edit::
step "property tests again, 10 000 cases each (release; debug runs use 1 000)"
PROPTEST_CASES=10000 cargo test -p vramfit-core --release --locked --test properties --test parallel
step "dependency audit: licenses, bans, sources (cargo deny, deny.toml; offline)"
# The audit reads every package in Cargo.lock, including those only other
# platforms build (Windows, Android), which a Linux build never downloads:
# fetch them all first, or only a machine that fetched them before passes.
cargo fetch --locked
cargo deny --offline --locked check licenses bans sources
if cargo deny --locked fetch db >/dev/null 2>&1; then
  cargo deny --offline --locked check advisories
else
  echo "cargo deny: advisories SKIPPED: the RustSec advisory database could not be fetched (see SECURITY.md)"
fi
step "benchmarks compile"
cargo bench -p vramfit-core --no-run --locked --quiet
step "build the site (scripts/publish.sh: build-web.sh, then the published folder's checks)"
bash scripts/publish.sh --out dist
step "debug build of the page (for the browser suite's forced-panic check)"
WEB_PROFILE=dev DIST_DIR=dist-debug bash scripts/build-web.sh
step "browser end-to-end tests (headless Chromium)"
DEBUG_DIST=dist-debug bash tests/e2e/run.sh
step "all tests passed"
