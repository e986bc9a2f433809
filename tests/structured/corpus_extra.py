"""Hand-written corpus cases for pattern, format, prefixItems, min/maxProperties
and allOf (appended to schema_corpus.jsonl by make_corpus.py after the
generated schemas, so those stay byte-identical).

Each entry is (name, schema, [candidate values]); every candidate is labelled
by jsonschema.Draft202012Validator with a FormatChecker (Debian's
python3-jsonschema 4.10; its checkers for date, time, email, ipv4, ipv6, uri
(python3-rfc3987) and uuid).  The formats Debian's validator cannot check
(date-time, duration, hostname: their checker packages are not in Debian;
time: Debian's checker is draft 3's, without the offset RFC 3339 requires, so
validate.format_checker drops it)
pass any string there, so their cases list only values that are valid by the
RFC (the matcher enforces the RFC subset documented in
src/structured/string_formats.cc).
"""

EXTRA = []


def X(name, schema, cands):
    EXTRA.append((name, schema, list(cands)))


def S(**kw):
    d = {"type": "string"}
    d.update(kw)
    return d


# -- pattern -----------------------------------------------------------------
X("pattern_anchored_digits", S(pattern="^[0-9]{3}-[0-9]{4}$"),
  ["555-1234", "000-0000", "5551234", "555-12345", "a555-1234", "", "555-123"])
X("pattern_unanchored_search", S(pattern="ab+c"),
  ["abc", "xxabbbcyy", "ac", "", "ABC", "zabc", "ab"])
X("pattern_alternation_groups", S(pattern="^(?:cat|dog)s?$"),
  ["cat", "dogs", "cats", "bird", "catdog", "", "do"])
X("pattern_class_negation", S(pattern="^[^aeiou\\s]+$"),
  ["xyz", "bcd", "hello", "rhythm", "a", "", "b c", "Zz"])
X("pattern_escapes_shorthand", S(pattern="^\\w+@\\d{2,4}\\.\\S$"),
  ["user_1@123.x", "a@12.b", "a@1.b", "a@12345.b", "a b@12.c", "x@12.\u00e9", "@12.c"])
X("pattern_dot_and_optional", S(pattern="^a.c?$"),
  ["ab", "abc", "a\u00e9", "a", "a\nc", "abcd", "a\u20ac"])
X("pattern_counted_repeat", S(pattern="^(ab){2,3}$"),
  ["abab", "ababab", "ab", "abababab", "aba", ""])
X("pattern_open_repeat", S(pattern="^x{2,}y*$"),
  ["xx", "xxxxyyy", "x", "xy", "xxy", "yy"])
X("pattern_end_anchor_only", S(pattern="[.!?]$"),
  ["Hi.", "Why?", "no", "", "!", "stop!\u00e9"])
X("pattern_unicode_literal", S(pattern="^caf\u00e9|na\u00efve$"),
  ["caf\u00e9", "caf\u00e9s", "very na\u00efve", "cafe", "naive", ""])
X("pattern_hex_escape", S(pattern="^\\x41\\u00e9+$"),
  ["A\u00e9", "A\u00e9\u00e9", "A", "a\u00e9", "\u00e9"])
X("pattern_quote_backslash", S(pattern="^[\"\\\\]+$"),
  ["\"", "\\\\", "\"\\\"", "a", ""])
X("pattern_with_lengths", S(pattern="^[a-z]+$", minLength=2, maxLength=4),
  ["ab", "abcd", "a", "abcde", "AB", "a1"])
X("pattern_in_object", {"type": "object", "properties": {
    "id": S(pattern="^[A-Z]{2}[0-9]{2}$"), "tag": S(pattern="^#")},
    "required": ["id"], "additionalProperties": False},
  [{"id": "AB12"}, {"id": "AB12", "tag": "#x"}, {"id": "ab12"}, {"id": "AB12", "tag": "x"}, {}])
X("pattern_beside_enum", {"enum": ["red", "green", "blue", 3], "pattern": "^[a-z]{4,5}$"},
  ["green", "blue", "red", 3, "pink"])
X("pattern_non_string_ignored", {"type": ["string", "integer"], "pattern": "^a"},
  ["abc", 5, "b", 2.5])

# -- format ------------------------------------------------------------------
X("format_date", S(format="date"),
  ["2024-02-29", "2023-12-31", "0001-01-01", "2023-02-29", "2024-13-01", "2024-04-31",
   "24-01-01", "2024-1-01", "1900-02-29", "2000-02-29", ""])
X("format_time", S(format="time"),
  ["12:30:00Z", "23:59:59.123+05:30", "00:00:00-08:00"])
X("format_date_time", S(format="date-time"),
  ["2024-05-01T12:30:00Z", "1999-12-31T23:59:59.5+01:00", "2024-02-29T00:00:00-00:30"])
X("format_duration", S(format="duration"),
  ["P1Y2M3DT4H5M6S", "PT30M", "P4W", "P1D", "PT1H30M", "P3Y"])
X("format_email", S(format="email"),
  ["user@example.com", "first.last+tag@sub.example.org", "x@y", "no-at-sign", "", "a.b"])
X("format_hostname", S(format="hostname"),
  ["example.com", "a-b.c-d.example", "localhost", "x1", "sub.domain.example.org"])
X("format_ipv4", S(format="ipv4"),
  ["192.168.0.1", "0.0.0.0", "255.255.255.255", "256.1.1.1", "1.2.3", "01.2.3.4",
   "1.2.3.4.5", "a.b.c.d"])
X("format_ipv6", S(format="ipv6"),
  ["::1", "::", "2001:db8::8a2e:370:7334", "fe80::1:2:3:4", "1:2:3:4:5:6:7:8",
   "::ffff:192.168.1.1", "1:2:3:4:5:6:7:8:9", "12345::", ":::", "1::2::3", "g::1"])
X("format_uri", S(format="uri"),
  ["https://example.com/path?q=1#frag", "mailto:user@example.com", "urn:isbn:0451450523",
   "http://user:pw@host:8080/a/b", "relative/path", "://nohost", "http://exa mple.com",
   "1http://x"])
X("format_uuid", S(format="uuid"),
  ["123e4567-e89b-12d3-a456-426614174000", "00000000-0000-0000-0000-000000000000",
   "ABCDEFAB-CDEF-ABCD-EFAB-CDEFABCDEFAB", "123e4567e89b12d3a456426614174000",
   "123e4567-e89b-12d3-a456-42661417400", "g23e4567-e89b-12d3-a456-426614174000"])
X("format_unknown_is_annotation", S(format="x-custom"), ["anything", "", 5])
X("format_in_object", {"type": "object", "properties": {
    "when": S(format="date"), "ip": S(format="ipv4")}, "required": ["when"],
    "additionalProperties": False},
  [{"when": "2024-01-01"}, {"when": "2024-01-01", "ip": "10.0.0.1"}, {"when": "yesterday"},
   {"when": "2024-01-01", "ip": "10.0.0.256"}])

# -- prefixItems ---------------------------------------------------------------
X("prefix_items_open", {"type": "array", "prefixItems": [S(), {"type": "integer"}]},
  [["a", 1], ["a"], [], ["a", 1, True, None], [1, "a"], ["a", "b"]])
X("prefix_items_closed", {"type": "array", "prefixItems": [S(), {"type": "boolean"}],
                          "items": False},
  [["a", True], ["a"], [], ["a", True, 1], [True]])
X("prefix_items_then_items", {"type": "array", "prefixItems": [{"type": "integer"}],
                              "items": S(), "minItems": 2, "maxItems": 3},
  [[1, "a"], [1, "a", "b"], [1], [1, "a", "b", "c"], [1, 2], ["a", "b"]])

# -- minProperties / maxProperties --------------------------------------------
X("min_max_properties", {"type": "object", "minProperties": 1, "maxProperties": 2},
  [{"a": 1}, {"a": 1, "b": 2}, {}, {"a": 1, "b": 2, "c": 3}])
X("min_properties_declared", {"type": "object", "properties": {"x": {"type": "integer"},
                              "y": {"type": "integer"}}, "minProperties": 2,
                              "additionalProperties": False},
  [{"x": 1, "y": 2}, {"x": 1}, {}, {"y": 1, "x": 2}])

# -- allOf -------------------------------------------------------------------
X("all_of_objects", {"allOf": [
    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
    {"type": "object", "properties": {"b": S()}, "required": ["b"]}]},
  [{"a": 1, "b": "x"}, {"a": 1}, {"b": "x"}, {"a": "1", "b": "x"}, {"a": 1, "b": "x", "c": 0}])
X("all_of_with_siblings", {"type": "object", "properties": {"id": {"type": "integer"}},
                           "allOf": [{"required": ["id"]},
                                     {"properties": {"id": {"minimum": 1}}}]},
  [{"id": 1}, {"id": 0}, {}, {"id": 5, "x": True}])
