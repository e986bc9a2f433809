"""More ways of asking, for training only (make_data.py --variety).

The stop-31 model copied held-out entities exactly but missed held-out *phrasings*: each intent
had six training templates, so it learned the templates rather than the request. These lists add
training-only phrasings (none is a held-out template with a word swapped: the held-out ones stay
unseen), surface dressing (greetings before, thanks after), and more requests that need no tool,
some of them naming a city or a person the way tool requests do, so the call decision has to read
the request rather than spot an entity. Held-out records never draw from this file.
"""
import data_pools as P

EXTRA_ASK = {
    "get_weather": ["Forecast for {city} on {date_text}?", "Is {city} going to be sunny on {date_text}?",
                    "What will the sky look like over {city} on {date_text}?", "{city} weather, {date_text}.",
                    "Could you look up the weather in {city} for {date_text}?",
                    "I'm heading to {city} on {date_text}. Hot or cold?",
                    "What should I pack for {city} on {date_text}, weather-wise?",
                    "Give me the {date_text} forecast for {city}.", "How's the weather looking in {city} on {date_text}?",
                    "Temperature in {city} on {date_text}?"],
    "convert_currency": ["{amount} {from} in {to}, please.", "Turn {amount} {from} into {to}.",
                         "What do I get in {to} for {amount} {from}?", "Could you convert {amount} {from} into {to}?",
                         "How many {to} are {amount} {from}?", "Currency question: {amount} {from} to {to}.",
                         "I need {amount} {from} expressed in {to}.", "What's {amount} {from} in {to} today?",
                         "Quick conversion: {amount} {from} -> {to}.", "Worth of {amount} {from} in {to}?"],
    "book_table": ["Reserve a table in {city} for {people} on {date_text} at {time}.",
                   "Dinner in {city} on {date_text} at {time}, {people} of us. Book it.",
                   "Find us a restaurant table in {city}: {people} people at {time} on {date_text}.",
                   "{people} people, {city}, {date_text}, {time}: book a table.",
                   "Could you reserve for {people} in {city} at {time} on {date_text}?",
                   "I'd like to eat out in {city} on {date_text} at {time} with {people} people.",
                   "Make a restaurant reservation: {city}, {date_text}, {time}, party of {people}.",
                   "Book lunch for {people} in {city} on {date_text} at {time}.",
                   "Table please: {city} on {date_text} at {time} for {people}."],
    "send_email": ["Mail {to} about \"{subject}\": {body}", "Send this to {to} with subject {subject}: {body}",
                   "Email to {to}. Subject \"{subject}\". Text: {body}",
                   "Could you email {to}? The subject is \"{subject}\" and the message is: {body}",
                   "Shoot an email over to {to} (subject: {subject}) saying {body}",
                   "Write an email to {to} titled \"{subject}\" with: {body}",
                   "Message {to} by email, subject {subject}, body: {body}",
                   "I need an email sent to {to}. Subject \"{subject}\". It should say: {body}"],
    "get_stock_price": ["How is {symbol} doing today?", "Current {symbol} price?", "What does {symbol} cost per share?",
                        "Quote for {symbol}, please.", "Fetch the share price of {symbol}.",
                        "Tell me what {symbol} is worth right now.", "Stock check: {symbol}.",
                        "What's the market price of {symbol}?", "Can you get me a {symbol} quote?",
                        "I own some {symbol}. What's it at?"],
    "search_flights": ["Flights from {origin} to {destination} on {date_text}, please.",
                       "I need to get from {origin} to {destination} on {date_text}. Any flights?",
                       "What flights go {origin} to {destination} on {date_text}?",
                       "Check flights {origin} to {destination}, departing {date_text}.",
                       "Is there a plane from {origin} to {destination} on {date_text}?",
                       "Find me a flight to {destination} from {origin} for {date_text}.",
                       "Travelling {origin} to {destination} on {date_text}: search flights.",
                       "On {date_text} I fly out of {origin} to {destination}. What's available?"],
    "set_reminder": ["Reminder: {text}, {date_text} at {time}.", "Remind me on {date_text} at {time} to {text}.",
                     "Could you set a reminder to {text} at {time} on {date_text}?",
                     "Note for {date_text} at {time}: {text}.", "I must {text} on {date_text} at {time}. Set an alert.",
                     "Alert me at {time} on {date_text}: {text}.",
                     "On {date_text} at {time}, remind me that I need to {text}.",
                     "Schedule a reminder to {text} on {date_text} at {time}.",
                     "Nudge me to {text} at {time} on {date_text}."],
    "get_time": ["Local time in {city}?", "What's the time over in {city}?", "Do you know the time in {city}?",
                 "Current local time for {city}, please.", "What hour is it in {city} now?",
                 "Is it morning or evening in {city} right now?", "Time check: {city}.",
                 "Could you tell me the time in {city}?", "Look up the current time in {city}."],
}

EXTRA_FOLLOW_UP = {
    "get_time": ["What's the time there?", "Is it night there yet?", "And the current time there?",
                 "Time there now, please.", "Could you check the local time there?", "What hour is it there?"],
    "get_weather": ["And the forecast there for {date_text}?", "Weather there on {date_text}, please.",
                    "Is it going to be warm there on {date_text}?", "Also the weather there on {date_text}.",
                    "Could you check the weather there on {date_text}?", "What about {date_text} there, weather-wise?"],
    "book_table": ["Book us a table there for {people} on {date_text} at {time}.",
                   "Reserve a table there: {people} people, {date_text} at {time}.",
                   "And a dinner table there on {date_text} at {time} for {people}.",
                   "Table for {people} there on {date_text}, {time}.",
                   "Please also reserve a restaurant there for {people} at {time} on {date_text}."],
}

EXTRA_CHAT = {
    "add": ["How much is {x} plus {y}?", "Please add {x} to {y}.", "{x} plus {y} equals what?",
            "Add up {x} and {y} for me.", "What's the total of {x} and {y}?", "If I have {x} and get {y} more, how many?"],
    "compare": ["Which one is bigger: {x} or {y}?", "Is {y} smaller than {x}?", "{x} vs {y}, which is larger?",
                "Tell me the larger of {x} and {y}.", "Which is the higher number, {x} or {y}?"],
    "greet": ["Give {n} a warm hello.", "Please say good morning to {n}.", "Welcome {n}, would you?",
              "{n} just joined. Greet them.", "Can you say hello to {n} for me?", "Send {n} a friendly greeting."],
    "repeat": ["Repeat this exactly: {w}", "Write back: {w}", "Say it back to me: {w}", "Can you echo {w}"],
}

EXTRA_JSON = {
    "person": ["{n} lives in {c} and is {a}. JSON please.", "Make a JSON record: name {n}, age {a}, city {c}.",
               "From {c}: {n}, {a} years old. Give me JSON.", "Person: {n}. Age: {a}. City: {c}.",
               "Store this person as JSON: {n}, who is {a}, from {c}.", "Age {a}, city {c}, name {n}.",
               "Add {n} to the list: {a} years old, living in {c}.", "New contact {n} from {c}, {a} years."],
    "order": ["{q} {p}, as a JSON object with product and quantity.", "Quantity {q}, product {p}: JSON.",
              "Need {q} units of {p}. Answer as JSON (product, quantity).",
              "Order: {p} x {q}. Give JSON with product and quantity.",
              "JSON with product and quantity for an order of {q} {p}."],
}

# Surface dressing around the last user message (training only): the request is the same.
# Each prefix ends a sentence or a label, so the request keeps its capital (it may start with an entity).
PREFIXES = ["Hi! ", "Hey there! ", "Hello. ", "Quick question: ", "Could you help? ", "OK. ", "One thing: ",
            "Good morning! ", "Thanks in advance. ", "Request: "]
SUFFIXES = [" Thanks!", " Thank you.", " Cheers.", " Please.", " Thanks a lot.", " Appreciated."]


def dress(rng, text):
    """text, about half of the time with a greeting before it and/or thanks after it."""
    if rng.random() < 0.3:
        text = rng.choice(PREFIXES) + text
    if rng.random() < 0.25:
        text = text + rng.choice(SUFFIXES)
    return text


def no_tool_pair(rng, pick):
    """-> (user text, answer, reasoning) of a request no demo tool serves: other arithmetic,
    counting, spelling, and small talk that names a city, a person or a product the way tool
    requests do (so the entity alone does not decide the call)."""
    k = rng.randrange(7)
    if k == 0:
        x, y = rng.randint(10, 99), rng.randint(0, 9)
        q = rng.choice(["What is {x} minus {y}?", "Subtract {y} from {x}.", "{x} - {y} = ?"]).format(x=x, y=y)
        return q, f"{x} minus {y} is {x - y}.", f"{x} - {y} = {x - y}."
    if k == 1:
        x, y = rng.randint(2, 12), rng.randint(2, 12)
        q = rng.choice(["What is {x} times {y}?", "Multiply {x} by {y}.", "{x} x {y}?"]).format(x=x, y=y)
        return q, f"{x} times {y} is {x * y}.", f"{x} * {y} = {x * y}."
    if k == 2:
        n = rng.randint(3, 9)
        q = rng.choice(["Count to {n}.", "Count from 1 to {n}, please.", "List the numbers 1 to {n}."]).format(n=n)
        return q, ", ".join(str(i) for i in range(1, n + 1)) + ".", f"Numbers from 1 to {n}."
    if k == 3:
        city = pick(P.CITIES)
        q = rng.choice(["I loved my trip to {c}!", "{c} is my favourite city.", "Have you heard of {c}?",
                        "My sister moved to {c}."]).format(c=city)
        return q, f"{city} sounds wonderful!", f"A friendly remark about {city}; no tool is needed."
    if k == 4:
        name = pick(P.NAMES)
        q = rng.choice(["{n} says thanks for the help.", "Tell me something nice about {n}.",
                        "{n} is my best friend.", "Is {n} a nice name?"]).format(n=name)
        return q, f"That's lovely, {name} sounds great!", f"A friendly remark about {name}."
    if k == 5:
        w = pick(P.PRODUCTS)
        q = rng.choice(["Spell the word {w}.", "How do you spell {w}?", "Spell out {w}, letter by letter."]).format(w=w)
        return q, "-".join(w.upper()), f"The letters of {w}."
    q, a = rng.choice([("Tell me a joke.", "Why did the tiny model cross the road? To reach the other token."),
                       ("How are you?", "I'm doing well, thanks! How can I help?"),
                       ("Goodbye!", "Goodbye! Have a nice day."), ("Who made you?", "I am a small K3 demo model."),
                       ("Are you a robot?", "I am a small K3 demo assistant."), ("Nice job.", "Thank you!")])
    return q, a, "A short friendly reply."
