#!/usr/bin/env bash
# Installs dependencies, builds k3 and starts `k3 serve` on the embedded trained demo model
# (models/k3-demo: a 3.8M-parameter Kimi K3 trained by tools/train/, written to the cache folder
# on first start; no downloads). Extra arguments go to `k3 serve` (e.g. --port 8080, --api-key KEY,
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
     -d '{"model":"k3-demo","messages":[{"role":"user","content":"Hello!"}],"max_tokens":64}'
   curl -s localhost:8000/v1/chat/completions -H 'content-type: application/json' -d '{"model":"k3-demo",
     "messages":[{"role":"user","content":"Will it rain in Tokyo on 2026-07-14?"}],"tools":[{"type":"function",
     "function":{"name":"get_weather","description":"Weather forecast for a city on a date.","parameters":
     {"type":"object","properties":{"city":{"type":"string"},"date":{"type":"string"}},"required":["city","date"]}}}]}'
   curl -sN localhost:8000/v1/messages -H 'content-type: application/json' \
     -d '{"model":"k3-demo","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"Hi"}]}'
   (a tiny model trained for an hour: it calls the right tool in the right form, but often with
    the wrong city or date; models/k3-demo/README.md has its scores)
TXT
exec "$k3" serve --cache-memory 512MiB "$@"
