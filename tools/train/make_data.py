#!/usr/bin/env python3
"""Seeded synthetic conversations for the demo K3, rendered by k3serve's own K3 renderer.

    /usr/bin/python3 tools/train/make_data.py --k3 build/release/apps/k3/k3 --out DIR \
        [--train 20000] [--heldout 500] [--seed 0] [--model TOKENIZER_DIR]

Writes DIR/{train,heldout}.jsonl (one record per line: kind, request = an OpenAI chat completions
body, completion = the assistant message the model should produce, expect = what an evaluation
checks) and DIR/{train,heldout}.ids.jsonl ({prompt_ids, completion_ids}, from `k3 render`: the
prompt exactly as `k3 serve` tokenizes it, the completion as the renderer writes that message).
Without --model the demo checkpoint's tokenizer is used (written to DIR/demo by `k3 render
--write-demo`).  Held-out records draw entities and phrasings the training records never use
(data_pools.py).  Kinds: call (tool calls from the user's words), answer (a tool result turned into
the reply), multi (two tools in one turn), no_tool (tools declared, none needed), chat (plain short
answers, some multi-turn), json (response_format json_object / json_schema), followup (a finished
tool turn, then a second request whose call takes the first turn's city: "And the time there?"),
and with --copy-practice, in training only, copy (random-letter words to repeat or recall).
"""
import argparse
import json
import os
import random
import subprocess
import sys

import data_compose as C
import data_pools as P
import data_variety as V

KINDS = [("call", 30), ("answer", 20), ("multi", 12), ("followup", 12), ("no_tool", 10), ("chat", 14), ("json", 14)]
# --copy-practice (an experiment, off for the shipped model): training also draws "copy" records
# (random-letter strings to repeat or recall), the densest practice for the attention circuit that
# copies a user's words into arguments, and half of the invented entities are random letters. The
# held-out draws always use KINDS, so the held-out set does not change with it.
COPY_KINDS = KINDS + [("copy", 48)]
# --variety (the stop-33 runs): in training only, more phrasings per intent, dressed requests and
# more requests that need no tool (data_variety.py), no_tool and json drawn more often. The
# held-out draws ignore it too.
VARIETY_WEIGHTS = {"no_tool": 24, "json": 18}
# --compose (the stop-49 fine-tune): in training only, this share of tool requests and JSON
# requests is put together from parts (data_compose.py) instead of drawn from a template list.
COMPOSE_SHARE = 0.5

INTENTS = list(P.ASK)
# "Repeat these words" requests (chat and copy records); the last two are held-out phrasings.
REPEAT_PHRASINGS = ["Repeat after me: {w}", "Say exactly this: {w}", "Echo: {w}", "Copy this text: {w}",
                    "Please repeat: {w}", "Return these words unchanged: {w}"]
# response_format requests (json records); the last two of each are held-out phrasings.
JSON_PHRASINGS = {
    "person": ["Extract the person: {n} is {a} years old and lives in {c}.",
               "{n}, aged {a}, lives in {c}. Give me the details as JSON.",
               "Parse this: {n} ({a}) from {c}.", "Turn into JSON: {n}, {a} years, {c}.",
               "Who is this? {n} is {a} and based in {c}.", "Record the person {n} from {c}, age {a}."],
    "order": ["Order {q} {p}. Reply in JSON with product and quantity.",
              "I want {q} of the {p}. JSON with product and quantity please.",
              "As JSON (product, quantity): {q} x {p}.", "Give product and quantity as JSON: {q} {p}.",
              "JSON please, product and quantity, for {q} {p}.",
              "Put {q} {p} into a JSON object with product and quantity."],
}


def training_kinds(copy_practice, variety):
    """(kind, weight) pairs of the training draws; the held-out draws always use KINDS."""
    kinds = dict(COPY_KINDS if copy_practice else KINDS)
    if variety:
        kinds.update(VARIETY_WEIGHTS)
    return list(kinds.items())


class Gen:
    def __init__(self, rng, heldout, copy_practice=False, variety=False, compose=False):
        self.rng, self.heldout = rng, heldout
        self.variety = variety and not heldout
        self.compose = compose and not heldout
        self.letters_share = 0.5 if copy_practice else 0.0

    def pick(self, pool):
        """A member of the pool's split; in training, INVENTED_SHARE of the time an invented one."""
        if not self.heldout and any(pool is p for p in P.ENTITY_POOLS) and self.rng.random() < P.INVENTED_SHARE:
            return P.invent(self.rng, pool, self.letters_share)
        return self.rng.choice(P.split(pool, self.heldout))

    def phrase(self, templates, extra=()):
        """A held-out template (the last two) or a training one; with --variety the training ones
        include the extra phrasings."""
        if self.heldout:
            return self.rng.choice(templates[-2:])
        return self.rng.choice(templates[:-2] + list(extra) if self.variety else templates[:-2])

    def request(self, intent, templates, extra=()):
        """phrase(), or with --compose in training COMPOSE_SHARE of the time a composed template
        (no extra random draw without --compose: the other data sets stay byte-identical)."""
        if self.compose and self.rng.random() < COMPOSE_SHARE:
            return C.template(self.rng, intent, JSON_PHRASINGS)
        return self.phrase(templates, extra)

    def date(self):
        m, d = self.rng.randrange(12), self.rng.randint(1, 28)
        iso = f"2026-{m + 1:02d}-{d:02d}"
        return iso, self.rng.choice([iso, f"{P.MONTHS[m]} {d}, 2026", f"{d} {P.MONTHS[m]} 2026"])

    def time(self):
        return f"{self.rng.randint(7, 21):02d}:{self.rng.choice(['00', '15', '30', '45'])}"

    # ------------------------------------------------------------ one tool call
    def call(self, intent):
        """-> (user text, arguments dict)."""
        r, a, s = self.rng, {}, {}
        if intent in ("get_weather", "get_time"):
            a["city"] = self.pick(P.CITIES)
        if intent in ("get_weather", "book_table", "search_flights", "set_reminder"):
            a["date"], s["date_text"] = self.date()
        if intent == "convert_currency":
            cur = r.sample(P.CURRENCIES, 2)
            a = {"amount": r.choice([r.randint(1, 999), round(r.uniform(1, 500), 2)]), "from": cur[0], "to": cur[1]}
        elif intent == "book_table":
            a = {"city": self.pick(P.CITIES), "people": r.randint(1, 12), "date": a["date"], "time": self.time()}
        elif intent == "send_email":
            name = self.pick(P.NAMES)
            topic = r.choice(P.TOPICS)
            a = {"to": f"{name.lower()}@example.com", "subject": topic.replace("the ", "").capitalize(),
                 "body": f"Hi {name}, {self.rng.choice(['can we talk about', 'here is an update on', 'please check'])} "
                         f"{topic}."}
        elif intent == "get_stock_price":
            a["symbol"] = self.pick(P.SYMBOLS)
        elif intent == "search_flights":
            o, d = self.pick(P.CITIES), self.pick(P.CITIES)
            while d == o:
                d = self.pick(P.CITIES)
            a = {"origin": o, "destination": d, "date": a["date"]}
        elif intent == "set_reminder":
            a = {"text": self.pick(P.REMINDER_TEXTS), "date": a["date"], "time": self.time()}
        slots = dict(a, **s)
        return self.request(intent, P.ASK[intent], V.EXTRA_ASK[intent]).format(**slots), a

    def follow_up(self, intent, city):
        """-> (user text, arguments dict) of a second-turn request about the first turn's city."""
        _, a = self.call(intent)
        a["city"] = city
        date_text = None
        if "date" in a:  # a fresh date, its wording and ISO form together
            a["date"], date_text = self.date()
        template = self.phrase(P.FOLLOW_UP[intent], V.EXTRA_FOLLOW_UP[intent])
        text = template.format(date_text=date_text, people=a.get("people"), time=a.get("time"))
        return text, a

    def result(self, intent, a):
        r = self.rng
        if intent == "get_weather":
            return {"condition": r.choice(P.CONDITIONS), "high_c": r.randint(-5, 35), "low_c": r.randint(-10, 20)}
        if intent == "convert_currency":
            return {"result": round(a["amount"] * r.uniform(0.2, 3.0), 2), "currency": a["to"]}
        if intent == "book_table":
            return {"status": "confirmed", "restaurant": f"{r.choice(P.SURNAMES)}'s", "booking_id": f"B{r.randint(1000, 9999)}"}
        if intent == "send_email":
            return {"status": "sent"}
        if intent == "get_stock_price":
            return {"price": round(r.uniform(5, 900), 2), "currency": "USD"}
        if intent == "search_flights":
            return {"flights": [{"flight": f"K3{r.randint(100, 999)}", "departs": self.time(),
                                 "price_usd": r.randint(80, 900)}]}
        if intent == "set_reminder":
            return {"status": "scheduled"}
        return {"time": self.time()}

    def answer(self, intent, a, res):
        if intent == "get_weather":
            return (f"In {a['city']} on {a['date']} it will be {res['condition']}, with a high of {res['high_c']} C "
                    f"and a low of {res['low_c']} C.")
        if intent == "convert_currency":
            return f"{a['amount']} {a['from']} is {res['result']} {a['to']}."
        if intent == "book_table":
            return (f"Done: a table for {a['people']} at {res['restaurant']} in {a['city']} on {a['date']} at "
                    f"{a['time']}. Booking id {res['booking_id']}.")
        if intent == "send_email":
            return f"I sent the email to {a['to']} with the subject \"{a['subject']}\"."
        if intent == "get_stock_price":
            return f"{a['symbol']} is at {res['price']} USD."
        if intent == "search_flights":
            f = res["flights"][0]
            return (f"Flight {f['flight']} leaves {a['origin']} for {a['destination']} on {a['date']} at "
                    f"{f['departs']}, for {f['price_usd']} USD.")
        if intent == "set_reminder":
            return f"Reminder set for {a['date']} at {a['time']}: {a['text']}."
        return f"It is {res['time']} in {a['city']}."

    # ------------------------------------------------------------ plain answers
    def chat_pair(self):
        """-> (user text, answer, reasoning) of a short question with a checkable answer."""
        r = self.rng
        # Training weights 3 (repeat the words: copying practice) up; held-out draws stay uniform.
        k = r.randrange(5) if self.heldout else r.choices(range(5), [2, 2, 1, 3, 2])[0]
        if k == 0:
            x, y = r.randint(0, 60), r.randint(0, 60)
            q = self.phrase(["What is {x} plus {y}?", "Add {x} and {y}.", "{x} + {y} = ?", "Compute {x} plus {y}.",
                             "What do {x} and {y} add up to?", "Sum of {x} and {y}?"],
                            V.EXTRA_CHAT["add"]).format(x=x, y=y)
            return q, f"{x} plus {y} is {x + y}.", f"{x} + {y} = {x + y}."
        if k == 1:
            x, y = r.sample(range(100), 2)
            q = self.phrase(["Which is larger, {x} or {y}?", "Is {x} bigger than {y}?", "Bigger number: {x} or {y}?",
                             "Compare {x} and {y}.", "Which number is greater, {x} or {y}?",
                             "Of {x} and {y}, which is more?"], V.EXTRA_CHAT["compare"]).format(x=x, y=y)
            return q, f"{max(x, y)} is larger than {min(x, y)}.", f"{max(x, y)} > {min(x, y)}."
        if k == 2:
            n = self.pick(P.NAMES)
            q = self.phrase(["Say hello to {n}.", "Greet {n} for me.", "Please welcome {n}.", "Write a greeting for {n}.",
                             "Could you greet {n}?", "Say hi to {n}."], V.EXTRA_CHAT["greet"]).format(n=n)
            return q, f"Hello, {n}! Nice to meet you.", f"A greeting for {n}."
        if k == 3:
            w = f"{self.pick(P.NAMES)} {self.pick(P.SURNAMES)} {self.pick(P.CITIES)}"
            q = self.phrase(REPEAT_PHRASINGS, V.EXTRA_CHAT["repeat"]).format(w=w)
            return q, w, "Repeat the words exactly."
        q = r.choice(["Hi!", "Hello, who are you?", "Thanks!", "Good morning.", "What can you do?"])
        ans = {"Hi!": "Hi! How can I help you today?", "Hello, who are you?": "I am a small K3 demo assistant.",
               "Thanks!": "You're welcome!", "Good morning.": "Good morning! How can I help?",
               "What can you do?": "I can chat and call the tools you give me, like weather or email."}[q]
        return q, ans, "A short friendly reply."

    def copy_task(self):
        """-> (user text, answer, reasoning) whose answer repeats or recalls random-letter words."""
        r = self.rng
        word = lambda: P.letters(r, 1, 9) if r.random() < 0.85 else str(r.randint(0, 99999))
        k = r.randrange(3)
        if k == 0:
            w = " ".join(word().capitalize() if r.random() < 0.3 else word() for _ in range(r.randint(3, 10)))
            q = self.phrase(REPEAT_PHRASINGS).format(w=w)
            return q, w, "Repeat the words exactly."
        if k == 1:
            thing, x = r.choice(["name", "code", "city", "password", "pet", "team"]), word().capitalize()
            q = r.choice(["My {t} is {x}. What is my {t}?", "Remember: my {t} is {x}. Tell me my {t}.",
                          "The {t} is {x}. Which {t} did I say?"]).format(t=thing, x=x)
            return q, f"Your {thing} is {x}.", f"The {thing} from the message is {x}."
        a, b = (P.letters(r, 3, 7).capitalize() for _ in range(2))
        ca, cb = (P.letters(r, 3, 8).capitalize() for _ in range(2))
        first = r.random() < 0.5
        who, where = (a, ca) if first else (b, cb)
        q = f"{a} lives in {ca} and {b} lives in {cb}. Where does {who} live?"
        return q, f"{who} lives in {where}.", f"{who} is in {where}."

    def json_task(self):
        r = self.rng
        if r.random() < 0.5:
            name, age, city = f"{self.pick(P.NAMES)} {self.pick(P.SURNAMES)}", r.randint(18, 90), self.pick(P.CITIES)
            q = self.request("person", JSON_PHRASINGS["person"], V.EXTRA_JSON["person"]).format(n=name, a=age, c=city)
            schema = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                                                       "city": {"type": "string"}},
                      "required": ["name", "age", "city"], "additionalProperties": False}
            fmt = {"type": "json_schema", "json_schema": {"name": "person", "schema": schema, "strict": True}}
            return q, fmt, {"name": name, "age": age, "city": city}
        prod, qty = self.pick(P.PRODUCTS), r.randint(1, 20)
        q = self.request("order", JSON_PHRASINGS["order"], V.EXTRA_JSON["order"]).format(q=qty, p=prod)
        return q, {"type": "json_object"}, {"product": prod, "quantity": qty}


def tool_calls_of(calls, first=1):
    return [{"id": f"call_{i + first}", "type": "function",
             "function": {"name": n, "arguments": json.dumps(a, separators=(",", ":"))}} for i, (n, a) in enumerate(calls)]


def first_tool_turn(g, intent, msgs):
    """Appends a finished tool turn (ask, call, result, answer) to msgs; -> the call's arguments."""
    u, a = g.call(intent)
    res = g.result(intent, a)
    msgs += [{"role": "user", "content": u},
             {"role": "assistant", "content": "", "tool_calls": tool_calls_of([(intent, a)])},
             {"role": "tool", "tool_call_id": "call_1", "content": json.dumps(res)},
             {"role": "assistant", "content": g.answer(intent, a, res)}]
    return a


def build(g, kind):
    """One record: {kind, request, completion, expect}."""
    r = g.rng
    msgs = [{"role": "system", "content": g.pick(P.SYSTEM_PROMPTS)}] if r.random() < 0.5 else []
    req = {}
    mode = r.choice(["default", "default", "low", "high", "off"])
    if mode == "off":
        req["thinking"] = {"type": "disabled"}
    elif mode != "default":
        req["reasoning_effort"] = mode
    if kind == "chat" and r.random() < 0.4:  # earlier turns
        for _ in range(r.randint(1, 2)):
            q, a, _ = g.chat_pair()
            msgs += [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
    intents = r.sample(INTENTS, 2 if kind == "multi" else 1)
    if kind == "followup":
        intents = []
    if kind in ("call", "answer", "multi", "no_tool", "followup"):
        names = set(intents) | (set(P.FOLLOW_UP) if kind == "followup" else set())
        names |= set(intents) | set(r.sample(INTENTS, r.randint(0, 2)))
        # Sorted first: a set of strings iterates in a per-process hash order, which the shuffle
        # below would carry into the data.
        req["tools"] = [P.TOOLS[n] for n in sorted(sorted(names), key=lambda n: r.random())]
    completion, expect, reasoning = {"role": "assistant"}, {}, ""
    if kind in ("call", "answer", "multi"):
        asks = [g.call(i) for i in intents]
        msgs.append({"role": "user", "content": " Also, ".join(u for u, _ in asks)})
        calls = [(i, a) for i, (_, a) in zip(intents, asks)]
        if kind == "call" or (kind == "multi" and r.random() < 0.5):
            completion["tool_calls"] = tool_calls_of(calls)
            expect["tool_calls"] = [{"name": n, "arguments": a} for n, a in calls]
            reasoning = " ".join(f"I should call {n} with {json.dumps(a)}." for n, a in calls)
        else:
            msgs.append({"role": "assistant", "content": "", "tool_calls": tool_calls_of(calls)})
            results = [g.result(n, a) for n, a in calls]
            for i, res in enumerate(results):
                msgs.append({"role": "tool", "tool_call_id": f"call_{i + 1}", "content": json.dumps(res)})
            completion["content"] = " ".join(g.answer(n, a, res) for (n, a), res in zip(calls, results))
            reasoning = "The tool results answer the question."
    elif kind == "followup":
        first, second = r.sample(sorted(P.FOLLOW_UP), 2)
        a = first_tool_turn(g, first, msgs)
        q, a2 = g.follow_up(second, a["city"])
        msgs.append({"role": "user", "content": q})
        completion["tool_calls"] = tool_calls_of([(second, a2)], first=2)
        expect["tool_calls"] = [{"name": second, "arguments": a2}]
        reasoning = f"\"There\" is {a['city']} from before. I should call {second} with {json.dumps(a2)}."
    elif kind in ("chat", "no_tool", "copy"):
        if kind == "copy":
            q, completion["content"], reasoning = g.copy_task()
        elif g.variety and r.random() < 0.4:
            q, completion["content"], reasoning = V.no_tool_pair(r, g.pick)
        else:
            q, completion["content"], reasoning = g.chat_pair()
        msgs.append({"role": "user", "content": q})
        if kind == "no_tool":
            reasoning = "No tool is needed. " + reasoning
    else:
        q, req["response_format"], obj = g.json_task()
        msgs.append({"role": "user", "content": q})
        completion["content"] = json.dumps(obj, separators=(",", ":"))
        reasoning = "Answer with the JSON object only."
    if "content" in completion and kind != "json":
        expect["content"] = completion["content"]
    elif kind == "json":
        expect["json"] = json.loads(completion["content"])
    if mode != "off":
        completion["reasoning_content"] = reasoning
    if g.variety and kind != "copy":
        last = max(i for i, m in enumerate(msgs) if m["role"] == "user")
        answer = completion.get("content")
        if answer is None or answer not in msgs[last]["content"]:  # never around words to repeat
            msgs[last] = dict(msgs[last], content=V.dress(r, msgs[last]["content"]))
    req["messages"] = msgs
    return {"kind": kind, "request": req, "completion": completion, "expect": expect}


def generate(n, seed, heldout, copy_practice=False, variety=False, compose=False):
    rng = random.Random(f"{seed}-{'heldout' if heldout else 'train'}")
    g = Gen(rng, heldout, copy_practice, variety, compose)
    kinds, weights = zip(*(KINDS if heldout else training_kinds(copy_practice, variety)))
    return [build(g, rng.choices(kinds, weights)[0]) for _ in range(n)]


def render(k3, model, records, path):
    """Pipes the records through `k3 render`; writes the ids file; returns the token counts."""
    lines = "".join(json.dumps({"request": x["request"], "completion": x["completion"]}) + "\n" for x in records)
    out = subprocess.run([k3, "render", "--model", model], input=lines, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"k3 render failed: {out.stderr.strip()}")
    with open(path, "w") as f:
        f.write(out.stdout)
    rows = [json.loads(x) for x in out.stdout.splitlines()]
    assert len(rows) == len(records)
    return [(len(x["prompt_ids"]), len(x["completion_ids"])) for x in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k3", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--model", default=None, help="tokenizer / chat-format folder (default: the demo's)")
    ap.add_argument("--train", type=int, default=20000)
    ap.add_argument("--heldout", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--copy-practice", action="store_true",
                    help="experiment: add random-letter copy records and random-letter invented entities to training")
    ap.add_argument("--variety", action="store_true",
                    help="training only: more phrasings, dressed requests, more no-tool requests (data_variety.py)")
    ap.add_argument("--compose", action="store_true",
                    help="training only: half of the tool and JSON requests composed from parts (data_compose.py)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    model = args.model or os.path.join(args.out, "demo")
    if not args.model:
        subprocess.run([args.k3, "render", "--write-demo", model], check=True)
    for split, n in (("train", args.train), ("heldout", args.heldout)):
        records = generate(n, args.seed, split == "heldout", args.copy_practice, args.variety, args.compose)
        with open(os.path.join(args.out, f"{split}.jsonl"), "w") as f:
            f.writelines(json.dumps(x) + "\n" for x in records)
        counts = render(args.k3, model, records, os.path.join(args.out, f"{split}.ids.jsonl"))
        p = sum(c[0] for c in counts) / n
        c = sum(c[1] for c in counts) / n
        print(f"{split}: {n} conversations, mean {p:.0f} prompt + {c:.0f} completion tokens, "
              f"{sum(a + b for a, b in counts)} tokens in all, max {max(a + b for a, b in counts)}")


if __name__ == "__main__":
    main()
