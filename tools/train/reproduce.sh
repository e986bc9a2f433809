#!/usr/bin/env bash
# Reproduces the demo model and its draft from this repository alone, in one command: data, the
# target, its loss plot, its held-out scores through the live server, the distillation data (the
# target's greedy replies), the draft (15 min on the CPU) and the draft's chain agreement with the
# target, then an EAGLE-3 head over the target's hidden states (50 min on the CPU) and its chain
# agreement. Seeded; GPU kernels and the time-limited CPU schedule make the scores reproducible within
# noise, not bit for bit.
#
#   tools/train/reproduce.sh [--gpu] [OUT_DIR]    (default /tmp/k3-demo-run; K3=path/to/k3 to override)
#
# --gpu: the shipped model's recipe (since stop 33): 200,000 conversations with copy practice, the
#   wide shape (sizes.wide_sizes), 64 Ki-token batches on one CUDA device, 516 steps then a warm
#   restart of 523 (stop 31), then a third run of 779 steps on 200,000 conversations with
#   --variety as well (stop 33; 113 M tokens in all, ~17 min on one H200; tools/train/README.md
#   "GPU runs"). PYTHON= the interpreter whose torch sees the device.
# without it: the one-hour recipe on 2 CPU cores (tiny shape, 24,000 conversations; the model
#   shipped at stops 29-30, ~85 min in all).
#
# To ship the results: copy OUT_DIR/k3-demo/* to models/k3-demo/ (with OUT_DIR/k3-demo.log.jsonl
# as training_log.jsonl), OUT_DIR/k3-demo-draft/* to models/k3-demo-draft/ and OUT_DIR/k3-demo-eagle3/*
# to models/k3-demo-eagle3/, then rebuild `k3`
# (the target is embedded in the binary).
set -euo pipefail
cd "$(dirname "$0")/../.."
gpu=0
if [ "${1:-}" = "--gpu" ]; then gpu=1; shift; fi
k3=${K3:-build/release/apps/k3/k3}
out=${1:-/tmp/k3-demo-run}
py=${PYTHON:-/usr/bin/python3}
mkdir -p "$out"
distill_data="$out/data"  # the prompts the draft's distillation replies to
stage() { echo "== $(date +%H:%M:%S) $*"; }

if [ $gpu = 1 ]; then
  stage "data (make_data.py --copy-practice, 200000 conversations)"
  $py tools/train/make_data.py --k3 "$k3" --out "$out/data" --train 200000 --heldout 500 --seed 0 --copy-practice
  gpu_args=(--device cuda --shape wide --data "$out/data" --batch-tokens 65536 --sort-group 4096 --log-every 50
            --eval-every 500 --eval-rows 100)
  stage "target, stage 1 (train.py --device cuda, 516 steps)"
  $py tools/train/train.py "${gpu_args[@]}" --out "$out/stage1" --steps 516 --seed 0
  stage "target, stage 2 (a warm restart from stage 1, 523 steps)"
  $py tools/train/train.py "${gpu_args[@]}" --out "$out/stage2" --init "$out/stage1" --steps 523 --lr 1.5e-3 \
    --warmup 50 --seed 1
  stage "data (make_data.py --copy-practice --variety, 200000 conversations; the same held-out set)"
  $py tools/train/make_data.py --k3 "$k3" --out "$out/vdata" --train 200000 --heldout 500 --seed 0 --copy-practice \
    --variety
  gpu_args[5]="$out/vdata"  # the value of --data
  distill_data="$out/vdata"
  stage "target, stage 3 (a warm restart from stage 2 on the --variety data, 779 steps)"
  $py tools/train/train.py "${gpu_args[@]}" --out "$out/k3-demo" --init "$out/stage2" --steps 779 --lr 1.5e-3 \
    --warmup 50 --seed 2
  cat "$out/stage1.log.jsonl" "$out/stage2.log.jsonl" "$out/k3-demo.log.jsonl" > "$out/all.log.jsonl"
  mv "$out/all.log.jsonl" "$out/k3-demo.log.jsonl"  # plot_loss.py reads the three runs
else
  stage "data (make_data.py)"
  $py tools/train/make_data.py --k3 "$k3" --out "$out/data" --train 24000 --heldout 500 --seed 0
  stage "target (train.py, 60 min)"
  $py tools/train/train.py --data "$out/data" --out "$out/k3-demo" --steps 5000 --minutes 60 --batch-tokens 3072 \
    --threads 1 --ranks 2 --seed 0 --log-every 10 --eval-every 200 --eval-rows 100
fi
$py tools/train/plot_loss.py --log "$out/k3-demo.log.jsonl" --png "$out/k3-demo/loss.png"
stage "held-out scores through k3 serve and the official clients"
node tests/demo_model/demo_eval_test.mjs --k3 "$k3" --model "$out/k3-demo" --work "$out/eval" || true
stage "distillation data (the target's greedy replies through k3 serve)"
$py tools/train/distill.py --k3 "$k3" --target "$out/k3-demo" --data "$distill_data" --out "$out/distill" \
  --train 3000 --heldout 200
stage "draft (train.py --shape draft, 15 min)"
$py tools/train/train.py --shape draft --data "$out/distill" --out "$out/k3-demo-draft" --steps 5000 --minutes 15 \
  --batch-tokens 3072 --threads 1 --ranks 2 --seed 0 --log-every 10 --eval-every 200 --eval-rows 100
stage "draft agreement per chain position"
$py tools/train/draft_agreement.py --draft "$out/k3-demo-draft" --target "$out/k3-demo" --data "$out/distill" \
  --n 200 --json "$out/agreement.json"
stage "distillation data for the EAGLE-3 head (the first 6,000 prompts)"
$py tools/train/distill.py --k3 "$k3" --target "$out/k3-demo" --data "$distill_data" --out "$out/distill6k" \
  --train 6000 --heldout 200
stage "EAGLE-3 head (train_eagle3.py, 50 min)"
$py tools/train/train_eagle3.py --target "$out/k3-demo" --data "$out/distill6k" --out "$out/k3-demo-eagle3" \
  --minutes 50 --ttt-steps 6 --lr 2e-3 --batch-tokens 4096 --eval-every 100 --eval-rows 24 --threads 2 --seed 0
stage "EAGLE-3 head agreement per chain position"
$py tools/train/train_eagle3.py --target "$out/k3-demo" --data "$out/distill6k" --eval "$out/k3-demo-eagle3" \
  --n 200 --json "$out/k3-demo-eagle3/agreement.json"
stage "done: $out"
