#!/usr/bin/env bash
# Prepares one call of a lent GPU machine (x86-64, no network, no Rust there)
# for tests/gpu/device_all.sh, here on a machine with the toolchain:
#   .gpu/  vramfit-bench and the crate's GPU test binaries, built release;
#   .gl/   the Vulkan and GL loaders as Debian packages (unpacked there).
# Both are ignored by git; name them in the call's `carry`.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .gpu .gl
cargo build --release --locked -p vramfit-bench
cp "${CARGO_TARGET_DIR:-target}/release/vramfit-bench" .gpu/
# The test binaries that need a GPU (shaders.rs only validates WGSL here).
cargo test --release --locked -p vramfit-bench --no-run --message-format=json 2>/dev/null \
  | python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    exe, target = m.get("executable"), m.get("target", {})
    if m.get("reason") != "compiler-artifact" or not exe or target.get("name") == "shaders":
        continue
    if target.get("kind") == ["bin"]:
        continue
    shutil.copy(exe, ".gpu/t_" + target["name"])
    print("test binary:", target["name"])
'
if command -v apt-get >/dev/null; then
  o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64)
  mkdir -p /tmp/amd64/partial
  apt-get "${o[@]}" update -qq
  (cd .gl && apt-get "${o[@]}" download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
du -sh .gpu .gl
