#!/usr/bin/env bash
# Builds the web page into dist/ without trunk:
#   cargo (profile `web`, wasm32) -> wasm-bindgen (--target web) -> wasm-opt -Oz
#   -> copy www/ assets (the page, the embeddable widget and its script, the
#   demo docs page), then prints the size of the .wasm (raw and gzip -9).
# Then the same for the benchmark module (crates/vramfit-bench-web, wgpu on
# WebGPU) into $DIST/bench/: the page imports it only when the Benchmark tab
# opens, so it is sized separately and not part of the first-load budget.
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
if [ -d "$HOME/.cargo/bin" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi

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
cargo build --profile "$PROFILE" --target "$TARGET" -p "$CRATE"
[ "$BENCH" = 1 ] && cargo build --profile "$PROFILE" --target "$TARGET" -p "$BENCH_CRATE"

step "Generating JS bindings into $DIST/"
rm -rf "$DIST"
mkdir -p "$DIST"
wasm-bindgen --target web --no-typescript --out-dir "$DIST" --out-name "$NAME" "$WASM_IN"

step "Optimizing with wasm-opt -Oz"
WASM_OUT="$DIST/${NAME}_bg.wasm"
raw_before=$(wc -c <"$WASM_OUT")
if [ "$PROFILE" != dev ]; then
  "$WASM_OPT" -Oz --strip-debug --strip-producers "$WASM_OUT" -o "$WASM_OUT.opt"
  mv "$WASM_OUT.opt" "$WASM_OUT"
fi

# The Benchmark page (bench.html, framed by the app's Benchmark tab): a
# second binary of the web crate, so the calculator's wasm does not carry it.
PAGE_NAME=vramfit_bench_page
PAGE_WASM_IN="${CARGO_TARGET_DIR:-target}/$TARGET/$PROFILE_DIR/vramfit-bench-page.wasm"
PAGE_OUT="$DIST/${PAGE_NAME}_bg.wasm"
if [ "$BENCH" = 1 ]; then
  step "Benchmark page into $DIST/ (loaded only by the Benchmark tab)"
  wasm-bindgen --target web --no-typescript --out-dir "$DIST" --out-name "$PAGE_NAME" "$PAGE_WASM_IN"
  page_before=$(wc -c <"$PAGE_OUT")
  "$WASM_OPT" -Oz --strip-debug --strip-producers "$PAGE_OUT" -o "$PAGE_OUT.opt"
  mv "$PAGE_OUT.opt" "$PAGE_OUT"
fi

BENCH_OUT="$DIST/bench/${BENCH_NAME}_bg.wasm"
if [ "$BENCH" = 1 ]; then
  step "Benchmark module into $DIST/bench/ (loaded only by the Benchmark tab)"
  wasm-bindgen --target web --no-typescript --out-dir "$DIST/bench" --out-name "$BENCH_NAME" "$BENCH_WASM_IN"
  bench_before=$(wc -c <"$BENCH_OUT")
  "$WASM_OPT" -Oz --strip-debug --strip-producers "$BENCH_OUT" -o "$BENCH_OUT.opt"
  mv "$BENCH_OUT.opt" "$BENCH_OUT"
fi

step "Copying page assets"
BASE_URL=${PUBLIC_BASE_URL:-}
# The value lands in HTML attributes: only a plain http(s) URL ending in / is accepted.
if [ -n "$BASE_URL" ] && ! printf '%s' "$BASE_URL" | grep -Eq '^https?://[A-Za-z0-9._~:@!$()*+,;=/%-]+/$'; then
  echo "error: PUBLIC_BASE_URL '$BASE_URL' must be an http(s):// URL ending in /, without quotes or spaces" >&2
  exit 1
fi
for f in index.html embed.html demo.html bench.html; do
  sed "s|{{BASE_URL}}|$BASE_URL|g" "www/$f" >"$DIST/$f"
done
cp www/style.css www/demo.css www/noscript.css www/favicon.svg www/boot.js www/nomodule.js www/embed.js "$DIST/"
if [ -f www/og-image.png ]; then cp www/og-image.png "$DIST/"; fi

raw=$(wc -c <"$WASM_OUT")
gz=$(gzip -9 -c "$WASM_OUT" | wc -c)
js_gz=$(gzip -9 -c "$DIST/$NAME.js" | wc -c)
printf '\n%s\n' "Built $DIST/ ($(ls "$DIST" | tr '\n' ' '))"
printf '%-28s %9s bytes raw (%s before wasm-opt), %8s bytes gzip -9\n' "$WASM_OUT" "$raw" "$raw_before" "$gz"
printf '%-28s %9s bytes raw, %8s bytes gzip -9\n' "$DIST/$NAME.js" "$(wc -c <"$DIST/$NAME.js")" "$js_gz"
if [ "$BENCH" = 1 ]; then
  printf 'Benchmark page and module (not in the first load):\n'
  printf '%-28s %9s bytes raw (%s before wasm-opt), %8s bytes gzip -9\n' "$PAGE_OUT" "$(wc -c <"$PAGE_OUT")" "$page_before" "$(gzip -9 -c "$PAGE_OUT" | wc -c)"
  printf '%-28s %9s bytes raw, %8s bytes gzip -9\n' "$DIST/$PAGE_NAME.js" "$(wc -c <"$DIST/$PAGE_NAME.js")" "$(gzip -9 -c "$DIST/$PAGE_NAME.js" | wc -c)"
  printf '%-28s %9s bytes raw (%s before wasm-opt), %8s bytes gzip -9\n' "$BENCH_OUT" "$(wc -c <"$BENCH_OUT")" "$bench_before" "$(gzip -9 -c "$BENCH_OUT" | wc -c)"
  printf '%-28s %9s bytes raw, %8s bytes gzip -9\n' "$DIST/bench/$BENCH_NAME.js" "$(wc -c <"$DIST/bench/$BENCH_NAME.js")" "$(gzip -9 -c "$DIST/bench/$BENCH_NAME.js" | wc -c)"
fi
if [ -n "${WASM_GZIP_BUDGET:-}" ] && [ "$gz" -gt "$WASM_GZIP_BUDGET" ]; then
  echo "error: gzipped wasm is $gz bytes, over the budget of $WASM_GZIP_BUDGET" >&2
  exit 1
fi
