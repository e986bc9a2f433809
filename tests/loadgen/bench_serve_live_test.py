#!/usr/bin/python3
"""`k3 bench serve` and `k3 sweep` against a live `k3 serve` on the random-weight demo checkpoint.

  tests/loadgen/bench_serve_live_test.py --k3 build/apps/k3/k3 --work /tmp/k3-bench \
      --trace ../shared/data/mooncake/conversation_trace.jsonl

Checks that every request of a multi-turn, a Mooncake and a stub run completes, that the JSON
report is complete and consistent (the client's usage-based hit rate equals the server's
/metrics one), that a sweep over two settings writes its frontier, and that a dead endpoint
makes the bench fail with a clear message. Prints one line per check and a summary.
"""
import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--k3", required=True)
parser.add_argument("--work", required=True)
parser.add_argument("--trace", required=True, help="the Mooncake conversation trace (../shared)")
args = parser.parse_args()
os.makedirs(args.work, exist_ok=True)
env = dict(os.environ, XDG_CACHE_HOME=os.path.join(args.work, "cache"))
results = []


def check(name, fn):
    try:
        note = fn()
        results.append(True)
        print(f"ok   {name}" + (f": {note}" if note else ""), flush=True)
    except Exception as e:  # noqa: BLE001 - every failure is reported the same way
        results.append(False)
        print(f"FAIL {name}: {e}", flush=True)


def bench(*flags, expect_rc=0):
    out = os.path.join(args.work, "bench.json")
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([args.k3, "bench", "serve", "--no-progress", "--json", out, *flags],
                       env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != expect_rc:
        raise AssertionError(f"exit {p.returncode}, want {expect_rc}:\n{p.stdout}\n{p.stderr}")
    return (json.load(open(out)) if expect_rc == 0 else None), p


def random_demo():
    """The random-weight demo checkpoint (the tool's mechanics, not a model's choices, are under
    test: the trained default may end a short reply inside its think block, without text)."""
    folder = os.path.join(args.work, "random-demo")
    subprocess.run([args.k3, "render", "--write-demo", folder], env=env, check=True, capture_output=True)
    return folder


def start_server():
    log = open(os.path.join(args.work, "serve.log"), "w")
    child = subprocess.Popen([args.k3, "serve", "--port", "0", "--cache-memory", "256MiB", "--model", DEMO,
                              "--served-model-name", "k3-demo"],
                             env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        line = child.stdout.readline()
        m = re.search(r"listening on (http://[0-9.]+:[0-9]+)", line)
        if m:
            return child, m.group(1)
        if not line and child.poll() is not None:
            break
    raise SystemExit("k3 serve did not start; see serve.log")


DEMO = random_demo()
server, url = start_server()


def multi_turn():
    report, _ = bench("--url", url, "--dataset", "multi-turn", "--num-requests", "3", "--turns", "3",
                      "--system-words", "150", "--max-tokens", "8", "--concurrency", "2",
                      "--fail-on-errors")
    s = report["runs"][0]["summary"]
    assert s["requests"] == 9 and s["completed"] == 9 and s["failed"] == 0, s
    assert s["ttft_ms"]["n"] == 9 and s["ttft_ms"]["p50"] > 0, s["ttft_ms"]
    assert s["output_tokens"] == 9 * 8, s["output_tokens"]  # ignore_eos: every turn runs to max
    assert s["usage_hit_rate"] > 0.3, s["usage_hit_rate"]  # turns 2-3 reuse the earlier prompt
    assert abs(s["server_hit_rate"] - s["usage_hit_rate"]) < 0.02, (s["server_hit_rate"], s["usage_hit_rate"])
    return f"hit rate {100 * s['usage_hit_rate']:.1f}%, TTFT p50 {s['ttft_ms']['p50']:.0f} ms"


def mooncake():
    report, _ = bench("--url", url, "--dataset", args.trace, "--num-requests", "6", "--words-per-block", "6",
                      "--max-tokens", "4", "--concurrency", "3", "--fail-on-errors")
    s = report["runs"][0]["summary"]
    lines = [json.loads(l) for l in open(args.trace)][:6]
    want = sum(min(l["output_length"], 4) for l in lines)  # ignore_eos: exactly these
    assert s["completed"] == 6 and s["output_tokens"] == want, (want, s)
    return f"{s['prompt_tokens']} prompt tokens, hit rate {100 * s['usage_hit_rate']:.1f}%"


def stub():
    report, p = bench("--stub", "--num-requests", "40", "--max-tokens", "64", "--concurrency", "8",
                      "--fail-on-errors")
    s = report["runs"][0]["summary"]
    # The stub sends one token per event: every event arrived when the gaps plus the first
    # tokens add up to the usage counts (random dataset: 32..64 tokens per request).
    assert s["completed"] == 40 and s["itl_ms"]["n"] + 40 == s["output_tokens"], s
    assert 40 * 32 <= s["output_tokens"] <= 40 * 64, s
    assert s["client_tokens_per_cpu_s"] > 0, s
    return f"client reads {s['client_tokens_per_cpu_s']:.0f} streamed tokens per CPU second"


def rates():
    report, _ = bench("--url", url, "--dataset", "random", "--input-words", "20:40", "--num-requests", "4",
                      "--max-tokens", "4", "--request-rate", "2,inf", "--plot",
                      os.path.join(args.work, "curve.svg"), "--fail-on-errors")
    assert [r["request_rate"] for r in report["runs"]] == [2, 0], report["runs"]
    assert open(os.path.join(args.work, "curve.svg")).read().startswith("<svg")
    return "two points and an SVG"


def sweep():
    work = os.path.join(args.work, "sweep")
    p = subprocess.run([args.k3, "sweep", "--grid", "max-running=1,4", "--dataset", "random", "--input-words",
                        "20:40", "--num-requests", "4", "--max-tokens", "4", "--concurrency", "4", "--work", work,
                        "--serve-args", f"--cache-memory 256MiB --threads 1 --model {DEMO} --served-model-name k3-demo",
                        "--slo-ttft-ms", "600000"],
                       env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    report = json.load(open(os.path.join(work, "sweep.json")))
    assert len(report["runs"]) == 2 and report["frontier"], report
    assert report["recommended"] in ("max-running=1", "max-running=4"), report["recommended"]
    assert open(os.path.join(work, "frontier.svg")).read().startswith("<svg")
    assert "recommended for" in p.stdout, p.stdout
    return "frontier " + ", ".join(report["frontier"])


def dead_endpoint():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    _, p = bench("--url", f"http://127.0.0.1:{port}", "--num-requests", "2", expect_rc=1)
    assert "every request failed" in p.stderr and "unreachable" in p.stderr, p.stderr
    return p.stderr.strip().splitlines()[-1]


check("multi-turn through k3 serve: all turns, usage and server hit rates agree", multi_turn)
check("Mooncake trace replay (lengths, shared hash blocks)", mooncake)
check("stub endpoint: the client's own ceiling", stub)
check("two request rates -> JSON runs and a latency/throughput SVG", rates)
check("k3 sweep over max-running=1,4: frontier, recommendation, SVG", sweep)
check("a dead endpoint fails the bench with a clear message", dead_endpoint)
server.terminate()
server.wait(timeout=60)
print(f"bench_serve_live_test: {sum(results)} passed, {len(results) - sum(results)} failed (of {len(results)} checks)")
sys.exit(0 if all(results) else 1)
