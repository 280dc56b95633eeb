#!/usr/bin/env bash
# Runs the browser test (run.mjs) against dist/. Installs playwright-core and
# axe-core from package-lock.json when missing, and Chromium (and a CJK font
# for the Chinese screenshots) as Debian packages when absent. Builds the
# `vramfit` CLI, which the share-link checks compare the page with.
# Build the page first: scripts/build-web.sh.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
  echo "Chromium not found; installing the Debian package"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium
fi
# Screenshots of the Chinese page need a CJK font; the checks do not.
if command -v fc-list >/dev/null && [ -z "$(fc-list :lang=zh 2>/dev/null)" ]; then
  echo "No CJK font; installing fonts-wqy-microhei (Debian package) for the Chinese screenshots"
  { $SUDO apt-get install -y -qq fonts-wqy-microhei >/dev/null 2>&1 ||
    { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq fonts-wqy-microhei >/dev/null; }; } ||
    echo "warning: could not install a CJK font; Chinese screenshots will show boxes"
fi
for pkg in playwright-core axe-core; do
  want=$(node -p "require('./package-lock.json').packages['node_modules/$pkg'].version")
  have=$(node -p "try { require('./node_modules/$pkg/package.json').version } catch { '' }")
  if [ "$have" != "$want" ]; then
    npm ci --no-audit --no-fund
    break
  fi
done
# The page must show what `vramfit estimate --from-url` prints for the same link.
(cd ../.. && cargo build -q -p vramfit-cli)
target=${CARGO_TARGET_DIR:-target}
case "$target" in /*) ;; *) target="$(cd ../.. && pwd)/$target" ;; esac
export VRAMFIT_BIN="${VRAMFIT_BIN:-$target/debug/vramfit}"
exec node run.mjs "$@"
