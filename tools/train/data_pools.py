"""Entities, tools and phrasings of the demo model's synthetic conversations (make_data.py).

Every pool is split: the last HELDOUT_SHARE of each list (entities) and the last two phrasings
of each intent are used only by the held-out set, so evaluation sees names, cities and wordings
the model never trained on.
"""

CITIES = ("Paris London Tokyo Berlin Madrid Rome Lisbon Vienna Prague Warsaw Oslo Dublin Athens Cairo "
          "Lagos Nairobi Delhi Mumbai Seoul Beijing Shanghai Sydney Auckland Toronto Chicago Boston Denver "
          "Seattle Austin Miami Lima Bogota Quito Santiago Havana Dakar Tunis Riga Tallinn Vilnius Minsk "
          "Kyiv Sofia Zagreb Belgrade Bern Geneva Lyon Milan Naples Porto Seville Bilbao Hamburg Munich "
          "Zurich Antwerp Utrecht Krakow Gdansk Bergen Turku Osaka Kyoto Busan Hanoi Manila Jakarta Perth "
          "Dallas Phoenix Calgary Halifax Montreal Nantes").split()
NAMES = ("Alice Bruno Chen Dana Emil Fatima Greta Hugo Ines Jonas Kiran Lena Marco Nadia Oscar Priya Quinn "
         "Rosa Samir Tara Umar Vera Wes Xenia Yusuf Zoe Anton Bianca Carlos Daria Elias Freya Goran Hana "
         "Ivan Jana Kofi Lucia Mateo Nora Omar Paula Rafael Sofia Tomas Ursula Viktor Wanda Yara Zeno "
         "Amara Boris Celine Dmitri Elsa Felix Gala Henrik Ilse Joao").split()
SURNAMES = ("Smith Garcia Muller Rossi Tanaka Kim Silva Novak Dubois Jensen Nowak Costa Weber Moreau Sato "
            "Ivanova Lopez Fischer Bianchi Park Santos Horvat Larsen Meyer Ricci Suzuki Lee Mendes Kowalski "
            "Berg").split()
PRODUCTS = ("laptop phone tablet headphones camera printer monitor keyboard speaker watch router charger "
            "backpack bicycle kettle blender toaster lamp desk chair mirror heater fan drone scanner").split()
SYMBOLS = "ACME GLOBX INITK UMBRL STARK WAYNE HOOLI PIEDP DUNMF CYBRD SOYLN TYRLL VANDL MASSV OSCRP".split()
CURRENCIES = ["USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "SEK", "NOK", "INR"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
CONDITIONS = ["sunny", "cloudy", "rainy", "windy", "snowy", "foggy", "clear", "stormy"]
TOPICS = ["the budget", "the trip", "the meeting", "the launch", "the invoice", "the party", "the report",
          "the contract", "the schedule", "the delivery"]
HELDOUT_SHARE = 0.2

# Training draws an invented entity instead of a pool member this often (held-out records never
# do): a made-up city, name or ticker cannot be memorised, only copied from the user's words, so
# the model has to learn to copy instead of writing the pool's most likely member (the first
# checkpoint, trained on the pools alone, answered "Mumbai" for every city).
INVENTED_SHARE = 0.5
_ONSETS = "b c d f g h k l m n p r s t v z br dr gr kr pl st tr sh ch".split()
_VOWELS = "a e i o u a e o ia ei ou".split()
_CODAS = ["", "", "", "n", "r", "s", "l", "m", "t", "k"]


def _syllable(rng):
    return rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)


def letters(rng, lo=3, hi=8):
    """A random lower-case letter string: unlike a syllable word its letters cannot be guessed
    from each other, so only copying predicts them."""
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(lo, hi)))


def invent(rng, pool, letters_share=0.0):
    """An invented member for a pool: a capitalised 2-3 syllable word for cities, names and
    surnames (or, letters_share of the time, random letters), 3-5 capital letters for tickers, a
    lower-case word for products, "<verb> the <noun>" for reminder texts; never a word of any
    pool. With letters_share 0 no extra random draw is made (the default data is unchanged)."""
    while True:
        if pool is SYMBOLS:
            w = "".join(rng.choice("ABCDEFGHIJKLMNOPRSTUVWXYZ") for _ in range(rng.randint(3, 5)))
        elif pool is REMINDER_TEXTS:
            w = f"{_syllable(rng)}{_syllable(rng)} the {_syllable(rng)}{_syllable(rng)}"
        else:
            # Letters on the upper part of the draw: the order the copy-practice run was made with.
            use_letters = letters_share > 0 and rng.random() >= 1 - letters_share
            w = letters(rng) if use_letters else "".join(_syllable(rng) for _ in range(rng.randint(2, 3)))
            w = w if pool is PRODUCTS else w.capitalize()
        if not (set(w.split()) - {"the"}) & _POOL_WORDS:
            return w


def split(pool, heldout):
    """The training part or the held-out part of an entity pool."""
    cut = len(pool) - max(1, int(len(pool) * HELDOUT_SHARE))
    return pool[cut:] if heldout else pool[:cut]


def fn(name, description, properties, required):
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required}}}


S, N, I = {"type": "string"}, {"type": "number"}, {"type": "integer"}
TOOLS = {
    "get_weather": fn("get_weather", "Weather forecast for a city on a date.",
                      {"city": S, "date": dict(S, description="YYYY-MM-DD")}, ["city", "date"]),
    "convert_currency": fn("convert_currency", "Convert an amount between currencies.",
                           {"amount": N, "from": S, "to": S}, ["amount", "from", "to"]),
    "book_table": fn("book_table", "Book a restaurant table.",
                     {"city": S, "people": I, "date": S, "time": dict(S, description="HH:MM")},
                     ["city", "people", "date", "time"]),
    "send_email": fn("send_email", "Send an email.", {"to": S, "subject": S, "body": S}, ["to", "subject", "body"]),
    "get_stock_price": fn("get_stock_price", "Latest price of a stock.", {"symbol": S}, ["symbol"]),
    "search_flights": fn("search_flights", "Find flights between two cities.",
                         {"origin": S, "destination": S, "date": S}, ["origin", "destination", "date"]),
    "set_reminder": fn("set_reminder", "Set a reminder.", {"text": S, "date": S, "time": S},
                       ["text", "date", "time"]),
    "get_time": fn("get_time", "Current local time in a city.", {"city": S}, ["city"]),
}

# Phrasings per intent ({slots} filled by make_data.py); the last two are held out.
ASK = {
    "get_weather": ["What's the weather in {city} on {date_text}?", "Will it rain in {city} on {date_text}?",
                    "Weather forecast for {city}, {date_text} please.", "How warm is {city} going to be on {date_text}?",
                    "Check the weather for {city} on {date_text}.", "I'm in {city} on {date_text}, what weather should I expect?",
                    "Tell me the forecast in {city} for {date_text}.", "Do I need an umbrella in {city} on {date_text}?"],
    "convert_currency": ["Convert {amount} {from} to {to}.", "How much is {amount} {from} in {to}?",
                         "What are {amount} {from} worth in {to}?", "Change {amount} {from} into {to} please.",
                         "I have {amount} {from}. How many {to} is that?", "{amount} {from} to {to}?",
                         "Please tell me {amount} {from} in {to}.", "Exchange {amount} {from} for {to}: how much?"],
    "book_table": ["Book a table for {people} in {city} on {date_text} at {time}.",
                   "Reserve dinner for {people} people in {city}, {date_text} at {time}.",
                   "Can you get us a table in {city} for {people} on {date_text} at {time}?",
                   "We are {people}. Table in {city} on {date_text}, {time}.",
                   "I need a restaurant booking in {city}: {people} guests, {date_text}, {time}.",
                   "Table for {people}, {city}, {date_text} at {time} please.",
                   "Please book {people} seats at a restaurant in {city} on {date_text} at {time}.",
                   "Get a dinner reservation in {city} for {people} at {time} on {date_text}."],
    "send_email": ["Email {to} with the subject \"{subject}\" saying: {body}",
                   "Send {to} an email about {subject}: {body}",
                   "Write to {to}, subject \"{subject}\", and tell them: {body}",
                   "Please mail {to}. Subject: {subject}. Message: {body}",
                   "Drop {to} a note titled \"{subject}\": {body}", "Send an email to {to} ({subject}): {body}",
                   "Let {to} know by email, subject \"{subject}\": {body}",
                   "Compose an email for {to} on {subject} that says {body}"],
    "get_stock_price": ["What is {symbol} trading at?", "Price of {symbol} stock?", "How much is one {symbol} share?",
                        "Check the {symbol} share price.", "Give me the latest {symbol} quote.",
                        "Where is {symbol} now?", "Look up the stock price of {symbol}.", "{symbol} price please."],
    "search_flights": ["Find flights from {origin} to {destination} on {date_text}.",
                       "Any flights {origin} to {destination}, {date_text}?",
                       "I want to fly from {origin} to {destination} on {date_text}.",
                       "Search flights {origin} -> {destination} for {date_text}.",
                       "Show me flights leaving {origin} for {destination} on {date_text}.",
                       "How can I fly to {destination} from {origin} on {date_text}?",
                       "Look for a flight between {origin} and {destination} on {date_text}.",
                       "Flights on {date_text} from {origin} to {destination}?"],
    "set_reminder": ["Remind me to {text} on {date_text} at {time}.", "Set a reminder for {date_text} at {time}: {text}.",
                     "Please remind me at {time} on {date_text} to {text}.",
                     "Create a reminder, {date_text} {time}, to {text}.",
                     "Don't let me forget to {text} on {date_text} at {time}.",
                     "At {time} on {date_text} I need to {text}. Remind me.",
                     "Make a reminder to {text} for {date_text}, {time}.",
                     "Ping me on {date_text} at {time} so I {text}."],
    "get_time": ["What time is it in {city}?", "Current time in {city}?", "Tell me the local time in {city}.",
                 "What's the clock showing in {city} right now?", "Time in {city} please.",
                 "Is it late in {city} now?", "Check the time in {city}.", "How late is it in {city}?"],
}
REMINDER_TEXTS = ["call the bank", "water the plants", "pay the rent", "buy milk", "send the report",
                  "book a dentist visit", "renew my passport", "feed the cat", "back up my files", "call mom",
                  "return the books", "charge the car"]
SYSTEM_PROMPTS = ["You are a helpful assistant.", "You are a concise assistant. Answer briefly.",
                  "You are K3 demo, a small assistant that uses tools when they help.",
                  "Be friendly and precise.", "You help users plan trips and manage their day.",
                  "Answer in one sentence when you can.", "You are a careful assistant.",
                  "Keep answers short and correct."]

# Second-turn requests that lean on the first turn's city ("there"), for the followup kind; the
# last two of each list are held out.
FOLLOW_UP = {
    "get_time": ["And what time is it there?", "What's the local time there now?", "And the time there?",
                 "What time is it over there?", "Also check the time there.", "Now the local time there, please.",
                 "How late is it there right now?", "And the clock there?"],
    "get_weather": ["And the weather there on {date_text}?", "What about the weather there on {date_text}?",
                    "Will it be nice there on {date_text}?", "How about the forecast there for {date_text}?",
                    "Check the weather there for {date_text} too.", "And the forecast there, {date_text}?",
                    "What weather should I expect there on {date_text}?", "Is rain likely there on {date_text}?"],
    "book_table": ["Book a table there for {people} on {date_text} at {time}.",
                   "Then reserve a table there for {people}, {date_text} at {time}.",
                   "Get us a table there: {people} people, {date_text}, {time}.",
                   "Also book dinner there for {people} on {date_text} at {time}.",
                   "Please reserve there for {people} on {date_text}, {time}.",
                   "Great, a table there for {people} on {date_text} at {time}.",
                   "Could you book {people} seats there on {date_text} at {time}?",
                   "Now a restaurant there, {people} guests, {date_text} at {time}."],
}

ENTITY_POOLS = (CITIES, NAMES, SURNAMES, PRODUCTS, SYMBOLS, REMINDER_TEXTS)
_POOL_WORDS = frozenset(w for pool in ENTITY_POOLS for member in pool for w in member.split())
