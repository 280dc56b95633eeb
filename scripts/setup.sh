#!/usr/bin/env bash
# Installs the system packages vramfit's tests need, skipping what is there:
# Debian's chromium (browser tests) and Mesa's Vulkan driver (lavapipe, for the
# shader tests), plus the wasm32 Rust target and cargo-deny (the dependency
# audit, pinned; built from source, a few minutes the first time).
# scripts/build-web.sh installs the web build tools itself (wasm-bindgen-cli,
# binaryen from npm).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

missing=()
command -v chromium >/dev/null || missing+=(chromium)
dpkg -s mesa-vulkan-drivers >/dev/null 2>&1 || missing+=(mesa-vulkan-drivers)
dpkg -s libvulkan1 >/dev/null 2>&1 || missing+=(libvulkan1)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]} (Debian packages)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
CARGO_DENY_VERSION=0.20.2
if [ "$(cargo deny --version 2>/dev/null)" != "cargo-deny $CARGO_DENY_VERSION" ]; then
  echo "setup: installing cargo-deny $CARGO_DENY_VERSION (crates.io)"
  cargo install cargo-deny --locked --version "$CARGO_DENY_VERSION"
fi
