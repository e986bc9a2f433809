#!/usr/bin/env bash
# Installs dependencies, builds k3 and starts `k3 serve` on the embedded demo checkpoint (a tiny
# Kimi K3-shaped model with random weights and a small byte-level vocabulary, written on first
# start; no downloads). Extra arguments go to `k3 serve` (e.g. --port 8080, --api-key KEY,
# --model DIR for a real checkpoint folder). Stop it with Ctrl-C (it drains running requests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
k3=build/release/apps/k3/k3
cat <<'TXT'
== k3 serve is starting; in another terminal try:
   curl -s localhost:8000/v1/models
   curl -s localhost:8000/v1/chat/completions -H 'content-type: application/json' \
     -d '{"model":"k3-demo","messages":[{"role":"user","content":"Hello!"}],"max_tokens":32}'
   curl -sN localhost:8000/v1/messages -H 'content-type: application/json' \
     -d '{"model":"k3-demo","max_tokens":32,"stream":true,"messages":[{"role":"user","content":"Hi"}]}'
   (the demo model's weights are random: the text is noise, the API around it is real)
TXT
exec "$k3" serve --cache-memory 512MiB "$@"
