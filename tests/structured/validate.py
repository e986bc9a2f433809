#!/usr/bin/python3
"""Validation CLI for the grammar-constrained JSON matcher tests.

Modes
-----
  validate.py check-corpus CORPUS
      Re-validate every labelled instance of a schema corpus (JSONL, one
      {"name","schema","valid","invalid"} object per line, see make_corpus.py)
      with jsonschema.Draft202012Validator.  Also checks that every schema uses
      only the keywords the matcher implements (and oneOf only over disjoint
      JSON types) and that every instance text is in the canonical compact
      instance domain.  Exit 1 and list the offenders on any disagreement.

  validate.py generations FILE [--max-unfinished FRACTION]
      FILE is JSONL, one {"name","schema","outputs":[text,...],
      "finished":[bool,...]} object per line, written by a C++ test after
      constrained generation.  Every output must have terminated, be compact
      (no whitespace outside string literals), parse as strict JSON (no
      NaN/Infinity, no duplicate keys) and validate against its schema.
      Prints each failure and a final summary line.  Exit 1 if any finished output is not
      valid, or if more than FRACTION of the outputs did not finish
      (--max-unfinished FRACTION, default 0).

Only the standard library and jsonschema (Debian python3-jsonschema 4.10) are
used; run with /usr/bin/python3.
"""

import json
import sys

import jsonschema

# Keywords the matcher implements; anything else in a schema position is an
# error in the corpus.
SUPPORTED_KEYWORDS = (
    "type", "properties", "required", "additionalProperties", "items",
    "enum", "const", "anyOf", "oneOf", "$defs", "$ref",
    "minLength", "maxLength", "minItems", "maxItems",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "title", "description", "default",
    "pattern", "format", "prefixItems", "minProperties", "maxProperties", "allOf",
)
JSON_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
JSON_WHITESPACE = " \t\n\r"


def format_checker():
    """jsonschema's format checker without its "time" rule: Debian's 4.10 checks
    time with the draft-3 strptime("%H:%M:%S") rule (no offset), which
    contradicts 2020-12's RFC 3339 full-time (offset required)."""
    checker = jsonschema.FormatChecker()
    checker.checkers.pop("time", None)
    return checker


# ---------------------------------------------------------------------------
# Schema walking / linting


def walk_schema(schema, visit, path="#"):
    """Call visit(subschema, path) for every subschema (schema positions only,
    so property names and enum/const/default values are never mistaken for
    keywords)."""
    visit(schema, path)
    if not isinstance(schema, dict):
        return
    for key in ("properties", "$defs"):
        if isinstance(schema.get(key), dict):
            for name, sub in schema[key].items():
                walk_schema(sub, visit, "%s/%s/%s" % (path, key, name))
    for key in ("additionalProperties", "items"):
        if key in schema:
            walk_schema(schema[key], visit, "%s/%s" % (path, key))
    if isinstance(schema.get("prefixItems"), list):
        for i, sub in enumerate(schema["prefixItems"]):
            walk_schema(sub, visit, "%s/prefixItems/%d" % (path, i))
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list):
            for i, sub in enumerate(schema[key]):
                walk_schema(sub, visit, "%s/%s/%d" % (path, key, i))


def keywords_used(schema):
    """Set of keywords used anywhere in schema (plus 'true-schema' when a
    boolean true / {} schema appears in a schema position)."""
    used = set()

    def visit(sub, _path):
        if sub is True or sub == {}:
            used.add("true-schema")
        if isinstance(sub, dict):
            used.update(sub.keys())

    walk_schema(schema, visit)
    return used


def _resolve(ref, root):
    if ref == "#":
        return root
    prefix = "#/$defs/"
    if not ref.startswith(prefix):
        raise ValueError("unsupported $ref %r" % ref)
    return root["$defs"][ref[len(prefix):]]


def _value_type(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def branch_type_groups(branch, root, seen=()):
    """JSON type groups a oneOf branch can match (integer and number share a
    group), or None if it cannot be determined."""
    if branch is True or branch == {}:
        return None
    if "$ref" in branch:
        if branch["$ref"] in seen:
            return None
        return branch_type_groups(_resolve(branch["$ref"], root), root,
                                  seen + (branch["$ref"],))
    if "type" in branch:
        types = branch["type"]
        types = [types] if isinstance(types, str) else types
    elif "const" in branch:
        types = [_value_type(branch["const"])]
    elif "enum" in branch:
        types = [_value_type(v) for v in branch["enum"]]
    else:
        return None
    return {"number" if t == "integer" else t for t in types}


def lint_schema(schema):
    """List of problems: unsupported keywords, bad $ref, overlapping oneOf."""
    problems = []

    def visit(sub, path):
        if isinstance(sub, bool):
            if sub is False and not path.endswith(("/additionalProperties", "/items")):
                problems.append("%s: false schema" % path)
            return
        if not isinstance(sub, dict):
            problems.append("%s: schema is not an object/bool" % path)
            return
        for key in sub:
            if key not in SUPPORTED_KEYWORDS:
                problems.append("%s: unsupported keyword %r" % (path, key))
        if "type" in sub:
            types = sub["type"]
            types = [types] if isinstance(types, str) else types
            for t in types:
                if t not in JSON_TYPES:
                    problems.append("%s: bad type %r" % (path, t))
        if "$ref" in sub:
            try:
                _resolve(sub["$ref"], schema)
            except (ValueError, KeyError) as e:
                problems.append("%s: %s" % (path, e))
        if "oneOf" in sub:
            groups = []
            for i, br in enumerate(sub["oneOf"]):
                g = branch_type_groups(br, schema)
                if g is None:
                    problems.append("%s/oneOf/%d: branch type undetermined" % (path, i))
                    return
                for other in groups:
                    if g & other:
                        problems.append("%s/oneOf/%d: branch types overlap" % (path, i))
                groups.append(g)

    walk_schema(schema, visit)
    return problems


# ---------------------------------------------------------------------------
# Instance text checks


def whitespace_outside_strings(text):
    """Index of the first JSON whitespace char outside a string literal, or
    -1.  Raw control chars inside strings are left to json.loads."""
    in_string = False
    escaped = False
    for i, c in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in JSON_WHITESPACE:
            return i
    return -1


def _reject_constant(name):
    raise ValueError("non-finite constant %s" % name)


def _no_duplicates(pairs):
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise ValueError("duplicate key %r" % k)
        obj[k] = v
    return obj


def strict_loads(text):
    return json.loads(text, parse_constant=_reject_constant,
                      object_pairs_hook=_no_duplicates)


def check_text(text):
    """Parse an output text; returns (value, None) or (None, error string)."""
    if not isinstance(text, str):
        return None, "output is not a string"
    if "\n" in text or "\t" in text:
        return None, "contains a raw newline/tab"
    i = whitespace_outside_strings(text)
    if i >= 0:
        return None, "whitespace outside strings at offset %d" % i
    try:
        return strict_loads(text), None
    except ValueError as e:  # json.JSONDecodeError is a ValueError
        return None, "not strict JSON: %s" % e


def _lone_surrogate(s):
    return any(0xD800 <= ord(c) <= 0xDFFF for c in s)


def domain_problem(value):
    """Why value is outside the corpus instance domain, or None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return "integer longer than 18 digits" if abs(value) >= 10 ** 18 else None
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return "non-finite float"
        if value.is_integer():
            return "integral float %r" % value
        r = repr(value)
        if "e" in r or "E" in r:
            return "float %r needs exponent notation" % value
        digits = r.lstrip("-").replace(".", "").lstrip("0")
        if len(digits) > 15:
            return "float %r has more than 15 significant digits" % value
        return None
    if isinstance(value, str):
        return "lone surrogate" if _lone_surrogate(value) else None
    if isinstance(value, list):
        for v in value:
            p = domain_problem(v)
            if p:
                return p
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            p = domain_problem(k) or domain_problem(v)
            if p:
                return p
        return None
    return "unexpected Python type %s" % type(value).__name__


def canonical_texts(value):
    """The accepted serialisations of value (unicode kept / \\u-escaped)."""
    return (json.dumps(value, separators=(",", ":"), ensure_ascii=False),
            json.dumps(value, separators=(",", ":"), ensure_ascii=True))


# ---------------------------------------------------------------------------
# Modes


def _read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.strip():
                yield lineno, json.loads(line)


def check_corpus(path):
    n_schemas = n_valid = n_invalid = 0
    offenders = []
    coverage = {}
    names = set()
    for lineno, entry in _read_jsonl(path):
        name = entry.get("name", "<line %d>" % lineno)
        n_schemas += 1
        if name in names:
            offenders.append("%s: duplicate schema name" % name)
        names.add(name)
        schema = entry["schema"]
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.exceptions.SchemaError as e:
            offenders.append("%s: invalid schema: %s" % (name, e.message))
            continue
        for p in lint_schema(schema):
            offenders.append("%s: %s" % (name, p))
        for kw in keywords_used(schema):
            coverage[kw] = coverage.get(kw, 0) + 1
        validator = jsonschema.Draft202012Validator(
            schema, format_checker=format_checker())
        if not entry.get("valid"):
            offenders.append("%s: no valid instance" % name)
        seen = set()
        for label in ("valid", "invalid"):
            for text in entry.get(label, []):
                if text in seen:
                    offenders.append("%s: duplicate instance %s" % (name, text))
                seen.add(text)
                value, err = check_text(text)
                if err is None:
                    err = domain_problem(value)
                if err is None and text not in canonical_texts(value):
                    err = "not in canonical compact form"
                if err is not None:
                    offenders.append("%s: %s instance %s: %s" % (name, label, text, err))
                    continue
                ok = validator.is_valid(value)
                if ok != (label == "valid"):
                    offenders.append("%s: labelled %s but validator says %s: %s"
                                     % (name, label, "valid" if ok else "invalid", text))
                if label == "valid":
                    n_valid += 1
                else:
                    n_invalid += 1
    for o in offenders:
        print("OFFENDER " + o)
    print("corpus: %d schemas, %d valid instances, %d invalid instances"
          % (n_schemas, n_valid, n_invalid))
    print("keyword coverage (schemas using each): " + ", ".join(
        "%s=%d" % (k, coverage[k]) for k in sorted(coverage)))
    if offenders:
        print("check-corpus: FAILED (%d offenders)" % len(offenders))
        return 1
    print("check-corpus: OK")
    return 0


def check_generations(path, max_unfinished=0.0):
    """Every finished output must be valid; outputs cut by max_tokens are counted, and fail the
    check only when they are more than `max_unfinished` (a fraction) of all outputs."""
    n_outputs = n_schemas = n_ok = n_unfinished = n_invalid = n_closed = 0
    unfinished_by_schema = {}
    closed_by_schema = {}
    for lineno, entry in _read_jsonl(path):
        n_schemas += 1
        name = entry.get("name", "<line %d>" % lineno)
        outputs = entry.get("outputs", [])
        finished = entry.get("finished", [])
        closed = entry.get("closed_by_budget", [])
        try:
            validator = jsonschema.Draft202012Validator(
                entry["schema"], format_checker=format_checker())
            validator.check_schema(entry["schema"])
        except (KeyError, jsonschema.exceptions.SchemaError) as e:
            print("FAIL %s: bad schema in generations file: %s" % (name, e))
            n_outputs += len(outputs)
            continue
        for i, text in enumerate(outputs):
            n_outputs += 1
            err = None
            if i >= len(finished) or finished[i] is not True:
                n_unfinished += 1
                unfinished_by_schema[name] = unfinished_by_schema.get(name, 0) + 1
                continue
            if err is None:
                value, err = check_text(text)
            if err is None:
                best = jsonschema.exceptions.best_match(validator.iter_errors(value))
                if best is not None:
                    err = "schema violation at %s: %s" % (
                        "/".join(str(p) for p in best.absolute_path) or "<root>",
                        best.message)
            if err is None:
                n_ok += 1
                if i < len(closed) and closed[i] is True:
                    n_closed += 1
                    closed_by_schema[name] = closed_by_schema.get(name, 0) + 1
            else:
                n_invalid += 1
                print("FAIL %s: output #%d %s: %s" % (name, i, json.dumps(text, ensure_ascii=False), err))
    for name, count in sorted(unfinished_by_schema.items(), key=lambda kv: -kv[1]):
        print("unfinished (cut by max_tokens): %s: %d" % (name, count))
    for name, count in sorted(closed_by_schema.items(), key=lambda kv: -kv[1])[:10]:
        print("ended early by the max_tokens budget (complete, valid): %s: %d" % (name, count))
    rate = n_unfinished / max(1, n_outputs)
    print("generations: %d outputs over %d schemas, %d finished and valid (%d of them ended early "
          "by the max_tokens budget, in %d schemas), %d invalid, %d unfinished (%.2f%%; allowed "
          "%.2f%%)" % (n_outputs, n_schemas, n_ok, n_closed, len(closed_by_schema), n_invalid,
                       n_unfinished, 100 * rate, 100 * max_unfinished))
    return 0 if n_invalid == 0 and rate <= max_unfinished else 1


def main(argv):
    if len(argv) == 3 and argv[1] == "check-corpus":
        return check_corpus(argv[2])
    if len(argv) == 3 and argv[1] == "generations":
        return check_generations(argv[2])
    if len(argv) == 5 and argv[1] == "generations" and argv[3] == "--max-unfinished":
        return check_generations(argv[2], float(argv[4]))
    sys.stderr.write("usage: validate.py check-corpus CORPUS | generations FILE "
                     "[--max-unfinished FRACTION]\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
