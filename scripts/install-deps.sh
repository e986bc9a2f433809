#!/usr/bin/env bash
# Installs what k3serve needs on Debian 12 (as root, or with sudo): the C++ toolchain and
# libraries from Debian, and the npm reference implementations used by tests and benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

packages=(
  g++ cmake ninja-build python3 ccache     # build
  universal-ctags                          # tools/check_sizes.py: function lengths
  python3-numpy                            # reference/: the float64 model reference
  python3-torch                            # tools/train/: the demo model's training code (tests)
  libopenblas0-serial                      # torch's system BLAS: ~15x netlib's fp32 GEMM here
  python3-jsonschema                       # tests/structured: the independent schema validator
  libgtest-dev libgmock-dev libbenchmark-dev  # tests and micro-benchmarks
  nlohmann-json3-dev libcli11-dev          # JSON, command line
  libxxhash-dev                            # block hashes (src/cache)
  libssl-dev                               # HMAC-SHA256 thinking signatures (src/api)
  libboost-dev                             # Boost.Asio + Beast: the HTTP server (src/http)
  libzmq3-dev cppzmq-dev libmsgpack-cxx-dev  # KV events on ZeroMQ in msgpack (src/kvwire)
  clang libclang-rt-14-dev                 # libFuzzer targets (scripts/fuzz.sh)
)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then missing+=(nodejs npm); fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -d tools/peers/node_modules ] || [ tools/peers/package-lock.json -nt tools/peers/node_modules ]; then
  echo "== installing npm peers (tools/peers)"
  npm ci --prefix tools/peers --no-audit --no-fund --loglevel=error
fi

# The agent clients of tests/agents (Codex CLI, Claude Code, opencode, AI SDK), pinned by the lock.
# `npm ci` refuses that lock (opencode's per-platform optional packages are not all in it), so
# `npm install`, which still follows the pinned versions. Install scripts must run: opencode's and
# Claude Code's put the per-platform native binary (an optional dependency from the registry) in
# place of their launcher stubs; without them both CLIs exit 1.
if [ ! -d tests/agents/node_modules ] || [ tests/agents/package-lock.json -nt tests/agents/node_modules ]; then
  echo "== installing agent clients (tests/agents)"
  npm install --prefix tests/agents --no-audit --no-fund --loglevel=error
fi
