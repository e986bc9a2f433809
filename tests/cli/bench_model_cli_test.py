#!/usr/bin/env python3
"""`k3 bench model` end to end on the committed demo checkpoint (seconds, not the 2B bench models).

Checks what a reader of its tables relies on: every requested batch and prefill length gets a
row with a positive speed and a finite fraction of the limits (printed to 2 decimals, and not
bounded by 1: the demo model's 8 MB can stay in cache, which outruns the memory bandwidth that
the roofline is measured from); a load-time weight conversion prints its logit error against the same
checkpoint loaded as stored, labelled with the flags that made it (`--expert-activations` is
process-wide, so the label says the reference ran with it too), and the BF16 panels (the same
values, one FMA chain per output) stay within float32 rounding of it; a bad flag value is
refused with the flag's name and a non-zero exit. Decode figures are medians of timed rounds, each
logged with its own bandwidth reading, and lie inside the ranges printed beside them.

Usage: bench_model_cli_test.py K3_BINARY DEMO_MODEL_DIR
"""
import re
import subprocess
import sys


def run(k3, model, *flags):
    args = [k3, "bench", "model", "--model", model, "--chunked-prefill", "0", "--no-bf16-compare",
            "--decode-steps", "2", "--threads", "2", *flags]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def table_rows(stdout, header):
    """Rows (lists of fields) of the table whose first header field is `header`."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:  # header, dashes
        if not line.strip():
            break
        rows.append(line.split())
    return rows


def check(condition, message, failures):
    if not condition:
        failures.append(message)


def check_tables(out, batches, prefill, failures):
    decode = table_rows(out, "decode batch")
    check([r[0] for r in decode] == [str(b) for b in batches], f"decode rows {decode}", failures)
    for r in decode:
        tokens_per_s, fraction = float(r[1]), float(r[-1])
        check(tokens_per_s > 0, f"decode speed {r}", failures)
        check(0 <= fraction < 100, f"decode fraction of roofline {r}", failures)
        # Medians of the rounds, each inside its "lo-hi" range over them (rounding allowed).
        for median, cell, slack in ((tokens_per_s, r[2], 0.05), (fraction, r[-2], 0.005)):
            lo, hi = (float(v) for v in cell.split("-"))
            check(lo - slack <= median <= hi + slack, f"median outside its range {r}", failures)
    rows = table_rows(out, "prefill tokens")
    check([r[0] for r in rows] == [str(p) for p in prefill], f"prefill rows {rows}", failures)
    for r in rows:
        check(float(r[1]) > 0 and 0 <= float(r[-1]) < 100, f"prefill row {r}", failures)


def quant_line(out):
    match = re.search(r"^  --weight-quant (.+?) ([0-9.e+-]+)  ([0-9.e+-]+)  (\d+)/(\d+)$", out,
                      re.MULTILINE)
    if not match:
        return None
    label, median, worst, agree, total = match.groups()
    return label, float(median), float(worst), int(agree), int(total)


def check_machine_line(out, failures):
    """The figures name their machine: the processor as /proc/cpuinfo has it, and the kernels."""
    line = re.search(r"^machine: (.+)$", out, re.MULTILINE)
    check(line is not None, f"no machine line: {out[:600]}", failures)
    if line is None:
        return
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            name = re.search(r"^model name\s*: (.+)$", cpuinfo.read(), re.MULTILINE)
    except OSError:
        name = None
    if name:  # x86 Linux: CPUID's brand string, as the kernel decodes it too
        brand = " ".join(name.group(1).split())
        check(line.group(1).startswith(brand + " ("), f"machine line {line.group(1)!r}, "
              f"/proc/cpuinfo model name {brand!r}", failures)
    check(re.search(r", \d+ threads; kernels: matmul \w+", line.group(1)) is not None,
          f"machine line without threads or kernels: {line.group(1)!r}", failures)


def main():
    k3, model = sys.argv[1], sys.argv[2]
    failures = []

    plain = run(k3, model, "--batches", "1,3", "--prefill", "16", "--weight-quant", "none")
    check(plain.returncode == 0, f"plain run exit {plain.returncode}: {plain.stderr[-2000:]}",
          failures)
    if plain.returncode == 0:
        check_tables(plain.stdout, [1, 3], [16], failures)
        check(quant_line(plain.stdout) is None, "no conversion, yet an error line", failures)
        # Three timed rounds per batch by default, each logged with its own bandwidth reading.
        rounds = re.findall(r"round (\d): read bandwidth [0-9.]+ GB/s", plain.stderr)
        check(rounds == ["1", "2", "3"] * 2, f"decode rounds logged: {rounds}", failures)
        check_machine_line(plain.stdout, failures)
    one = run(k3, model, "--batches", "2", "--prefill", "", "--decode-rounds", "1")
    check(one.returncode == 0 and len(re.findall(r"round \d:", one.stderr)) == 1,
          f"--decode-rounds 1: exit {one.returncode}, {one.stderr[-1000:]}", failures)

    # The default, auto, says what it chose; the error line follows that choice.
    default = run(k3, model, "--batches", "1", "--prefill", "")
    check(default.returncode == 0, f"default exit {default.returncode}: {default.stderr[-2000:]}",
          failures)
    chose = re.search(r"--weight-quant auto: (none|bf16-panels) \(", default.stderr)
    check(chose is not None, f"auto's choice not logged: {default.stderr[-2000:]}", failures)
    if default.returncode == 0 and chose:
        line = quant_line(default.stdout)
        want = None if chose.group(1) == "none" else "bf16-panels"
        check((line[0] if line else None) == want, f"auto chose {chose.group(1)}, line {line}",
              failures)

    panels = run(k3, model, "--batches", "2", "--prefill", "8", "--weight-quant", "bf16-panels")
    check(panels.returncode == 0, f"panels exit {panels.returncode}: {panels.stderr[-2000:]}",
          failures)
    if panels.returncode == 0:
        check_tables(panels.stdout, [2], [8], failures)
        line = quant_line(panels.stdout)
        check(line is not None and line[0] == "bf16-panels", f"panels error line {line}",
              failures)
        if line:
            # The same values summed in another order: float32 rounding through six layers.
            check(line[1] < 1e-4 and line[3] == line[4], f"panels error {line}", failures)

    both = run(k3, model, "--batches", "1", "--prefill", "8", "--weight-quant", "bf16-panels",
               "--expert-activations", "int8")
    check(both.returncode == 0, f"int8 run exit {both.returncode}: {both.stderr[-2000:]}",
          failures)
    if both.returncode == 0:
        line = quant_line(both.stdout)
        check(line is not None and
              line[0] == "bf16-panels (both models --expert-activations int8)",
              f"label with --expert-activations: {line}", failures)
        # The integer products' own peak beside FP32's, named by the dots that run them: the
        # best set the CPU flags allow (any AVX2 core has one).
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            flags = set(cpuinfo.read().split())
        dots = ("avx512-vnni" if {"avx512_vnni", "avx512f", "avx512bw", "avx512vl"} <= flags
                else "avx-vnni" if "avx_vnni" in flags else "avx2" if "avx2" in flags else None)
        peak_line = f"integer products: peak {dots} dots"
        check((peak_line in both.stdout) == (dots is not None) and
              ("integer products: peak" in both.stdout) == (dots is not None),
              f"integer peak line for {dots} dots: {both.stdout[:600]}", failures)
    if panels.returncode == 0:
        check("integer products: peak" not in panels.stdout, "integer peak on an exact run",
              failures)

    bad = run(k3, model, "--weight-quant", "int3")
    check(bad.returncode != 0 and "--weight-quant" in bad.stderr,
          f"bad --weight-quant: exit {bad.returncode}, stderr {bad.stderr[-500:]}", failures)

    bad_rounds = run(k3, model, "--decode-rounds", "0")
    check(bad_rounds.returncode != 0 and "--decode-rounds" in bad_rounds.stderr,
          f"bad --decode-rounds: exit {bad_rounds.returncode}, {bad_rounds.stderr[-500:]}",
          failures)

    for f in failures:
        print("FAIL:", f)
    print("bench model CLI:", "FAILED" if failures else "passed", f"({len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
