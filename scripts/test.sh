#!/usr/bin/env bash
# Installs dependencies, builds a preset (default: release) and runs every test with CTest.
# Usage: scripts/test.sh [PRESET] [extra ctest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
shift || true
scripts/install-deps.sh
scripts/build.sh "$preset"
ctest --preset "$preset" "$@"
