#!/usr/bin/env python3
"""Checks of the demo model's data generator (make_data.py).

    /usr/bin/python3 tools/train/test_make_data.py [--k3 build/release/apps/k3/k3 --work DIR]

Without --k3: the generator is deterministic for a seed (--variety and --compose leave the held-out
set as it is and use none of its wordings); held-out records use no training entity
pool member that training records use, and training records no held-out entity; tool-call
arguments are taken from the user's words; every kind and the three thinking modes occur.
With --k3: make_data.py renders a small set through `k3 render`; every completion ends with the
demo's <|end_of_msg|>, thinking completions close the think channel first, and prompt + completion
detokenize to text holding the user's words and the called tool's name.
"""
import argparse
import collections
import json
import os
import random
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import data_pools as P  # noqa: E402
import copy_probe  # noqa: E402
import data_compose as C  # noqa: E402
import data_variety as V  # noqa: E402
import make_data  # noqa: E402

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def words_of(record):
    text = " ".join(m["content"] for m in record["request"]["messages"] if m["role"] == "user")
    return text, set(re.findall(r"[A-Za-z]+", text))


def pure_checks():
    train, held = make_data.generate(3000, 0, False), make_data.generate(600, 0, True)
    check(train[:50] == make_data.generate(50, 0, False), "same seed, same records")
    check(train[:50] != make_data.generate(50, 1, False), "another seed, other records")
    for pool in (P.CITIES, P.NAMES, P.SYMBOLS, P.SURNAMES, P.PRODUCTS):
        held_only, train_only = set(P.split(pool, True)), set(P.split(pool, False))
        leaked = [w for r in train for w in words_of(r)[1] & held_only]
        check(not leaked, f"training records use held-out entities {sorted(set(leaked))[:5]}")
        seen = [w for r in held for w in words_of(r)[1] & train_only]
        check(not seen, f"held-out records use training entities {sorted(set(seen))[:5]}")
    bad = []
    for r in train + held:
        text = words_of(r)[0]
        for call in r["expect"].get("tool_calls", []):
            for k, v in call["arguments"].items():
                if k in ("city", "origin", "destination", "symbol", "text", "time", "from", "to") and \
                        call["name"] != "send_email" and str(v) not in text:
                    bad.append((call["name"], k, v))
                if k == "amount" and str(v) not in text:
                    bad.append((call["name"], k, v))
    check(not bad, f"arguments not in the user's words: {bad[:3]}")
    kinds = collections.Counter(r["kind"] for r in train)
    check(set(kinds) == {k for k, _ in make_data.KINDS}, f"every kind occurs: {dict(kinds)}")
    modes = collections.Counter("off" if "thinking" in r["request"] else r["request"].get("reasoning_effort", "max")
                                for r in train)
    check(set(modes) == {"off", "low", "high", "max"}, f"every thinking mode occurs: {dict(modes)}")
    print(f"generator: {len(train)} training and {len(held)} held-out records, kinds {dict(kinds)}")
    copy_checks(held)
    variety_checks(held)
    compose_checks(held)


def template_regex(template):
    """A regex that finds a phrasing whatever fills its {slots}."""
    return re.compile(".+?".join(re.escape(piece) for piece in re.split(r"\{[a-z_]+\}", template)))


def user_texts(records):
    return [m["content"] for r in records for m in r["request"]["messages"] if m["role"] == "user"]


def held_phrasings_in(users):
    """The held-out templates (tool requests, follow-ups, repeats, JSON requests) that some of
    the user texts match, whatever fills the slots."""
    lists = [ts for group in (P.ASK, P.FOLLOW_UP, make_data.JSON_PHRASINGS) for ts in group.values()]
    held_templates = [t for ts in lists for t in ts[-2:]] + make_data.REPEAT_PHRASINGS[-2:]
    patterns = [template_regex(t) for t in held_templates]
    return {p.pattern for p in patterns for u in users if p.search(u)}


def compose_checks(held):
    """--compose: composed requests in training only, each template MIN_DISTANCE words from every
    held-out wording of its intent, the arguments still in the user's words."""
    composed = make_data.generate(3000, 0, False, copy_practice=True, variety=True, compose=True)
    check(make_data.generate(600, 0, True, copy_practice=True, variety=True, compose=True) == held,
          "compose leaves the held-out set alone")
    seen = held_phrasings_in(user_texts(composed))
    check(not seen, f"composed records use held-out phrasings: {sorted(seen)[:3]}")
    rng, near = random.Random(3), []
    for intent in list(P.ASK) + list(make_data.JSON_PHRASINGS):
        held_words = [C.words(t) for t in C.heldout_templates(intent, make_data.JSON_PHRASINGS)]
        for _ in range(500):
            t = C.template(rng, intent, make_data.JSON_PHRASINGS)
            near += [(t, h) for h in held_words if C.distance(C.words(t), h) < C.MIN_DISTANCE]
    check(not near, f"composed templates near a held-out one: {near[:2]}")
    check(C.distance(C.words("Time in {city} please."), C.words("Time in {city}, thanks.")) == 1,
          "word distance counts a swapped word once")
    bad = [(r["request"]["messages"][-1]["content"], v) for r in composed for call in r["expect"].get("tool_calls", [])
           for k, v in call["arguments"].items() if k in ("city", "origin", "destination", "symbol", "text", "time")
           and str(v) not in words_of(r)[0]]
    check(not bad, f"composed arguments not in the user's words: {bad[:2]}")
    jsons = [r for r in composed if r["kind"] == "json"]
    check(all(str(v) in words_of(r)[0] for r in jsons for v in r["expect"]["json"].values()),
          "composed JSON values are in the user's words")
    distinct = {template_regex(t).pattern for group in (P.ASK, make_data.JSON_PHRASINGS) for ts in group.values()
                for t in ts}
    extra = [t for ts in list(V.EXTRA_ASK.values()) + list(V.EXTRA_JSON.values()) for t in ts]
    distinct |= {template_regex(t).pattern for t in extra}
    fresh = [u for u in user_texts(composed) if not any(re.search(d, u) for d in distinct)]
    check(len(fresh) > 800, f"composed requests occur: {len(fresh)}")


def variety_checks(held):
    """--variety: more training phrasings and no-tool requests; the held-out set and its unseen
    phrasings untouched."""
    varied = make_data.generate(3000, 0, False, copy_practice=True, variety=True)
    check(make_data.generate(600, 0, True, copy_practice=True, variety=True) == held,
          "variety leaves the held-out set alone")
    users = user_texts(varied)
    seen = held_phrasings_in(users)
    check(not seen, f"training records use held-out phrasings: {sorted(seen)[:3]}")
    for pool in (P.CITIES, P.NAMES, P.PRODUCTS):
        leaked = [w for r in varied for w in words_of(r)[1] & set(P.split(pool, True))]
        check(not leaked, f"variety records use held-out entities {sorted(set(leaked))[:5]}")
    kinds = collections.Counter(r["kind"] for r in varied)
    plain = collections.Counter(r["kind"] for r in make_data.generate(3000, 0, False, copy_practice=True))
    check(kinds["no_tool"] > 1.8 * plain["no_tool"], f"no_tool drawn more often: {kinds['no_tool']} vs {plain['no_tool']}")
    no_tool = [r for r in varied if r["kind"] == "no_tool"]
    check(all("tool_calls" not in r["completion"] for r in no_tool), "no_tool records call nothing")
    distinct = {template_regex(t).pattern for ts in P.ASK.values() for t in ts[:-2]}
    check(sum(1 for u in users if not any(re.search(d, u) for d in distinct)) > 500,
          "training requests beyond the original templates occur")


def copy_checks(held):
    """--copy-practice: copy records whose answers only copying can give; held-out unchanged."""
    practice = make_data.generate(3000, 0, False, copy_practice=True)
    check(make_data.generate(600, 0, True, copy_practice=True) == held, "copy practice leaves the held-out set alone")
    copies = [r for r in practice if r["kind"] == "copy"]
    check(len(copies) > 300, f"copy records drawn: {len(copies)}")
    for r in copies:
        user = r["request"]["messages"][-1]["content"]
        words = [w.strip(".") for w in r["completion"]["content"].split()]
        missing = [w for w in words if w not in ("Your", "is", "lives", "in") and w not in user]
        check(not missing, f"every answer word comes from the user's message: {user!r} -> {missing}")
    letters = [w for r in practice if r["kind"] == "call" for a in r["expect"]["tool_calls"]
               for w in [a["arguments"].get("city", "")] if w and not any(v in w for v in "aeiou")]
    check(letters, "some invented cities are random letters (no vowel)")
    cases = copy_probe.probes(random.Random(7), 10)
    check(cases == copy_probe.probes(random.Random(7), 10), "copy probes are seeded")
    held = set(P.split(P.CITIES, True)) | set(P.split(P.NAMES, True))
    check(all(want.split()[0] in held for _, want, _ in cases["entity"]), "entity probes use held-out entities")
    check(copy_probe.copied_share("Your code is Abx.", "Your code is Abc.", "Your code is ") == 0.5,
          "copied share counts the copied part up to the first mistake")
    check(copy_probe.copied_share("Code Abc.", "Your code is Abc.", "Your code is ") == 0.0, "a broken frame copies 0")


def render_checks(k3, work):
    out = os.path.join(work, "data")
    subprocess.run([sys.executable, os.path.join(HERE, "make_data.py"), "--k3", k3, "--out", out,
                    "--train", "60", "--heldout", "20"], check=True)
    with open(os.path.join(out, "demo", "config.json")) as f:
        eos = json.load(f)["text_config"]["eos_token_id"]
    for split in ("train", "heldout"):
        records = [json.loads(x) for x in open(os.path.join(out, f"{split}.jsonl"))]
        ids = [json.loads(x) for x in open(os.path.join(out, f"{split}.ids.jsonl"))]
        check(len(records) == len(ids), f"{split}: one ids line per record")
        lines = "".join(json.dumps(x["prompt_ids"] + x["completion_ids"]) + "\n" for x in ids)
        texts = subprocess.run([k3, "detokenize", "--model", os.path.join(out, "demo"), "--jsonl"], input=lines,
                               check=True, capture_output=True, text=True).stdout.splitlines()
        for r, x, text in zip(records, ids, map(json.loads, texts)):
            check(x["completion_ids"][-1] == eos, f"{split}: completion ends with <|end_of_msg|>")
            last_user = [m["content"] for m in r["request"]["messages"] if m["role"] == "user"][-1]
            check(last_user in text, f"{split}: the user's words are in the prompt")
            for call in r["expect"].get("tool_calls", []):
                check(f'<|open|>call tool="{call["name"]}"' in text, f"{split}: the tool call is rendered")
            completion = text[-200:]
            if "reasoning_content" in r["completion"]:
                check("<|close|>think<|sep|>" in text, f"{split}: the think channel is closed")
            check(completion.endswith("<|close|>message<|sep|><|end_of_msg|>"), f"{split}: message closed")
    print(f"render: {out} rendered and decoded back")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k3", default=None)
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    pure_checks()
    if args.k3:
        render_checks(args.k3, args.work)
    print("PASS" if not FAILURES else f"{len(FAILURES)} FAILURES")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
