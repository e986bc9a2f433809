#!/usr/bin/env bash
# Trains several demo-model candidates side by side on one GPU (each its own process: the model is
# small, so one run leaves most of the device idle between its many small kernels), with the
# shipped recipe's schedule but 64 Ki-token batches, and packs each checkpoint with its logs.
#
#   tools/train/train_gpu.sh OUT_DIR MINUTES NAME:DATA_DIR:SIZES_JSON [...]
#
# DATA_DIR is make_data.py's output (train.ids.jsonl may be xz-compressed as train.ids.jsonl.xz);
# SIZES_JSON overrides sizes.tiny_sizes() ({} for the shipped shape). TRAIN_ARGS: more train.py
# arguments for every run, after the defaults (so they win): e.g. "--shape wide --init DIR --lr 1.5e-3
# --warmup 50 --seed 2" for warm restarts (stop 33). Writes OUT_DIR/NAME/ (the
# checkpoint), OUT_DIR/NAME.log.jsonl, OUT_DIR/NAME.out (stdout and stderr) and OUT_DIR/NAME.tar
# (all three). Used on a lent H200 for the stop-31 candidates (tools/train/README.md, "GPU runs").
set -uo pipefail
cd "$(dirname "$0")/../.."
out=$1 minutes=$2
shift 2
mkdir -p "$out"
py=${PYTHON:-python3} device=${DEVICE:-cuda} batch=${BATCH_TOKENS:-65536}  # overrides: smoke tests on a CPU
pids=()
for spec in "$@"; do
  IFS=: read -r name data sizes <<< "$spec"
  echo "== $(date +%H:%M:%S) $name: data $data, sizes $sizes"
  PYTHONUNBUFFERED=1 $py tools/train/train.py --device "$device" --data "$data" --out "$out/$name" --sizes "$sizes" \
    --steps 100000 --minutes "$minutes" --batch-tokens "$batch" --sort-group 4096 --warmup 100 --seed 0 \
    --log-every 50 --eval-every 500 --eval-rows 100 ${TRAIN_ARGS:-} > "$out/$name.out" 2>&1 &
  pids+=($!)
done
rc=0
for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
for spec in "$@"; do
  name=${spec%%:*}
  echo "== $name"; tail -n 4 "$out/$name.out"
  tar -C "$out" -cf "$out/$name.tar" "$name" "$name.log.jsonl" "$name.out" 2>/dev/null || rc=1
done
exit $rc
