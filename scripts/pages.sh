#!/usr/bin/env bash
# Writes the site's pages into a built folder: www/'s HTML with the public
# base URL in place of {{BASE_URL}}, the default page rendered into
# index.html (vramfit-prerender, native), and early.js inline in it.
# scripts/build-web.sh runs it, and scripts/publish.sh --no-build to stamp
# a built folder with another base URL.
#
#   bash scripts/pages.sh DIR [BASE_URL]
#
# BASE_URL: the site's public address, ending in / (share links, embed code,
# Open Graph tags); empty: links use wherever the page is served from.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

DIST=${1:?usage: scripts/pages.sh DIR [BASE_URL]}
BASE_URL=${2:-}
step() { printf '\n==> %s\n' "$*"; }

# The value lands in HTML attributes: only a plain http(s) URL ending in / is accepted.
if [ -n "$BASE_URL" ] && ! printf '%s' "$BASE_URL" | grep -Eq '^https?://[A-Za-z0-9._~:@!$()*+,;=/%-]+/$'; then
  echo "error: the base URL '$BASE_URL' must be an http(s):// URL ending in /, without quotes or spaces" >&2
  exit 1
fi
step "Writing the pages into $DIST/ (base URL '${BASE_URL}')"
for f in index.html embed.html demo.html bench.html; do
  sed "s|{{BASE_URL}}|$BASE_URL|g" "www/$f" >"$DIST/$f"
done

step "Rendering the default page into $DIST/index.html (vramfit-prerender, native)"
cargo run --quiet --locked -p vramfit-web --features prerender --bin vramfit-prerender -- "$DIST/index.html"

# early.js runs before the first paint: inline, it costs the page no request
# (on a slow network, a round trip before anything paints or downloads). The
# Content-Security-Policy still allows no other inline script: it names this
# one by its SHA-256.
step "Inlining early.js into $DIST/index.html (its SHA-256 joins the page's script-src)"
node -e '
const fs = require("fs"), crypto = require("crypto");
const [page, script] = process.argv.slice(1);
const code = fs.readFileSync(script, "utf8");
if (code.includes("</script")) throw new Error(script + " must not contain </script");
const hash = "sha256-" + crypto.createHash("sha256").update(code).digest("base64");
let html = fs.readFileSync(page, "utf8");
const tag = "<script src=\"early.js\"></script>";
const policy = "script-src '"'"'self'"'"'";
if (!html.includes(tag) || !html.includes(policy)) throw new Error(page + " has no " + tag + " or no " + policy);
html = html.replace(tag, () => "<script>" + code + "</script>").replace(policy, () => policy + " '"'"'" + hash + "'"'"'");
fs.writeFileSync(page, html);
' "$DIST/index.html" www/early.js
