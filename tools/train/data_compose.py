"""Composed phrasings, for training only (make_data.py --compose).

The stop-33 model still missed held-out wordings that put an entity somewhere its training
templates never did ("Who is this? {n} is ..." copied "Who" as the name; "Let {to} know by email"
called nothing). A fixed list of templates teaches the list; these requests are put together from
parts instead: an optional opener, a head that says what is wanted, and one clause per remaining
slot in a random order, so an entity can follow any words. Every composed template is kept at
least MIN_DISTANCE words away from each held-out template of its intent (word-level edit distance
with slots as words), so no held-out wording is seen with a word or two swapped; held-out records
never draw from this file, and `test_make_data.py` checks both.
"""
import re

import data_pools as P

MIN_DISTANCE = 3

# Openers that end a sentence or a label, so the request after them keeps its capital.
OPENERS = ["", "", "", "", "Hi. ", "Okay, next task. ", "I have a favour to ask. ", "Listen. ", "For my plans: ",
           "Before I forget: ", "Hey assistant. ", "Something for you: ", "Right. ", "New request: ", "Please help. ",
           "This one is easy. ", "Task: ", "Another thing. ", "Sorry to bother you. ", "Urgent: "]

# Per intent: heads (what is wanted; they may hold slots) and the ways each slot can be said.
HEADS = {
    "get_weather": ["Weather check", "I'd like the forecast", "Get me the weather", "Weather report, please",
                    "Forecast needed", "Could you fetch the weather", "Look up the forecast",
                    "What is the weather going to do", "Tell me the weather"],
    "convert_currency": ["Currency conversion", "Convert some money", "Exchange rate question",
                         "Please do a conversion", "Money question", "Work out a currency exchange",
                         "I need an exchange"],
    "book_table": ["Book a table", "Reserve a table", "Arrange a restaurant booking", "Sort out a table",
                   "Set up a meal reservation", "Secure us a table", "I want to book a restaurant",
                   "Restaurant reservation, please", "Organise a table at a restaurant", "Find a restaurant table"],
    "send_email": ["Email {to}", "Send an email to {to}", "Write an email to {to}", "Mail this to {to}",
                   "Contact {to} via email", "Send a message by email to {to}", "Get in touch with {to} by email",
                   "Notify {to} by email", "Email please, to {to}", "Write to {to} by email"],
    "get_stock_price": ["Stock price of {symbol}", "Look up {symbol} shares", "Share price for {symbol}",
                        "How much are {symbol} shares", "Get the {symbol} price", "Ticker {symbol}: the price",
                        "Check {symbol} on the market", "The current {symbol} stock price"],
    "search_flights": ["Search for flights", "Find a flight", "Flight search", "Look up flights",
                       "Which flights are there", "I'm looking for a flight", "Check for planes"],
    "set_reminder": ["Set a reminder", "Create an alert", "Remind me", "Add a reminder", "Schedule an alert",
                     "I need a reminder", "Put a reminder in", "Make sure I remember"],
    "get_time": ["What time is it", "Tell me the time", "Time lookup", "Current hour", "Check the clock",
                 "Local time please", "What's the hour", "Time question", "Find the time of day"],
    "person": ["Give me JSON for this person", "As JSON, please", "Extract a person record",
               "Fill in name, age and city", "JSON for the contact", "Structured record please",
               "Capture this person in JSON", "Make a person object", "Turn this into a record"],
    "order": ["JSON with product and quantity", "An order as JSON", "Give the order in JSON",
              "Product and quantity in JSON", "Structured order please", "Make an order object",
              "Fill product and quantity", "Turn this order into JSON"],
}
CLAUSES = {
    "city": ["in {city}", "for {city}", "over in {city}", "in the city of {city}", "at {city}"],
    "date_text": ["on {date_text}", "for {date_text}", "date {date_text}", "on the date {date_text}"],
    "time": ["at {time}", "around {time}", "time {time}", "for {time}"],
    "people": ["for {people}", "for {people} people", "party of {people}", "{people} guests",
               "for a group of {people}", "{people} persons"],
    "amount": ["{amount} {from}"], "to": [],
    "subject": ["subject \"{subject}\"", "with the subject {subject}", "titled \"{subject}\"", "re: {subject}",
                "(subject: {subject})", "subject line {subject}", "headline {subject}"],
    "body": ["saying: {body}", "with the text: {body}", "message: {body}", "that reads: {body}", "content: {body}",
             "body: {body}", "text: {body}"],
    "origin": ["from {origin}", "leaving {origin}", "departing {origin}", "out of {origin}", "starting in {origin}"],
    "destination": ["to {destination}", "arriving in {destination}", "landing in {destination}",
                    "going to {destination}", "into {destination}"],
    "text": ["to {text}", "that I must {text}", "about: {text}", "task: {text}", "so that I {text}",
             "saying {text}", "with the note {text}"],
    "n": ["name {n}", "the name is {n}", "a person called {n}", "someone named {n}", "my friend {n}", "{n} is the name"],
    "a": ["age {a}", "{a} years old", "aged {a}", "who is {a}", "the age is {a}"],
    "c": ["city {c}", "lives in {c}", "living in {c}", "based in {c}", "from {c}", "home city {c}"],
    "q": [], "p": [],
}
# Slots whose clause forms come in fixed pairs (the currency target, the order's two values).
PAIRED = {
    "convert_currency": [["{amount} {from}", "into {to}"], ["{amount} {from}", "to {to}"],
                         ["{amount} {from}", "in {to}"], ["from {from} to {to}", "amount {amount}"],
                         ["{amount} of {from}", "as {to}"]],
    "order": [["{q} {p}"], ["{q} units of {p}"], ["{p} times {q}"], ["product {p}", "quantity {q}"],
              ["{q} pieces of {p}"], ["item {p}", "count {q}"], ["{p}, {q} of them"]],
}
SLOTS = {"get_weather": ["city", "date_text"], "convert_currency": [], "book_table": ["city", "people", "date_text",
         "time"], "send_email": ["subject", "body"], "get_stock_price": [], "search_flights": ["origin", "destination",
         "date_text"], "set_reminder": ["text", "date_text", "time"], "get_time": ["city"], "person": ["n", "a", "c"],
         "order": []}
ENDS = [".", ".", "?", "", " please.", ", thanks."]


def words(template):
    """Lower-case words of a template, a {slot} counting as one word."""
    out, word = [], ""
    for ch in template.lower():
        if ch.isalnum() or ch in "{}_'":
            word += ch
        elif word:
            out.append(word)
            word = ""
    return out + ([word] if word else [])


def distance(a, b):
    """Word-level edit distance between two word lists."""
    row = list(range(len(b) + 1))
    for i, wa in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, wb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (wa != wb))
    return row[-1]


def heldout_templates(intent, json_templates):
    """The held-out wordings of an intent (json_templates: make_data's person/order lists)."""
    if intent in json_templates:
        return json_templates[intent][-2:]
    return P.ASK[intent][-2:]


def compose(rng, intent):
    """A template for the intent: opener, head and slot clauses in a random order, then an end."""
    parts = [c for c in rng.choice(PAIRED[intent])] if intent in PAIRED else []
    parts += [rng.choice(CLAUSES[s]) for s in SLOTS[intent]]
    rng.shuffle(parts)
    head = rng.choice(HEADS[intent])
    if rng.random() < 0.3 and parts:  # the head last: "On {date_text}, in {city}: weather check."
        body = ", ".join(parts) + ": " + (head if head.startswith("I") else head[0].lower() + head[1:])
        body = body[0].upper() + body[1:]
    else:
        body = head + (rng.choice([": ", ", ", " "]) + ", ".join(parts) if parts else "")
    return rng.choice(OPENERS) + body + rng.choice(ENDS)


def contains(template, other):
    """Whether a text made from template could hold other's wording, whatever fills other's slots."""
    pieces = re.split(r"\{[a-z_]+\}", other)
    return re.search(".+?".join(re.escape(p) for p in pieces), template) is not None


def template(rng, intent, json_templates):
    """compose(), redrawn until it is MIN_DISTANCE words from every held-out template and holds
    none of them."""
    held = heldout_templates(intent, json_templates)
    while True:
        t = compose(rng, intent)
        if all(distance(words(t), words(h)) >= MIN_DISTANCE and not contains(t, h) for h in held):
            return t
