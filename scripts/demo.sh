#!/usr/bin/env bash
# Installs dependencies, builds k3 and shows it working on the Kimi K3 tokenizer from ../shared.
# (k3 serve arrives with the frontend; until then the demo tokenizes and detokenizes a text.)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
k3=build/release/apps/k3/k3
model="${K3_SHARED_DIR:-../shared}/kimi/k3"
text='Kimi K3 says hello 👋 — 你好世界! getUserName() returns 12345.<|end_of_msg|>'
echo "== text:        $text"
ids=$(printf '%s' "$text" | "$k3" tokenize --model "$model")
echo "== token ids:   $ids"
echo "== token count: $(printf '%s' "$text" | "$k3" tokenize --model "$model" --count)"
echo "== decoded:     $(printf '%s' "$ids" | "$k3" detokenize --model "$model")"
echo "== more: $k3 --help, $k3 bench tokenizer"
