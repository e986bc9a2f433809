#!/usr/bin/python3
"""Build tests/structured/schema_corpus.jsonl: JSON Schemas with labelled
instances for testing the grammar-constrained JSON matcher.

Run:  /usr/bin/python3 tests/structured/make_corpus.py
Check: /usr/bin/python3 tests/structured/validate.py check-corpus \
           tests/structured/schema_corpus.jsonl

The output is deterministic (fixed seed, no hash-order dependence): running
the script again rewrites the same bytes.  Dependencies: the standard library,
jsonschema (Debian python3-jsonschema 4.10) and validate.py next to this file.

Corpus format
-------------
One JSON object per line:
    {"name": str, "schema": <schema>, "valid": [text, ...], "invalid": [text, ...]}
`valid` / `invalid` hold JSON *texts*.  The labels are never written by hand:
every candidate instance is run through jsonschema.Draft202012Validator and
filed under whatever the validator answers.  The corpus has two parts:
  * HAND: hand-written schemas (dict literals below, each with a descriptive
    name and optionally some hand-picked candidate values), and
  * gen_NNN_*: schemas built by random nesting of the supported keywords.
Candidates come from the hand lists plus a schema-driven sampler that produces
values meant to be valid, and near-miss mutations of those values (a required
key dropped, an extra key where additionalProperties is false, a number just
past a bound or exactly on an exclusive bound, a string or array one element
too long/short, a neighbouring non-member of an enum, a wrong type deep inside
a recursive structure, ...).

Schema subset
-------------
Only the keywords the matcher implements appear (validate.SUPPORTED_KEYWORDS):
type, properties, required, additionalProperties, items (one schema), enum,
const, anyOf, oneOf, $defs/$ref ("#/$defs/Name" and "#"), min/maxLength,
min/maxItems, minimum/maximum/exclusiveMinimum/exclusiveMaximum (numeric
2020-12 form), and the ignored annotations title/description/default.
oneOf is used only when its branches match pairwise different JSON types
(integer and number count as the same type), so "exactly one" and "at least
one" coincide.  Every recursive schema has a non-recursive way out.
Numeric bounds that are whole numbers are written as integers (10**15, not
1e15).

Instance domain
---------------
The matcher accepts one canonical spelling of each value, so every instance,
valid or invalid, is written in that spelling; a label therefore only says
whether the *value* satisfies the schema, never whether the spelling is odd:
  * compact: json.dumps(v, separators=(",", ":"), ensure_ascii=False); no
    whitespace outside string literals, no duplicate keys, no NaN/Infinity.
    For schemas without enum/const, some instances holding non-ASCII text
    are also given in the ensure_ascii=True spelling (\\uXXXX escapes, emoji
    as surrogate-pair escapes).
  * numbers: integers are Python ints of at most 18 digits; a whole number is
    never spelled as a float (no 1.0 or 0.0 - jsonschema would call 1.0 an
    integer, the matcher does not).  Floats have at most 15 significant
    digits and a repr without an exponent (1e-4 <= |x| < 1e16).
  * strings hold no lone surrogates; lengths are counted in code points.
  * object keys appear in the order of the schema's `properties`, with
    keys not named there (additionalProperties) after them.
  * enum/const: a value equal to a member is spelled exactly like the member
    (same key order, no 1 for 1.0 or true for 1); enums never mix members
    that Python considers equal (1/1.0/true).  Candidates on which
    jsonschema's loose equality (true == 1, key order ignored) and a strict
    type- and order-aware equality disagree are dropped.
"""

import copy
import json
import math
import os
import random
import sys

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # keep the tree free of __pycache__
import validate as V  # noqa: E402

SEED = 0x6B3537
OUT_PATH = os.path.join(HERE, "schema_corpus.jsonl")
MAX_VALID = 8        # per schema, hand-picked candidates come on top
MAX_INVALID = 9
MAX_TEXT = 1500      # prefer instances shorter than this many characters
N_GENERATED = 160    # random schemas

# ---------------------------------------------------------------------------
# Hand-written schemas.  HAND entries: (name, schema, [candidate values]).

HAND = []


def H(name, schema, extra=()):
    HAND.append((name, schema, list(extra)))


# -- primitives --------------------------------------------------------------
H("string_plain", {"type": "string"},
  ["", "hello world", " leading and trailing ", "tab\tinside", 5, None])
H("string_len_2_to_5", {"type": "string", "minLength": 2, "maxLength": 5},
  ["ab", "abcde", "a", "abcdef", "é😀"])
H("string_exact_len_3", {"type": "string", "minLength": 3, "maxLength": 3},
  ["abc", "ab", "abcd", "日本語", "a\"b"])
H("string_empty_only", {"type": "string", "maxLength": 0}, ["", " ", "x"])
H("string_min_len_4", {"type": "string", "minLength": 4},
  ["abcd", "abc", "\\\\\\\\", "    "])
H("string_unicode_len_2", {"type": "string", "minLength": 2, "maxLength": 2},
  ["日本", "😀😀", "é", "éé", "ab", "abc", "👍🏽", "a", "\n\t"])
H("string_long_max", {"type": "string", "maxLength": 40, "minLength": 30},
  ["x" * 30, "y" * 40, "z" * 41, "w" * 29])
H("string_with_annotations", {"type": "string", "title": "Name", "description": "A person's name",
                              "default": "anonymous", "maxLength": 10},
  ["anonymous", "Zoë", "abcdefghijk"])
H("integer_plain", {"type": "integer"}, [0, -1, 123456789012345678, 1.5, "1", True])
H("integer_range_pm10", {"type": "integer", "minimum": -10, "maximum": 10},
  [-10, 10, 0, -11, 11, 9.5])
H("integer_exclusive_0_5", {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 5},
  [1, 4, 0, 5, 2.5])
H("integer_nonnegative", {"type": "integer", "minimum": 0}, [0, 1, 999999, -1])
H("integer_negative_range", {"type": "integer", "minimum": -1000, "maximum": -1},
  [-1000, -1, 0, -1001, -500])
H("integer_large_bounds", {"type": "integer", "minimum": -10 ** 15, "maximum": 10 ** 15},
  [10 ** 15, -10 ** 15, 10 ** 15 + 1, -10 ** 15 - 1, 999999999999999, 0])
H("integer_fractional_bounds", {"type": "integer", "minimum": 0.5, "maximum": 3.5},
  [0, 1, 2, 3, 4, 0.5, 3.5])
H("integer_single_value", {"type": "integer", "minimum": 7, "maximum": 7}, [7, 6, 8, 7.5])
H("integer_exclusive_fraction", {"type": "integer", "exclusiveMinimum": -2.5, "exclusiveMaximum": 2.5},
  [-2, 2, -3, 3, 0])
H("number_plain", {"type": "number"}, [0, -0.5, 3.14159, 123456.789, "3.5", None])
H("number_unit_interval", {"type": "number", "minimum": 0, "maximum": 1},
  [0, 1, 0.5, 0.999, -0.001, 1.001, 2])
H("number_exclusive_fraction", {"type": "number", "exclusiveMinimum": 0.5, "exclusiveMaximum": 1.5},
  [0.5, 1.5, 0.5001, 1.4999, 1, 0.25])
H("number_negative_max", {"type": "number", "maximum": -0.25}, [-0.25, -0.2499, -1, 0, -1000000.5])
H("number_large_exclusive", {"type": "number", "exclusiveMinimum": -10 ** 15, "exclusiveMaximum": 10 ** 15},
  [999999999999999, -999999999999999, 10 ** 15, -10 ** 15, 123456789012.5, 10 ** 16])
H("number_mixed_bounds", {"type": "number", "minimum": -2.5, "exclusiveMaximum": 2.5},
  [-2.5, 2.4999, 2.5, -2.5001, 0])
H("number_zero_only", {"type": "number", "minimum": 0, "maximum": 0}, [0, 0.0001, -0.0001])
H("number_small_fraction_bounds", {"type": "number", "minimum": 0.001, "maximum": 0.002},
  [0.001, 0.002, 0.0015, 0.0009, 0.0021])
H("boolean", {"type": "boolean"}, [True, False, 0, "true", None])
H("null", {"type": "null"}, [None, 0, "", False])
H("true_schema", True, [None, 1, "x", [1, {"a": None}], {"k": [True]}])
H("empty_schema", {}, [None, -2.5, "😀", [], {}])
H("empty_schema_annotations", {"title": "Anything", "description": "Accepts any JSON value",
                               "default": None}, [None, [1, 2], {"a": "b"}])

# -- nullable via type list / type lists --------------------------------------
H("nullable_string", {"type": ["string", "null"]}, [None, "", "x", 0, False])
H("nullable_integer_range", {"type": ["integer", "null"], "minimum": 1, "maximum": 3},
  [None, 1, 3, 0, 4, 2.5])
H("nullable_object", {"type": ["object", "null"], "properties": {"a": {"type": "integer"}},
                      "required": ["a"]}, [None, {"a": 1}, {}, {"a": None}])
H("nullable_array", {"type": ["array", "null"], "items": {"type": "string"}, "maxItems": 2},
  [None, [], ["a", "b"], ["a", "b", "c"], [1]])
H("null_first_type_list", {"type": ["null", "number"], "exclusiveMinimum": 0},
  [None, 0.5, 0, -1])
H("multi_type_scalar", {"type": ["string", "integer", "boolean"]},
  ["s", 1, True, None, 1.5, []])
H("number_or_string_bounded", {"type": ["number", "string"], "minimum": 0, "maxLength": 3},
  [0, 2.5, "abc", "abcd", -1, None])
H("all_seven_types", {"type": ["object", "array", "string", "number", "integer", "boolean", "null"]},
  [{}, [], "", 1.5, 2, False, None])
H("nullable_bool_in_object", {"type": "object", "properties": {
    "flag": {"type": ["boolean", "null"]}, "count": {"type": ["integer", "null"], "minimum": 0}},
    "required": ["flag", "count"], "additionalProperties": False},
  [{"flag": None, "count": None}, {"flag": True, "count": 0}, {"flag": 1, "count": 0},
   {"flag": None, "count": -1}])

# -- enum / const -------------------------------------------------------------
H("enum_colors", {"enum": ["red", "green", "blue"]}, ["red", "blue", "Red", "purple", ""])
H("enum_mixed_types", {"enum": ["a", 2, 3.5, None, False, [1, 2], {"k": "v"}]},
  ["a", 2, 3.5, None, False, [1, 2], {"k": "v"}, True, [2, 1], {"k": "w"}, 3])
H("enum_unicode", {"enum": ["日本語", "中文", "한국어", "café", "naïve", "😀", "👍🏽", "Ωmega"]},
  ["日本語", "😀", "👍", "cafe", "naive", "Ω"])
H("enum_long_strings_60", {"type": "string", "enum": ["item_%02d" % i for i in range(60)]},
  ["item_00", "item_59", "item_60", "item_5", "ITEM_01"])
H("enum_long_integers_55", {"enum": [i * i - 100 for i in range(55)]},
  [-100, 2816, -99, 0, 2817])
H("enum_typed_string", {"type": "string", "enum": ["a", "b", 1]}, ["a", "b", 1, "c"])
H("enum_single", {"enum": ["only"]}, ["only", "Only", "onl"])
H("enum_escapes", {"enum": ["quote\"d", "back\\slash", "tab\there", "new\nline", "slash/", "\u0001ctrl",
                            "\u007fdel"]},
  ["quote\"d", "back\\slash", "tab\there", "new\nline", "quote'd", "backslash"])
H("enum_objects", {"enum": [{"x": 1}, {"x": 2, "y": "z"}]},
  [{"x": 1}, {"x": 2, "y": "z"}, {"x": 2}, {"x": 1, "y": "z"}])
H("enum_empty_values", {"enum": ["", [], {}, 0]}, ["", [], {}, 0, False, None, [0]])
H("enum_floats", {"type": "number", "enum": [0.1, 0.25, -1.5, 1e-3, 12345.678]},
  [0.1, 0.25, -1.5, 0.001, 12345.678, 0.2, 1])
H("enum_nested_arrays", {"enum": [[], [[]], [[], [[]]]]}, [[], [[]], [[], [[]]], [[[]]]])
H("enum_booleans_null", {"enum": [True, None]}, [True, None, False, "true"])
H("const_int", {"const": 42}, [42, 41, 43, "42", 42.5])
H("const_string", {"const": "hello"}, ["hello", "hell", "hello!", "Hello"])
H("const_object", {"const": {"b": 1, "a": [True, None]}},
  [{"b": 1, "a": [True, None]}, {"b": 1}, {"b": 1, "a": [True]}, {"b": 2, "a": [True, None]}])
H("const_null", {"const": None}, [None, 0, "null", False])
H("const_array", {"const": [1, "two", {"three": 3}]},
  [[1, "two", {"three": 3}], [1, "two"], [1, "two", {"three": 4}], ["two", 1, {"three": 3}]])
H("const_float", {"const": 0.125}, [0.125, 0.126, 0.12])
H("const_unicode", {"const": "✓ ok — “quotes” ünïcødé"}, ["✓ ok — “quotes” ünïcødé", "✓ ok"])
H("const_false_with_type", {"type": "boolean", "const": False}, [False, True, 0])
H("const_negative_int", {"const": -7}, [-7, 7, -8])

# -- objects ------------------------------------------------------------------
H("object_empty_properties", {"type": "object", "properties": {}}, [{}, {"a": 1}, [], None])
H("object_closed_empty", {"type": "object", "additionalProperties": False},
  [{}, {"a": 1}, {"": None}])
H("object_closed_empty_props", {"type": "object", "properties": {}, "additionalProperties": False},
  [{}, {"x": {}}])
H("object_name_age", {"type": "object", "properties": {
    "name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"]},
  [{"name": "Ann", "age": 30}, {"name": "Bo", "age": 0, "extra": True}, {"name": "Ann"},
   {"age": 3}, {"name": "Ann", "age": -1}, {"name": 1, "age": 1}])
H("object_optional_closed", {"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}},
    "additionalProperties": False},
  [{}, {"a": 1}, {"b": "x", "c": True}, {"a": 1, "b": "x", "c": False}, {"d": 1}, {"a": "1"}])
H("object_required_subset", {"type": "object", "properties": {
    "id": {"type": "integer", "minimum": 1}, "name": {"type": "string", "minLength": 1},
    "email": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
    "active": {"type": "boolean"}}, "required": ["id", "name"], "additionalProperties": False},
  [{"id": 1, "name": "a"}, {"id": 1, "name": "a", "tags": []}, {"id": 1}, {"name": "a"},
   {"id": 0, "name": "a"}, {"id": 1, "name": ""}, {"id": 1, "name": "a", "x": 1}])
H("object_additional_integer", {"type": "object", "properties": {"id": {"type": "string"}},
                                "required": ["id"], "additionalProperties": {"type": "integer"}},
  [{"id": "a"}, {"id": "a", "n": 1, "m": -5}, {"id": "a", "n": 1.5}, {"id": "a", "n": "1"}, {"n": 1}])
H("object_additional_only", {"type": "object", "additionalProperties": {"type": "string", "maxLength": 3}},
  [{}, {"a": "abc"}, {"a": "abcd"}, {"a": 1}, {"日本": "語"}])
H("object_additional_object", {"type": "object", "additionalProperties": {
    "type": "object", "properties": {"v": {"type": "number"}}, "required": ["v"],
    "additionalProperties": False}},
  [{}, {"x": {"v": 1}}, {"x": {"v": 1}, "y": {"v": -0.5}}, {"x": {}}, {"x": {"v": 1, "w": 2}}])
H("object_unicode_keys", {"type": "object", "properties": {
    "名前": {"type": "string"}, "émoji😀": {"type": "integer"}, "ключ": {"type": "boolean"},
    "Ω": {"type": "null"}}, "required": ["名前", "émoji😀"], "additionalProperties": False},
  [{"名前": "太郎", "émoji😀": 1}, {"名前": "x", "émoji😀": 2, "ключ": True, "Ω": None},
   {"名前": "x"}, {"名前": "x", "emoji😀": 1}, {"名前": "x", "émoji😀": 1, "Ω": 0}])
H("object_escaped_keys", {"type": "object", "properties": {
    "say \"hi\"": {"type": "string"}, "back\\slash": {"type": "integer"}, "tab\tkey": {"type": "boolean"},
    "line\nbreak": {"type": "null"}, "": {"type": "string", "maxLength": 1}, "slash/key": {"type": "integer"},
    "\u0001ctl": {"type": "integer"}},
    "required": ["say \"hi\"", "back\\slash", ""], "additionalProperties": False},
  [{"say \"hi\"": "\"hi\"", "back\\slash": 1, "": ""},
   {"say \"hi\"": "x", "back\\slash": 2, "tab\tkey": False, "line\nbreak": None, "": "a",
    "slash/key": 3, "\u0001ctl": 4},
   {"say \"hi\"": "x", "back\\slash": 1}, {"say hi": "x", "back\\slash": 1, "": ""},
   {"say \"hi\"": "x", "back\\slash": 1, "": "ab"}, {"say \"hi\"": "x", "backslash": 1, "": ""}])
H("object_required_without_properties", {"type": "object", "required": ["a", "b"]},
  [{"a": 1, "b": None}, {"a": 1}, {}, {"b": [], "a": {}, "c": 3}])
H("object_open_explicit_true", {"type": "object", "properties": {"a": {"type": "string"}},
                                "additionalProperties": True},
  [{}, {"a": "x", "zz": [1]}, {"a": 1}])
H("object_untyped_properties", {"properties": {"a": {"type": "integer"}}, "required": ["a"]},
  [{"a": 1}, {"a": "x"}, {}, "not an object", 5, [1]])
H("object_with_enum_and_const", {"type": "object", "properties": {
    "kind": {"const": "user"}, "role": {"enum": ["admin", "editor", "viewer"]},
    "level": {"enum": [1, 2, 3]}}, "required": ["kind", "role"]},
  [{"kind": "user", "role": "admin"}, {"kind": "user", "role": "viewer", "level": 3},
   {"kind": "users", "role": "admin"}, {"kind": "user", "role": "root"},
   {"kind": "user", "role": "admin", "level": 4}])
H("object_nested_address", {"type": "object", "properties": {
    "name": {"type": "string"},
    "address": {"type": "object", "properties": {
        "street": {"type": "string"}, "city": {"type": "string"},
        "zip": {"type": "string", "minLength": 5, "maxLength": 5},
        "geo": {"type": "object", "properties": {
            "lat": {"type": "number", "minimum": -90, "maximum": 90},
            "lon": {"type": "number", "minimum": -180, "maximum": 180}},
            "required": ["lat", "lon"], "additionalProperties": False}},
        "required": ["city"]}},
    "required": ["name", "address"]},
  [{"name": "a", "address": {"city": "Paris"}},
   {"name": "a", "address": {"street": "1 Main", "city": "X", "zip": "12345",
                             "geo": {"lat": 90, "lon": -180}}},
   {"name": "a", "address": {"city": "X", "geo": {"lat": 90.5, "lon": 0}}},
   {"name": "a", "address": {"city": "X", "zip": "1234"}}, {"name": "a", "address": {}}])
H("object_24_properties", {"type": "object", "properties": {
    "p01": {"type": "string"}, "p02": {"type": "integer"}, "p03": {"type": "number"},
    "p04": {"type": "boolean"}, "p05": {"type": "null"}, "p06": {"type": "string", "maxLength": 4},
    "p07": {"type": "integer", "minimum": 0, "maximum": 9}, "p08": {"enum": ["x", "y"]},
    "p09": {"type": "array", "items": {"type": "integer"}}, "p10": {"type": "object"},
    "p11": {"type": ["string", "null"]}, "p12": {"const": 1}, "p13": {"type": "number", "exclusiveMinimum": 0},
    "p14": {"type": "string", "minLength": 1}, "p15": {"type": "boolean"}, "p16": {"type": "integer"},
    "p17": {"type": "array", "maxItems": 1}, "p18": {"type": "string"}, "p19": {"type": "integer", "maximum": -1},
    "p20": {"anyOf": [{"type": "string"}, {"type": "integer"}]}, "p21": {"type": "string"},
    "p22": {"type": "number"}, "p23": {"type": "boolean"}, "p24": {"type": "string", "enum": ["end"]}},
    "required": ["p01", "p02", "p07", "p12", "p19", "p24"], "additionalProperties": False},
  [{"p01": "", "p02": 0, "p07": 9, "p12": 1, "p19": -1, "p24": "end"},
   {"p01": "", "p02": 0, "p07": 10, "p12": 1, "p19": -1, "p24": "end"},
   {"p01": "", "p02": 0, "p07": 9, "p12": 1, "p19": 0, "p24": "end"},
   {"p01": "", "p02": 0, "p07": 9, "p12": 1, "p19": -1}])
H("object_21_required", {"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}, "d": {"type": "integer"},
    "e": {"type": "integer"}, "f": {"type": "integer"}, "g": {"type": "integer"}, "h": {"type": "integer"},
    "i": {"type": "integer"}, "j": {"type": "integer"}, "k": {"type": "integer"}, "l": {"type": "integer"},
    "m": {"type": "integer"}, "n": {"type": "integer"}, "o": {"type": "integer"}, "p": {"type": "integer"},
    "q": {"type": "integer"}, "r": {"type": "integer"}, "s": {"type": "integer"}, "t": {"type": "integer"},
    "u": {"type": "integer"}},
    "required": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r",
                 "s", "t", "u"]})
H("object_nullable_properties", {"type": "object", "properties": {
    "s": {"type": ["string", "null"], "maxLength": 2}, "n": {"type": ["number", "null"], "minimum": 1},
    "o": {"type": ["object", "null"], "additionalProperties": False}}, "required": ["s", "n", "o"]},
  [{"s": None, "n": None, "o": None}, {"s": "ab", "n": 1, "o": {}}, {"s": "abc", "n": None, "o": None},
   {"s": None, "n": 0.5, "o": None}, {"s": None, "n": None, "o": {"x": 1}}])
H("object_property_true_false_like", {"type": "object", "properties": {
    "anything": True, "also_anything": {}}, "required": ["anything"], "additionalProperties": False},
  [{"anything": None}, {"anything": [1, "a"], "also_anything": {"z": 0}}, {}, {"x": 1, "anything": 1}])

# -- arrays -------------------------------------------------------------------
H("array_empty_only", {"type": "array", "maxItems": 0}, [[], [1], [None], {}])
H("array_of_strings", {"type": "array", "items": {"type": "string"}},
  [[], ["a"], ["a", "b", ""], [1], ["a", None]])
H("array_digits_2_to_4", {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9},
                          "minItems": 2, "maxItems": 4},
  [[0, 9], [1, 2, 3, 4], [1], [1, 2, 3, 4, 5], [0, 10], [-1, 0]])
H("array_exact_3", {"type": "array", "minItems": 3, "maxItems": 3, "items": {"type": "boolean"}},
  [[True, False, True], [True, True], [True, True, True, True]])
H("array_of_objects", {"type": "array", "items": {"type": "object", "properties": {
    "id": {"type": "integer"}, "label": {"type": "string"}}, "required": ["id"],
    "additionalProperties": False}, "minItems": 1},
  [[{"id": 1}], [{"id": 1, "label": "a"}, {"id": 2}], [], [{"label": "a"}], [{"id": 1, "x": 0}]])
H("array_matrix", {"type": "array", "items": {"type": "array", "items": {"type": "number"},
                                              "minItems": 2, "maxItems": 2}},
  [[], [[1, 2.5]], [[0, 0], [-1, 1]], [[1]], [[1, 2, 3]], [[1, "2"]]])
H("array_untyped_items_min1", {"type": "array", "minItems": 1}, [[None], [1, "a", {}], []])
H("array_nullable_items", {"type": "array", "items": {"type": ["number", "null"]}},
  [[None, 1, 2.5], [], ["1"], [None, None, False]])
H("array_of_enum", {"type": "array", "items": {"enum": ["low", "mid", "high"]}, "maxItems": 3},
  [["low"], ["high", "high", "mid"], ["low", "mid", "high", "low"], ["LOW"]])
H("array_items_anyof", {"type": "array", "items": {"anyOf": [
    {"type": "string", "maxLength": 1}, {"type": "integer", "minimum": 100}]}},
  [["a", 100], [], ["ab"], [99], [100.5]])
H("array_items_true", {"type": "array", "items": True, "maxItems": 3},
  [[], [1, "a", None], [[], {}, [{}]], [1, 2, 3, 4]])
H("array_of_empty_objects", {"type": "array", "items": {"type": "object", "properties": {},
                                                         "additionalProperties": False}},
  [[], [{}, {}], [{"a": 1}], [[]]])
H("array_untyped_items_schema", {"items": {"type": "integer"}}, [[1, 2], ["a"], "abc", {"0": "x"}, 3])
H("array_of_nullable_objects", {"type": "array", "items": {"type": ["object", "null"], "properties": {
    "x": {"type": "integer"}}, "required": ["x"]}, "maxItems": 4},
  [[None, {"x": 1}], [{}], [None, None, None, None, None]])

# -- anyOf / oneOf ------------------------------------------------------------
H("anyof_mixed_types", {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer", "minimum": 10},
                                  {"type": "null"}]},
  ["", "ab", 10, None, "abc", 9, 10.5, True])
H("anyof_objects_different_required", {"anyOf": [
    {"type": "object", "properties": {"kind": {"const": "circle"}, "r": {"type": "number", "minimum": 0}},
     "required": ["kind", "r"], "additionalProperties": False},
    {"type": "object", "properties": {"kind": {"const": "rect"}, "w": {"type": "number"},
                                      "h": {"type": "number"}},
     "required": ["kind", "w", "h"], "additionalProperties": False}]},
  [{"kind": "circle", "r": 1}, {"kind": "rect", "w": 1, "h": 2}, {"kind": "circle", "w": 1, "h": 2},
   {"kind": "rect", "w": 1}, {"kind": "circle", "r": -1}, {"kind": "square", "r": 1}])
H("anyof_objects_open_required", {"type": "object", "anyOf": [
    {"required": ["email"]}, {"required": ["phone"]}],
    "properties": {"email": {"type": "string"}, "phone": {"type": "string"}}},
  [{"email": "a@b"}, {"phone": "1"}, {"email": "a", "phone": "b"}, {}, {"fax": "1"}])
H("anyof_overlapping_numbers", {"anyOf": [{"type": "integer", "maximum": 5}, {"type": "number", "minimum": 3}]},
  [5, 3, 4.5, -100, 2.5, "3", 100.25])
H("anyof_enum_or_long_string", {"anyOf": [{"enum": ["a", "b"]}, {"type": "string", "minLength": 5}]},
  ["a", "b", "abcde", "c", "abcd", 1])
H("anyof_array_or_object", {"anyOf": [{"type": "array", "items": {"type": "integer"}, "maxItems": 2},
                                      {"type": "object", "additionalProperties": {"type": "integer"}}]},
  [[], [1, 2], {}, {"a": 1}, [1, 2, 3], {"a": "1"}, "x"])
H("anyof_nested", {"anyOf": [{"anyOf": [{"type": "boolean"}, {"type": "null"}]},
                             {"anyOf": [{"const": 0}, {"type": "string", "maxLength": 0}]}]},
  [True, None, 0, "", 1, "a"])
H("anyof_in_optional_property", {"type": "object", "properties": {
    "value": {"anyOf": [{"type": "number"}, {"type": "string", "minLength": 1}, {"type": "boolean"}]}},
    "additionalProperties": False},
  [{}, {"value": 1.5}, {"value": "x"}, {"value": ""}, {"value": None}])
H("oneof_string_integer_object", {"oneOf": [
    {"type": "string"}, {"type": "integer"},
    {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}]},
  ["x", 3, {"n": 1}, 3.5, {}, None, [1]])
H("oneof_array_boolean_null", {"oneOf": [{"type": "array", "items": {"type": "boolean"}},
                                         {"type": "boolean"}, {"type": "null"}]},
  [[], [True], True, None, [1], 0])
H("oneof_number_or_short_string", {"oneOf": [{"type": "number", "minimum": 0},
                                             {"type": "string", "maxLength": 1}]},
  [0, 0.5, "", "a", -0.5, "ab"])
H("oneof_nullable_string_or_int", {"oneOf": [{"type": ["string", "null"]}, {"type": "integer",
                                                                            "exclusiveMaximum": 0}]},
  [None, "", -1, 0, 1.5, False])
H("oneof_enum_branches", {"oneOf": [{"enum": ["on", "off"]}, {"enum": [1, 2, 3]}, {"const": None}]},
  ["on", 3, None, "ON", 4, True])
H("oneof_in_array_items", {"type": "array", "items": {"oneOf": [
    {"type": "object", "properties": {"t": {"const": "a"}}, "required": ["t"]},
    {"type": "string", "minLength": 2}]}, "maxItems": 3},
  [[{"t": "a"}, "ab"], [], ["a"], [{"t": "b"}], [{"t": "a"}, "ab", "cd", "ef"]])

# -- $defs / $ref ---------------------------------------------------------------
H("ref_simple_defs", {"$defs": {"Pos": {"type": "integer", "minimum": 1}}, "type": "object",
                      "properties": {"a": {"$ref": "#/$defs/Pos"}, "b": {"$ref": "#/$defs/Pos"}},
                      "required": ["a"]},
  [{"a": 1}, {"a": 1, "b": 2}, {"a": 0}, {"a": 1, "b": 0}, {"b": 1}])
H("ref_root_linked_list", {"type": "object", "properties": {
    "value": {"type": "integer"}, "next": {"$ref": "#"}}, "required": ["value"],
    "additionalProperties": False},
  [{"value": 1}, {"value": 1, "next": {"value": 2, "next": {"value": 3}}},
   {"value": 1, "next": {"value": 2, "next": {"value": "3"}}},
   {"value": 1, "next": {"value": 2, "next": {}}}, {"value": 1, "next": None}])
H("ref_root_tree", {"type": "object", "properties": {
    "name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}},
    "required": ["name"]},
  [{"name": "root"}, {"name": "r", "children": [{"name": "a"}, {"name": "b", "children": []}]},
   {"name": "r", "children": [{"name": "a", "children": [{"children": []}]}]},
   {"name": "r", "children": [{"name": "a", "children": [{"name": 5}]}]}])
H("ref_expression_tree", {"$defs": {"Expr": {"anyOf": [
    {"type": "integer"},
    {"type": "object", "properties": {"op": {"enum": ["+", "*", "-"]},
                                      "args": {"type": "array", "items": {"$ref": "#/$defs/Expr"},
                                               "minItems": 2, "maxItems": 2}},
     "required": ["op", "args"], "additionalProperties": False}]}},
    "$ref": "#/$defs/Expr"},
  [1, {"op": "+", "args": [1, 2]}, {"op": "*", "args": [{"op": "-", "args": [3, 4]}, 5]},
   {"op": "*", "args": [{"op": "-", "args": [3]}, 5]}, {"op": "/", "args": [1, 2]},
   {"op": "+", "args": [1, {"op": "+", "args": [1, 2.5]}]}])
H("ref_root_is_ref", {"$defs": {"Name": {"type": "string", "minLength": 1}}, "$ref": "#/$defs/Name"},
  ["a", "", 1])
H("ref_chain", {"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"type": "array", "items": {"$ref": "#/$defs/C"}},
                          "C": {"type": "boolean"}}, "$ref": "#/$defs/A"},
  [[], [True, False], [1], True])
H("ref_mutual_recursion", {"$defs": {
    "Dir": {"type": "object", "properties": {"name": {"type": "string"},
                                            "entries": {"$ref": "#/$defs/Entries"}},
            "required": ["name"], "additionalProperties": False},
    "Entries": {"type": "array", "items": {"anyOf": [{"$ref": "#/$defs/Dir"}, {"type": "string"}]}}},
    "$ref": "#/$defs/Dir"},
  [{"name": "/"}, {"name": "/", "entries": ["a.txt", {"name": "sub", "entries": []}]},
   {"name": "/", "entries": [{"name": "sub", "entries": [{"name": "x", "entries": [1]}]}]},
   {"name": "/", "entries": [{"entries": []}]}])
H("ref_nested_lists_root", {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"$ref": "#"}]},
                            "maxItems": 3},
  [[], [1, [2, [3]]], [[[[]]]], [1, 2, 3, 4], [[1, [2, 3, 4, 5]]], [1, ["a"]]])
H("ref_in_additional_properties", {"$defs": {"Pt": {"type": "array", "items": {"type": "number"},
                                                    "minItems": 2, "maxItems": 2}},
                                   "type": "object", "additionalProperties": {"$ref": "#/$defs/Pt"}},
  [{}, {"a": [0, 1.5]}, {"a": [0]}, {"a": [0, 1], "b": "x"}])
H("ref_oneof_recursive", {"oneOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#"},
                                                         "maxItems": 4}]},
  ["a", [], ["a", ["b", []]], [1], ["a", [2]]])
H("ref_defs_unicode_payload", {"$defs": {"Label": {"type": "string", "enum": ["東京", "Zürich", "São Paulo",
                                                                             "🌍"]}},
                               "type": "array", "items": {"$ref": "#/$defs/Label"}, "minItems": 1},
  [["東京"], ["🌍", "Zürich"], [], ["Tokyo"], ["Sao Paulo"]])
H("ref_nullable_recursion", {"$defs": {"Node": {"type": ["object", "null"], "properties": {
    "v": {"type": "integer"}, "left": {"$ref": "#/$defs/Node"}, "right": {"$ref": "#/$defs/Node"}},
    "required": ["v", "left", "right"], "additionalProperties": False}}, "$ref": "#/$defs/Node"},
  [None, {"v": 1, "left": None, "right": None},
   {"v": 1, "left": {"v": 2, "left": None, "right": None}, "right": None},
   {"v": 1, "left": {"v": 2, "left": None}, "right": None},
   {"v": 1, "left": {"v": 2, "left": None, "right": {"v": "x", "left": None, "right": None}}, "right": None}])

# -- deep nesting -------------------------------------------------------------
H("deep_objects_7", {"type": "object", "properties": {"l1": {"type": "object", "properties": {
    "l2": {"type": "object", "properties": {"l3": {"type": "object", "properties": {
        "l4": {"type": "object", "properties": {"l5": {"type": "object", "properties": {
            "l6": {"type": "object", "properties": {"l7": {"type": "integer", "minimum": 0}},
                   "required": ["l7"], "additionalProperties": False}},
            "required": ["l6"]}}, "required": ["l5"]}}, "required": ["l4"]}},
        "required": ["l3"]}}, "required": ["l2"]}}, "required": ["l1"]},
  [{"l1": {"l2": {"l3": {"l4": {"l5": {"l6": {"l7": 0}}}}}}},
   {"l1": {"l2": {"l3": {"l4": {"l5": {"l6": {"l7": -1}}}}}}},
   {"l1": {"l2": {"l3": {"l4": {"l5": {"l6": {}}}}}}},
   {"l1": {"l2": {"l3": {"l4": {"l5": {"l6": {"l7": 1, "l8": 1}}}}}}}])
H("deep_arrays_6", {"type": "array", "items": {"type": "array", "items": {"type": "array", "items": {
    "type": "array", "items": {"type": "array", "items": {"type": "array", "items": {"type": "string"},
                                                          "maxItems": 2}}}}}},
  [[], [[[[[["a", "b"]]]]]], [[[[[["a", "b", "c"]]]]]], [[[[[[1]]]]]], [[[[["a"]]]]]])
H("deep_mixed_8", {"type": "object", "properties": {"a": {"type": "array", "items": {
    "type": "object", "properties": {"b": {"type": "array", "items": {"type": "object", "properties": {
        "c": {"type": "array", "items": {"type": "object", "properties": {
            "d": {"type": "array", "items": {"type": ["string", "null"], "maxLength": 3}, "minItems": 1}},
            "required": ["d"]}, "minItems": 1}}, "required": ["c"]}, "minItems": 1}},
    "required": ["b"]}, "minItems": 1}}, "required": ["a"]},
  [{"a": [{"b": [{"c": [{"d": [None]}]}]}]}, {"a": [{"b": [{"c": [{"d": ["abcd"]}]}]}]},
   {"a": [{"b": [{"c": [{"d": []}]}]}]}, {"a": [{"b": [{"c": []}]}]}])
H("deep_anyof_nesting", {"anyOf": [{"type": "null"}, {"type": "object", "properties": {"x": {"anyOf": [
    {"type": "null"}, {"type": "array", "items": {"anyOf": [{"type": "null"}, {"type": "object", "properties": {
        "y": {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "string"}}]}},
        "required": ["y"]}]}}]}}, "required": ["x"]}]},
  [None, {"x": None}, {"x": [None, {"y": 1}, {"y": ["a"]}]}, {"x": [{"y": [1]}]}, {"x": [{}]}])

# -- realistic ----------------------------------------------------------------
H("real_tool_call", {"type": "object", "properties": {
    "name": {"enum": ["get_weather", "search", "calculator"]},
    "arguments": {"type": "object", "properties": {
        "location": {"type": "string", "minLength": 1, "description": "City name"},
        "unit": {"enum": ["celsius", "fahrenheit"], "default": "celsius"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14}},
        "required": ["location"], "additionalProperties": False}},
    "required": ["name", "arguments"], "additionalProperties": False},
  [{"name": "get_weather", "arguments": {"location": "Berlin"}},
   {"name": "search", "arguments": {"location": "北京", "unit": "fahrenheit", "days": 14}},
   {"name": "get_weather", "arguments": {"location": ""}},
   {"name": "get_weather", "arguments": {"location": "x", "days": 15}},
   {"name": "weather", "arguments": {"location": "x"}}])
H("real_chat_message", {"type": "object", "properties": {
    "role": {"enum": ["system", "user", "assistant", "tool"]},
    "content": {"type": ["string", "null"]},
    "tool_calls": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "string"}, "type": {"const": "function"},
        "function": {"type": "object", "properties": {"name": {"type": "string"},
                                                      "arguments": {"type": "string"}},
                     "required": ["name", "arguments"]}},
        "required": ["id", "type", "function"]}}},
    "required": ["role", "content"]},
  [{"role": "user", "content": "Hi!"}, {"role": "assistant", "content": None, "tool_calls": [
      {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]},
   {"role": "bot", "content": "x"}, {"role": "user"},
   {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "fn", "function": {
       "name": "f", "arguments": "{}"}}]}])
H("real_order", {"title": "Order", "type": "object", "properties": {
    "order_id": {"type": "string", "minLength": 8, "maxLength": 8},
    "customer": {"type": "object", "properties": {"name": {"type": "string"},
                                                  "vip": {"type": "boolean", "default": False}},
                 "required": ["name"]},
    "lines": {"type": "array", "minItems": 1, "maxItems": 5, "items": {"type": "object", "properties": {
        "sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1, "maximum": 100},
        "price": {"type": "number", "exclusiveMinimum": 0}}, "required": ["sku", "qty", "price"],
        "additionalProperties": False}},
    "total": {"type": "number", "minimum": 0},
    "currency": {"enum": ["EUR", "USD", "JPY", "GBP"]}},
    "required": ["order_id", "lines", "total", "currency"]},
  [{"order_id": "AB123456", "lines": [{"sku": "x", "qty": 1, "price": 9.99}], "total": 9.99, "currency": "EUR"},
   {"order_id": "AB123456", "lines": [{"sku": "x", "qty": 1, "price": 0}], "total": 0, "currency": "EUR"},
   {"order_id": "AB12345", "lines": [{"sku": "x", "qty": 1, "price": 1}], "total": 1, "currency": "EUR"},
   {"order_id": "AB123456", "lines": [], "total": 0, "currency": "USD"}])
H("real_geojson_point", {"type": "object", "properties": {
    "type": {"const": "Point"},
    "coordinates": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 3}},
    "required": ["type", "coordinates"]},
  [{"type": "Point", "coordinates": [13.4, 52.52]}, {"type": "Point", "coordinates": [1, 2, 3]},
   {"type": "point", "coordinates": [1, 2]}, {"type": "Point", "coordinates": [1]}])
H("real_event_union", {"type": "object", "anyOf": [
    {"properties": {"event": {"const": "click"}, "x": {"type": "integer"}, "y": {"type": "integer"}},
     "required": ["event", "x", "y"]},
    {"properties": {"event": {"const": "key"}, "key": {"type": "string", "minLength": 1, "maxLength": 1}},
     "required": ["event", "key"]},
    {"properties": {"event": {"const": "scroll"}, "delta": {"type": "number"}},
     "required": ["event", "delta"]}]},
  [{"event": "click", "x": 1, "y": 2}, {"event": "key", "key": "a"}, {"event": "scroll", "delta": -2.5},
   {"event": "key", "key": "ab"}, {"event": "click", "x": 1}, {"event": "tap"}])
H("real_config_annotated", {"title": "Server config", "description": "Annotations everywhere",
                            "type": "object", "properties": {
    "host": {"title": "Host", "type": "string", "default": "localhost"},
    "port": {"title": "Port", "type": "integer", "minimum": 1, "maximum": 65535, "default": 8080},
    "tls": {"description": "TLS settings", "type": ["object", "null"], "properties": {
        "cert": {"type": "string"}, "key": {"type": "string"}}, "required": ["cert", "key"],
        "default": None},
    "workers": {"type": "integer", "exclusiveMinimum": 0, "default": 4},
    "log_level": {"enum": ["debug", "info", "warn", "error"], "default": "info"}},
    "required": ["host", "port"], "additionalProperties": False},
  [{"host": "0.0.0.0", "port": 65535}, {"host": "h", "port": 1, "tls": None, "workers": 1},
   {"host": "h", "port": 65536}, {"host": "h", "port": 0}, {"host": "h", "port": 80, "workers": 0},
   {"host": "h", "port": 80, "tls": {"cert": "c"}}])
H("real_user_profile_unicode", {"type": "object", "properties": {
    "display_name": {"type": "string", "minLength": 1, "maxLength": 20},
    "bio": {"type": "string", "maxLength": 160},
    "languages": {"type": "array", "items": {"enum": ["en", "日本語", "español", "français", "русский"]},
                  "maxItems": 3},
    "reactions": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}},
    "required": ["display_name"]},
  [{"display_name": "José 🎉"}, {"display_name": "山田太郎", "languages": ["日本語", "en"],
                                 "reactions": {"👍": 3, "❤️": 0}},
   {"display_name": ""}, {"display_name": "x", "reactions": {"👍": -1}},
   {"display_name": "x", "languages": ["english"]}])
H("real_search_results", {"type": "object", "properties": {
    "query": {"type": "string"}, "total": {"type": "integer", "minimum": 0},
    "results": {"type": "array", "maxItems": 10, "items": {"type": "object", "properties": {
        "title": {"type": "string"}, "url": {"type": "string", "minLength": 8},
        "score": {"type": "number", "minimum": 0, "maximum": 1}}, "required": ["title", "url", "score"]}}},
    "required": ["query", "results"]},
  [{"query": "q", "results": []}, {"query": "q", "results": [{"title": "t", "url": "https://x", "score": 1}]},
   {"query": "q", "results": [{"title": "t", "url": "x", "score": 0.5}]},
   {"query": "q", "results": [{"title": "t", "url": "https://x", "score": 1.5}]}])
H("real_classification", {"type": "object", "properties": {
    "label": {"enum": ["positive", "negative", "neutral"]},
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "reasons": {"type": "array", "items": {"type": "string", "maxLength": 50}, "minItems": 1, "maxItems": 3}},
    "required": ["label", "confidence", "reasons"], "additionalProperties": False},
  [{"label": "neutral", "confidence": 0.5, "reasons": ["meh"]},
   {"label": "neutral", "confidence": 0.5, "reasons": []},
   {"label": "mixed", "confidence": 0.5, "reasons": ["x"]}])
H("real_key_value_pairs", {"type": "array", "items": {"type": "array", "items": {
    "type": ["string", "number", "boolean", "null"]}, "minItems": 2, "maxItems": 2}},
  [[["a", 1], ["b", None]], [], [["a"]], [["a", []]]])
H("real_date_parts", {"type": "object", "properties": {
    "year": {"type": "integer", "minimum": 1900, "maximum": 2100},
    "month": {"type": "integer", "minimum": 1, "maximum": 12},
    "day": {"type": "integer", "minimum": 1, "maximum": 31}},
    "required": ["year", "month", "day"], "additionalProperties": False},
  [{"year": 2024, "month": 2, "day": 29}, {"year": 1899, "month": 1, "day": 1},
   {"year": 2000, "month": 13, "day": 1}, {"year": 2000, "month": 1, "day": 0}])
H("real_money_amount", {"type": "object", "properties": {
    "amount": {"type": "number", "minimum": -1000000, "maximum": 1000000},
    "currency": {"type": "string", "minLength": 3, "maxLength": 3}},
    "required": ["amount", "currency"]},
  [{"amount": 12.34, "currency": "EUR"}, {"amount": -1000000, "currency": "JPY"},
   {"amount": 1000000.01, "currency": "EUR"}, {"amount": 1, "currency": "EURO"}])
H("real_rgb_color", {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 255},
                     "minItems": 3, "maxItems": 3, "description": "RGB triple"},
  [[0, 0, 0], [255, 255, 255], [256, 0, 0], [0, 0], [0, 0, 0, 0], [0, -1, 0]])
H("real_translation_map", {"type": "object", "properties": {
    "en": {"type": "string"}, "ja": {"type": "string"}, "zh": {"type": "string"}, "ar": {"type": "string"}},
    "required": ["en"], "additionalProperties": False},
  [{"en": "hello", "ja": "こんにちは", "zh": "你好", "ar": "مرحبا"}, {"en": "x"}, {"ja": "x"},
   {"en": "x", "de": "hallo"}])
H("real_sql_query_plan", {"type": "object", "properties": {
    "op": {"enum": ["scan", "filter", "join", "project"]},
    "table": {"type": "string"},
    "inputs": {"type": "array", "items": {"$ref": "#"}, "maxItems": 2},
    "cost": {"type": "number", "minimum": 0}},
    "required": ["op"], "additionalProperties": False},
  [{"op": "scan", "table": "t"}, {"op": "join", "inputs": [{"op": "scan"}, {"op": "filter", "inputs": [
      {"op": "scan", "cost": 0.5}]}]},
   {"op": "join", "inputs": [{"op": "scan"}, {"op": "sort"}]},
   {"op": "join", "inputs": [{"op": "scan", "cost": -1}]}])
H("real_ratings_additional_number", {"type": "object", "properties": {
    "average": {"type": "number", "minimum": 1, "maximum": 5}},
    "required": ["average"],
    "additionalProperties": {"type": "number", "minimum": 1, "maximum": 5}},
  [{"average": 4.5}, {"average": 4.5, "food": 5, "service": 1}, {"average": 4.5, "food": 5.5},
   {"average": 0.5}])


# ---------------------------------------------------------------------------
# Strict equality (type- and key-order aware) for the enum/const cross-check.


def strict_equal(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(strict_equal(a[k], b[k]) for k in a)
    return a == b


def _strict_enum(validator, enums, instance, schema):
    if not any(strict_equal(instance, e) for e in enums):
        yield jsonschema.ValidationError("not strictly one of the enum members")


def _strict_const(validator, const, instance, schema):
    if not strict_equal(instance, const):
        yield jsonschema.ValidationError("not strictly the const")


StrictValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"enum": _strict_enum, "const": _strict_const})


# ---------------------------------------------------------------------------
# Instance sampling


class Fail(Exception):
    pass


ASCII = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
SPECIAL = " \"\\/\n\t\r\b\f\u0001\u001f\u007f'<>&{}[]:,"
UNICODE = "éñüßçøåΩπλЖжд日本語中文한국어😀👍🎉🌍€£¥—“”…\u00a0\u2028"
WORDS = ["alpha", "beta", "gamma", "delta", "x", "y", "foo", "bar", "Zoë", "東京", "naïve", "😀"]
EXTRA_KEYS = ["extra", "x_1", "note", "zz", "ключ", "🔑", "k\"q", "Δ"]


def norm_value(v):
    """Whole floats become ints; raise Fail on values outside the domain."""
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise Fail
        if v.is_integer():
            if abs(v) >= 1e18:
                raise Fail
            return int(v)
        return v
    if isinstance(v, list):
        return [norm_value(x) for x in v]
    if isinstance(v, dict):
        return {k: norm_value(x) for k, x in v.items()}
    return v


def schema_has_constraints(s):
    return isinstance(s, dict) and any(k not in ("title", "description", "default", "$defs") for k in s)


def inferred_types(s):
    if "type" in s:
        t = s["type"]
        return [t] if isinstance(t, str) else list(t)
    types = []
    if any(k in s for k in ("properties", "required", "additionalProperties")):
        types.append("object")
    if any(k in s for k in ("items", "minItems", "maxItems")):
        types.append("array")
    if any(k in s for k in ("minLength", "maxLength")):
        types.append("string")
    if any(k in s for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")):
        types.append("number")
    return types or list(V.JSON_TYPES)


def contains_ref(s):
    return '"$ref"' in json.dumps(s)


class Sampler:
    """Generates values meant to satisfy a schema, recording (path, schema)
    for every node so that mutations can be targeted."""

    def __init__(self, rng, root):
        self.rng = rng
        self.root = root

    # -- helpers --
    def resolve(self, s):
        for _ in range(30):
            if isinstance(s, dict) and "$ref" in s:
                s = V._resolve(s["$ref"], self.root)
            else:
                return s
        raise Fail

    def rand_string(self, n):
        r = self.rng.random()
        if r < 0.55:
            pool = ASCII
        elif r < 0.8:
            pool = ASCII + SPECIAL
        else:
            pool = ASCII[:10] + UNICODE
        return "".join(self.rng.choice(pool) for _ in range(n))

    def any_value(self, depth, mini):
        kinds = ["null", "boolean", "integer", "number", "string"]
        if not mini and depth < 4:
            kinds += ["array", "object"]
        k = self.rng.choice(kinds)
        if k == "null":
            return None
        if k == "boolean":
            return self.rng.random() < 0.5
        if k == "integer":
            return self.rng.choice([0, 1, -1, 17, -4096, self.rng.randint(-10 ** 6, 10 ** 6)])
        if k == "number":
            return self.rng.choice([0.5, -2.25, 3.14159, round(self.rng.uniform(-1000, 1000), 3)])
        if k == "string":
            return self.rng.choice(WORDS + [self.rand_string(self.rng.randint(0, 6))])
        if k == "array":
            return [self.any_value(depth + 1, True) for _ in range(self.rng.randint(0, 3))]
        return {self.rng.choice(EXTRA_KEYS + WORDS): self.any_value(depth + 1, True)
                for _ in range(self.rng.randint(0, 2))}

    # -- main entry --
    def sample(self, schema, soft_depth, budget):
        self.nodes = []
        self.budget = budget
        self.soft_depth = soft_depth
        return self.gen(schema, (), 0, False)

    def gen(self, s, path, depth, mini):
        self.budget -= 1
        if self.budget < 0 or depth > 60:
            raise Fail
        s = self.resolve(s)
        mini = mini or depth >= self.soft_depth
        self.nodes.append((path, s))
        if not schema_has_constraints(s):
            return self.any_value(depth, mini)
        if "const" in s:
            return copy.deepcopy(s["const"])
        if "enum" in s:
            return copy.deepcopy(self.rng.choice(s["enum"]))
        for comb in ("anyOf", "oneOf"):
            if comb in s:
                branches = s[comb]
                if mini:
                    plain = [b for b in branches if not contains_ref(b)]
                    branches = plain or branches
                return self.gen(self.rng.choice(branches), path, depth + 1, mini)
        t = self.rng.choice(inferred_types(s))
        return getattr(self, "gen_" + t)(s, path, depth, mini)

    def gen_null(self, s, path, depth, mini):
        return None

    def gen_boolean(self, s, path, depth, mini):
        return self.rng.random() < 0.5

    def int_bounds(self, s):
        lo = hi = None
        if "minimum" in s:
            lo = math.ceil(s["minimum"])
        if "exclusiveMinimum" in s:
            v = math.floor(s["exclusiveMinimum"]) + 1
            lo = v if lo is None else max(lo, v)
        if "maximum" in s:
            hi = math.floor(s["maximum"])
        if "exclusiveMaximum" in s:
            v = math.ceil(s["exclusiveMaximum"]) - 1
            hi = v if hi is None else min(hi, v)
        return lo, hi

    def gen_integer(self, s, path, depth, mini):
        lo, hi = self.int_bounds(s)
        r = self.rng
        if lo is not None and hi is not None:
            if lo > hi:
                raise Fail
            return r.choice([lo, hi, r.randint(lo, hi), r.randint(lo, hi)])
        if lo is not None:
            return r.choice([lo, lo + 1, lo + r.randint(0, 1000)])
        if hi is not None:
            return r.choice([hi, hi - 1, hi - r.randint(0, 1000)])
        return r.choice([0, 1, -1, 7, 42, -273, 10 ** 9, -123456789, 10 ** 15,
                         123456789012345678, r.randint(-10 ** 6, 10 ** 6)])

    @staticmethod
    def step_for(x):
        return 1 if abs(x) >= 10 ** 9 else 0.001

    def gen_number(self, s, path, depth, mini):
        r = self.rng
        cands = []
        lo = hi = None
        if "minimum" in s:
            lo = s["minimum"]
            cands.append(lo)
        if "exclusiveMinimum" in s:
            e = s["exclusiveMinimum"]
            if lo is None or e >= lo:
                lo = e
                cands = [c for c in cands if c > e]
                cands.append(round(e + self.step_for(e), 6))
        if "maximum" in s:
            hi = s["maximum"]
            cands.append(hi)
        if "exclusiveMaximum" in s:
            e = s["exclusiveMaximum"]
            if hi is None or e <= hi:
                hi = e
                cands = [c for c in cands if c < e]
                cands.append(round(e - self.step_for(e), 6))
        if lo is not None and hi is not None:
            cands += [round((lo + hi) / 2, 4), round(r.uniform(lo, hi), 3), round(r.uniform(lo, hi), 1)]
        elif lo is not None:
            cands += [round(lo + r.uniform(0, 100), 2), lo + r.randint(1, 50)]
        elif hi is not None:
            cands += [round(hi - r.uniform(0, 100), 2), hi - r.randint(1, 50)]
        else:
            cands += [0, 0.5, -2.75, 3.14159, 123456.789, -98765.4321, 0.001,
                      r.randint(-1000, 1000), round(r.uniform(-1e6, 1e6), 3)]
        return r.choice(cands)

    def gen_string(self, s, path, depth, mini):
        lo = s.get("minLength", 0)
        hi = s.get("maxLength")
        if hi is None:
            if lo == 0 and self.rng.random() < 0.3:
                return self.rng.choice(WORDS + ["", "hello world", "a b\tc"])
            hi = lo + self.rng.choice([0, 3, 8, 15])
        if lo > hi:
            raise Fail
        n = self.rng.choice([lo, hi, self.rng.randint(lo, hi)])
        return self.rand_string(n)

    def gen_array(self, s, path, depth, mini):
        lo = s.get("minItems", 0)
        hi = s.get("maxItems", lo + 3)
        if lo > hi:
            raise Fail
        n = lo if mini else self.rng.randint(lo, min(hi, lo + 4))
        items = s.get("items", True)
        return [self.gen(items, path + (i,), depth + 1, mini) for i in range(n)]

    def gen_object(self, s, path, depth, mini):
        props = s.get("properties", {})
        req = s.get("required", [])
        ap = s.get("additionalProperties", True)
        out = {}
        for k, sub in props.items():
            if k in req or (not mini and self.rng.random() < 0.5):
                out[k] = self.gen(sub, path + (k,), depth + 1, mini)
        for k in req:
            if k not in out:
                if ap is False:
                    raise Fail
                out[k] = self.gen(ap, path + (k,), depth + 1, mini)
        if ap is not False and not mini:
            if isinstance(ap, dict) and schema_has_constraints(ap):
                n = self.rng.choice([0, 0, 1, 2])
            else:
                n = 1 if self.rng.random() < 0.2 else 0
            for _ in range(n):
                k = self.rng.choice(EXTRA_KEYS)
                if k not in out and k not in props:
                    out[k] = self.gen(ap, path + (k,), depth + 1, True)
        return out

    # -- mutations --
    def wrong_values(self, s):
        types = inferred_types(s) if "type" in s else None
        pool = [None, True, False, 0, -3, 2.5, "x", "", [], {}, ["x"], {"k": 1}]
        if types is None:
            return pool
        allowed = set(types)
        out = []
        for v in pool:
            t = V._value_type(v)
            if t in allowed or (t == "integer" and "number" in allowed):
                continue
            out.append(v)
        return out

    def near(self, v):
        r = self.rng
        if isinstance(v, bool):
            return [not v, int(v) + 2]
        if v is None:
            return ["null", 0]
        if isinstance(v, (int, float)):
            return [v + 1, -v - 1 if v >= 0 else -v, round(v + 0.1, 6)]
        if isinstance(v, str):
            out = [v + "x", v[:-1] if v else "a", v + " "]
            if v.upper() != v:
                out.append(v.upper())
            return out
        if isinstance(v, list):
            return [v + [0], v[:-1] if v else [None], list(reversed(v)) if len(v) > 1 else [v]]
        out = [dict(v, zz=1)]
        if v:
            k = r.choice(list(v))
            out.append({kk: vv for kk, vv in v.items() if kk != k})
            out.append({kk: (self.near(vv)[0] if kk == k else vv) for kk, vv in v.items()})
        return out

    def mutants(self, s, v, path):
        r = self.rng
        if not schema_has_constraints(s):
            return []
        out = []
        if "anyOf" not in s and "oneOf" not in s:
            w = self.wrong_values(s)
            out += r.sample(w, min(2, len(w)))
        if "const" in s:
            out += self.near(s["const"])
        if "enum" in s:
            for m in r.sample(s["enum"], min(2, len(s["enum"]))):
                out += self.near(m)
        if isinstance(v, bool) or v is None:
            pass
        elif isinstance(v, (int, float)):
            integer = "integer" in inferred_types(s) and "number" not in inferred_types(s)
            for k, d in (("minimum", -1), ("maximum", 1)):
                if k in s:
                    b = s[k]
                    out.append(b + d)
                    if not integer:
                        out.append(round(b + d * self.step_for(b), 6))
            for k in ("exclusiveMinimum", "exclusiveMaximum"):
                if k in s:
                    out.append(s[k])
            if integer:
                out.append(v + 0.5)
        elif isinstance(v, str):
            if "maxLength" in s:
                n = s["maxLength"] + 1
                out.append((v + self.rand_string(n))[:n])
            if s.get("minLength", 0) > 0:
                out.append(v[:s["minLength"] - 1])
        elif isinstance(v, list):
            items = s.get("items", True)
            if "maxItems" in s:
                n = s["maxItems"] + 1
                fill = [copy.deepcopy(v[0]) if v else self.any_value(9, True)]
                out.append(v + fill * (n - len(v)))
            if s.get("minItems", 0) > 0:
                out.append(v[:s["minItems"] - 1])
            if isinstance(items, dict):
                ri = self.resolve(items)
                if isinstance(ri, dict):
                    w = self.wrong_values(ri) if "type" in ri else []
                    if w:
                        out.append(v + [r.choice(w)])
        elif isinstance(v, dict):
            props = s.get("properties", {})
            req = [k for k in s.get("required", []) if k in v]
            for k in r.sample(req, min(2, len(req))):
                out.append({kk: vv for kk, vv in v.items() if kk != k})
            ap = s.get("additionalProperties", True)
            if ap is False:
                k = r.choice([k for k in EXTRA_KEYS if k not in props])
                out.append(dict(v, **{k: r.choice([1, "x", None])}))
            elif isinstance(ap, dict):
                rap = self.resolve(ap)
                w = self.wrong_values(rap) if isinstance(rap, dict) and "type" in rap else []
                if w:
                    k = r.choice([k for k in EXTRA_KEYS if k not in props])
                    out.append(dict(v, **{k: r.choice(w)}))
            missing = [k for k in props if k not in v]
            if missing:
                k = r.choice(missing)
                sub = self.resolve(props[k])
                w = self.wrong_values(sub) if isinstance(sub, dict) and "type" in sub else []
                if w:
                    # keep declaration order: rebuild the object
                    nv = {}
                    for pk in props:
                        if pk == k:
                            nv[pk] = r.choice(w)
                        elif pk in v:
                            nv[pk] = v[pk]
                    for kk, vv in v.items():
                        if kk not in nv:
                            nv[kk] = vv
                    out.append(nv)
        return out


def set_at(value, path, new):
    if not path:
        return new
    value = copy.deepcopy(value)
    cur = value
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = new
    return value


def has_enum_or_const(schema):
    return bool({"enum", "const"} & V.keywords_used(schema))


def has_non_ascii(text):
    return any(ord(c) > 127 for c in text)


def dumps(v, ascii_=False):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=ascii_)


def build_instances(rng, name, schema, hand_cands):
    """Return (valid_texts, invalid_texts) or raise Fail if hand candidates
    are outside the domain."""
    validator = jsonschema.Draft202012Validator(schema)
    strict = StrictValidator(schema)
    sampler = Sampler(rng, schema)

    # label: text -> (label, category)
    labelled = {}
    order = []

    def add(value, is_hand):
        try:
            value = norm_value(value)
        except Fail:
            if is_hand:
                raise
            return
        if V.domain_problem(value):
            if is_hand:
                raise Fail("%s: hand candidate %r outside the domain: %s"
                           % (name, value, V.domain_problem(value)))
            return
        text = dumps(value)
        if text in labelled:
            return
        ok = validator.is_valid(value)
        if ok != strict.is_valid(value):
            if is_hand:
                raise Fail("%s: hand candidate %s is enum/const-ambiguous" % (name, text))
            return
        if ok:
            cat = "valid:" + V._value_type(value)
        else:
            err = jsonschema.exceptions.best_match(validator.iter_errors(value))
            cat = "invalid:%s:%d" % (err.validator, min(len(err.absolute_path), 3))
        labelled[text] = (ok, cat, is_hand, value)
        order.append(text)

    for v in hand_cands:
        add(v, True)

    samples = []
    for attempt in range(40):
        try:
            soft = rng.randint(2, 6)
            v = sampler.sample(schema, soft, 120 if attempt % 4 else 25)
        except Fail:
            continue
        samples.append((v, list(sampler.nodes)))
        add(v, False)

    for v, nodes in samples[:20]:
        if not nodes:
            continue
        chosen = rng.sample(nodes, min(3, len(nodes)))
        deepest = max(nodes, key=lambda n: len(n[0]))
        chosen.append(deepest)
        for path, sub in chosen:
            try:
                node_val = v
                for p in path:
                    node_val = node_val[p]
            except (KeyError, IndexError, TypeError):
                continue
            for m in sampler.mutants(sub, node_val, path):
                add(set_at(v, path, m), False)

    # selection: hand candidates always; the rest round-robin over categories,
    # shorter texts preferred.
    def pick(want_ok, cap):
        chosen = [t for t in order if labelled[t][0] == want_ok and labelled[t][2]]
        rest = [t for t in order if labelled[t][0] == want_ok and not labelled[t][2]]
        rng.shuffle(rest)
        rest.sort(key=lambda t: len(t) > MAX_TEXT)
        groups = {}
        for t in rest:
            groups.setdefault(labelled[t][1], []).append(t)
        cats = list(groups)
        while len(chosen) < max(cap, 0) and any(groups.values()):
            for c in cats:
                if groups[c] and len(chosen) < cap:
                    chosen.append(groups[c].pop(0))
        return chosen

    valid = pick(True, MAX_VALID)
    invalid = pick(False, MAX_INVALID)

    # \uXXXX spellings for enum/const-free schemas
    if not has_enum_or_const(schema):
        for lst in (valid, invalid):
            extra = []
            for t in lst:
                if has_non_ascii(t) and len(extra) < 2:
                    a = dumps(labelled[t][3], True)
                    if a not in lst and a not in extra:
                        extra.append(a)
            lst.extend(extra)
    return valid, invalid


# ---------------------------------------------------------------------------
# Random schema generation


NAME_POOL = ["id", "name", "value", "count", "items", "enabled", "score", "tags", "meta", "kind",
             "x", "y", "z", "data", "next", "label", "price", "ratio", "note", "level",
             "ключ", "名前", "café", "😀emoji", "key with space", "quote\"key", "back\\slash",
             "new\nline", "", "a/b", "UPPER", "mixed_Case_1"]
ENUM_POOL = ["a", "b", "yes", "no", "北京", "ñandú", "🚀", "", "with space", "q\"uote", "back\\",
             "tab\t", 2, 3, 17, -5, 100, 0.5, -2.25, 1000.125, None, True, False,
             [1, 2], ["x"], {"k": "v"}, {"n": 1, "m": [None]}]


class SchemaGen:
    def __init__(self, rng):
        self.rng = rng
        self.defs = {}
        self.counter = 0

    def annotate(self, s):
        r = self.rng
        if r.random() < 0.12:
            s["title"] = r.choice(["Thing", "Value", "Größe", "名前", "Item"])
        if r.random() < 0.1:
            s["description"] = r.choice(["An auto-generated schema node.", "Beschreibung: ü", "说明"])
        if r.random() < 0.06:
            s["default"] = r.choice([None, 0, "d", [], {"k": 1}])
        return s

    def leaf(self, t=None):
        r = self.rng
        t = t or r.choice(["string", "string", "integer", "integer", "number", "number", "boolean", "null"])
        s = {"type": t}
        if t == "string":
            mode = r.random()
            if mode < 0.4:
                lo = r.randint(0, 4)
                s["minLength"] = lo
                s["maxLength"] = lo + r.randint(0, 6)
            elif mode < 0.55:
                s["maxLength"] = r.randint(0, 10)
            elif mode < 0.7:
                s["minLength"] = r.randint(1, 5)
        elif t == "integer":
            mode = r.randint(0, 8)
            a = r.randint(-100, 100)
            if mode == 1:
                s["minimum"] = a
            elif mode == 2:
                s["maximum"] = a
            elif mode == 3:
                s["minimum"], s["maximum"] = a, a + r.randint(0, 50)
            elif mode == 4:
                s["exclusiveMinimum"], s["exclusiveMaximum"] = a, a + r.randint(2, 50)
            elif mode == 5:
                big = r.choice([10 ** 12, 10 ** 15, 10 ** 17])
                s["minimum"], s["maximum"] = -big, big
            elif mode == 6:
                s["minimum"], s["maximum"] = a + 0.5, a + r.randint(2, 20) + 0.5
            elif mode == 7:
                s["minimum"], s["exclusiveMaximum"] = 0, r.randint(1, 10)
        elif t == "number":
            mode = r.randint(0, 8)
            a = r.choice([-10, -1, 0, 0.25, 0.5, 1, 2.5, 100])
            if mode == 1:
                s["minimum"] = a
            elif mode == 2:
                s["maximum"] = a
            elif mode == 3:
                s["minimum"], s["maximum"] = a, a + r.choice([0.5, 1, 10, 1000])
            elif mode == 4:
                s["exclusiveMinimum"], s["exclusiveMaximum"] = a, a + r.choice([0.5, 1, 10])
            elif mode == 5:
                s["exclusiveMinimum"], s["maximum"] = -10 ** 15, 10 ** 15
            elif mode == 6:
                s["minimum"], s["exclusiveMaximum"] = a, a + 1
            elif mode == 7:
                s["exclusiveMinimum"] = a
        return self.annotate(s)

    def enum(self, n=None, t=None):
        r = self.rng
        pool = ENUM_POOL
        if t == "string":
            pool = [v for v in ENUM_POOL if isinstance(v, str)]
        elif t is not None:
            pool = [v for v in ENUM_POOL if V._value_type(v) == t]
        members = r.sample(pool, min(n or r.randint(1, 6), len(pool)))
        s = {"enum": members}
        if t is not None and r.random() < 0.5:
            s = {"type": t, "enum": members}
        return self.annotate(s)

    def node(self, depth, maxd, t=None):
        r = self.rng
        if t is not None:
            if t == "object":
                return self.obj(depth, maxd)
            if t == "array":
                return self.arr(depth, maxd)
            if t == "string" and r.random() < 0.3:
                return self.enum(t="string")
            return self.leaf(t)
        if depth >= maxd:
            kind = r.choice(["leaf"] * 6 + ["enum", "const", "nullable"])
        else:
            kind = r.choice(["leaf"] * 5 + ["object"] * 4 + ["array"] * 3 + ["anyOf", "anyOf", "oneOf",
                            "enum", "const", "nullable", "ref", "ref"])
        if kind == "leaf":
            return self.leaf()
        if kind == "enum":
            return self.enum()
        if kind == "const":
            return self.annotate({"const": copy.deepcopy(r.choice(ENUM_POOL))})
        if kind == "nullable":
            s = self.leaf(r.choice(["string", "integer", "number", "boolean"]))
            s["type"] = [s["type"], "null"] if r.random() < 0.7 else ["null", s["type"]]
            return s
        if kind == "object":
            return self.obj(depth, maxd)
        if kind == "array":
            return self.arr(depth, maxd)
        if kind == "anyOf":
            if r.random() < 0.3:
                # objects with different required keys
                names = r.sample(NAME_POOL[:20], 4)
                brs = []
                for i in range(2):
                    props = {names[2 * i]: self.leaf(), names[2 * i + 1]: self.leaf()}
                    if r.random() < 0.5:
                        props["kind"] = {"const": "k%d" % i}
                    br = {"type": "object", "properties": props, "required": list(props)[:1 + i]}
                    if r.random() < 0.5:
                        br["additionalProperties"] = False
                    brs.append(br)
                return {"anyOf": brs}
            return self.annotate({"anyOf": [self.node(depth + 1, maxd) for _ in range(r.randint(2, 3))]})
        if kind == "oneOf":
            groups = r.sample(["string", "num", "boolean", "null", "object", "array"], r.randint(2, 3))
            brs = []
            for g in groups:
                t = r.choice(["integer", "number"]) if g == "num" else g
                brs.append(self.node(depth + 1, maxd, t))
            return self.annotate({"oneOf": brs})
        # ref
        if self.defs and r.random() < 0.4:
            name = r.choice(list(self.defs))
        else:
            name = "D%d" % self.counter
            self.counter += 1
            body = self.node(depth + 1, maxd)
            self.defs[name] = body
        return {"$ref": "#/$defs/" + name}

    def obj(self, depth, maxd):
        r = self.rng
        n = r.choice([0, 1, 2, 3, 3, 4, 5, 6]) if r.random() > 0.04 else r.randint(20, 24)
        names = r.sample(NAME_POOL, min(n, len(NAME_POOL)))
        if n > len(NAME_POOL):
            names += ["f%02d" % i for i in range(n - len(NAME_POOL))]
        props = {}
        for k in names:
            props[k] = self.node(depth + 1, maxd) if n < 20 else self.leaf()
        s = {"type": "object"}
        if props or r.random() < 0.5:
            s["properties"] = props
        req = [k for k in names if r.random() < 0.5]
        if req:
            s["required"] = req
        m = r.random()
        if m < 0.35:
            s["additionalProperties"] = False
        elif m < 0.45:
            s["additionalProperties"] = True
        elif m < 0.6:
            s["additionalProperties"] = self.leaf()
        return self.annotate(s)

    def arr(self, depth, maxd):
        r = self.rng
        s = {"type": "array", "items": self.node(depth + 1, maxd)}
        m = r.random()
        if m < 0.3:
            s["minItems"] = r.randint(0, 2)
            s["maxItems"] = s["minItems"] + r.randint(0, 3)
        elif m < 0.45:
            s["maxItems"] = r.randint(0, 4)
        elif m < 0.6:
            s["minItems"] = r.randint(1, 3)
        return self.annotate(s)

    def recursive(self):
        r = self.rng
        kind = r.randint(0, 3)
        if kind == 0:
            return {"type": "object", "properties": {
                "value": self.leaf(), "children": {"type": "array", "items": {"$ref": "#"},
                                                   "maxItems": r.randint(1, 3)}},
                "required": ["value"], "additionalProperties": r.random() < 0.5}, "tree"
        if kind == 1:
            return {"$defs": {"Node": {"type": "object", "properties": {
                "v": self.node(2, 3), "next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}},
                "required": ["v", "next"]}},
                "type": "array", "items": {"$ref": "#/$defs/Node"}, "maxItems": 2}, "list"
        if kind == 2:
            return {"anyOf": [self.leaf(), {"type": "array", "items": {"$ref": "#"}, "maxItems": 3}]}, "nest"
        return {"oneOf": [self.leaf(r.choice(["string", "integer", "boolean"])),
                          {"type": "object", "additionalProperties": {"$ref": "#"}}]}, "dict"

    def build(self):
        self.defs = {}
        self.counter = 0
        r = self.rng
        if r.random() < 0.15:
            s, kind = self.recursive()
            return s, "rec_" + kind
        maxd = r.randint(1, 4)
        s = self.node(0, maxd)
        if self.defs:
            s = dict(s)
            s["$defs"] = self.defs
        kind = ("ref" if "$ref" in s else s.get("type") if isinstance(s.get("type"), str) else
                "nullable" if "type" in s else next((k for k in ("anyOf", "oneOf", "enum", "const") if k in s),
                                                    "any"))
        return s, kind


# ---------------------------------------------------------------------------


def check_schema(name, schema):
    jsonschema.Draft202012Validator.check_schema(schema)
    problems = V.lint_schema(schema)
    if problems:
        raise Fail("%s: %s" % (name, "; ".join(problems)))


def build_extra(name, schema, cands):
    """Labels of the hand candidates alone (corpus_extra.py), format checker on."""
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=V.format_checker())
    valid, invalid = [], []
    for value in cands:
        value = norm_value(value)
        problem = V.domain_problem(value)
        if problem:
            raise Fail("%s: candidate %r outside the domain: %s" % (name, value, problem))
        text = dumps(value)
        if text in valid or text in invalid:
            continue
        (valid if validator.is_valid(value) else invalid).append(text)
    return valid, invalid


def main():
    rng = random.Random(SEED)
    entries = []
    names = set()
    for name, schema, cands in HAND:
        schema = norm_value(schema) if not isinstance(schema, bool) else schema
        check_schema(name, schema)
        assert name not in names, name
        names.add(name)
        valid, invalid = build_instances(rng, name, schema, cands)
        if not valid:
            raise Fail("%s: no valid instance" % name)
        entries.append({"name": name, "schema": schema, "valid": valid, "invalid": invalid})
    n_hand = len(entries)

    sg = SchemaGen(rng)
    for i in range(N_GENERATED):
        best = None
        for attempt in range(25):
            schema, kind = sg.build()
            schema = norm_value(schema)
            name = "gen_%03d_%s" % (i, kind)
            try:
                check_schema(name, schema)
                valid, invalid = build_instances(rng, name, schema, [])
            except (Fail, jsonschema.exceptions.SchemaError):
                continue
            if len(json.dumps(schema)) > 6000:
                continue
            if valid and len(valid) >= 3 and len(invalid) >= 3:
                best = (name, schema, valid, invalid)
                break
            if valid and best is None:
                best = (name, schema, valid, invalid)
        assert best is not None
        name, schema, valid, invalid = best
        entries.append({"name": name, "schema": schema, "valid": valid, "invalid": invalid})

    from corpus_extra import EXTRA  # noqa: E402 (after the generated ones: they stay as they were)
    for name, schema, cands in EXTRA:
        check_schema(name, schema)
        assert name not in names, name
        names.add(name)
        valid, invalid = build_extra(name, schema, cands)
        if not valid:
            raise Fail("%s: no valid instance" % name)
        entries.append({"name": name, "schema": schema, "valid": valid, "invalid": invalid})

    with open(OUT_PATH, "w", encoding="utf-8", newline="\n") as f:
        for e in entries:
            f.write(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n")
    nv = sum(len(e["valid"]) for e in entries)
    ni = sum(len(e["invalid"]) for e in entries)
    print("wrote %s: %d schemas (%d hand-written, %d generated), %d valid, %d invalid instances, %d bytes"
          % (OUT_PATH, len(entries), n_hand, len(entries) - n_hand, nv, ni, os.path.getsize(OUT_PATH)))


if __name__ == "__main__":
    main()
