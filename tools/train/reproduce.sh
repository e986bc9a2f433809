#!/usr/bin/env bash
# Reproduces the demo model and its draft from this repository alone, in one command (~85 min on
# 2 cores): data, the target (60 min), its loss plot, its held-out scores through the live server,
# the distillation data (the target's greedy replies), the draft (15 min) and the draft's chain
# agreement with the target. Seeded; the time-limited schedules make the step counts, and so the
# scores within noise, depend on the machine's speed.
#
#   tools/train/reproduce.sh [OUT_DIR]        (default /tmp/k3-demo-run; K3=path/to/k3 to override)
#
# To ship the results: copy OUT_DIR/k3-demo/* to models/k3-demo/ (with OUT_DIR/k3-demo.log.jsonl
# as training_log.jsonl) and OUT_DIR/k3-demo-draft/* to models/k3-demo-draft/, then rebuild `k3`
# (the target is embedded in the binary).
set -euo pipefail
cd "$(dirname "$0")/../.."
k3=${K3:-build/release/apps/k3/k3}
out=${1:-/tmp/k3-demo-run}
py=/usr/bin/python3
mkdir -p "$out"
stage() { echo "== $(date +%H:%M:%S) $*"; }

stage "data (make_data.py)"
$py tools/train/make_data.py --k3 "$k3" --out "$out/data" --train 24000 --heldout 500 --seed 0
stage "target (train.py, 60 min)"
$py tools/train/train.py --data "$out/data" --out "$out/k3-demo" --steps 5000 --minutes 60 --batch-tokens 3072 \
  --threads 1 --ranks 2 --seed 0 --log-every 10 --eval-every 200 --eval-rows 100
$py tools/train/plot_loss.py --log "$out/k3-demo.log.jsonl" --png "$out/k3-demo/loss.png"
stage "held-out scores through k3 serve and the official clients"
node tests/demo_model/demo_eval_test.mjs --k3 "$k3" --model "$out/k3-demo" --work "$out/eval" || true
stage "distillation data (the target's greedy replies through k3 serve)"
$py tools/train/distill.py --k3 "$k3" --target "$out/k3-demo" --data "$out/data" --out "$out/distill" \
  --train 3000 --heldout 200
stage "draft (train.py --shape draft, 15 min)"
$py tools/train/train.py --shape draft --data "$out/distill" --out "$out/k3-demo-draft" --steps 5000 --minutes 15 \
  --batch-tokens 3072 --threads 1 --ranks 2 --seed 0 --log-every 10 --eval-every 200 --eval-rows 100
stage "draft agreement per chain position"
$py tools/train/draft_agreement.py --draft "$out/k3-demo-draft" --target "$out/k3-demo" --data "$out/distill" \
  --n 200 --json "$out/agreement.json"
stage "done: $out"
