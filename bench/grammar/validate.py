#!/usr/bin/env python3
"""A small JSON Schema validator for the grammar bench corpus (standard library only).

It checks exactly the keywords the corpus uses (the subset nextok's JSON Schema
converter enforces) and, as nextok's grammars do, that an object's members come
in the order of the schema's "properties" (undeclared members, where allowed,
after all declared ones).

    /usr/bin/python3 bench/grammar/validate.py [CASES_DIR]

checks every NAME.json / NAME.txt pair in CASES_DIR (default: cases/ next to
this file): the schema uses only the allowed keywords, and each line of
NAME.txt is one JSON text, written compactly or with Python's default
separators, that is an instance of the schema. Exit status 0 when all pass.
"""
import datetime
import ipaddress
import json
import math
import os
import re
import sys

# Keywords a schema in the corpus may use (others are refused by the converter
# or not checked here).
ALLOWED = {
    "type", "enum", "const", "properties", "required", "additionalProperties",
    "items", "prefixItems", "minItems", "maxItems", "minLength", "maxLength",
    "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "anyOf", "oneOf", "allOf", "$ref", "$defs",
    "definitions", "title", "description", "default", "examples", "$schema",
    "$id", "$comment",
}
# Keywords whose value is a JSON value (not a schema), never walked.
VALUE_KEYWORDS = {"enum", "const", "default", "examples", "required", "type",
                  "title", "description", "$schema", "$id", "$comment",
                  "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
                  "exclusiveMaximum", "minItems", "maxItems", "minLength",
                  "maxLength", "$ref"}

# ---- formats ------------------------------------------------------------------------
# Each as strict as nextok's converter (src/grammar/schema_formats.c) or
# stricter, so an instance that passes here passes there.

_TIME_RE = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])", re.A)
_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.A)
_DUR_TIME = r"T([0-9]+H([0-9]+M([0-9]+S)?)?|[0-9]+M([0-9]+S)?|[0-9]+S)"
_DUR_DATE = r"([0-9]+D|[0-9]+M([0-9]+D)?|[0-9]+Y([0-9]+M([0-9]+D)?)?)"
_DURATION_RE = re.compile("P(" + _DUR_DATE + "(" + _DUR_TIME + ")?|" + _DUR_TIME + "|[0-9]+W)", re.A)
_LABEL_RE = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?", re.A)
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
_LOCAL_RE = re.compile(_ATEXT + r"+(\." + _ATEXT + r"+)*", re.A)
_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", re.A)
_PCHAR = r"([A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})"
_URI_RE = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]*:"
    r"(//(([A-Za-z0-9._~!$&'()*+,;=:-]|%[0-9A-Fa-f]{2})*@)?([A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*(:[0-9]*)?(/" + _PCHAR + r"*)*"
    r"|/(" + _PCHAR + r"+(/" + _PCHAR + r"*)*)?"
    r"|" + _PCHAR + r"+(/" + _PCHAR + r"*)*)?"
    r"(\?(" + _PCHAR + r"|[/?])*)?(#(" + _PCHAR + r"|[/?])*)?", re.A)


def _date_ok(s):
    if not _DATE_RE.fullmatch(s):
        return False
    try:
        datetime.date.fromisoformat(s)  # days of the month, leap years; not year 0000
    except ValueError:
        return False
    return True


def _hostname_ok(s):
    if not s or len(s) > 251:
        return False
    labels = s.split(".")
    if len(labels) > 12 or (len(labels) > 4 and any(len(l) > 20 for l in labels)):
        return False
    for l in labels:
        if not _LABEL_RE.fullmatch(l) or len(l) > 62:
            return False
        if len(l) >= 4 and l[2:4] == "--":
            return False
    return True


def _ipv4_ok(s):
    parts = s.split(".")
    return (len(parts) == 4 and all(re.fullmatch(r"(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])", p, re.A)
                                    for p in parts))


def _ipv6_ok(s):
    if "%" in s or not re.fullmatch(r"[0-9A-Fa-f:.]+", s, re.A):
        return False
    try:
        ipaddress.IPv6Address(s)
    except ValueError:
        return False
    if "." in s:  # an embedded IPv4 must be dotted-decimal without leading zeros
        return _ipv4_ok(s.rsplit(":", 1)[1])
    return True


def _email_ok(s):
    if s.count("@") < 1:
        return False
    local, _, domain = s.rpartition("@")
    if not _LOCAL_RE.fullmatch(local):
        return False
    return all(re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?", l, re.A) for l in domain.split("."))


FORMATS = {
    "date": _date_ok,
    "time": lambda s: bool(_TIME_RE.fullmatch(s)),
    "date-time": lambda s: len(s) > 11 and s[10] == "T" and _date_ok(s[:10]) and bool(_TIME_RE.fullmatch(s[11:])),
    "duration": lambda s: bool(_DURATION_RE.fullmatch(s)),
    "email": _email_ok,
    "uuid": lambda s: bool(_UUID_RE.fullmatch(s)),
    "uri": lambda s: bool(_URI_RE.fullmatch(s)),
    "hostname": _hostname_ok,
    "ipv4": _ipv4_ok,
    "ipv6": _ipv6_ok,
}

# ---- the validator ------------------------------------------------------------------------


def json_type(x):
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "boolean"
    if isinstance(x, int):
        return "integer"
    if isinstance(x, float):
        return "integer" if x.is_integer() else "number"
    if isinstance(x, str):
        return "string"
    if isinstance(x, list):
        return "array"
    if isinstance(x, dict):
        return "object"
    raise TypeError(type(x))


def has_type(x, t):
    jt = json_type(x)
    if t == "integer" and isinstance(x, float):
        return False  # nextok's grammars spell integers without a fraction: 3, not 3.0
    return jt == t or (t == "number" and jt == "integer")


def json_equal(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) == type(b) and a == b


def resolve(root, ref):
    if not ref.startswith("#"):
        raise ValueError("only local $ref: " + ref)
    node = root
    for part in ref[1:].split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


class Validator:
    def __init__(self, root):
        self.root = root
        self.patterns = {}

    def errors(self, x, s, path="$", depth=0):
        """The list of reasons x is not an instance of s (empty when it is)."""
        if depth > 200:
            return [path + ": $ref recursion too deep"]
        if s is True:
            return []
        if s is False:
            return [path + ": false schema"]
        errs = []
        if "$ref" in s:
            errs += self.errors(x, resolve(self.root, s["$ref"]), path, depth + 1)
        if "type" in s:
            ts = s["type"] if isinstance(s["type"], list) else [s["type"]]
            if not any(has_type(x, t) for t in ts):
                errs.append("%s: %s is not of type %s" % (path, json.dumps(x)[:40], ts))
        if "enum" in s and not any(json_equal(x, v) for v in s["enum"]):
            errs.append("%s: %r not in enum" % (path, x))
        if "const" in s and not json_equal(x, s["const"]):
            errs.append("%s: %r is not the const %r" % (path, x, s["const"]))
        for sub in s.get("allOf", []):
            errs += self.errors(x, sub, path, depth + 1)
        if "anyOf" in s and not any(not self.errors(x, sub, path, depth + 1) for sub in s["anyOf"]):
            errs.append("%s: no anyOf branch matches" % path)
        if "oneOf" in s:
            n = sum(1 for sub in s["oneOf"] if not self.errors(x, sub, path, depth + 1))
            if n != 1:
                errs.append("%s: %d oneOf branches match" % (path, n))
        jt = json_type(x)
        if jt in ("integer", "number"):
            if "minimum" in s and x < s["minimum"]:
                errs.append("%s: %r < minimum %r" % (path, x, s["minimum"]))
            if "maximum" in s and x > s["maximum"]:
                errs.append("%s: %r > maximum %r" % (path, x, s["maximum"]))
            if "exclusiveMinimum" in s and x <= s["exclusiveMinimum"]:
                errs.append("%s: %r <= exclusiveMinimum %r" % (path, x, s["exclusiveMinimum"]))
            if "exclusiveMaximum" in s and x >= s["exclusiveMaximum"]:
                errs.append("%s: %r >= exclusiveMaximum %r" % (path, x, s["exclusiveMaximum"]))
        elif jt == "string":
            if "minLength" in s and len(x) < s["minLength"]:
                errs.append("%s: shorter than %d" % (path, s["minLength"]))
            if "maxLength" in s and len(x) > s["maxLength"]:
                errs.append("%s: longer than %d" % (path, s["maxLength"]))
            if "pattern" in s:
                p = self.patterns.get(s["pattern"])
                if p is None:
                    # re.ASCII: \d and \w mean [0-9] and [A-Za-z0-9_], as in ECMA-262.
                    p = self.patterns[s["pattern"]] = re.compile(s["pattern"], re.ASCII)
                if not p.search(x):
                    errs.append("%s: %r does not match %r" % (path, x, s["pattern"]))
            if "format" in s:
                if s["format"] not in FORMATS:
                    errs.append("%s: unknown format %r" % (path, s["format"]))
                elif not FORMATS[s["format"]](x):
                    errs.append("%s: %r is not a %s" % (path, x, s["format"]))
        elif jt == "array":
            if "minItems" in s and len(x) < s["minItems"]:
                errs.append("%s: fewer than %d items" % (path, s["minItems"]))
            if "maxItems" in s and len(x) > s["maxItems"]:
                errs.append("%s: more than %d items" % (path, s["maxItems"]))
            prefix = s.get("prefixItems", [])
            for i, v in enumerate(x):
                if i < len(prefix):
                    errs += self.errors(v, prefix[i], "%s[%d]" % (path, i), depth + 1)
                elif "items" in s:
                    errs += self.errors(v, s["items"], "%s[%d]" % (path, i), depth + 1)
        elif jt == "object":
            props = s.get("properties", {})
            for k in s.get("required", []):
                if k not in x:
                    errs.append("%s: missing required %r" % (path, k))
            order = list(props)
            last, extra_seen = -1, None
            for k, v in x.items():
                if k in props:
                    errs += self.errors(v, props[k], "%s.%s" % (path, k), depth + 1)
                    if extra_seen is not None and "properties" in s:
                        errs.append("%s: declared %r after undeclared %r" % (path, k, extra_seen))
                    if order.index(k) < last:
                        errs.append("%s: %r out of schema order" % (path, k))
                    last = order.index(k)
                else:
                    extra_seen = k
                    ap = s.get("additionalProperties", True)
                    errs += self.errors(v, ap, "%s.%s" % (path, k), depth + 1)
        return errs


def check_schema(s, path="#", errs=None):
    """The keywords of s and its subschemas are all in ALLOWED."""
    errs = [] if errs is None else errs
    if isinstance(s, bool):
        return errs
    if not isinstance(s, dict):
        errs.append(path + ": a schema must be an object or a boolean")
        return errs
    for k, v in s.items():
        p = path + "/" + k
        if k not in ALLOWED:
            errs.append(p + ": keyword not allowed")
        elif k in ("properties", "$defs", "definitions"):
            for name, sub in v.items():
                check_schema(sub, p + "/" + name, errs)
        elif k in ("anyOf", "oneOf", "allOf", "prefixItems"):
            for i, sub in enumerate(v):
                check_schema(sub, "%s/%d" % (p, i), errs)
        elif k in ("items", "additionalProperties"):
            check_schema(v, p, errs)
        elif k == "format" and v not in FORMATS:
            errs.append(p + ": unknown format")
        elif k == "pattern":
            re.compile(v, re.ASCII)
    return errs


def _no_exponent(text):
    if "e" in text or "E" in text or text.lstrip("-").startswith("inf") or "nan" in text.lower():
        raise ValueError("number %r: write plain decimals" % text)
    if text.startswith("-") and float(text) == 0:
        raise ValueError("number %r: negative zero" % text)
    return float(text)


def _no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key")
    return dict(pairs)


def parse_line(line):
    """The JSON value of one line of a NAME.txt, with the corpus's spelling rules."""
    x = json.loads(line, parse_float=_no_exponent, object_pairs_hook=_no_duplicates,
                   parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    compact = json.dumps(x, separators=(",", ":"), ensure_ascii=False)
    spaced = json.dumps(x, ensure_ascii=False)
    if line not in (compact, spaced):
        raise ValueError("not written as json.dumps writes it (compact or default separators)")
    return x, line == compact


def check_case(schema, lines):
    """Errors for one case: the schema, then each line (numbered from 1)."""
    errs = check_schema(schema)
    v = Validator(schema)
    for n, line in enumerate(lines, 1):
        if not line.strip():
            errs.append("line %d: blank" % n)
            continue
        try:
            x, _ = parse_line(line)
        except ValueError as e:
            errs.append("line %d: %s" % (n, e))
            continue
        errs += ["line %d: %s" % (n, e) for e in v.errors(x, schema)]
    return errs


def main(argv):
    d = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
    names = sorted(f[:-5] for f in os.listdir(d) if f.endswith(".json"))
    bad, total = 0, 0
    for name in names:
        with open(os.path.join(d, name + ".json"), encoding="utf-8") as f:
            schema = json.load(f)
        txt = os.path.join(d, name + ".txt")
        if not os.path.exists(txt):
            print("%s: no %s.txt" % (name, name))
            bad += 1
            continue
        with open(txt, "rb") as f:
            data = f.read().decode("utf-8")
        if not data.endswith("\n") or "\r" in data:
            print("%s.txt: must be LF-terminated lines" % name)
            bad += 1
        lines = data[:-1].split("\n") if data.endswith("\n") else data.split("\n")
        total += len(lines)
        errs = check_case(schema, lines)
        for e in errs:
            print("%s: %s" % (name, e))
        bad += bool(errs)
    print("%d schemas, %d instances, %s" % (len(names), total, "all valid" if not bad else "%d cases with errors" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
