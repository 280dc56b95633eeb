#!/usr/bin/env bash
# Runs the browser test (run.mjs) against dist/. Installs playwright-core from
# package-lock.json when missing and Chromium (Debian package) when absent.
# Build the page first: scripts/build-web.sh.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
  echo "Chromium not found; installing the Debian package"
  apt-get update -qq
  apt-get install -y -qq chromium
fi
want=$(node -p 'require("./package-lock.json").packages["node_modules/playwright-core"].version')
have=$(node -p 'try { require("./node_modules/playwright-core/package.json").version } catch { "" }')
if [ "$have" != "$want" ]; then
  npm ci --no-audit --no-fund
fi
exec node run.mjs "$@"
