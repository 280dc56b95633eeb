#!/usr/bin/env bash
# Builds the whole site — the calculator, the embeddable widget (embed.html,
# embed.js) and the demo docs page — as static files in one folder that any
# static host serves as it is (GitHub Pages, an object store,
# `python3 -m http.server`). Build only: it uploads nothing.
#
#   bash scripts/publish.sh --base-url https://you.github.io/vramfit/ [--out site]
#
# --base-url  the public address the site will have, ending in /. Share links
#             ("Copy link"), embed snippets and the Open Graph tags point there.
#             Without it, links point wherever the page is served from, and the
#             preview tags carry relative addresses.
# --out       the folder to write (default: site); it is replaced.
# --no-build  stamp and check a folder scripts/build-web.sh already built
#             (DIST_DIR, default dist) instead of compiling again.
#
# Then it checks the folder: every page has the Content-Security-Policy and no
# inline script it does not name by its hash, every file a page or script names is there, the base URL is
# in place; and writes .nojekyll (GitHub Pages would skip files starting with _).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out=site
base=""
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --base-url) base=${2:?--base-url needs a URL}; shift 2 ;;
    --base-url=*) base=${1#*=}; shift ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "publish: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ -n "$base" ] && [ "${base%/}" = "$base" ]; then
  base="$base/"
fi

if [ "$build" = 1 ]; then
  DIST_DIR="$out" PUBLIC_BASE_URL="$base" bash scripts/build-web.sh
else
  src=${DIST_DIR:-dist}
  [ -f "$src/index.html" ] || { echo "publish: $src/index.html is missing: run scripts/build-web.sh first" >&2; exit 1; }
  if [ "$(cd "$src" && pwd)" != "$(mkdir -p "$out" && cd "$out" && pwd)" ]; then
    rm -rf "$out"
    cp -r "$src" "$out"
  fi
  # Pages come from www/ again, stamped with the base URL (and the default
  # page rendered in, early.js inlined, as build-web.sh writes them).
  bash scripts/pages.sh "$out" "$base"
fi
touch "$out/.nojekyll"

printf '\n==> Checking %s/\n' "$out"
fail() { echo "publish: $*" >&2; exit 1; }
for page in index.html embed.html demo.html bench.html; do
  f="$out/$page"
  [ -f "$f" ] || fail "$page is missing"
  grep -q 'http-equiv="Content-Security-Policy"' "$f" || fail "$page has no Content-Security-Policy"
  # Every <script> must load a file or be named by its SHA-256 in the CSP
  # (early.js, inlined by build-web.sh); any other would be refused.
  node -e '
const fs = require("fs"), crypto = require("crypto");
const html = fs.readFileSync(process.argv[1], "utf8");
const csp = html.match(/http-equiv="Content-Security-Policy" content="([^"]+)"/)[1];
for (const [, attrs, code] of html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)) {
  if (/\bsrc=/.test(attrs)) continue;
  const hash = "sha256-" + crypto.createHash("sha256").update(code).digest("base64");
  if (!csp.includes("'"'"'" + hash + "'"'"'")) { console.error("an inline <script> the CSP does not name (" + hash + ")"); process.exit(1); }
}' "$f" || fail "$page has an inline <script> its Content-Security-Policy refuses"
  grep -q '{{BASE_URL}}' "$f" && fail "$page still has a {{BASE_URL}} placeholder"
  for ref in $(grep -oE '(src|href)="[^"#?:]+"' "$f" | sed -E 's/^(src|href)="//; s/"$//'); do
    [ -e "$out/$ref" ] || fail "$page refers to $ref, which is not in $out/"
  done
done
for file in vramfit_web.js vramfit_web_bg.wasm vramfit_first_edit.js vramfit_first_edit_bg.wasm vramfit_widget.js vramfit_widget_bg.wasm vramfit_bench_page.js vramfit_bench_page_bg.wasm boot.js embed.js style.css bench/vramfit_bench_web.js bench/vramfit_bench_web_bg.wasm; do
  [ -s "$out/$file" ] || fail "$file is missing or empty"
done
if [ -n "$base" ]; then
  grep -q "content=\"$base\"" "$out/index.html" || fail "the base URL is not in index.html"
fi
printf 'Published %s/ (%s files, %s KiB) for %s\n' "$out" "$(find "$out" -type f | wc -l)" "$(du -sk "$out" | cut -f1)" "${base:-wherever it is served}"
echo "Try it: python3 -m http.server -d $out 8080, then open http://127.0.0.1:8080/ (demo: /demo.html)"
