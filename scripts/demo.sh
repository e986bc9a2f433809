#!/usr/bin/env bash
# Installs dependencies, builds k3 and shows it working on the Kimi K3 tokenizer from ../shared.
# (k3 serve arrives with the frontend; until then the demo tokenizes and detokenizes a text and
# runs greedy generation on a tiny generated K3 checkpoint.)
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
tiny=build/demo-models/k3-tiny
if [ ! -f "$tiny/config.json" ]; then
  /usr/bin/python3 reference/make_checkpoint.py --family k3 --seed 1 --out "$tiny" >/dev/null
fi
echo "== k3 generate on a tiny generated K3 checkpoint (random weights, so the ids mean nothing):"
"$k3" generate --model "$tiny" --prompt-ids "1 5 9 13 100 200" --max-tokens 12 --ids --ignore-eos
echo "== more: $k3 --help, $k3 bench tokenizer, $k3 bench model, docs/model.md"
