#!/usr/bin/env bash
# Builds the web page into dist/ without trunk:
#   cargo (profile `web`, wasm32) -> wasm-bindgen (--target web) -> wasm-opt -Oz
#   -> copy www/ assets (the page, the embeddable widget and its script, the
#   demo docs page), then prints the size of the .wasm (raw and gzip -9).
# The embeddable widget (embed.html) is its own binary of the web crate,
# bound and sized beside the calculator.
# Then the same for the benchmark module (crates/vramfit-bench-web, wgpu on
# WebGPU) into $DIST/bench/: the page imports it only when the Benchmark tab
# opens, so it is sized separately and not part of the first-load budget.
# And the measurement reader (crates/vramfit-measured-web) into $DIST/measured/,
# run by www/measured-worker.js in a Web Worker only when a file is chosen in
# "Compare with a measurement": sized separately, not part of the first load.
# Installs what it needs when missing: the wasm32 target, wasm-bindgen-cli at
# the version pinned in Cargo.toml, and binaryen (wasm-opt) from www/package-lock.json.
#
# Environment: DIST_DIR (default dist), CARGO_TARGET_DIR (default target),
# WASM_GZIP_BUDGET (bytes; when set, fail if the gzipped .wasm is larger),
# PUBLIC_BASE_URL (the site's public address, ending in /, written into the
# pages' {{BASE_URL}} for share links, embed code and Open Graph tags; empty:
# links use wherever the page is served from). scripts/publish.sh sets it.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# `cargo install` puts wasm-bindgen in $CARGO_HOME/bin, which need not be on PATH.
CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
mkdir -p "$CARGO_BIN"
export PATH="$CARGO_BIN:$PATH"

TARGET=wasm32-unknown-unknown
# WEB_PROFILE=dev builds a debug page (no wasm-opt; debug assertions and
# the test-only hooks they enable, e.g. `#panic-test`) for the browser suite.
PROFILE=${WEB_PROFILE:-web}
CRATE=vramfit-web
NAME=vramfit_web
DIST=${DIST_DIR:-dist}
PROFILE_DIR=$PROFILE
[ "$PROFILE" = dev ] && PROFILE_DIR=debug
WASM_IN="${CARGO_TARGET_DIR:-target}/$TARGET/$PROFILE_DIR/$CRATE.wasm"
# The Benchmark tab's module: a second wasm, loaded only when the tab opens.
BENCH_CRATE=vramfit-bench-web
BENCH_NAME=vramfit_bench_web
# A cdylib: the file name has underscores.
BENCH_WASM_IN="${CARGO_TARGET_DIR:-target}/$TARGET/$PROFILE_DIR/$BENCH_NAME.wasm"
# The measurement reader's module (a cdylib too), loaded by its worker.
MEASURED_CRATE=vramfit-measured-web
MEASURED_NAME=vramfit_measured_web
MEASURED_WASM_IN="${CARGO_TARGET_DIR:-target}/$TARGET/$PROFILE_DIR/$MEASURED_NAME.wasm"
# Must equal the `wasm-bindgen = "=…"` pin in the workspace Cargo.toml.
WASM_BINDGEN_VERSION=$(sed -n 's/^wasm-bindgen = "=\([0-9.]*\)"$/\1/p' Cargo.toml)

step() { printf '\n==> %s\n' "$*"; }

step "Checking tools"
if [ -z "$WASM_BINDGEN_VERSION" ]; then
  echo "error: no exact wasm-bindgen pin (wasm-bindgen = \"=X.Y.Z\") in Cargo.toml" >&2
  exit 1
fi
if ! rustup target list --installed | grep -qx "$TARGET"; then
  rustup target add "$TARGET"
fi
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  echo "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (takes a few minutes)"
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --locked
fi
want_binaryen=$(node -p 'require("./www/package-lock.json").packages["node_modules/binaryen"].version')
have_binaryen=$(node -p 'try { require("./www/node_modules/binaryen/package.json").version } catch { "" }')
if [ "$have_binaryen" != "$want_binaryen" ]; then
  (cd www && npm ci --no-audit --no-fund)
fi
WASM_OPT=www/node_modules/.bin/wasm-opt
echo "$(wasm-bindgen --version), $("$WASM_OPT" --version), $(rustc --version)"

# The debug page (WEB_PROFILE=dev) is for the crash check only: no benchmark module.
BENCH=1
[ "$PROFILE" = dev ] && BENCH=0
step "Compiling $CRATE (and $BENCH_CRATE unless dev) for $TARGET (profile $PROFILE)"
cargo build --profile "$PROFILE" --target "$TARGET" -p "$CRATE" -p "$MEASURED_CRATE"
# The first-edit module: the web crate without the app's rendering in the
# browser (feature `app`), in a cargo run of its own so the app's build
# does not take its features.
cargo build --profile "$PROFILE" --target "$TARGET" -p "$CRATE" --no-default-features --features first-edit --bin vramfit-first-edit
[ "$BENCH" = 1 ] && cargo build --profile "$PROFILE" --target "$TARGET" -p "$BENCH_CRATE"

rm -rf "$DIST"
mkdir -p "$DIST"
# bindgen IN_WASM OUT_DIR NAME [opt [FLAGS...]]: JS bindings for IN_WASM as
# NAME.js and NAME_bg.wasm in OUT_DIR, then wasm-opt -Oz (and FLAGS) on the
# .wasm when asked; remembers the size before wasm-opt in before_NAME.
bindgen() {
  local out="$2/${3}_bg.wasm"
  wasm-bindgen --target web --no-typescript --out-dir "$2" --out-name "$3" "$1"
  printf -v "before_$3" '%s' "$(wc -c <"$out")"
  if [ "${4:-}" = opt ]; then
    "$WASM_OPT" -Oz "${@:5}" --strip-debug --strip-producers "$out" -o "$out.opt"
    mv "$out.opt" "$out"
  fi
}

step "Generating JS bindings into $DIST/ and optimizing with wasm-opt -Oz"
WASM_OUT="$DIST/${NAME}_bg.wasm"
bindgen "$WASM_IN" "$DIST" "$NAME" "$([ "$PROFILE" != dev ] && echo opt)"
# The embeddable widget (embed.html): a second binary of the web crate, so a
# page embedding widgets does not load the calculator's UI.
WIDGET_NAME=vramfit_widget
bindgen "${CARGO_TARGET_DIR:-target}/$TARGET/$PROFILE_DIR/vramfit-widget.wasm" "$DIST" "$WIDGET_NAME" "$([ "$PROFILE" != dev ] && echo opt)"

# The first-edit module (boot.js loads it before the app's, on the
# prerendered page only): a third binary of the web crate.
FIRST_EDIT_NAME=vramfit_first_edit
# -ocimfs: wasm-opt merges a function into its only caller only up to 1000
# bytes (its default has no limit). A browser compiles each function on its
# first call, on the main thread, and optimizes the hot ones again on
# another, in time that grows with the function: merged, the simulation made
# 13-20 KB functions whose optimizing took 100-280 ms of CPU during the
# first edit on a 2-core machine (ARCHITECTURE.md, the first-edit module).
# Not for the app, whose edits after the first it slowed (4x CPU: a batch
# change painted in 34 ms instead of 27).
bindgen "${CARGO_TARGET_DIR:-target}/$TARGET/$PROFILE_DIR/vramfit-first-edit.wasm" "$DIST" "$FIRST_EDIT_NAME" "$([ "$PROFILE" != dev ] && echo opt)" -ocimfs 1000

# The Benchmark page (bench.html, framed by the app's Benchmark tab): a
# second binary of the web crate, so the calculator's wasm does not carry it.
PAGE_NAME=vramfit_bench_page
PAGE_WASM_IN="${CARGO_TARGET_DIR:-target}/$TARGET/$PROFILE_DIR/vramfit-bench-page.wasm"
if [ "$BENCH" = 1 ]; then
  step "Benchmark page into $DIST/ and module into $DIST/bench/ (loaded only by the Benchmark tab)"
  bindgen "$PAGE_WASM_IN" "$DIST" "$PAGE_NAME" opt
  bindgen "$BENCH_WASM_IN" "$DIST/bench" "$BENCH_NAME" opt
fi

step "Measurement reader into $DIST/measured/ (loaded by its worker when a file is chosen)"
bindgen "$MEASURED_WASM_IN" "$DIST/measured" "$MEASURED_NAME" "$([ "$PROFILE" != dev ] && echo opt)"

step "Copying page assets"
cp www/style.css www/demo.css www/noscript.css www/favicon.svg www/boot.js www/nomodule.js www/embed.js www/measured-worker.js "$DIST/"
if [ -f www/og-image.png ]; then cp www/og-image.png "$DIST/"; fi
bash scripts/pages.sh "$DIST" "${PUBLIC_BASE_URL:-}"

gz=$(gzip -9 -c "$WASM_OUT" | wc -c)
printf '\n%s\n' "Built $DIST/ ($(ls "$DIST" | tr '\n' ' '))"
# sizes NAME DIR: the .wasm (raw, before wasm-opt, gzip -9) and the .js of NAME in DIR.
sizes() {
  local wasm="$2/${1}_bg.wasm" js="$2/$1.js" before="before_$1"
  printf '%-28s %9s bytes raw (%s before wasm-opt), %8s bytes gzip -9\n' "$wasm" "$(wc -c <"$wasm")" "${!before}" "$(gzip -9 -c "$wasm" | wc -c)"
  printf '%-28s %9s bytes raw, %8s bytes gzip -9\n' "$js" "$(wc -c <"$js")" "$(gzip -9 -c "$js" | wc -c)"
}
sizes "$NAME" "$DIST"
printf 'First-edit module (the prerendered page loads it before the app):\n'
sizes "$FIRST_EDIT_NAME" "$DIST"
printf 'Embeddable widget (embed.html, not in the first load):\n'
sizes "$WIDGET_NAME" "$DIST"
echo "the measurement reader (its worker loads it when a file is chosen; not part of the first load):"
sizes "$MEASURED_NAME" "$DIST/measured"
if [ "$BENCH" = 1 ]; then
  printf 'Benchmark page and module (not in the first load):\n'
  sizes "$PAGE_NAME" "$DIST"
  sizes "$BENCH_NAME" "$DIST/bench"
fi
if [ -n "${WASM_GZIP_BUDGET:-}" ] && [ "$gz" -gt "$WASM_GZIP_BUDGET" ]; then
  echo "error: gzipped wasm is $gz bytes, over the budget of $WASM_GZIP_BUDGET" >&2
  exit 1
fi
