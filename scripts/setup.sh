#!/usr/bin/env bash
# Installs what vramfit's build and tests need, skipping what is already there.
# Usage: scripts/setup.sh [web] [test]   (no argument: both)
set -euo pipefail
cd "$(dirname "$0")/.."

want_web=0; want_test=0
[ $# -eq 0 ] && { want_web=1; want_test=1; }
for a in "$@"; do
  case "$a" in web) want_web=1 ;; test) want_test=1 ;; *) echo "setup.sh: unknown part '$a' (web|test)" >&2; exit 2 ;; esac
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

apt_missing=()
if [ "$want_test" -eq 1 ]; then
  command -v chromium >/dev/null || apt_missing+=(chromium)
  dpkg -s mesa-vulkan-drivers >/dev/null 2>&1 || apt_missing+=(mesa-vulkan-drivers)
  dpkg -s libvulkan1 >/dev/null 2>&1 || apt_missing+=(libvulkan1)
fi
if [ ${#apt_missing[@]} -gt 0 ]; then
  echo "setup: installing ${apt_missing[*]} (Debian)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${apt_missing[@]}" >/dev/null
fi

if [ "$want_web" -eq 1 ] || [ "$want_test" -eq 1 ]; then
  rustup target list --installed | grep -q '^wasm32-unknown-unknown$' || rustup target add wasm32-unknown-unknown
  # wasm-bindgen's CLI must equal the crate version pinned in Cargo.lock.
  if ! wasm-bindgen --version 2>/dev/null | grep -q '0.2.129'; then
    echo "setup: installing wasm-bindgen-cli 0.2.129 (about 4 minutes)"
    cargo install wasm-bindgen-cli --version 0.2.129 --locked --quiet
  fi
  [ -x tools/node_modules/.bin/wasm-opt ] || (cd tools && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ "$want_test" -eq 1 ]; then
  [ -d tests/e2e/node_modules/playwright-core ] || (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error)
fi
