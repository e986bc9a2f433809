#!/usr/bin/env python3
"""Draws train.py's loss curve as a PNG (for the model card).

    /usr/bin/python3 tools/train/plot_loss.py --log OUT.log.jsonl --png models/k3-demo/loss.png

Plots the training loss and the completion-token loss of every logged step and the held-out
completion loss where it was measured, on a log scale, with the QAT start marked. Uses Pillow
(Debian's python3-pil) rather than matplotlib, which Debian's torch does not pull in: a plot of a
few hundred points needs only lines and text.

A log may hold several runs one after another (a warm restart with train.py --init appended to
the first run's log): each run's steps continue from the previous run's final step count, a
vertical line marks each restart, and the title sums the steps and minutes.
"""
import argparse
import json
import math

from PIL import Image, ImageDraw

W, H = 900, 520
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 40, 50
SERIES = (("loss", (70, 110, 200), "loss (prompt tokens weighted)"),
          ("completion_loss", (220, 120, 40), "completion loss"),
          ("heldout_completion_loss", (30, 150, 60), "held-out completion loss"))


def read(path):
    """-> (step rows on one step axis, the steps where a run restarted, the combined final row or
    None).  A --resume continues its run's step numbers; a --init run numbers from 0 again."""
    rows, restarts, final, base, last = [], [], None, 0, -1
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)
        if r.get("final"):
            minutes = round((final or {}).get("minutes", 0) + r["minutes"], 2)
            final = dict(r, steps=base + r["steps"], minutes=minutes)
        elif "step" in r:
            if r["step"] <= last:  # numbering restarted: a new run continues the axis
                base = final["steps"] if final else base + last + 1
                restarts.append(base)
            last = r["step"]
            rows.append(dict(r, step=base + r["step"]))
    return rows, restarts, final


def axes(steps, values):
    lo, hi = math.log10(min(values)), math.log10(max(values))
    lo, hi = math.floor(lo * 2) / 2, math.ceil(hi * 2) / 2
    x_max = max(steps) or 1

    def to_xy(step, value):
        x = LEFT + (W - LEFT - RIGHT) * step / x_max
        y = TOP + (H - TOP - BOTTOM) * (hi - math.log10(value)) / (hi - lo)
        return x, y
    return to_xy, lo, hi, x_max


def draw_grid(d, to_xy, lo, hi, x_max):
    d.rectangle([LEFT, TOP, W - RIGHT, H - BOTTOM], outline=(0, 0, 0))
    decade = math.floor(lo)
    while decade <= hi:
        for m in (1, 2, 5):
            v = m * 10 ** decade
            if lo <= math.log10(v) <= hi:
                _, y = to_xy(0, v)
                d.line([LEFT, y, W - RIGHT, y], fill=(225, 225, 225))
                d.text((8, y - 6), f"{v:g}", fill=(0, 0, 0))
        decade += 1
    tick = 10 ** math.floor(math.log10(x_max)) if x_max >= 10 else 1
    if x_max / tick < 4:
        tick /= 2
    s = 0
    while s <= x_max:
        x, _ = to_xy(s, 10 ** lo)
        d.line([x, H - BOTTOM, x, H - BOTTOM + 4], fill=(0, 0, 0))
        d.text((x - 10, H - BOTTOM + 8), f"{int(s)}", fill=(0, 0, 0))
        s += tick
    d.text(((W - 40) / 2, H - 20), "step", fill=(0, 0, 0))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log", required=True)
    ap.add_argument("--png", required=True)
    ap.add_argument("--title", default="k3-demo training")
    ap.add_argument("--labels", default="", help="the three series' legend labels, comma-separated")
    args = ap.parse_args()
    labels = args.labels.split(",") if args.labels else [label for _, _, label in SERIES]
    rows, restarts, final = read(args.log)
    values = [r[k] for r in rows for k, _, _ in SERIES if r.get(k)]
    to_xy, lo, hi, x_max = axes([r["step"] for r in rows], values)
    img = Image.new("RGB", (W, H), "white")
    d = ImageDraw.Draw(img)
    draw_grid(d, to_xy, lo, hi, x_max)
    qat_starts = [b["step"] for a, b in zip([{}] + rows, rows) if b.get("qat") and not a.get("qat")]
    marks = sorted([(s, "MXFP4 QAT") for s in qat_starts] + [(s, "warm restart") for s in restarts])
    for i, (step, label) in enumerate(marks):  # labels alternate between two heights: marks can be close
        x, _ = to_xy(step, 10 ** lo)
        d.line([x, TOP, x, H - BOTTOM], fill=(160, 160, 160), width=1)
        d.text((x + 4, H - BOTTOM - 16 - 14 * (i % 2)), label, fill=(100, 100, 100))
    for i, ((key, color, _), label) in enumerate(zip(SERIES, labels)):
        pts = [to_xy(r["step"], r[key]) for r in rows if r.get(key)]
        if len(pts) > 1:
            d.line(pts, fill=color, width=2)
        for x, y in pts if key.startswith("heldout") else []:
            d.ellipse([x - 3, y - 3, x + 3, y + 3], fill=color)
        d.line([W - 260, TOP + 14 + 16 * i, W - 235, TOP + 14 + 16 * i], fill=color, width=3)
        d.text((W - 228, TOP + 8 + 16 * i), label, fill=(0, 0, 0))
    title = args.title
    if final:
        mxfp4 = final.get("heldout_completion_loss_mxfp4")
        title += f": {final['steps']} steps, {final['minutes']} min, held-out {labels[1]} " + \
            (f"{mxfp4} (MXFP4 experts)" if mxfp4 is not None else f"{final['heldout_completion_loss']}")
    d.text((LEFT, 14), title, fill=(0, 0, 0))
    img.save(args.png, optimize=True)
    print(f"wrote {args.png} ({len(rows)} logged steps)")


if __name__ == "__main__":
    main()
