#!/usr/bin/env python3
"""Writes the grammar bench corpus: bench/grammar/cases/NAME.json and NAME.txt.

    /usr/bin/python3 bench/grammar/make_cases.py [OUT_DIR]

Each case is a JSON Schema (written for this project, in the style of the
schemas public APIs send) and a generator of instances. The generators draw
from fixed pools of realistic values with a random.Random seeded by the case
name, so the output is the same on every run. Every instance is checked with
validate.py (types, bounds, patterns, formats, combinators, $ref, and the
order of object members) before anything is written; any failure stops the
script with exit status 1 and writes nothing.
"""
import datetime
import json
import os
import random
import sys
import unicodedata
import uuid

sys.dont_write_bytecode = True  # no __pycache__ next to the corpus
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate  # noqa: E402

SEED = "nextok-grammar-bench-1"
S2020 = "https://json-schema.org/draft/2020-12/schema"
S07 = "http://json-schema.org/draft-07/schema#"

CASES = []  # (name, kind, schema, generator)


def case(name, kind, schema):
    def register(gen):
        CASES.append((name, kind, schema, gen))
        return gen
    return register


# ---- helpers ------------------------------------------------------------------------------

SKIP = object()


def O(*pairs, **kw):
    """A dict in the order given, without the members whose value is SKIP."""
    d = {}
    for k, v in list(pairs) + list(kw.items()):
        if v is not SKIP:
            d[k] = v
    return d


class P:
    """Per-instance choices: instance 0 has every optional member, instance 1
    none, the others a random selection."""

    def __init__(self, r, i):
        self.r, self.i = r, i

    def opt(self, p=0.5):
        if self.i == 0:
            return True
        if self.i == 1:
            return False
        return self.r.random() < p

    def o(self, v, p=0.5):
        return v if self.opt(p) else SKIP

    def choice(self, seq):
        return self.r.choice(seq)

    def sample(self, seq, lo, hi=None):
        k = self.r.randint(lo, hi if hi is not None else lo)
        return self.r.sample(list(seq), min(k, len(seq)))

    def randint(self, a, b):
        return self.r.randint(a, b)

    def money(self, lo, hi):
        return round(self.r.uniform(lo, hi), 2)

    def dec(self, lo, hi, places=1):
        return round(self.r.uniform(lo, hi), places)


def ascii_slug(s, sep="."):
    s = s.replace("ø", "o").replace("Ø", "O").replace("ß", "ss").replace("đ", "d")
    s = unicodedata.normalize("NFKD", s)
    s = "".join(c for c in s if c.isascii() and (c.isalnum() or c == " "))
    return sep.join(s.lower().split())


PEOPLE = [("Zoë", "Adler"), ("Mateo", "García"), ("Aiko", "Tanaka"), ("Oluwaseun", "Bello"),
          ("Priya", "Raman"), ("Liam", "O'Connor"), ("Søren", "Madsen"), ("Chen", "Wei"),
          ("Fatima", "Zahra"), ("Jonas", "Müller"), ("Élodie", "Martin"), ("Nguyễn", "An"),
          ("Grace", "Hopper"), ("Ahmed", "Khalil"), ("Ingrid", "Johansson"), ("Kofi", "Mensah")]
DOMAINS = ["example.com", "mail.example.org", "acme.io", "contoso.co.uk", "fastmail.example.net"]

ADDRESSES = [
    ("1-9-1 Marunouchi", "Chiyoda-ku", "東京", "Tokyo", "100-0005", "JP"),
    ("Bahnhofstrasse 21", None, "Zürich", "ZH", "8001", "CH"),
    ("Rua Augusta 1508", "Apto 42", "São Paulo", "SP", "01304-001", "BR"),
    ("221B Baker Street", None, "London", None, "NW1 6XE", "GB"),
    ("350 5th Ave", "Floor 21", "New York", "NY", "10118", "US"),
    ("12 Admiralty Way", "Lekki Phase 1", "Lagos", "LA", "106104", "NG"),
    ("Laugavegur 15", None, "Reykjavík", None, "101", "IS"),
    ("ul. Floriańska 14", "m. 3", "Kraków", "Małopolskie", "31-019", "PL"),
    ("1455 Rue Peel", "Bureau 300", "Montréal", "QC", "H3A 1T5", "CA"),
    ("Marienplatz 8", None, "München", "BY", "80331", "DE"),
]
PHONES = ["+81312345678", "+41445551234", "+5511987654321", "+442079460958", "+12125550147",
          "+2348031234567", "3545512345", "+48124567890", "+15145550199", "0891234567"]
TIMEZONES = ["Asia/Tokyo", "Europe/Zurich", "America/Sao_Paulo", "Europe/London",
             "America/New_York", "Africa/Lagos", "Atlantic/Reykjavik", "Europe/Warsaw",
             "America/Toronto", "Europe/Berlin", "UTC"]
OFFSETS = ["Z", "Z", "+09:00", "+01:00", "-03:00", "+00:00", "-05:00", "+05:30"]
LOGINS = ["zoe-adler", "mgarcia", "aiko-t", "seun-bello", "priyar", "liamoc", "smadsen",
          "chenwei88", "fzahra", "jonas-mueller", "elodie-m", "octocat", "dependabot"]


def person(p):
    return p.choice(PEOPLE)


def full_name(pp):
    return pp[0] + " " + pp[1]


def email_of(p, pp=None):
    pp = pp or person(p)
    return ascii_slug(full_name(pp)) + "@" + p.choice(DOMAINS)


def date(p, y0=2024, y1=2025):
    y = p.randint(y0, y1)
    m = p.randint(1, 12)
    d = p.randint(1, 28)
    return "%04d-%02d-%02d" % (y, m, d)


def time_(p, frac=False, offset=None):
    t = "%02d:%02d:%02d" % (p.randint(0, 23), p.randint(0, 59), p.randint(0, 59))
    if frac and p.r.random() < 0.4:
        t += "." + "%03d" % p.randint(0, 999)
    return t + (offset if offset is not None else p.choice(OFFSETS))


def datetime_(p, y0=2024, y1=2025, frac=True):
    return date(p, y0, y1) + "T" + time_(p, frac)


def uuid4(p):
    return str(uuid.UUID(int=p.r.getrandbits(128), version=4))


def token(p, n, alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"):
    return "".join(p.choice(alphabet) for _ in range(n))


def hexs(p, n):
    return token(p, n, "0123456789abcdef")


# ==== function-calling tool argument schemas ===============================================

@case("tool_weather", "tool", {
    "$schema": S2020,
    "title": "get_weather",
    "description": "Get the current weather, and optionally a daily forecast, for a location.",
    "type": "object",
    "properties": {
        "location": {"type": "string", "description": "City and country, e.g. \"Paris, France\", or a postal code.",
                     "minLength": 2, "maxLength": 100},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        "include_forecast": {"type": "boolean", "default": False},
        "forecast_days": {"type": "integer", "minimum": 1, "maximum": 14,
                          "description": "Days of forecast when include_forecast is true."},
        "fields": {"type": "array", "description": "Which measurements to return.",
                   "items": {"type": "string", "enum": ["temperature", "humidity", "wind", "precipitation",
                                                        "uv_index", "air_quality"]},
                   "minItems": 1, "maxItems": 6},
    },
    "required": ["location"],
    "additionalProperties": False,
})
def _(p):
    locs = ["Paris, France", "東京, Japan", "Zürich, Switzerland", "São Paulo, Brazil", "Reykjavík",
            "Lagos, Nigeria", "10118", "Seattle, WA", "Kraków, Poland", "Cape Town, South Africa"]
    fc = p.opt()
    return O(location=p.choice(locs), unit=p.o(p.choice(["celsius", "fahrenheit"])),
             include_forecast=fc if p.opt(0.7) else SKIP,
             forecast_days=p.randint(1, 14) if fc else SKIP,
             fields=p.o(p.sample(["temperature", "humidity", "wind", "precipitation", "uv_index", "air_quality"], 1, 4)))


@case("tool_search", "tool", {
    "$schema": S2020,
    "title": "web_search",
    "description": "Search the web and return the top results with titles, URLs and snippets.",
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 400, "description": "The search query."},
        "num_results": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
        "filters": {
            "type": "object",
            "properties": {
                "site": {"type": "string", "pattern": "^[a-z0-9.-]+\\.[a-z]{2,}$",
                         "description": "Restrict results to one domain."},
                "freshness": {"type": "string", "enum": ["day", "week", "month", "year", "any"]},
                "language": {"type": "string", "pattern": "^[a-z]{2}$", "examples": ["en", "de", "ja"]},
                "file_type": {"type": "string", "enum": ["pdf", "html", "doc", "any"]},
            },
            "additionalProperties": False,
        },
        "safe_search": {"type": "string", "enum": ["off", "moderate", "strict"], "default": "moderate"},
    },
    "required": ["query"],
})
def _(p):
    qs = ["ramen near 東京駅 open late", "best café in Zürich ☕", "rust borrow checker \"cannot move out of\"",
          "how to renew a Brazilian passport abroad", "RFC 3339 vs ISO 8601 differences",
          "site reliability engineering error budget policy template", "Zoë Kravitz new film reviews",
          "python asyncio gather vs TaskGroup", "cheap flights LHR to KEF in March", "llama.cpp GBNF grammar examples",
          "Kraków old town walking tour 🏰", "who won the 2023 Tour de France"]
    filters = O(site=p.o(p.choice(["stackoverflow.com", "docs.python.org", "en.wikipedia.org", "github.com",
                                   "nytimes.com", "gov.uk"])),
                freshness=p.o(p.choice(["day", "week", "month", "year", "any"])),
                language=p.o(p.choice(["en", "de", "ja", "pt", "fr"])),
                file_type=p.o(p.choice(["pdf", "html", "any"])))
    return O(query=p.choice(qs), num_results=p.o(p.choice([3, 5, 10, 20])), filters=p.o(filters),
             safe_search=p.o(p.choice(["off", "moderate", "strict"])))


@case("tool_send_email", "tool", {
    "$schema": S2020,
    "title": "send_email",
    "description": "Send an email on behalf of the user. Ask for confirmation before sending to external recipients.",
    "type": "object",
    "properties": {
        "to": {"type": "array", "items": {"type": "string", "format": "email"}, "minItems": 1, "maxItems": 10},
        "cc": {"type": "array", "items": {"type": "string", "format": "email"}, "maxItems": 10},
        "subject": {"type": "string", "maxLength": 200},
        "body": {"type": "string", "description": "Plain-text body; use \\n for line breaks."},
        "importance": {"type": "string", "enum": ["low", "normal", "high"], "default": "normal"},
        "attachments": {
            "type": "array", "maxItems": 5,
            "items": {
                "type": "object",
                "properties": {
                    "filename": {"type": "string", "pattern": "^[^/\\\\]+\\.[A-Za-z0-9]{1,5}$"},
                    "content_type": {"type": "string", "pattern": "^[a-z]+/[a-z0-9.+-]+$"},
                    "url": {"type": "string", "format": "uri"},
                },
                "required": ["filename", "url"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["to", "subject", "body"],
    "additionalProperties": False,
})
def _(p):
    mails = [("Quarterly report", "Hi team,\n\nAttached is the Q3 report. Revenue grew 12% quarter over quarter.\n\nBest,\nPriya"),
             ("Re: lunch on Friday?", "Sounds good! Let's meet at the ramen place at 12:30 🍜"),
             ("Invoice INV-2024-00042", "Dear Mr. Müller,\n\nplease find the invoice for October attached. Payment is due within 30 days.\n\nKind regards,\nZoë"),
             ("Outage postmortem", "Summary: the \"orders\" service returned 503s for 14 minutes.\nRoot cause: an expired TLS certificate on the internal load balancer."),
             ("東京出張のご案内", "来週の東京出張の日程をお送りします。ご確認ください。"),
             ("Welcome aboard!", "Hi Kofi,\n\nwelcome to the team. Your laptop ships Monday.\n\n— Ingrid"),
             ("Action required: rotate your API key", "Your key ending in ...7f3a expires on 2025-01-31. Rotate it in Settings → API keys.")]
    subject, body = p.choice(mails)
    files = [("report-q3.pdf", "application/pdf"), ("photo 1.jpg", "image/jpeg"), ("data.csv", "text/csv"),
             ("slides.pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
             ("notes.md", "text/markdown")]
    att = [O(filename=f, content_type=p.o(ct, 0.7),
             url="https://files.example.com/u/%s/%s" % (token(p, 8), ascii_slug(f.rsplit(".", 1)[0], "-") + "." + f.rsplit(".", 1)[1]))
           for f, ct in p.sample(files, 1, 3)]
    return O(to=[email_of(p) for _ in range(p.randint(1, 3))], cc=p.o([email_of(p) for _ in range(p.randint(1, 2))]),
             subject=subject, body=body, importance=p.o(p.choice(["low", "normal", "high"])), attachments=p.o(att))


@case("tool_create_event", "tool", {
    "$schema": S2020,
    "title": "create_calendar_event",
    "description": "Create an event in the user's primary calendar.",
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 200},
        "start": {"type": "string", "format": "date-time", "description": "RFC 3339 start time with offset."},
        "end": {"type": "string", "format": "date-time"},
        "all_day": {"type": "boolean"},
        "location": {"type": "string"},
        "attendees": {
            "type": "array", "maxItems": 50,
            "items": {
                "type": "object",
                "properties": {
                    "email": {"type": "string", "format": "email"},
                    "name": {"type": "string"},
                    "optional": {"type": "boolean", "default": False},
                },
                "required": ["email"],
            },
        },
        "reminders": {
            "type": "array", "maxItems": 5,
            "items": {
                "type": "object",
                "properties": {
                    "method": {"type": "string", "enum": ["email", "popup"]},
                    "minutes_before": {"type": "integer", "minimum": 0, "maximum": 40320},
                },
                "required": ["method", "minutes_before"],
            },
        },
        "visibility": {"type": "string", "enum": ["default", "public", "private"]},
    },
    "required": ["title", "start"],
})
def _(p):
    titles = ["1:1 Zoë / Mateo", "Sprint planning", "Dentist", "Flight to 東京 ✈️", "Board meeting Q4",
              "Yoga class", "Design review: checkout v2", "Dinner at Café Sørensen"]
    d = date(p)
    off = p.choice(["Z", "+09:00", "+01:00", "-05:00"])
    h = p.randint(7, 18)
    start = "%sT%02d:%02d:00%s" % (d, h, p.choice([0, 15, 30]), off)
    end = "%sT%02d:%02d:00%s" % (d, h + 1, p.choice([0, 30, 45]), off)
    att = [O(email=email_of(p, pp), name=p.o(full_name(pp)), optional=p.o(p.choice([True, False]), 0.3))
           for pp in p.sample(PEOPLE, 1, 4)]
    rem = [O(method=p.choice(["email", "popup"]), minutes_before=p.choice([5, 10, 30, 60, 1440]))
           for _ in range(p.randint(1, 2))]
    loc = ["Room 4.12 \"Matterhorn\"", "https://meet.example.com/abc-defg-hij", "Praxis Dr. Weiß, Marienplatz 8, München",
           "HND Terminal 3", "Zoom"]
    return O(title=p.choice(titles), start=start, end=p.o(end, 0.8), all_day=p.o(False, 0.3),
             location=p.o(p.choice(loc)), attendees=p.o(att), reminders=p.o(rem),
             visibility=p.o(p.choice(["default", "public", "private"])))


@case("tool_run_code", "tool", {
    "$schema": S2020,
    "title": "run_code",
    "description": "Execute a code snippet in a sandbox and return stdout, stderr and the exit status.",
    "type": "object",
    "properties": {
        "language": {"type": "string", "enum": ["python", "javascript", "bash", "sql", "r"]},
        "code": {"type": "string", "minLength": 1, "maxLength": 20000},
        "timeout_seconds": {"type": "number", "exclusiveMinimum": 0, "maximum": 300, "default": 30},
        "stdin": {"type": "string"},
        "packages": {"type": "array", "maxItems": 20,
                     "items": {"type": "string", "pattern": "^[A-Za-z0-9_.-]+(==[0-9][0-9A-Za-z.]*)?$"}},
    },
    "required": ["language", "code"],
    "additionalProperties": False,
})
def _(p):
    snippets = [
        ("python", "import statistics\nprices = [12.5, 9.99, 14.25]\nprint(f\"mean={statistics.mean(prices):.2f}\")", ["numpy==1.26.4"]),
        ("python", "import pandas as pd\ndf = pd.read_csv(\"sales.csv\")\nprint(df.groupby(\"region\")[\"revenue\"].sum().sort_values())", ["pandas==2.2.2", "pyarrow"]),
        ("python", "def fib(n):\n\ta, b = 0, 1\n\tfor _ in range(n):\n\t\ta, b = b, a + b\n\treturn a\nprint([fib(i) for i in range(10)])", []),
        ("javascript", "const res = await fetch(\"https://api.example.com/v1/items?limit=5\");\nconst data = await res.json();\nconsole.log(data.items.map(i => i.name).join(\", \"));", ["node-fetch"]),
        ("javascript", "const s = 'Zoë 東京 🚀';\nconsole.log([...s].length, s.normalize('NFD').length);", []),
        ("bash", "set -euo pipefail\nfor f in logs/*.log; do\n  echo \"$f: $(grep -c 'ERROR' \"$f\")\"\ndone", []),
        ("sql", "SELECT country, COUNT(*) AS n\nFROM customers\nWHERE created_at >= '2024-01-01'\nGROUP BY country\nORDER BY n DESC\nLIMIT 10;", []),
        ("r", "df <- read.csv(\"sales.csv\")\nsummary(lm(revenue ~ spend, data = df))", ["ggplot2"]),
        ("python", "import sys, json\ndata = json.load(sys.stdin)\nprint(sum(x[\"qty\"] for x in data[\"lines\"]))", []),
    ]
    lang, code, pkgs = p.choice(snippets)
    stdin = "{\"lines\": [{\"qty\": 2}, {\"qty\": 5}]}" if "stdin" in code else "3\n1 2 3\n"
    return O(language=lang, code=code, timeout_seconds=p.o(p.choice([5, 10, 2.5, 60, 0.75])),
             stdin=stdin if "stdin" in code else p.o(stdin, 0.2),
             packages=pkgs if pkgs and p.opt(0.8) else SKIP)


@case("tool_stock_quote", "tool", {
    "$schema": S2020,
    "title": "get_stock_quote",
    "description": "Look up price history for a listed security.",
    "type": "object",
    "properties": {
        "symbol": {"type": "string", "pattern": "^[A-Z]{1,5}(\\.[A-Z]{1,2})?$", "description": "Ticker, e.g. AAPL or BRK.B"},
        "exchange": {"type": "string", "enum": ["NASDAQ", "NYSE", "LSE", "TSE", "XETRA", "B3"]},
        "interval": {"type": "string", "enum": ["1m", "5m", "15m", "1h", "1d", "1wk"], "default": "1d"},
        "start_date": {"type": "string", "format": "date"},
        "end_date": {"type": "string", "format": "date"},
        "adjusted": {"type": "boolean", "default": True},
    },
    "required": ["symbol"],
})
def _(p):
    sym = p.choice([("AAPL", "NASDAQ"), ("BRK.B", "NYSE"), ("SAP", "XETRA"), ("VOD", "LSE"), ("TM", "TSE"),
                    ("PETR", "B3"), ("NVDA", "NASDAQ"), ("SHOP", "NYSE")])
    s = date(p, 2023, 2024)
    return O(symbol=sym[0], exchange=p.o(sym[1]), interval=p.o(p.choice(["1m", "5m", "15m", "1h", "1d", "1wk"])),
             start_date=p.o(s), end_date=p.o(s.replace("2023", "2025").replace("2024", "2025")),
             adjusted=p.o(p.choice([True, False]), 0.3))


@case("tool_book_flight", "tool", {
    "$schema": S2020,
    "title": "search_flights",
    "description": "Search available flights. Airports are IATA codes.",
    "type": "object",
    "properties": {
        "origin": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "destination": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "departure_date": {"type": "string", "format": "date"},
        "return_date": {"type": "string", "format": "date"},
        "passengers": {
            "type": "object",
            "properties": {
                "adults": {"type": "integer", "minimum": 1, "maximum": 9},
                "children": {"type": "integer", "minimum": 0, "maximum": 8},
                "infants": {"type": "integer", "minimum": 0, "maximum": 4},
            },
            "required": ["adults"],
            "additionalProperties": False,
        },
        "cabin": {"type": "string", "enum": ["economy", "premium_economy", "business", "first"]},
        "max_stops": {"type": "integer", "minimum": 0, "maximum": 3},
        "preferred_airlines": {"type": "array", "items": {"type": "string", "pattern": "^[A-Z0-9]{2}$"}, "maxItems": 5},
    },
    "required": ["origin", "destination", "departure_date", "passengers"],
    "additionalProperties": False,
})
def _(p):
    o, d = p.sample(["LHR", "HND", "KEF", "GRU", "JFK", "LOS", "ZRH", "KRK", "YUL", "MUC", "SFO", "CPT"], 2)
    dep = date(p, 2025, 2025)
    ret = dep[:8] + "%02d" % min(28, int(dep[8:]) + p.randint(0, 12))
    return O(origin=o, destination=d, departure_date=dep, return_date=p.o(ret),
             passengers=O(adults=p.randint(1, 4), children=p.o(p.randint(0, 3)), infants=p.o(p.randint(0, 1), 0.3)),
             cabin=p.o(p.choice(["economy", "premium_economy", "business", "first"])),
             max_stops=p.o(p.randint(0, 2)), preferred_airlines=p.o(p.sample(["LH", "NH", "FI", "BA", "LX", "AC", "U2"], 1, 3)))


LANGS = ["en", "de", "fr", "es", "ja", "zh", "pt", "it", "nl", "pl", "ko"]


@case("tool_translate", "tool", {
    "$schema": S2020,
    "title": "translate_text",
    "description": "Translate text between languages, optionally with a glossary of fixed term translations.",
    "type": "object",
    "properties": {
        "text": {"type": "string", "minLength": 1, "maxLength": 5000},
        "source_lang": {"type": "string", "enum": ["auto"] + LANGS, "default": "auto"},
        "target_lang": {"type": "string", "enum": LANGS},
        "formality": {"type": "string", "enum": ["default", "more", "less"]},
        "preserve_formatting": {"type": "boolean"},
        "glossary": {
            "type": "array", "maxItems": 20,
            "items": {
                "type": "object",
                "properties": {"source": {"type": "string", "minLength": 1}, "target": {"type": "string", "minLength": 1}},
                "required": ["source", "target"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["text", "target_lang"],
})
def _(p):
    texts = [("en", "Your order has shipped and should arrive within 3–5 business days."),
             ("de", "Könnten Sie mir bitte die Rechnung für Oktober noch einmal schicken?"),
             ("ja", "東京駅から新宿駅までの行き方を教えてください。"),
             ("fr", "L'été dernier, nous avons visité Montréal et Québec."),
             ("en", "Press \"Save\" to keep your changes.\nPress \"Cancel\" to discard them."),
             ("pt", "Obrigado pela compra! 🎉 Seu cupom é válido até dezembro."),
             ("en", "The quick brown fox jumps over the lazy dog."),
             ("pl", "Zażółć gęślą jaźń.")]
    src, text = p.choice(texts)
    tgt = p.choice([l for l in LANGS if l != src])
    gl = [O(source=s, target=t) for s, t in p.sample([("checkout", "Kasse"), ("order", "注文"), ("cart", "carrinho"),
                                                       ("Save", "Speichern"), ("invoice", "facture")], 1, 2)]
    return O(text=text, source_lang=p.o(p.choice(["auto", src])), target_lang=tgt,
             formality=p.o(p.choice(["default", "more", "less"])), preserve_formatting=p.o(True, 0.3), glossary=p.o(gl, 0.3))


IDENT = "^[a-z_][a-z0-9_]*$"


@case("tool_query_database", "tool", {
    "$schema": S2020,
    "title": "query_database",
    "description": "Run a read-only query against the analytics warehouse.",
    "type": "object",
    "properties": {
        "table": {"type": "string", "pattern": IDENT},
        "columns": {"type": "array", "items": {"type": "string", "pattern": IDENT}, "minItems": 1, "maxItems": 30},
        "where": {
            "type": "array", "maxItems": 10,
            "items": {
                "type": "object",
                "properties": {
                    "column": {"type": "string", "pattern": IDENT},
                    "op": {"type": "string", "enum": ["=", "!=", "<", "<=", ">", ">=", "like", "in", "is_null"]},
                    "value": {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"},
                                        {"type": "array", "items": {"type": ["string", "number"]}, "maxItems": 100}]},
                },
                "required": ["column", "op", "value"],
                "additionalProperties": False,
            },
        },
        "order_by": {
            "type": "array", "maxItems": 3,
            "items": {"type": "object",
                      "properties": {"column": {"type": "string", "pattern": IDENT},
                                     "direction": {"type": "string", "enum": ["asc", "desc"]}},
                      "required": ["column"], "additionalProperties": False},
        },
        "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100},
        "offset": {"type": "integer", "minimum": 0},
    },
    "required": ["table"],
    "additionalProperties": False,
})
def _(p):
    tables = {"orders": ["id", "customer_id", "total", "currency", "status", "created_at"],
              "customers": ["id", "name", "email", "country", "created_at", "is_active"],
              "events": ["id", "user_id", "event_name", "ts", "properties"],
              "products": ["sku", "title", "price", "stock", "category"]}
    t = p.choice(sorted(tables))
    cols = tables[t]
    conds = {"orders": [("status", "in", ["paid", "shipped"]), ("total", ">=", 100), ("currency", "=", "EUR"), ("created_at", ">=", "2024-10-01")],
             "customers": [("country", "=", "JP"), ("is_active", "=", True), ("name", "like", "%Zoë%"), ("email", "is_null", None)],
             "events": [("event_name", "=", "checkout_completed"), ("user_id", "in", [42, 1337, 9001]), ("ts", "<", "2025-01-01T00:00:00Z")],
             "products": [("price", "<", 19.99), ("stock", "<=", 0), ("category", "in", ["books", "toys"]), ("title", "like", "%\"limited\"%")]}
    where = [O(column=c, op=o, value=v) for c, o, v in p.sample(conds[t], 1, 3)]
    return O(table=t, columns=p.o(p.sample(cols, 1, 4)), where=p.o(where),
             order_by=p.o([O(column=p.choice(cols), direction=p.o(p.choice(["asc", "desc"]), 0.7))]),
             limit=p.o(p.choice([10, 50, 100, 500])), offset=p.o(p.choice([0, 100, 200]), 0.3))


@case("tool_create_issue", "tool", {
    "$schema": S2020,
    "title": "create_issue",
    "description": "Open an issue in a GitHub repository.",
    "type": "object",
    "properties": {
        "repo": {"type": "string", "pattern": "^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$", "description": "owner/name"},
        "title": {"type": "string", "minLength": 1, "maxLength": 256},
        "body": {"type": "string", "description": "Markdown."},
        "labels": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 50}, "maxItems": 10},
        "assignees": {"type": "array", "items": {"type": "string", "pattern": "^[A-Za-z0-9-]{1,39}$"}, "maxItems": 10},
        "milestone": {"type": "integer", "minimum": 1},
        "priority": {"type": "string", "enum": ["P0", "P1", "P2", "P3"]},
    },
    "required": ["repo", "title"],
})
def _(p):
    issues = [("Crash when parsing empty config file", "Steps to reproduce:\n\n1. `touch config.toml`\n2. run `app --config config.toml`\n\nExpected: defaults. Actual: `panic: unexpected EOF`."),
              ("Docs: typo in README install section", "`pip install nexttok` should be `pip install nextok`."),
              ("Support for \"dark mode\" in settings page 🌙", "Many users asked for it in #412."),
              ("Unicode filenames break upload (e.g. 東京.png)", "Uploading `東京.png` returns 400 Bad Request; ASCII names work."),
              ("Flaky test: test_retry_backoff", "Fails ~1 in 20 runs on CI:\n```\nAssertionError: 3 != 4\n```"),
              ("Bump lodash from 4.17.20 to 4.17.21", "Security fix for CVE-2021-23337."),
              ("Add Polish translation", "Zażółć gęślą jaźń — happy to contribute the strings.")]
    t, b = p.choice(issues)
    return O(repo=p.choice(["acme/web-app", "nextok/nextok", "zoe-adler/dotfiles", "octo-org/octo.js", "torvalds/linux"]),
             title=t, body=p.o(b, 0.7), labels=p.o(p.sample(["bug", "documentation", "enhancement", "good first issue",
                                                              "i18n", "ci", "dependencies"], 1, 3)),
             assignees=p.o(p.sample(LOGINS[:-1], 1, 2)), milestone=p.o(p.randint(1, 30)),
             priority=p.o(p.choice(["P0", "P1", "P2", "P3"])))


@case("tool_smart_home", "tool", {
    "$schema": S2020,
    "title": "control_device",
    "description": "Control a smart-home device (lights, plugs, thermostats).",
    "type": "object",
    "properties": {
        "device_id": {"type": "string", "pattern": "^[a-z_]+\\.[a-z0-9_]+$", "examples": ["light.kitchen"]},
        "action": {"type": "string", "enum": ["turn_on", "turn_off", "toggle", "set"]},
        "brightness": {"type": "integer", "minimum": 0, "maximum": 100},
        "color_rgb": {
            "type": "array", "description": "[red, green, blue]",
            "prefixItems": [{"type": "integer", "minimum": 0, "maximum": 255},
                            {"type": "integer", "minimum": 0, "maximum": 255},
                            {"type": "integer", "minimum": 0, "maximum": 255}],
            "minItems": 3, "maxItems": 3,
        },
        "color_temp_kelvin": {"type": "integer", "minimum": 1500, "maximum": 9000},
        "target_temperature": {"type": "number", "minimum": 5, "maximum": 30},
        "transition_seconds": {"type": "number", "minimum": 0, "maximum": 60},
    },
    "required": ["device_id", "action"],
    "additionalProperties": False,
})
def _(p):
    dev = p.choice(["light.kitchen", "light.living_room", "switch.coffee_maker", "climate.hallway", "light.bedroom_2",
                    "fan.office"])
    act = p.choice(["turn_on", "turn_off", "toggle", "set"])
    light = dev.startswith("light.")
    return O(device_id=dev, action=act, brightness=p.o(p.randint(1, 100)) if light else SKIP,
             color_rgb=p.o([p.randint(0, 255) for _ in range(3)]) if light else SKIP,
             color_temp_kelvin=p.o(p.choice([2700, 3000, 4000, 6500])) if light else SKIP,
             target_temperature=p.o(p.choice([19, 20.5, 21, 22.5])) if dev.startswith("climate.") else SKIP,
             transition_seconds=p.o(p.choice([0, 0.5, 2, 10])))


@case("tool_edit_file", "tool", {
    "$schema": S2020,
    "title": "edit_file",
    "description": "Apply exact text replacements to a file in the workspace. Each old_text must occur in the file.",
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096},
        "edits": {
            "type": "array", "minItems": 1, "maxItems": 20,
            "items": {
                "type": "object",
                "properties": {
                    "old_text": {"type": "string", "minLength": 1},
                    "new_text": {"type": "string"},
                    "replace_all": {"type": "boolean", "default": False},
                },
                "required": ["old_text", "new_text"],
                "additionalProperties": False,
            },
        },
        "dry_run": {"type": "boolean", "default": False},
    },
    "required": ["path", "edits"],
})
def _(p):
    files = {
        "src/app.py": [("def handler(event):\n    return 200", "def handler(event, context):\n    return {\"statusCode\": 200}"),
                       ("import os", "import os\nimport logging"), ("print(\"debug\")", "")],
        "README.md": [("## Install", "## Installation"), ("Copyright 2023", "Copyright 2025"), ("nexttok", "nextok")],
        "web/src/Button.tsx": [("color=\"blue\"", "color=\"primary\""),
                               ("export default function Button(props) {", "export default function Button({ label, onClick }: Props) {")],
        "config/settings.yaml": [("replicas: 2", "replicas: 3"), ("log_level: debug", "log_level: info")],
        "docs/日本語/README.md": [("東京", "東京都"), ("TODO: 翻訳", "翻訳済み ✅")],
    }
    path = p.choice(sorted(files))
    edits = [O(old_text=a, new_text=b, replace_all=p.o(p.choice([True, False]), 0.3)) for a, b in p.sample(files[path], 1, 3)]
    return O(path=path, edits=edits, dry_run=p.o(p.choice([True, False])))


@case("tool_generate_image", "tool", {
    "$schema": S2020,
    "title": "generate_image",
    "description": "Generate images from a text prompt.",
    "type": "object",
    "properties": {
        "prompt": {"type": "string", "minLength": 1, "maxLength": 4000},
        "negative_prompt": {"type": "string", "maxLength": 1000},
        "size": {"type": "string", "enum": ["256x256", "512x512", "1024x1024", "1792x1024", "1024x1792"], "default": "1024x1024"},
        "n": {"type": "integer", "minimum": 1, "maximum": 4, "default": 1},
        "quality": {"type": "string", "enum": ["standard", "hd"]},
        "style": {"type": "string", "enum": ["vivid", "natural"]},
        "seed": {"type": "integer", "minimum": 0, "maximum": 4294967295},
        "output_format": {"type": "string", "enum": ["png", "jpeg", "webp"]},
    },
    "required": ["prompt"],
})
def _(p):
    prompts = ["A watercolor painting of Mount Fuji at dawn, cherry blossoms in the foreground",
               "Isometric pixel-art coffee shop in Zürich, warm lighting, rainy evening",
               "Product photo of a matte black water bottle on a marble counter, soft shadows",
               "A cat astronaut 🐱🚀 floating above Earth, cinematic, 35mm film grain",
               "Logo for a bakery called \"Zoë's\" — minimal, line art, two colours",
               "東京の夜景、ネオン、雨上がりの路地、アニメ風", "Children's book illustration of a fox reading under a tree"]
    return O(prompt=p.choice(prompts), negative_prompt=p.o(p.choice(["blurry, low quality", "text, watermark", "extra fingers"]), 0.4),
             size=p.o(p.choice(["512x512", "1024x1024", "1792x1024", "1024x1792"])), n=p.o(p.randint(1, 4)),
             quality=p.o(p.choice(["standard", "hd"])), style=p.o(p.choice(["vivid", "natural"])),
             seed=p.o(p.randint(0, 4294967295), 0.4), output_format=p.o(p.choice(["png", "jpeg", "webp"])))


@case("tool_http_request", "tool", {
    "$schema": S2020,
    "title": "http_request",
    "description": "Make an HTTP request to an allow-listed API and return the status, headers and body.",
    "type": "object",
    "properties": {
        "method": {"type": "string", "enum": ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]},
        "url": {"type": "string", "format": "uri"},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "query": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}},
        "body": {"type": ["string", "null"], "description": "Request body, usually JSON text."},
        "timeout_ms": {"type": "integer", "minimum": 1, "maximum": 120000},
        "follow_redirects": {"type": "boolean", "default": True},
    },
    "required": ["method", "url"],
    "additionalProperties": False,
})
def _(p):
    reqs = [("GET", "https://api.example.com/v1/users/42", None),
            ("POST", "https://api.example.com/v1/orders", "{\"sku\": \"ABC-1234\", \"qty\": 2}"),
            ("PATCH", "https://api.github.com/repos/acme/web-app/issues/7", "{\"state\": \"closed\"}"),
            ("DELETE", "https://api.example.com/v1/sessions/5f2b9c", None),
            ("GET", "https://maps.example.com/geocode?address=Marienplatz%208%2C%20M%C3%BCnchen", None),
            ("PUT", "http://localhost:8080/config", "retries=3\ntimeout=30"),
            ("HEAD", "https://cdn.example.net/assets/app.js", None)]
    m, url, body = p.choice(reqs)
    hdr = O(("Accept", "application/json"), ("Authorization", p.o("Bearer " + token(p, 24))),
            ("Content-Type", "application/json" if body and body.startswith("{") else SKIP),
            ("User-Agent", p.o("nextok-agent/0.3 (+https://example.com/bot)")))
    q = O(("page", p.o(p.randint(1, 5))), ("per_page", p.o(50)), ("include_archived", p.o(False)), ("lang", p.o("ja")))
    return O(method=m, url=url, headers=p.o(hdr), query=p.o(q) if m == "GET" else SKIP,
             body=body if body else p.o(None, 0.2), timeout_ms=p.o(p.choice([1000, 5000, 30000])),
             follow_redirects=p.o(p.choice([True, False]), 0.3))


@case("tool_get_directions", "tool", {
    "$schema": S2020,
    "title": "get_directions",
    "description": "Route between two places, optionally via waypoints.",
    "type": "object",
    "properties": {
        "origin": {"type": "string", "minLength": 1},
        "destination": {"type": "string", "minLength": 1},
        "mode": {"type": "string", "enum": ["driving", "walking", "bicycling", "transit"], "default": "driving"},
        "waypoints": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
        "avoid": {"type": "array", "items": {"type": "string", "enum": ["tolls", "highways", "ferries"]}, "maxItems": 3},
        "departure_time": {"type": "string", "format": "date-time"},
        "units": {"type": "string", "enum": ["metric", "imperial"]},
    },
    "required": ["origin", "destination"],
})
def _(p):
    places = ["東京駅", "Shibuya Crossing", "Zürich HB", "Uetliberg", "221B Baker Street, London", "King's Cross",
              "Marienplatz, München", "Olympiapark", "Pão de Açúcar, Rio de Janeiro", "Hallgrímskirkja, Reykjavík",
              "Wawel Castle", "Golden Gate Bridge"]
    o, d = p.sample(places, 2)
    return O(origin=o, destination=d, mode=p.o(p.choice(["driving", "walking", "bicycling", "transit"])),
             waypoints=p.o(p.sample([x for x in places if x not in (o, d)], 1, 3), 0.3),
             avoid=p.o(p.sample(["tolls", "highways", "ferries"], 1, 2)), departure_time=p.o(datetime_(p, 2025, 2025, False)),
             units=p.o(p.choice(["metric", "imperial"])))


# ==== nested objects with enums and patterns ==================================================

COUNTRY = {"type": "string", "pattern": "^[A-Z]{2}$", "description": "ISO 3166-1 alpha-2"}
PHONE = {"type": "string", "pattern": "^\\+?[0-9]{7,15}$"}
CURRENCY = {"type": "string", "pattern": "^[A-Z]{3}$", "description": "ISO 4217"}
SKUS = [("ABC-1234", "Merino wool beanie", 24.0), ("KIT-0042", "Pour-over coffee kit", 59.9),
        ("BKS-7781", "The Pragmatic Programmer (20th anniv.)", 41.5), ("TOY-3310", "Wooden train set 🚂", 35.0),
        ("ELC-9001", "USB-C cable 2 m", 9.99), ("TEA-0808", "Sencha 煎茶 100 g", 12.75), ("SHO-4410", "Trail running shoes", 129.0)]


@case("order", "pattern", {
    "$schema": S2020,
    "$id": "https://schemas.example.com/shop/order.json",
    "title": "Order",
    "description": "An e-commerce order as the shop's webhooks deliver it.",
    "type": "object",
    "properties": {
        "id": {"type": "string", "pattern": "^ORD-[0-9]{8}$"},
        "status": {"type": "string", "enum": ["pending", "paid", "shipped", "delivered", "cancelled", "refunded"]},
        "customer": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "pattern": "^cus_[A-Za-z0-9]{10}$"},
                "name": {"type": "string", "minLength": 1},
                "email": {"type": "string", "format": "email"},
                "phone": PHONE,
            },
            "required": ["id", "name"],
            "additionalProperties": False,
        },
        "items": {
            "type": "array", "minItems": 1, "maxItems": 50,
            "items": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
                    "name": {"type": "string"},
                    "quantity": {"type": "integer", "minimum": 1},
                    "unit_price": {"type": "number", "minimum": 0},
                    "options": {"type": "object", "additionalProperties": {"type": "string"}},
                },
                "required": ["sku", "quantity", "unit_price"],
                "additionalProperties": False,
            },
        },
        "currency": CURRENCY,
        "shipping_address": {
            "type": "object",
            "properties": {
                "line1": {"type": "string"},
                "line2": {"type": "string"},
                "city": {"type": "string"},
                "region": {"type": "string"},
                "postal_code": {"type": "string", "pattern": "^[A-Za-z0-9 -]{3,10}$"},
                "country": COUNTRY,
            },
            "required": ["line1", "city", "postal_code", "country"],
            "additionalProperties": False,
        },
        "shipping_method": {"type": "string", "enum": ["standard", "express", "overnight", "pickup"]},
        "notes": {"type": "string", "maxLength": 500},
    },
    "required": ["id", "status", "customer", "items", "currency"],
    "additionalProperties": False,
})
def _(p):
    pp = person(p)
    a = p.choice(ADDRESSES)
    items = [O(sku=s, name=p.o(n, 0.8), quantity=p.randint(1, 3), unit_price=pr,
               options=p.o(O(size=p.choice(["S", "M", "L"]), colour=p.choice(["charcoal", "forest green", "oatmeal"])), 0.3))
             for s, n, pr in p.sample(SKUS, 1, 4)]
    notes = ["Please leave the parcel with the concierge.", "Gift — please don't include the receipt 🎁",
             "Ring twice; the bell says \"Adler\".", "配達前に電話してください。"]
    return O(id="ORD-%08d" % p.randint(0, 99999999), status=p.choice(["pending", "paid", "shipped", "delivered", "cancelled", "refunded"]),
             customer=O(id="cus_" + token(p, 10), name=full_name(pp), email=p.o(email_of(p, pp), 0.8), phone=p.o(p.choice(PHONES))),
             items=items, currency=p.choice(["EUR", "USD", "JPY", "GBP", "CHF", "BRL"]),
             shipping_address=p.o(O(line1=a[0], line2=a[1] if a[1] else SKIP, city=a[2], region=a[3] if a[3] else SKIP,
                                    postal_code=a[4], country=a[5]), 0.8),
             shipping_method=p.o(p.choice(["standard", "express", "overnight", "pickup"])), notes=p.o(p.choice(notes), 0.3))


@case("github_issue", "pattern", {
    "$schema": S2020,
    "title": "Issue",
    "description": "An issue as a code-hosting REST API returns it (a subset of the fields).",
    "type": "object",
    "properties": {
        "number": {"type": "integer", "minimum": 1},
        "title": {"type": "string"},
        "state": {"type": "string", "enum": ["open", "closed"]},
        "state_reason": {"type": ["string", "null"], "enum": ["completed", "not_planned", "reopened", None]},
        "user": {"allOf": [{"$ref": "#/$defs/user"}], "description": "The author."},
        "labels": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "name": {"type": "string"},
                    "color": {"type": "string", "pattern": "^[0-9a-f]{6}$"},
                    "description": {"type": ["string", "null"]},
                },
                "required": ["name", "color"],
            },
        },
        "assignees": {"type": "array", "items": {"$ref": "#/$defs/user"}},
        "milestone": {"anyOf": [{"$ref": "#/$defs/milestone"}, {"type": "null"}]},
        "comments": {"type": "integer", "minimum": 0},
        "created_at": {"type": "string", "format": "date-time"},
        "closed_at": {"type": ["string", "null"], "format": "date-time"},
        "body": {"type": ["string", "null"]},
    },
    "required": ["number", "title", "state", "user"],
    "$defs": {
        "user": {
            "type": "object",
            "properties": {
                "login": {"type": "string", "pattern": "^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?$"},
                "id": {"type": "integer", "minimum": 1},
                "type": {"type": "string", "enum": ["User", "Bot", "Organization"]},
                "site_admin": {"type": "boolean"},
            },
            "required": ["login", "id"],
        },
        "milestone": {
            "type": "object",
            "properties": {
                "number": {"type": "integer", "minimum": 1},
                "title": {"type": "string"},
                "state": {"type": "string", "enum": ["open", "closed"]},
                "due_on": {"type": ["string", "null"], "format": "date-time"},
            },
            "required": ["number", "title", "state"],
        },
    },
})
def _(p):
    def user():
        lg = p.choice(LOGINS)
        return O(login=lg, id=p.randint(1, 99999999), type=p.o("Bot" if lg == "dependabot" else "User", 0.8),
                 site_admin=p.o(False, 0.4))
    labels = [("bug", "d73a4a", "Something isn't working"), ("documentation", "0075ca", None),
              ("enhancement", "a2eeef", "New feature or request"), ("good first issue", "7057ff", "Good for newcomers"),
              ("i18n", "fbca04", "翻訳 / translations"), ("needs-triage", "ededed", None)]
    titles = ["Crash on startup when $HOME is unset", "Add dark mode 🌙", "Timezone handling wrong for Asia/Kolkata (+05:30)",
              "Support Zoë-style names in the username field", "CSV export drops rows with \"quoted, commas\"", "Memory leak in websocket reconnect loop"]
    closed = p.choice([True, False])
    body = ["### Steps\n1. Open settings\n2. Click \"Export\"\n\n### Expected\nA file.\n\n### Actual\nNothing happens.",
            "Happens on v2.3.1 and main. Stack trace:\n```\nTypeError: Cannot read properties of undefined (reading 'id')\n```",
            "👍 from our team as well.", None]
    return O(number=p.randint(1, 5000), title=p.choice(titles), state="closed" if closed else "open",
             state_reason=p.o(p.choice(["completed", "not_planned"]) if closed else None),
             user=user(),
             labels=p.o([O(id=p.o(p.randint(100000, 999999999)), name=n, color=c, description=p.o(d))
                         for n, c, d in p.sample(labels, 1, 3)]),
             assignees=p.o([user() for _ in range(p.randint(0, 2))]),
             milestone=p.o(p.choice([None, O(number=p.randint(1, 20), title=p.choice(["v2.4", "Q1 2025", "1.0 🎉"]),
                                             state="open", due_on=p.o(p.choice([None, "2025-03-31T07:00:00Z"])))])),
             comments=p.o(p.randint(0, 40)), created_at=p.o(datetime_(p, 2023, 2024, False)),
             closed_at=p.o(datetime_(p, 2025, 2025, False) if closed else None), body=p.o(p.choice(body))) | O(
        # undeclared members the API also sends, after the declared ones
        ("html_url", p.o("https://github.example.com/acme/web-app/issues/%d" % p.randint(1, 5000), 0.4)),
        ("locked", p.o(False, 0.3)), ("reactions", p.o(O(("+1", p.randint(0, 40)), ("heart", p.randint(0, 9)), ("rocket", p.randint(0, 3))), 0.3)))


@case("pull_request", "pattern", {
    "$schema": S07,
    "title": "Pull request",
    "description": "A pull request as a code-hosting REST API returns it (a subset of the fields). Draft-07 spelling: definitions.",
    "type": "object",
    "properties": {
        "number": {"type": "integer", "minimum": 1},
        "title": {"type": "string", "minLength": 1},
        "state": {"type": "string", "enum": ["open", "closed"]},
        "draft": {"type": "boolean"},
        "merged": {"type": "boolean"},
        "head": {"$ref": "#/definitions/branch"},
        "base": {"$ref": "#/definitions/branch"},
        "requested_reviewers": {"type": "array", "items": {"type": "string", "pattern": "^[A-Za-z0-9-]{1,39}$"}},
        "mergeable_state": {"type": "string", "enum": ["clean", "dirty", "blocked", "behind", "unstable", "unknown"]},
        "additions": {"type": "integer", "minimum": 0},
        "deletions": {"type": "integer", "minimum": 0},
        "changed_files": {"type": "integer", "minimum": 0},
        "labels": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["number", "title", "state", "head", "base"],
    "additionalProperties": False,
    "definitions": {
        "branch": {
            "type": "object",
            "properties": {
                "label": {"type": "string", "pattern": "^[A-Za-z0-9-]+:[A-Za-z0-9._/-]+$"},
                "ref": {"type": "string", "pattern": "^[A-Za-z0-9._/-]+$"},
                "sha": {"type": "string", "pattern": "^[0-9a-f]{40}$"},
            },
            "required": ["label", "ref", "sha"],
            "additionalProperties": False,
        },
    },
})
def _(p):
    def branch(owner, ref):
        return O(label=owner + ":" + ref, ref=ref, sha=hexs(p, 40))
    owner = p.choice(LOGINS[:-1])
    ref = p.choice(["fix/empty-config-crash", "feat/dark-mode", "dependabot/npm_and_yarn/lodash-4.17.21", "i18n-pl",
                    "release/v2.4.0", "docs.typo"])
    titles = ["Fix crash on empty config", "Add dark mode toggle 🌙", "Bump lodash from 4.17.20 to 4.17.21",
              "Add Polish translation (Zażółć gęślą jaźń)", "Release v2.4.0", "Fix \"Install\" heading in README"]
    state = p.choice(["open", "closed"])
    return O(number=p.randint(1, 9000), title=p.choice(titles), state=state, draft=p.o(p.choice([True, False])),
             merged=p.o(state == "closed" and p.choice([True, False])), head=branch(owner, ref), base=branch("acme", p.choice(["main", "develop"])),
             requested_reviewers=p.o(p.sample(LOGINS[:-1], 0, 3)),
             mergeable_state=p.o(p.choice(["clean", "dirty", "blocked", "behind", "unstable", "unknown"])),
             additions=p.o(p.randint(0, 2000)), deletions=p.o(p.randint(0, 800)), changed_files=p.o(p.randint(1, 60)),
             labels=p.o(p.sample(["bug", "dependencies", "javascript", "i18n", "release"], 1, 2)))


@case("payment_intent", "pattern", {
    "$schema": S2020,
    "title": "PaymentIntent",
    "description": "A payment as a payments API returns it. Amounts are integers in the currency's smallest unit.",
    "type": "object",
    "properties": {
        "id": {"type": "string", "pattern": "^pi_[A-Za-z0-9]{24}$"},
        "object": {"const": "payment_intent"},
        "amount": {"type": "integer", "minimum": 50, "maximum": 99999999},
        "currency": {"type": "string", "pattern": "^[a-z]{3}$"},
        "status": {"type": "string", "enum": ["requires_payment_method", "requires_confirmation", "requires_action",
                                              "processing", "succeeded", "canceled"]},
        "capture_method": {"type": "string", "enum": ["automatic", "manual"]},
        "payment_method": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "pattern": "^pm_[A-Za-z0-9]{24}$"},
                "type": {"type": "string", "enum": ["card", "sepa_debit", "ideal", "us_bank_account"]},
                "card": {
                    "type": "object",
                    "properties": {
                        "brand": {"type": "string", "enum": ["visa", "mastercard", "amex", "discover", "jcb", "unionpay"]},
                        "last4": {"type": "string", "pattern": "^[0-9]{4}$"},
                        "exp_month": {"type": "integer", "minimum": 1, "maximum": 12},
                        "exp_year": {"type": "integer", "minimum": 2024, "maximum": 2040},
                        "country": COUNTRY,
                    },
                    "required": ["brand", "last4", "exp_month", "exp_year"],
                    "additionalProperties": False,
                },
            },
            "required": ["id", "type"],
            "additionalProperties": False,
        },
        "metadata": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 500}},
        "description": {"type": ["string", "null"]},
        "livemode": {"type": "boolean"},
    },
    "required": ["id", "object", "amount", "currency", "status"],
    "additionalProperties": False,
})
def _(p):
    pm_type = p.choice(["card", "card", "sepa_debit", "ideal"])
    card = O(brand=p.choice(["visa", "mastercard", "amex", "jcb"]), last4="%04d" % p.randint(0, 9999),
             exp_month=p.randint(1, 12), exp_year=p.randint(2025, 2031), country=p.o(p.choice(["US", "DE", "JP", "GB", "BR"])))
    md = O(("order_id", "ORD-%08d" % p.randint(0, 99999999)), ("customer_note", p.o(p.choice(["Zoë's birthday gift 🎂", "rush order", "請求書を送ってください"]), 0.4)))
    return O(id="pi_" + token(p, 24), object="payment_intent", amount=p.choice([50, 1999, 4250, 12900, 250000, 899]),
             currency=p.choice(["usd", "eur", "jpy", "gbp", "brl"]),
             status=p.choice(["requires_payment_method", "requires_confirmation", "requires_action", "processing", "succeeded", "canceled"]),
             capture_method=p.o(p.choice(["automatic", "manual"])),
             payment_method=p.o(O(id="pm_" + token(p, 24), type=pm_type, card=card if pm_type == "card" else SKIP)),
             metadata=p.o(md), description=p.o(p.choice([None, "Subscription renewal — Pro plan (annual)", "Invoice INV-2024-00042"])),
             livemode=p.o(p.choice([True, False])))


@case("contact_card", "pattern", {
    "$schema": S2020,
    "title": "Contact",
    "description": "An address-book contact, in the shape a contacts API exchanges.",
    "type": "object",
    "properties": {
        "name": {
            "type": "object",
            "properties": {
                "prefix": {"type": "string", "enum": ["Mr", "Ms", "Mx", "Dr", "Prof"]},
                "given": {"type": "string", "minLength": 1},
                "middle": {"type": "string"},
                "family": {"type": "string", "minLength": 1},
            },
            "required": ["given", "family"],
            "additionalProperties": False,
        },
        "nickname": {"type": "string"},
        "emails": {"type": "array", "items": {
            "type": "object",
            "properties": {"type": {"type": "string", "enum": ["home", "work", "other"]},
                           "address": {"type": "string", "format": "email"}},
            "required": ["address"], "additionalProperties": False}},
        "phones": {"type": "array", "maxItems": 5, "items": {
            "type": "object",
            "properties": {"type": {"type": "string", "enum": ["mobile", "home", "work", "fax"]}, "number": PHONE},
            "required": ["type", "number"], "additionalProperties": False}},
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}, "region": {"type": "string"},
                           "postal_code": {"type": "string"}, "country": COUNTRY},
            "required": ["city", "country"],
            "additionalProperties": False,
        },
        "organization": {"type": "object", "properties": {"name": {"type": "string"}, "title": {"type": "string"}}},
        "locale": {"type": "string", "pattern": "^[a-z]{2}(-[A-Z]{2})?$"},
        "slug": {"type": "string", "pattern": "^[a-z0-9-]{1,64}$"},
        "starred": {"type": "boolean"},
    },
    "required": ["name"],
    "additionalProperties": False,
})
def _(p):
    pp = person(p)
    a = p.choice(ADDRESSES)
    orgs = [("Acme GmbH", "Head of Platform"), ("東京ガス", "エンジニア"), ("Freelance", "Illustrator ✏️"),
            ("Universidade de São Paulo", "Professora"), ("NHS", "Registrar")]
    org = p.choice(orgs)
    return O(name=O(prefix=p.o(p.choice(["Mr", "Ms", "Mx", "Dr", "Prof"]), 0.3), given=pp[0],
                    middle=p.o(p.choice(["Marie", "J.", "Kwame"]), 0.2), family=pp[1]),
             nickname=p.o(p.choice(["Zo", "Teo", "\"Doc\"", "Seun"]), 0.3),
             emails=p.o([O(type=p.o(t), address=email_of(p, pp)) for t in p.sample(["home", "work"], 1, 2)]),
             phones=p.o([O(type=t, number=p.choice(PHONES)) for t in p.sample(["mobile", "home", "work"], 1, 2)]),
             address=p.o(O(street=p.o(a[0]), city=a[2], region=p.o(a[3]) if a[3] else SKIP, postal_code=p.o(a[4]), country=a[5])),
             organization=p.o(O(name=org[0], title=p.o(org[1]))),
             locale=p.o(p.choice(["en", "en-GB", "ja-JP", "pt-BR", "de-CH", "pl"])),
             slug=p.o(ascii_slug(full_name(pp), "-")), starred=p.o(p.choice([True, False])))


SEMVER = "^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$"
RANGE = {"type": "string", "pattern": "^(\\^|~|>=)?[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.]+)?$"}


@case("package_manifest", "pattern", {
    "$schema": S2020,
    "title": "Package manifest",
    "description": "A package.json-like manifest of a JavaScript package.",
    "type": "object",
    "properties": {
        "name": {"type": "string", "pattern": "^(@[a-z0-9-]+/)?[a-z0-9][a-z0-9._-]*$", "description": "At most 214 characters."},
        "version": {"type": "string", "pattern": SEMVER},
        "description": {"type": "string"},
        "private": {"type": "boolean"},
        "license": {"type": "string", "enum": ["MIT", "Apache-2.0", "BSD-3-Clause", "ISC", "GPL-3.0-only", "UNLICENSED"]},
        "type": {"type": "string", "enum": ["module", "commonjs"]},
        "main": {"type": "string"},
        "scripts": {"type": "object", "additionalProperties": {"type": "string"}},
        "dependencies": {"type": "object", "additionalProperties": RANGE},
        "devDependencies": {"type": "object", "additionalProperties": RANGE},
        "engines": {"type": "object", "properties": {"node": {"type": "string", "pattern": "^(>=|\\^)?[0-9]+(\\.[0-9]+){0,2}$"}},
                    "additionalProperties": False},
        "keywords": {"type": "array", "items": {"type": "string"}, "maxItems": 20},
    },
    "required": ["name", "version"],
})
def _(p):
    pk = p.choice([("@acme/ui-kit", "React components for Acme's design system"), ("tiny-json-patch", "RFC 6902 JSON Patch in 2 kB"),
                   ("zoe-blog", "Zoë's personal blog — built with Astro ✨"), ("@nextok/cli", "Command-line tools for nextok"),
                   ("i18n-pl", "Polish strings: „Zażółć gęślą jaźń”"), ("web-app", "Internal dashboard")])
    deps = O(("react", p.o("^18.3.1")), ("zod", p.o("^3.23.8")), ("lodash", p.o("4.17.21")), ("@tanstack/react-query", p.o("~5.59.0")),
             ("date-fns", p.o(">=3.6.0")))
    dev = O(("typescript", "^5.6.3"), ("vitest", p.o("^2.1.4")), ("eslint", p.o("^9.14.0")), ("@types/node", p.o("^22.9.0")))
    scripts = O(("build", "tsc -p tsconfig.json"), ("test", p.o("vitest run")),
                ("lint", p.o("eslint \"src/**/*.{ts,tsx}\"")), ("dev", p.o("vite --host 0.0.0.0 --port 5173")))
    return O(name=pk[0], version=p.choice(["0.1.0", "1.4.2", "2.0.0-beta.3", "10.12.1", "0.0.7"]), description=p.o(pk[1]),
             private=p.o(p.choice([True, False])), license=p.o(p.choice(["MIT", "Apache-2.0", "ISC", "UNLICENSED"])),
             type=p.o(p.choice(["module", "commonjs"])), main=p.o(p.choice(["dist/index.js", "index.cjs"])),
             scripts=p.o(scripts), dependencies=p.o(deps), devDependencies=p.o(dev),
             engines=p.o(O(node=p.o(p.choice([">=18", "^20.11", ">=22.0.0"])))),
             keywords=p.o(p.sample(["json", "patch", "react", "components", "i18n", "cli", "blog"], 1, 4))) | O(
        # fields the schema leaves open, after the declared ones
        ("author", p.o(p.choice(["Zoë Adler <zoe.adler@example.com>", "Acme Platform Team"]), 0.4)),
        ("repository", p.o(O(type="git", url="git+https://github.example.com/acme/ui-kit.git"), 0.3)),
        ("sideEffects", p.o(False, 0.2)))


# RFC 1123 labels; the length bound is in the pattern (nextok refuses maxLength next to pattern).
DNS_LABEL = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"


@case("service_config", "pattern", {
    "$schema": S2020,
    "title": "Service deployment",
    "description": "A container deployment config file, in the spirit of Kubernetes manifests.",
    "type": "object",
    "properties": {
        "name": {"type": "string", "pattern": DNS_LABEL},
        "namespace": {"type": "string", "pattern": DNS_LABEL, "default": "default"},
        "replicas": {"type": "integer", "minimum": 0, "maximum": 100},
        "image": {"type": "string", "pattern": "^[a-z0-9./-]+(:[A-Za-z0-9._-]+)?$"},
        "ports": {"type": "array", "maxItems": 10, "items": {
            "type": "object",
            "properties": {"name": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$"},
                           "container_port": {"type": "integer", "minimum": 1, "maximum": 65535},
                           "protocol": {"type": "string", "enum": ["TCP", "UDP", "SCTP"], "default": "TCP"}},
            "required": ["container_port"], "additionalProperties": False}},
        "env": {"type": "array", "items": {
            "type": "object",
            "properties": {"name": {"type": "string", "pattern": "^[A-Z_][A-Z0-9_]*$"}, "value": {"type": "string"}},
            "required": ["name", "value"], "additionalProperties": False}},
        "resources": {
            "type": "object",
            "properties": {"requests": {"$ref": "#/$defs/quantities"}, "limits": {"$ref": "#/$defs/quantities"}},
            "additionalProperties": False,
        },
        "restart_policy": {"type": "string", "enum": ["Always", "OnFailure", "Never"]},
        "labels": {"type": "object", "additionalProperties": {"type": "string", "pattern": "^[A-Za-z0-9._-]{0,63}$"}},
    },
    "required": ["name", "image"],
    "additionalProperties": False,
    "$defs": {
        "quantities": {
            "type": "object",
            "properties": {"cpu": {"type": "string", "pattern": "^[0-9]+m?$"},
                           "memory": {"type": "string", "pattern": "^[0-9]+(Ki|Mi|Gi)$"}},
            "additionalProperties": False,
        },
    },
})
def _(p):
    svc = p.choice([("checkout-api", "registry.example.com/shop/checkout-api:2.4.1", 8080),
                    ("web", "nginx:1.27-alpine", 80), ("worker", "ghcr.io/acme/worker:sha-3f9c2e1", 9000),
                    ("redis", "redis:7.4", 6379), ("llm-gateway", "registry.example.com/ml/gateway:0.9.0", 8000)])
    envs = [("LOG_LEVEL", "info"), ("DATABASE_URL", "postgres://app@db.internal:5432/shop?sslmode=require"),
            ("GREETING", "Grüß Gott 👋"), ("FEATURE_FLAGS", "dark_mode,new_checkout"), ("JAVA_OPTS", "-Xmx512m -XX:+UseG1GC"),
            ("TZ", "Asia/Tokyo")]
    q = lambda: O(cpu=p.o(p.choice(["100m", "250m", "1", "2"])), memory=p.o(p.choice(["128Mi", "512Mi", "2Gi"])))
    return O(name=svc[0], namespace=p.o(p.choice(["default", "shop", "ml-serving"])), replicas=p.o(p.randint(1, 12)),
             image=svc[1], ports=p.o([O(name=p.o("http"), container_port=svc[2], protocol=p.o("TCP"))]),
             env=p.o([O(name=k, value=v) for k, v in p.sample(envs, 1, 3)]),
             resources=p.o(O(requests=p.o(q()), limits=p.o(q()))), restart_policy=p.o(p.choice(["Always", "OnFailure", "Never"])),
             labels=p.o(O(("app", svc[0]), ("tier", p.o(p.choice(["frontend", "backend", "cache"]))), ("version", p.o("v2")))))


@case("signup_form", "pattern", {
    "$schema": S2020,
    "title": "Sign-up form submission",
    "type": "object",
    "properties": {
        "username": {"type": "string", "pattern": "^[a-z0-9_]{3,16}$"},
        "email": {"type": "string", "format": "email"},
        "full_name": {"type": "string", "minLength": 1, "maxLength": 100},
        "birth_year": {"type": "integer", "minimum": 1900, "maximum": 2012},
        "country": COUNTRY,
        "phone": PHONE,
        "plan": {"type": "string", "enum": ["free", "pro", "team", "enterprise"]},
        "interests": {"type": "array", "items": {"type": "string", "enum": ["design", "engineering", "marketing", "data", "sales"]}, "maxItems": 5},
        "newsletter": {"type": "boolean", "default": False},
        "terms_accepted": {"const": True},
        "referral_code": {"type": "string", "pattern": "^[A-Z0-9]{6}$"},
        "heard_from": {"type": "string", "enum": ["search", "friend", "social", "podcast", "other"]},
        "comments": {"type": "string", "maxLength": 1000},
    },
    "required": ["username", "email", "country", "plan", "terms_accepted"],
    "additionalProperties": False,
})
def _(p):
    pp = person(p)
    a = p.choice(ADDRESSES)
    return O(username=ascii_slug(pp[0], "")[:8] + "_" + str(p.randint(1, 999)), email=email_of(p, pp),
             full_name=p.o(full_name(pp)), birth_year=p.o(p.randint(1950, 2005)), country=a[5], phone=p.o(p.choice(PHONES)),
             plan=p.choice(["free", "pro", "team", "enterprise"]), interests=p.o(p.sample(["design", "engineering", "marketing", "data", "sales"], 1, 3)),
             newsletter=p.o(p.choice([True, False])), terms_accepted=True, referral_code=p.o(token(p, 6, "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"), 0.3),
             heard_from=p.o(p.choice(["search", "friend", "social", "podcast", "other"])),
             comments=p.o(p.choice(["Looking forward to trying the API!", "Found you via the \"Changelog\" podcast 🎧",
                                    "私たちのチームは東京にあります。", "Need SSO (SAML) before we can roll out.\nThanks!"]), 0.4))


SHIP_STATUS = ["label_created", "in_transit", "out_for_delivery", "delivered", "exception", "returned"]


@case("shipment_tracking", "pattern", {
    "$schema": S2020,
    "title": "Shipment tracking",
    "description": "A carrier's tracking response.",
    "type": "object",
    "properties": {
        "tracking_number": {"type": "string", "pattern": "^[A-Z0-9]{10,22}$"},
        "carrier": {"type": "string", "enum": ["UPS", "FedEx", "DHL", "USPS", "Royal Mail", "Japan Post"]},
        "service_level": {"type": "string", "enum": ["ground", "express", "priority", "economy"]},
        "status": {"type": "string", "enum": SHIP_STATUS},
        "estimated_delivery": {"type": "string", "format": "date"},
        "weight": {"type": "object", "properties": {"value": {"type": "number", "exclusiveMinimum": 0}, "unit": {"type": "string", "enum": ["kg", "lb"]}},
                   "required": ["value", "unit"], "additionalProperties": False},
        "events": {
            "type": "array", "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "status": {"type": "string", "enum": SHIP_STATUS},
                    "description": {"type": "string"},
                    "location": {"type": "object",
                                 "properties": {"city": {"type": "string"}, "region": {"type": "string"}, "country": COUNTRY},
                                 "required": ["country"]},
                    "facility_code": {"type": "string", "pattern": "^[A-Z]{3}[0-9]{0,3}$"},
                },
                "required": ["status", "description"],
            },
        },
        "signature_required": {"type": "boolean"},
    },
    "required": ["tracking_number", "carrier", "status"],
})
def _(p):
    carrier = p.choice(["UPS", "FedEx", "DHL", "USPS", "Royal Mail", "Japan Post"])
    k = p.randint(1, 4)
    descs = {"label_created": "Shipping label created, awaiting pickup", "in_transit": "Arrived at sort facility",
             "out_for_delivery": "Out for delivery 🚚", "delivered": "Delivered — left at front door",
             "exception": "Delivery attempted: recipient not available (\"Adler\" not on bell)"}
    seq = ["label_created", "in_transit", "in_transit", "out_for_delivery", "delivered"][:k + 1]
    if p.r.random() < 0.2:
        seq[-1] = "exception"
    evs = []
    for st in seq:
        a = p.choice(ADDRESSES)
        evs.append(O(status=st, description=descs[st],
                     location=p.o(O(city=p.o(a[2], 0.8), region=p.o(a[3]) if a[3] else SKIP, country=a[5]), 0.8),
                     facility_code=p.o(p.choice(["LHR", "HND12", "MUC3", "GRU", "KRK1"]), 0.4)))
    return O(tracking_number=token(p, p.choice([10, 12, 18, 22]), "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), carrier=carrier,
             service_level=p.o(p.choice(["ground", "express", "priority", "economy"])), status=seq[-1],
             estimated_delivery=p.o(date(p, 2025, 2025)), weight=p.o(O(value=p.choice([0.45, 1.2, 3, 12.75]), unit=p.choice(["kg", "lb"]))),
             events=p.o(evs[::-1], 0.8), signature_required=p.o(p.choice([True, False])))


@case("product_listing", "pattern", {
    "$schema": S2020,
    "title": "Product",
    "description": "A catalogue product with variants, as a storefront API returns it.",
    "type": "object",
    "properties": {
        "sku": {"type": "string", "pattern": "^[A-Z0-9]{3,5}-[A-Z0-9]{3,8}$"},
        "title": {"type": "string", "minLength": 1, "maxLength": 140},
        "brand": {"type": "string"},
        "description": {"type": "string"},
        "price": {"$ref": "#/$defs/money"},
        "compare_at_price": {"$ref": "#/$defs/money"},
        "variants": {"type": "array", "maxItems": 100, "items": {
            "type": "object",
            "properties": {
                "sku": {"type": "string", "pattern": "^[A-Z0-9]{3,5}-[A-Z0-9]{3,8}-[A-Z0-9]{1,4}$"},
                "color": {"type": "string"},
                "size": {"type": "string", "enum": ["XS", "S", "M", "L", "XL", "XXL"]},
                "stock": {"type": "integer", "minimum": 0},
                "gtin": {"type": "string", "pattern": "^[0-9]{8}([0-9]{4,6})?$"},
            },
            "required": ["sku", "stock"], "additionalProperties": False}},
        "categories": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 5},
        "status": {"type": "string", "enum": ["active", "draft", "archived"]},
        "rating": {"type": "object", "properties": {"average": {"type": "number", "minimum": 0, "maximum": 5},
                                                    "count": {"type": "integer", "minimum": 0}},
                   "required": ["average", "count"], "additionalProperties": False},
    },
    "required": ["sku", "title", "price", "status"],
    "additionalProperties": False,
    "$defs": {
        "money": {"type": "object", "properties": {"amount": {"type": "number", "minimum": 0}, "currency": CURRENCY},
                  "required": ["amount", "currency"], "additionalProperties": False},
    },
})
def _(p):
    prods = [("TEE-ORG01", "Organic cotton tee", "Nordwerk", "Soft, heavyweight 220 g/m² jersey. Made in Portugal 🇵🇹.", 29.0, ["Apparel", "T-shirts"]),
             ("MUG-KYOTO", "Kyoto ceramic mug 湯呑", "Tōgei", "Hand-thrown stoneware; each glaze is unique.", 18.5, ["Home", "Kitchen"]),
             ("BAG-RL2", "Roll-top backpack 22 L", "Zoë & Co.", "Waterproof \"tarpaulin\" shell, padded 15\" laptop sleeve.", 119.0, ["Bags"]),
             ("KBD-75ISO", "75% mechanical keyboard (ISO-DE)", "Klack", "Hot-swap sockets, gasket mount.\nIncludes ÄÖÜ keycaps.", 149.99, ["Electronics", "Keyboards"])]
    sku, title, brand, desc, price, cats = p.choice(prods)
    cur = p.choice(["EUR", "USD", "JPY"])
    variants = [O(sku=sku + "-" + s, color=p.o(p.choice(["black", "sand", "forest", "indigo"])), size=p.o(s) if s in ("S", "M", "L", "XL") else SKIP,
                  stock=p.randint(0, 250), gtin=p.o("%013d" % p.randint(0, 10 ** 13 - 1), 0.6))
                for s in p.sample(["S", "M", "L", "XL", "BLK", "SND"], 1, 3)]
    return O(sku=sku, title=title, brand=p.o(brand), description=p.o(desc), price=O(amount=price, currency=cur),
             compare_at_price=p.o(O(amount=round(price * 1.25, 2), currency=cur), 0.3), variants=p.o(variants),
             categories=p.o(cats), status=p.choice(["active", "draft", "archived"]),
             rating=p.o(O(average=p.choice([4.7, 3.9, 5, 4.25, 0]), count=p.randint(0, 3000))))


# ==== strings with format =============================================================================

@case("calendar_event", "format", {
    "$schema": S2020,
    "title": "Calendar event",
    "description": "An event as a calendar API returns it.",
    "type": "object",
    "properties": {
        "id": {"type": "string", "format": "uuid"},
        "status": {"type": "string", "enum": ["confirmed", "tentative", "cancelled"]},
        "summary": {"type": "string"},
        "description": {"type": "string"},
        "location": {"type": "string"},
        "start": {"$ref": "#/$defs/moment"},
        "end": {"$ref": "#/$defs/moment"},
        "organizer": {"type": "object", "properties": {"email": {"type": "string", "format": "email"}, "display_name": {"type": "string"}},
                      "required": ["email"]},
        "attendees": {"type": "array", "items": {
            "type": "object",
            "properties": {"email": {"type": "string", "format": "email"}, "display_name": {"type": "string"},
                           "response_status": {"type": "string", "enum": ["needsAction", "declined", "tentative", "accepted"]},
                           "optional": {"type": "boolean"}},
            "required": ["email", "response_status"]}},
        "conference_uri": {"type": "string", "format": "uri"},
        "reminder_before": {"type": "string", "format": "duration"},
        "created": {"type": "string", "format": "date-time"},
        "updated": {"type": "string", "format": "date-time"},
    },
    "required": ["id", "summary", "start", "end"],
    "additionalProperties": False,
    "$defs": {
        "moment": {
            "type": "object",
            "properties": {"date": {"type": "string", "format": "date"}, "date_time": {"type": "string", "format": "date-time"},
                           "time_zone": {"type": "string", "pattern": "^[A-Za-z_]+(/[A-Za-z_+-]+){0,2}$"}},
            "additionalProperties": False,
        },
    },
})
def _(p):
    all_day = p.r.random() < 0.25
    d = date(p)
    off = p.choice(["Z", "+09:00", "+01:00", "-05:00", "+05:30"])
    h = p.randint(6, 20)
    if all_day:
        nxt = datetime.date.fromisoformat(d) + datetime.timedelta(days=1)
        start, end = O(date=d), O(date=nxt.isoformat())
    else:
        tz = p.o(p.choice(TIMEZONES))
        start = O(date_time="%sT%02d:00:00%s" % (d, h, off), time_zone=tz)
        end = O(date_time="%sT%02d:30:00%s" % (d, h + 1, off), time_zone=tz)
    org = person(p)
    summ = [("Quarterly planning", "Agenda:\n1. OKR review\n2. Hiring\n3. \"Project Falcon\" go/no-go"),
            ("Zoë's farewell lunch 🥂", "At Café Sørensen. Bring stories!"), ("花見 Hanami in Ueno Park", "上野公園で花見をしましょう。"),
            ("Incident review: checkout 503s", "Blameless postmortem. Doc: https://docs.example.com/pm/2024-11"),
            ("Dentist", ""), ("Release train v2.4", "Freeze at 12:00 UTC.")]
    s, desc = p.choice(summ)
    return O(id=uuid4(p), status=p.o(p.choice(["confirmed", "tentative", "cancelled"])), summary=s, description=p.o(desc),
             location=p.o(p.choice(["Room 4.12", "Ueno Park, 台東区, 東京", "https://meet.example.com/xyz-abcd-efg", "Bahnhofstrasse 21, Zürich"])),
             start=start, end=end, organizer=p.o(O(email=email_of(p, org), display_name=p.o(full_name(org)))),
             attendees=p.o([O(email=email_of(p, pp), display_name=p.o(full_name(pp)),
                              response_status=p.choice(["needsAction", "declined", "tentative", "accepted"]), optional=p.o(True, 0.2))
                            for pp in p.sample(PEOPLE, 1, 4)]),
             conference_uri=p.o(p.choice(["https://meet.example.com/xyz-abcd-efg", "https://zoom.example.us/j/81234567890?pwd=abc123",
                                          "tel:+1-212-555-0147;ext=42"])),
             reminder_before=p.o(p.choice(["PT10M", "PT1H", "P1D", "PT30M", "P1W"])),
             created=p.o(datetime_(p, 2024, 2024)), updated=p.o(datetime_(p, 2025, 2025)))


IPV4S = ["203.0.113.7", "198.51.100.23", "192.0.2.146", "10.0.12.5", "172.16.254.1", "198.51.100.200"]
IPV6S = ["2001:db8::1", "2001:db8:85a3::8a2e:370:7334", "fe80::1ff:fe23:4567:890a", "::1", "2001:db8:0:1:1:1:1:1",
         "::ffff:192.0.2.128"]
HOSTS = ["api-1.prod.example.com", "web-03.eu-central.example.net", "localhost", "db-primary.internal", "ip-10-0-12-5",
         "cache.tokyo.example.jp"]


@case("log_record", "format", {
    "$schema": S2020,
    "title": "Log record",
    "description": "A structured application log line (one JSON object per line).",
    "type": "object",
    "properties": {
        "timestamp": {"type": "string", "format": "date-time"},
        "level": {"type": "string", "enum": ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"]},
        "service": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$"},
        "host": {"type": "string", "format": "hostname"},
        "pid": {"type": "integer", "minimum": 1},
        "trace_id": {"type": "string", "format": "uuid"},
        "client_ip": {"anyOf": [{"type": "string", "format": "ipv4"}, {"type": "string", "format": "ipv6"}]},
        "message": {"type": "string"},
        "http": {
            "type": "object",
            "properties": {
                "method": {"type": "string", "enum": ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]},
                "path": {"type": "string"},
                "status": {"type": "integer", "minimum": 100, "maximum": 599},
                "duration_ms": {"type": "number", "minimum": 0},
                "user_agent": {"type": "string"},
            },
            "required": ["method", "path", "status"],
        },
        "error": {"type": "object", "properties": {"type": {"type": "string"}, "message": {"type": "string"}, "stack": {"type": "string"}},
                  "required": ["type", "message"]},
    },
    "required": ["timestamp", "level", "service", "message"],
})
def _(p):
    lvl = p.choice(["DEBUG", "INFO", "INFO", "WARN", "ERROR"])
    msgs = {"DEBUG": "cache miss for key \"user:42:profile\"", "INFO": p.choice(["request completed", "user Zoë signed in", "注文を受け付けました"]),
            "WARN": "slow query (1.8 s): SELECT * FROM orders WHERE status = 'paid'", "ERROR": "upstream timed out ⏱️"}
    paths = ["/v1/orders", "/v1/users/42", "/healthz", "/v1/search?q=%E6%9D%B1%E4%BA%AC", "/static/app.js"]
    status = {"DEBUG": 200, "INFO": 200, "WARN": 200, "ERROR": 504}[lvl]
    err = O(type="TimeoutError", message="upstream \"payments\" did not answer within 5000 ms",
            stack=p.o("TimeoutError: upstream did not answer\n    at fetchWithTimeout (src/http.ts:41:11)\n    at async charge (src/payments.ts:88:5)"))
    return O(timestamp=date(p) + "T" + time_(p, True, "Z"), level=lvl, service=p.choice(["checkout-api", "auth", "search", "web"]),
             host=p.o(p.choice(HOSTS)), pid=p.o(p.randint(1, 65535)), trace_id=p.o(uuid4(p)),
             client_ip=p.o(p.choice(IPV4S + IPV6S)), message=msgs[lvl],
             http=p.o(O(method=p.choice(["GET", "POST", "DELETE"]), path=p.choice(paths), status=status,
                        duration_ms=p.o(p.choice([3.2, 48.75, 1812.5, 5000.1, 0.9])), user_agent=p.o("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15"))),
             error=err if lvl == "ERROR" and p.opt(0.8) else SKIP) | O(
        # undeclared members, after the declared ones (the schema allows them)
        ("env", p.o(p.choice(["prod", "staging"]), 0.3)), ("region", p.o(p.choice(["eu-central-1", "ap-northeast-1"]), 0.3)),
        ("user_id", p.o(p.randint(1, 99999), 0.2)))


@case("webhook_delivery", "format", {
    "$schema": S2020,
    "title": "Webhook delivery",
    "description": "One delivery attempt of a webhook, as a delivery-log API reports it.",
    "type": "object",
    "properties": {
        "id": {"type": "string", "format": "uuid"},
        "event": {"type": "string", "enum": ["push", "pull_request", "issues", "release", "ping"]},
        "action": {"type": "string", "enum": ["opened", "closed", "reopened", "published", "created", "deleted"]},
        "delivered_at": {"type": "string", "format": "date-time"},
        "url": {"type": "string", "format": "uri"},
        "source_ip": {"type": "string", "format": "ipv4"},
        "request": {
            "type": "object",
            "properties": {"headers": {"type": "object", "additionalProperties": {"type": "string"}},
                           "payload_bytes": {"type": "integer", "minimum": 0}},
        },
        "response": {
            "type": "object",
            "properties": {"status": {"type": "integer", "minimum": 100, "maximum": 599}, "body": {"type": "string", "maxLength": 2000}},
            "required": ["status"],
        },
        "redelivery": {"type": "boolean"},
        "retry_after": {"type": "string", "format": "duration"},
    },
    "required": ["id", "event", "delivered_at", "url"],
})
def _(p):
    ev = p.choice(["push", "pull_request", "issues", "release", "ping"])
    act = {"pull_request": ["opened", "closed", "reopened"], "issues": ["opened", "closed"], "release": ["published"]}.get(ev)
    status = p.choice([200, 200, 202, 204, 400, 500, 502])
    hdr = O(("X-Event", ev), ("X-Delivery", uuid4(p)), ("Content-Type", "application/json"),
            ("X-Signature-256", p.o("sha256=" + hexs(p, 64))))
    bodies = {200: "{\"ok\":true}", 202: "queued", 204: "", 400: "{\"error\":\"invalid signature\"}",
              500: "Internal Server Error\n", 502: "<html><body><h1>502 Bad Gateway</h1></body></html>"}
    return O(id=uuid4(p), event=ev, action=p.choice(act) if act and p.opt(0.9) else SKIP, delivered_at=datetime_(p),
             url=p.choice(["https://ci.example.com/hooks/github", "https://hooks.example.org/in/7f3a9c?token=abc",
                           "http://203.0.113.7:8080/webhook", "https://bots.example.jp/%E9%80%9A%E7%9F%A5"]),
             source_ip=p.o(p.choice(IPV4S[:3])), request=p.o(O(headers=p.o(hdr), payload_bytes=p.o(p.randint(200, 60000)))),
             response=p.o(O(status=status, body=p.o(bodies[status]))), redelivery=p.o(p.choice([True, False])),
             retry_after=p.o(p.choice(["PT30S", "PT5M", "PT1H", "P1D"]), 0.4) if status >= 500 else SKIP)


@case("network_host", "format", {
    "$schema": S2020,
    "title": "Network host inventory record",
    "type": "object",
    "properties": {
        "hostname": {"type": "string", "format": "hostname"},
        "ipv4": {"type": "string", "format": "ipv4"},
        "ipv6": {"type": "string", "format": "ipv6"},
        "mac": {"type": "string", "pattern": "^([0-9a-f]{2}:){5}[0-9a-f]{2}$"},
        "os": {"type": "string", "enum": ["linux", "windows", "macos", "freebsd", "ios", "android"]},
        "dns_records": {"type": "array", "maxItems": 20, "items": {
            "type": "object",
            "properties": {"name": {"type": "string", "format": "hostname"},
                           "type": {"type": "string", "enum": ["A", "AAAA", "CNAME", "MX", "TXT"]},
                           "value": {"type": "string"},
                           "ttl": {"type": "integer", "minimum": 60, "maximum": 86400}},
            "required": ["name", "type", "value"], "additionalProperties": False}},
        "admin_contact": {"type": "string", "format": "email"},
        "last_seen": {"type": "string", "format": "date-time"},
        "uptime": {"type": "string", "format": "duration"},
        "monitoring_url": {"type": "string", "format": "uri"},
    },
    "required": ["hostname", "ipv4"],
})
def _(p):
    h = p.choice(HOSTS)
    v4, v6 = p.choice(IPV4S), p.choice(IPV6S)
    zone = "example.com"
    recs = [O(name=h if "." in h else h + "." + zone, type="A", value=v4, ttl=p.o(p.choice([300, 3600]))),
            O(name=h if "." in h else h + "." + zone, type="AAAA", value=v6, ttl=p.o(300)),
            O(name="www." + zone, type="CNAME", value="web-03.eu-central.example.net."),
            O(name=zone, type="MX", value="10 mx1." + zone + "."),
            O(name=zone, type="TXT", value="\"v=spf1 include:_spf." + zone + " ~all\"")]
    return O(hostname=h, ipv4=v4, ipv6=p.o(v6), mac=p.o(":".join(hexs(p, 2) for _ in range(6))),
             os=p.o(p.choice(["linux", "windows", "macos", "freebsd"])), dns_records=p.o(p.sample(recs, 1, 3)),
             admin_contact=p.o(p.choice(["ops@example.com", "noc+alerts@example.net", "zoe.adler@acme.io"])),
             last_seen=p.o(datetime_(p, 2025, 2025)), uptime=p.o(p.choice(["P12DT4H30M", "PT36H", "P3W", "P1Y2M10D", "PT45M10S"])),
             monitoring_url=p.o("https://grafana.example.com/d/hosts?var-host=" + h))


@case("appointment_booking", "format", {
    "$schema": S2020,
    "title": "Appointment booking",
    "description": "A booking made through a clinic's online scheduling form.",
    "type": "object",
    "properties": {
        "appointment_id": {"type": "string", "format": "uuid"},
        "patient": {
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1}, "email": {"type": "string", "format": "email"},
                           "phone": PHONE, "date_of_birth": {"type": "string", "format": "date"}},
            "required": ["name", "date_of_birth"],
            "additionalProperties": False,
        },
        "provider": {"type": "string"},
        "service": {"type": "string", "enum": ["checkup", "vaccination", "dental_cleaning", "physiotherapy", "consultation"]},
        "date": {"type": "string", "format": "date"},
        "start_time": {"type": "string", "format": "time"},
        "duration": {"type": "string", "format": "duration"},
        "telehealth_url": {"type": "string", "format": "uri"},
        "reason": {"type": "string", "maxLength": 500},
        "confirmed_at": {"type": "string", "format": "date-time"},
    },
    "required": ["appointment_id", "patient", "service", "date", "start_time", "duration"],
})
def _(p):
    pp = person(p)
    dob = "%04d-%02d-%02d" % (p.randint(1940, 2020), p.randint(1, 12), p.randint(1, 28))
    if p.r.random() < 0.15:
        dob = p.choice(["2000-02-29", "1996-02-29"])
    return O(appointment_id=uuid4(p),
             patient=O(name=full_name(pp), email=p.o(email_of(p, pp)), phone=p.o(p.choice(PHONES)), date_of_birth=dob),
             provider=p.o(p.choice(["Dr. Ingrid Johansson", "Dr. med. Jonas Müller", "田中 愛子 先生", "Dr. Kofi Mensah"])),
             service=p.choice(["checkup", "vaccination", "dental_cleaning", "physiotherapy", "consultation"]), date=date(p, 2025, 2025),
             start_time="%02d:%02d:00%s" % (p.randint(8, 17), p.choice([0, 15, 30, 45]), p.choice(["Z", "+01:00", "+09:00", "-03:00"])),
             duration=p.choice(["PT15M", "PT30M", "PT45M", "PT1H", "PT1H30M"]),
             telehealth_url=p.o("https://telehealth.example.com/room/" + token(p, 10), 0.3),
             reason=p.o(p.choice(["Follow-up after knee surgery", "Annual check-up", "Persistent cough for 2 weeks",
                                  "予防接種（インフルエンザ）", "Lower back pain — \"worse in the morning\""])),
             confirmed_at=p.o(datetime_(p, 2025, 2025)))


@case("audit_event", "format", {
    "$schema": S2020,
    "title": "Audit event",
    "description": "An entry of an organisation's audit log.",
    "type": "object",
    "properties": {
        "event_id": {"type": "string", "format": "uuid"},
        "occurred_at": {"type": "string", "format": "date-time"},
        "actor": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "format": "uuid"},
                "email": {"type": "string", "format": "email"},
                "ip": {"anyOf": [{"type": "string", "format": "ipv4"}, {"type": "string", "format": "ipv6"}]},
                "user_agent": {"type": "string"},
            },
            "required": ["id"],
            "additionalProperties": False,
        },
        "action": {"type": "string", "enum": ["login", "logout", "create", "update", "delete", "export", "permission_change"]},
        "resource": {
            "type": "object",
            "properties": {"type": {"type": "string", "enum": ["project", "user", "api_key", "invoice", "document"]},
                           "id": {"type": "string"}, "uri": {"type": "string", "format": "uri"}},
            "required": ["type", "id"],
            "additionalProperties": False,
        },
        "source_host": {"type": "string", "format": "hostname"},
        "session_age": {"type": "string", "format": "duration"},
        "changes": {"type": "array", "items": {
            "type": "object",
            "properties": {"field": {"type": "string"},
                           "old": {"type": ["string", "number", "boolean", "null"]},
                           "new": {"type": ["string", "number", "boolean", "null"]}},
            "required": ["field"], "additionalProperties": False}},
        "result": {"type": "string", "enum": ["success", "failure"]},
    },
    "required": ["event_id", "occurred_at", "actor", "action", "result"],
    "additionalProperties": False,
})
def _(p):
    act = p.choice(["login", "logout", "create", "update", "delete", "export", "permission_change"])
    rtype = p.choice(["project", "user", "api_key", "invoice", "document"])
    rid = p.choice(["prj_" + token(p, 8), "42", "key_" + token(p, 12), "INV-2024-00042", "東京オフィス計画.docx"])
    changes = {"update": [O(field="name", old="Q3 plan", new="Q3 plan (final) ✅"), O(field="budget", old=12000, new=15500.5)],
               "permission_change": [O(field="role", old="viewer", new="admin"), O(field="mfa_required", old=False, new=True)],
               "create": [O(field="title", old=None, new="Zoë's onboarding doc")]}.get(act)
    return O(event_id=uuid4(p), occurred_at=datetime_(p),
             actor=O(id=uuid4(p), email=p.o(email_of(p)), ip=p.o(p.choice(IPV4S + IPV6S)),
                     user_agent=p.o(p.choice(["Mozilla/5.0 (X11; Linux x86_64) Firefox/131.0", "acme-cli/1.8.2 (go1.23)"]))),
             action=act, resource=O(type=rtype, id=rid, uri=p.o("https://app.example.com/%ss/%s" % (rtype, token(p, 8)))) if act not in ("login", "logout") else SKIP,
             source_host=p.o(p.choice(HOSTS)), session_age=p.o(p.choice(["PT5M", "PT2H15M", "P1DT3H"])),
             changes=p.o(changes) if changes else SKIP, result=p.choice(["success", "success", "failure"]))


# ==== numbers and integers with bounds ================================================================

@case("sensor_reading", "number", {
    "$schema": S2020,
    "title": "Sensor reading",
    "description": "A batch of measurements from an environmental IoT sensor.",
    "type": "object",
    "properties": {
        "device_id": {"type": "string", "pattern": "^[A-F0-9]{12}$"},
        "recorded_at": {"type": "string", "format": "date-time"},
        "temperature_c": {"type": "number", "minimum": -273.15, "maximum": 1000},
        "humidity_pct": {"type": "number", "minimum": 0, "maximum": 100},
        "pressure_hpa": {"type": "number", "exclusiveMinimum": 0, "maximum": 1200},
        "co2_ppm": {"type": "integer", "minimum": 0, "maximum": 10000},
        "pm2_5": {"type": "number", "minimum": 0, "exclusiveMaximum": 1000},
        "battery_pct": {"type": "integer", "minimum": 0, "maximum": 100},
        "rssi_dbm": {"type": "integer", "minimum": -120, "maximum": 0},
        "samples": {"type": "array", "maxItems": 16, "items": {"type": "number", "minimum": -50, "maximum": 150}},
    },
    "required": ["device_id", "temperature_c"],
    "additionalProperties": False,
})
def _(p):
    t = p.dec(-25, 45, 2)
    return O(device_id=token(p, 12, "0123456789ABCDEF"), recorded_at=p.o(datetime_(p)), temperature_c=t,
             humidity_pct=p.o(p.dec(0, 100, 1)), pressure_hpa=p.o(p.dec(950, 1050, 1)), co2_ppm=p.o(p.randint(380, 2500)),
             pm2_5=p.o(p.dec(0, 180, 1)), battery_pct=p.o(p.randint(0, 100)), rssi_dbm=p.o(p.randint(-110, -30)),
             samples=p.o([round(t + p.r.uniform(-0.5, 0.5), 2) for _ in range(p.randint(1, 8))]))


@case("geo_feature", "number", {
    "$schema": S2020,
    "title": "GeoJSON-style Feature",
    "description": "A point of interest, route or area, in the shape of a GeoJSON Feature (longitude first).",
    "type": "object",
    "properties": {
        "type": {"const": "Feature"},
        "id": {"type": ["string", "integer"]},
        "geometry": {
            "oneOf": [
                {"type": "object",
                 "properties": {"type": {"const": "Point"}, "coordinates": {"$ref": "#/$defs/position"}},
                 "required": ["type", "coordinates"], "additionalProperties": False},
                {"type": "object",
                 "properties": {"type": {"const": "LineString"},
                                "coordinates": {"type": "array", "items": {"$ref": "#/$defs/position"}, "minItems": 2}},
                 "required": ["type", "coordinates"], "additionalProperties": False},
                {"type": "object",
                 "properties": {"type": {"const": "Polygon"},
                                "coordinates": {"type": "array", "minItems": 1,
                                                "items": {"type": "array", "items": {"$ref": "#/$defs/position"}, "minItems": 4}}},
                 "required": ["type", "coordinates"], "additionalProperties": False},
            ],
        },
        "properties": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "category": {"type": "string", "enum": ["city", "landmark", "route", "park", "station"]},
                "population": {"type": "integer", "minimum": 0},
                "elevation_m": {"type": "number", "minimum": -430, "maximum": 8849},
                "rating": {"type": "number", "exclusiveMinimum": 0, "maximum": 5},
            },
        },
        "bbox": {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4},
    },
    "required": ["type", "geometry", "properties"],
    "additionalProperties": False,
    "$defs": {
        "position": {
            "type": "array",
            "prefixItems": [{"type": "number", "minimum": -180, "maximum": 180, "description": "longitude"},
                            {"type": "number", "minimum": -90, "maximum": 90, "description": "latitude"}],
            "items": {"type": "number", "description": "altitude"},
            "minItems": 2, "maxItems": 3,
        },
    },
})
def _(p):
    pts = [("東京タワー Tokyo Tower", 139.7454, 35.6586, "landmark", None, 150), ("Zürich HB", 8.5402, 47.3782, "station", None, 408),
           ("Reykjavík", -21.9426, 64.1466, "city", 139875, 20), ("Pão de Açúcar", -43.1566, -22.9486, "landmark", None, 396),
           ("Central Park", -73.9654, 40.7829, "park", None, 42), ("Kraków", 19.945, 50.0647, "city", 804237, 219)]
    name, lon, lat, cat, pop, elev = p.choice(pts)
    kind = p.choice(["Point", "Point", "LineString", "Polygon"])
    pos = lambda x, y: [round(x, 4), round(y, 4)] + ([p.choice([12.5, 40, 3.75])] if p.r.random() < 0.2 else [])
    if kind == "Point":
        geom = O(type="Point", coordinates=pos(lon, lat))
    elif kind == "LineString":
        geom = O(type="LineString", coordinates=[pos(lon + 0.001 * k, lat - 0.0007 * k) for k in range(p.randint(2, 5))])
        name, cat = name + " walking route", "route"
    else:
        d = 0.002
        geom = O(type="Polygon", coordinates=[[[lon - d, lat - d], [lon + d, lat - d], [lon + d, lat + d], [lon - d, lat + d], [lon - d, lat - d]]])
        geom["coordinates"] = [[[round(a, 4), round(b, 4)] for a, b in geom["coordinates"][0]]]
    props = O(name=p.o(name, 0.9), category=p.o(cat), population=p.o(pop) if pop else SKIP, elevation_m=p.o(elev),
              rating=p.o(p.choice([4.5, 3.8, 5, 4.25]), 0.4))
    return O(type="Feature", id=p.o(p.choice(["node/2389517", 41793, "poi-" + hexs(p, 6)])), geometry=geom, properties=props,
             bbox=p.o([round(lon - 0.01, 4), round(lat - 0.01, 4), round(lon + 0.01, 4), round(lat + 0.01, 4)], 0.3))


@case("invoice", "number", {
    "$schema": S2020,
    "title": "Invoice",
    "type": "object",
    "properties": {
        "invoice_number": {"type": "string", "pattern": "^INV-[0-9]{4}-[0-9]{5}$"},
        "issue_date": {"type": "string", "format": "date"},
        "due_in_days": {"type": "integer", "minimum": 0, "maximum": 120},
        "currency": CURRENCY,
        "seller": {"type": "string"},
        "buyer": {"type": "string"},
        "lines": {
            "type": "array", "minItems": 1, "maxItems": 200,
            "items": {
                "type": "object",
                "properties": {
                    "description": {"type": "string", "minLength": 1},
                    "quantity": {"type": "number", "exclusiveMinimum": 0, "maximum": 100000},
                    "unit": {"type": "string", "enum": ["piece", "hour", "day", "kg", "month"]},
                    "unit_price": {"type": "number", "minimum": 0},
                    "discount_pct": {"type": "number", "minimum": 0, "maximum": 100},
                    "tax_rate": {"type": "number", "minimum": 0, "maximum": 0.5},
                },
                "required": ["description", "quantity", "unit_price"],
                "additionalProperties": False,
            },
        },
        "subtotal": {"type": "number", "minimum": 0},
        "tax_total": {"type": "number", "minimum": 0},
        "total": {"type": "number", "minimum": 0},
        "paid": {"type": "boolean"},
    },
    "required": ["invoice_number", "issue_date", "currency", "lines", "total"],
})
def _(p):
    items = [("Consulting — API design review", "hour", 145.0), ("Hosting (EU region)", "month", 89.9),
             ("Espresso beans, Ethiopia Yirgacheffe", "kg", 28.4), ("Workshop: \"Intro to constrained decoding\"", "day", 1800.0),
             ("翻訳サービス（日本語→英語）", "piece", 0.12), ("USB-C cable 2 m", "piece", 9.99)]
    lines, sub, tax = [], 0.0, 0.0
    for d, u, pr in p.sample(items, 1, 4):
        if u == "piece":
            q = 1200 if pr < 1 else p.choice([1, 2, 3, 12])
        else:
            q = p.choice([1, 2, 3, 7.5, 0.5, 12, 250])
        disc = p.choice([0, 5, 10, 12.5]) if p.opt(0.4) else 0
        tr = p.choice([0.19, 0.2, 0.1, 0, 0.077]) if p.opt(0.7) else None
        net = q * pr * (1 - disc / 100)
        sub += net
        tax += net * (tr or 0)
        lines.append(O(description=d, quantity=q, unit=p.o(u, 0.8), unit_price=pr, discount_pct=disc if disc else SKIP,
                       tax_rate=tr if tr is not None else SKIP))
    sub, tax = round(sub, 2), round(tax, 2)
    return O(invoice_number="INV-%04d-%05d" % (p.randint(2023, 2025), p.randint(1, 99999)), issue_date=date(p),
             due_in_days=p.o(p.choice([0, 14, 30, 60])), currency=p.choice(["EUR", "CHF", "USD", "JPY"]),
             seller=p.o(p.choice(["Acme GmbH, Marienplatz 8, 80331 München", "Zoë Adler Consulting", "株式会社サンプル"])),
             buyer=p.o(p.choice(["Contoso Ltd.", "Universidade de São Paulo", "Kofi Mensah"])), lines=lines,
             subtotal=p.o(sub), tax_total=p.o(tax), total=round(sub + tax, 2), paid=p.o(p.choice([True, False])))


@case("workout_activity", "number", {
    "$schema": S2020,
    "title": "Workout activity",
    "description": "A recorded activity as a fitness tracker's export writes it.",
    "type": "object",
    "properties": {
        "activity_type": {"type": "string", "enum": ["run", "ride", "swim", "walk", "hike", "row"]},
        "started_at": {"type": "string", "format": "date-time"},
        "duration_s": {"type": "integer", "minimum": 1, "maximum": 86400},
        "distance_km": {"type": "number", "exclusiveMinimum": 0, "maximum": 1000},
        "elevation_gain_m": {"type": "number", "minimum": 0},
        "avg_heart_rate": {"type": "integer", "minimum": 30, "maximum": 220},
        "max_heart_rate": {"type": "integer", "minimum": 30, "maximum": 230},
        "calories": {"type": "integer", "minimum": 0},
        "perceived_effort": {"type": "integer", "minimum": 1, "maximum": 10},
        "splits": {"type": "array", "maxItems": 50, "items": {
            "type": "object",
            "properties": {"index": {"type": "integer", "minimum": 1},
                           "pace_s_per_km": {"type": "number", "exclusiveMinimum": 0},
                           "heart_rate": {"type": "integer", "minimum": 30, "maximum": 220},
                           "elevation_delta_m": {"type": "number"}},
            "required": ["index", "pace_s_per_km"], "additionalProperties": False}},
        "notes": {"type": "string"},
    },
    "required": ["activity_type", "started_at", "duration_s"],
})
def _(p):
    act = p.choice(["run", "ride", "swim", "walk", "hike", "row"])
    dist = p.dec(0.4, 42.2, 2)
    dur = int(dist * p.randint(240, 600)) + 1
    hr = p.randint(110, 172)
    splits = [O(index=k, pace_s_per_km=p.dec(230, 420, 1), heart_rate=p.o(hr + p.randint(-8, 12)), elevation_delta_m=p.o(p.dec(-12, 15, 1), 0.4))
              for k in range(1, min(int(dist), 6) + 1)]
    return O(activity_type=act, started_at=date(p) + "T" + time_(p, False), duration_s=dur, distance_km=p.o(dist),
             elevation_gain_m=p.o(p.dec(0, 900, 1)), avg_heart_rate=p.o(hr), max_heart_rate=p.o(min(230, hr + p.randint(8, 30))),
             calories=p.o(p.randint(40, 2400)), perceived_effort=p.o(p.randint(1, 10)), splits=p.o(splits) if splits else SKIP,
             notes=p.o(p.choice(["Easy recovery run along the Limmat 🌅", "Intervals: 6×800 m @ 3:40/km", "Windy on the ridge — 強風",
                                 "Felt \"heavy legs\" after yesterday's hike"]), 0.4))


@case("generation_params", "number", {
    "$schema": S2020,
    "title": "Sampling parameters",
    "description": "Generation settings sent with a chat-completion request.",
    "type": "object",
    "properties": {
        "model": {"type": "string", "pattern": "^[a-z0-9][a-z0-9._:/-]*$"},
        "temperature": {"type": "number", "minimum": 0, "maximum": 2, "default": 1},
        "top_p": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "top_k": {"type": "integer", "minimum": 0, "maximum": 1000},
        "min_p": {"type": "number", "minimum": 0, "maximum": 1},
        "max_tokens": {"type": "integer", "minimum": 1, "maximum": 131072},
        "presence_penalty": {"type": "number", "minimum": -2, "maximum": 2},
        "frequency_penalty": {"type": "number", "minimum": -2, "maximum": 2},
        "repetition_penalty": {"type": "number", "exclusiveMinimum": 0, "maximum": 3},
        "seed": {"type": "integer", "minimum": 0, "maximum": 2147483647},
        "stop": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 4},
        "logit_bias": {"type": "object", "additionalProperties": {"type": "number", "minimum": -100, "maximum": 100}},
        "stream": {"type": "boolean"},
    },
    "required": ["model"],
    "additionalProperties": False,
})
def _(p):
    bias = O(("50256", -100), ("1734", p.o(2.5)), ("198", p.o(-0.75)))
    return O(model=p.choice(["llama-3.1-8b-instruct", "qwen2.5-7b-instruct:q4_k_m", "mistral-7b-v0.3", "acme/chat-small-2024.11"]),
             temperature=p.o(p.choice([0, 0.2, 0.7, 1, 1.3])), top_p=p.o(p.choice([0.9, 0.95, 1, 0.5])), top_k=p.o(p.choice([0, 20, 40, 100])),
             min_p=p.o(p.choice([0.05, 0.1, 0])), max_tokens=p.o(p.choice([64, 256, 1024, 4096, 32768])),
             presence_penalty=p.o(p.choice([0, 0.5, -0.25, 1.5])), frequency_penalty=p.o(p.choice([0, 0.3, -1])),
             repetition_penalty=p.o(p.choice([1, 1.1, 1.05, 1.18])), seed=p.o(p.randint(0, 2147483647)),
             stop=p.o(p.sample(["</s>", "\n\nUser:", "<|eot_id|>", "```", "###"], 1, 3)), logit_bias=p.o(bias, 0.3),
             stream=p.o(p.choice([True, False])))


# ==== recursive schemas ======================================================================================

@case("comment_thread", "recursive", {
    "$schema": S2020,
    "title": "Comment thread",
    "description": "A post's comments with nested replies, as a discussion API returns them.",
    "type": "object",
    "properties": {
        "post_id": {"type": "string", "pattern": "^p_[a-z0-9]{8}$"},
        "title": {"type": "string"},
        "locked": {"type": "boolean"},
        "comments": {"type": "array", "items": {"$ref": "#/$defs/comment"}},
    },
    "required": ["post_id", "comments"],
    "additionalProperties": False,
    "$defs": {
        "author": {
            "type": "object",
            "properties": {"username": {"type": "string", "pattern": "^[A-Za-z0-9_-]{2,30}$"}, "display_name": {"type": "string"},
                           "role": {"type": "string", "enum": ["member", "moderator", "admin"]}},
            "required": ["username"],
            "additionalProperties": False,
        },
        "comment": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "pattern": "^c_[a-z0-9]{6}$"},
                "author": {"$ref": "#/$defs/author"},
                "body": {"type": "string", "minLength": 1, "maxLength": 10000},
                "created_at": {"type": "string", "format": "date-time"},
                "score": {"type": "integer"},
                "edited": {"type": "boolean"},
                "replies": {"type": "array", "items": {"$ref": "#/$defs/comment"}},
            },
            "required": ["id", "author", "body"],
            "additionalProperties": False,
        },
    },
})
def _(p):
    bodies = ["Great write-up, thanks! 🙏", "I disagree — the benchmark ignores cold starts.", "Does this work on ARM64 too?",
              "Yes, tested on a Raspberry Pi 5; about 2× slower.", "Source? The linked paper says the opposite.",
              "Zoë here: we hit the same bug, fixed by setting `max_ws` to 0.", "素晴らしい記事です！",
              "Try this:\n```python\nprint(\"hello\")\n```", "+1", "Can you share the \"before\" numbers?", "Ha, classic off-by-one 😅"]
    users = [("zoe_adler", "Zoë Adler"), ("mateo", "Mateo García"), ("aiko_t", "田中 愛子"), ("kofi-m", None), ("mod_ingrid", "Ingrid (mod)")]

    def comment(depth):
        u = p.choice(users)
        n = 0 if depth >= 3 else p.randint(0, 2 if depth else 3)
        return O(id="c_" + token(p, 6, "abcdefghijklmnopqrstuvwxyz0123456789"),
                 author=O(username=u[0], display_name=p.o(u[1]) if u[1] else SKIP,
                          role=p.o("moderator" if u[0].startswith("mod") else "member", 0.3)),
                 body=p.choice(bodies), created_at=p.o(datetime_(p, 2025, 2025, False), 0.8), score=p.o(p.randint(-5, 250), 0.7),
                 edited=p.o(True, 0.2), replies=[comment(depth + 1) for _ in range(n)] if n or p.r.random() < 0.3 else SKIP)
    return O(post_id="p_" + token(p, 8, "abcdefghijklmnopqrstuvwxyz0123456789"),
             title=p.o(p.choice(["Show HN: a 2 kB JSON Patch library", "Why is my GBNF grammar so slow?", "東京の美味しいラーメン屋"])),
             locked=p.o(False, 0.3), comments=[comment(0) for _ in range(p.randint(0 if p.i > 1 else 1, 3))])


@case("file_tree", "recursive", {
    "$schema": S2020,
    "title": "File-system tree",
    "description": "A directory listing with nested directories, as a file-browser API returns it.",
    "$ref": "#/$defs/node",
    "$defs": {
        "node": {
            "oneOf": [
                {"type": "object",
                 "properties": {
                     "kind": {"const": "file"},
                     "name": {"type": "string", "pattern": "^[^/]+$"},
                     "size": {"type": "integer", "minimum": 0},
                     "mode": {"type": "string", "pattern": "^[0-7]{3,4}$"},
                     "modified": {"type": "string", "format": "date-time"},
                     "mime_type": {"type": "string", "pattern": "^[a-z]+/[a-z0-9.+-]+$"},
                 },
                 "required": ["kind", "name", "size"],
                 "additionalProperties": False},
                {"type": "object",
                 "properties": {
                     "kind": {"const": "directory"},
                     "name": {"type": "string", "pattern": "^[^/]+$"},
                     "mode": {"type": "string", "pattern": "^[0-7]{3,4}$"},
                     "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                 },
                 "required": ["kind", "name", "children"],
                 "additionalProperties": False},
                {"type": "object",
                 "properties": {"kind": {"const": "symlink"}, "name": {"type": "string", "pattern": "^[^/]+$"},
                                "target": {"type": "string", "minLength": 1}},
                 "required": ["kind", "name", "target"],
                 "additionalProperties": False},
            ],
        },
    },
})
def _(p):
    files = [("README.md", "text/markdown"), ("main.c", "text/x-c"), ("photo 東京.jpg", "image/jpeg"), ("notes – draft.txt", "text/plain"),
             ("package.json", "application/json"), ("logo.svg", "image/svg+xml"), (".gitignore", None), ("Zoë's CV.pdf", "application/pdf"),
             ("Makefile", None), ("data.csv", "text/csv")]
    dirs = ["src", "docs", "assets", "tests", "photos", "build", "2024", "projects"]

    def node(depth):
        k = p.r.random()
        if depth < 3 and (k < 0.35 or depth == 0):
            kids = [node(depth + 1) for _ in range(p.randint(0 if depth else 1, 4))]
            return O(kind="directory", name=p.choice(dirs) if depth else p.choice(["home", "repo", "workspace"]),
                     mode=p.o(p.choice(["755", "0700"]), 0.4), children=kids)
        if k > 0.93:
            return O(kind="symlink", name="latest", target=p.choice(["../2024/report.pdf", "/usr/share/zoneinfo/Asia/Tokyo"]))
        f = p.choice(files)
        return O(kind="file", name=f[0], size=p.randint(0, 5000000), mode=p.o(p.choice(["644", "600", "0755"]), 0.4),
                 modified=p.o(datetime_(p, 2023, 2025, False), 0.6), mime_type=p.o(f[1], 0.6) if f[1] else SKIP)
    return node(0)


@case("json_expr", "recursive", {
    "$schema": S2020,
    "title": "Expression AST",
    "description": "A JSON-encoded expression tree for a rules engine: literals, variables, operators and calls.",
    "$ref": "#/$defs/expr",
    "$defs": {
        "expr": {
            "oneOf": [
                {"type": "number"},
                {"type": "string", "description": "a string literal"},
                {"type": "boolean"},
                {"type": "null"},
                {"type": "object",
                 "properties": {"kind": {"const": "var"}, "name": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$"}},
                 "required": ["kind", "name"], "additionalProperties": False},
                {"type": "object",
                 "properties": {"kind": {"const": "binary"},
                                "op": {"type": "string", "enum": ["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or", "in"]},
                                "left": {"$ref": "#/$defs/expr"}, "right": {"$ref": "#/$defs/expr"}},
                 "required": ["kind", "op", "left", "right"], "additionalProperties": False},
                {"type": "object",
                 "properties": {"kind": {"const": "unary"}, "op": {"type": "string", "enum": ["-", "not"]},
                                "operand": {"$ref": "#/$defs/expr"}},
                 "required": ["kind", "op", "operand"], "additionalProperties": False},
                {"type": "object",
                 "properties": {"kind": {"const": "call"}, "fn": {"type": "string", "enum": ["min", "max", "abs", "round", "len", "lower", "contains", "now"]},
                                "args": {"type": "array", "items": {"$ref": "#/$defs/expr"}, "maxItems": 8}},
                 "required": ["kind", "fn", "args"], "additionalProperties": False},
                {"type": "object",
                 "properties": {"kind": {"const": "cond"}, "test": {"$ref": "#/$defs/expr"},
                                "then": {"$ref": "#/$defs/expr"}, "otherwise": {"$ref": "#/$defs/expr"}},
                 "required": ["kind", "test", "then", "otherwise"], "additionalProperties": False},
                {"type": "array", "description": "a list literal", "items": {"$ref": "#/$defs/expr"}},
            ],
        },
    },
})
def _(p):
    vars_ = ["order.total", "user.country", "cart.items", "user.age", "now_hour", "order.currency", "user.tags"]
    lits = [100, 18, 0.15, 2.5, -1, "JP", "Zoë", "VIP ⭐", "東京", "say \"hi\"", True, False, None]

    def expr(depth):
        k = p.r.random()
        if depth >= 3 or k < 0.3:
            return O(kind="var", name=p.choice(vars_)) if p.r.random() < 0.5 else p.choice(lits)
        if k < 0.6:
            return O(kind="binary", op=p.choice(["+", "*", "==", "<", ">=", "and", "or", "in"]), left=expr(depth + 1), right=expr(depth + 1))
        if k < 0.7:
            return O(kind="unary", op=p.choice(["-", "not"]), operand=expr(depth + 1))
        if k < 0.85:
            return O(kind="call", fn=p.choice(["min", "max", "round", "lower", "contains", "len"]),
                     args=[expr(depth + 1) for _ in range(p.randint(1, 3))])
        if k < 0.95:
            return O(kind="cond", test=expr(depth + 1), then=expr(depth + 1), otherwise=expr(depth + 1))
        return [p.choice(lits[5:10]) for _ in range(p.randint(0, 3))]
    e = expr(0)
    while not isinstance(e, dict):  # a tree, not a bare literal
        e = expr(0)
    return e


@case("nav_menu", "recursive", {
    "$schema": S2020,
    "title": "Navigation menu",
    "description": "A site's navigation menu with nested submenus, as a CMS delivers it.",
    "type": "object",
    "properties": {
        "menu_id": {"type": "string", "pattern": "^[a-z0-9-]+$"},
        "locale": {"type": "string", "pattern": "^[a-z]{2}(-[A-Z]{2})?$"},
        "items": {"type": "array", "minItems": 1, "maxItems": 12, "items": {"$ref": "#/$defs/item"}},
    },
    "required": ["menu_id", "items"],
    "additionalProperties": False,
    "$defs": {
        "item": {
            "type": "object",
            "properties": {
                "label": {"type": "string", "minLength": 1, "maxLength": 60},
                "href": {"type": "string", "pattern": "^(/|https://)"},
                "icon": {"type": "string", "enum": ["home", "cart", "user", "search", "settings", "help", "external"]},
                "badge": {"type": "integer", "minimum": 0, "maximum": 99},
                "new_tab": {"type": "boolean"},
                "children": {"type": "array", "maxItems": 12, "items": {"$ref": "#/$defs/item"}},
            },
            "required": ["label"],
            "additionalProperties": False,
        },
    },
})
def _(p):
    loc = p.choice([("en", ["Home", "Shop", "Men", "Women", "Sale %", "Help", "Account", "Orders", "Gift cards 🎁", "Contact"]),
                    ("ja-JP", ["ホーム", "ショップ", "メンズ", "レディース", "セール", "ヘルプ", "アカウント", "注文履歴", "お問い合わせ"]),
                    ("de-CH", ["Startseite", "Shop", "Herren", "Damen", "Aktionen", "Hilfe", "Konto", "Bestellungen", "Über uns"])])

    def item(depth):
        lab = p.choice(loc[1])
        kids = [item(depth + 1) for _ in range(p.randint(1, 4))] if depth < 2 and p.r.random() < 0.35 else None
        return O(label=lab, href=p.o("/" + ascii_slug(lab, "-") if ascii_slug(lab, "-") else "/c/" + str(p.randint(1, 99)), 0.8) if not kids else SKIP,
                 icon=p.o(p.choice(["home", "cart", "user", "search", "settings", "help"]), 0.3), badge=p.o(p.randint(1, 12), 0.15),
                 new_tab=p.o(True, 0.1), children=kids if kids else SKIP)
    items = [item(0) for _ in range(p.randint(2, 6))]
    if p.opt(0.5):
        items.append(O(label="Blog", href="https://blog.example.com/", icon="external", new_tab=True))
    return O(menu_id=p.choice(["main", "footer", "account-menu"]), locale=p.o(loc[0]), items=items)


# ==== writing ================================================================================================


def build():
    """{name: (kind, schema, [instance texts])}; raises SystemExit on a validation error."""
    out, errors = {}, []
    for name, kind, schema, gen in CASES:
        r = random.Random("%s:%s" % (SEED, name))
        n = r.randint(6, 10)
        texts, seen = [], set()
        tries = 0
        while len(texts) < n and tries < 200:
            p = P(r, len(texts))
            x = gen(p)
            tries += 1
            compact = (len(texts) + len(out)) % 2 == 0  # alternate, starting either way
            t = json.dumps(x, separators=(",", ":"), ensure_ascii=False) if compact else json.dumps(x, ensure_ascii=False)
            key = json.dumps(x, sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            texts.append(t)
        errs = validate.check_case(schema, texts)
        errors += ["%s: %s" % (name, e) for e in errs]
        if len(texts) < 6:
            errors.append("%s: only %d distinct instances" % (name, len(texts)))
        out[name] = (kind, schema, texts)
    if errors:
        for e in errors:
            print(e, file=sys.stderr)
        sys.exit(1)
    return out


def main(argv):
    d = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
    cases = build()
    os.makedirs(d, exist_ok=True)
    by_kind = {}
    for name, (kind, schema, texts) in cases.items():
        with open(os.path.join(d, name + ".json"), "w", encoding="utf-8", newline="\n") as f:
            f.write(json.dumps(schema, indent=2, ensure_ascii=False) + "\n")
        with open(os.path.join(d, name + ".txt"), "w", encoding="utf-8", newline="\n") as f:
            f.write("".join(t + "\n" for t in texts))
        k = by_kind.setdefault(kind, [0, 0])
        k[0] += 1
        k[1] += len(texts)
    total = sum(len(t) for _, _, t in cases.values())
    print("%d schemas, %d instances written to %s" % (len(cases), total, d))
    for kind, (ns, ni) in by_kind.items():
        print("  %-10s %2d schemas, %3d instances" % (kind, ns, ni))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
