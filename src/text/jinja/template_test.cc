// Language tests of the template engine. Each case's expected output follows the Jinja2
// documentation (Template Designer Documentation, "Whitespace Control", "List of Builtin
// Filters/Tests", loop variables) under Hugging Face's settings: trim_blocks, lstrip_blocks,
// loopcontrols, autoescape off.
#include "text/jinja/template.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "text/jinja/json_value.h"

namespace k3::text::jinja {
namespace {

struct Case {
  const char* source;
  const char* context;  // JSON object
  const char* expected;
};

base::Result<std::string> Render(const std::string& source, const std::string& context_json,
                                 const RenderOptions& options = {}) {
  K3_ASSIGN_OR_RETURN(Template t, Template::Parse(source));
  K3_ASSIGN_OR_RETURN(Value context, FromJson(nlohmann::ordered_json::parse(context_json)));
  return t.Render(context, options);
}

void ExpectCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    auto out = Render(c.source, c.context);
    ASSERT_TRUE(out.ok()) << c.source << "\n" << out.status().ToString();
    EXPECT_EQ(*out, c.expected) << "template: " << c.source;
  }
}

TEST(JinjaTemplate, WhitespaceControl) {
  ExpectCases({
      // trim_blocks removes the newline after a block tag; lstrip_blocks the indent before it.
      {"{% if true %}\n  x\n{% endif %}\n", "{}", "  x\n"},
      {"a\n    {% if true %}\nb\n    {% endif %}\nc", "{}", "a\nb\nc"},
      {"  {% if true %}x{% endif %}", "{}", "x"},
      // Not for variables, and not with `+`.
      {"a\n  {{ 1 }}\nb", "{}", "a\n  1\nb"},
      {"a\n\t {%+ if true %}b{% endif %}", "{}", "a\n\t b"},
      {"a\n{% if true +%}\nb{% endif %}", "{}", "a\n\nb"},
      // `-` strips all whitespace on its side, newlines included.
      {"a  \n {%- if true -%} \n b {{- 'c' -}} \n d{% endif %}", "{}", "abcd"},
      // Comments: trimmed like blocks.
      {"a\n  {# note #}\nb", "{}", "a\nb"},
      {"a {#- c -#}  b", "{}", "ab"},
      // One trailing newline of the template is dropped; \r\n becomes \n.
      {"x\n\n", "{}", "x\n"},
      {"a\r\nb", "{}", "a\nb"},
      {"{% raw %}{{ x }}{% endraw %}", "{}", "{{ x }}"},
  });
}

TEST(JinjaTemplate, ExpressionsAndOperators) {
  ExpectCases({
      {"{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }}",
       "{}", "7 9 3 -4 1 2"},
      {"{{ 10 / 4 }} {{ 10 / 2 }} {{ 2 ** 10 }} {{ 2 ** 3 ** 2 }}", "{}", "2.5 5.0 1024 64"},
      {"{{ 'a' ~ 1 ~ none ~ true }} {{ 'ab' + 'cd' }} {{ 'ab' * 2 }}", "{}",
       "a1NoneTrue abcd abab"},
      {"{{ [1, 2] + [3] }} {{ [0] * 2 }}", "{}", "[1, 2, 3] [0, 0]"},
      {"{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 1 == 1.0 }} {{ true == 1 }} {{ 'a' != 'b' }}", "{}",
       "True False True True True"},
      {"{{ 'b' in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 3 not in [1] }}", "{}",
       "True True True True"},
      {"{{ 0 or 'x' }} {{ 1 and 'y' }} {{ not 0 }} {{ none or [] }}", "{}", "x y True []"},
      {"{{ 'yes' if 1 > 0 else 'no' }}|{{ 'yes' if 0 }}|", "{}", "yes||"},
      {"{{ x[1:] }} {{ x[:-1] }} {{ x[::-1] }} {{ s[1:3] }} {{ x[-1] }} {{ x.0 }}",
       R"({"x": [1, 2, 3], "s": "héllo"})", "[2, 3] [1, 2] [3, 2, 1] él 3 1"},
      {"{{ d.a }} {{ d['b'] }} {{ d.missing is defined }} {{ d.get('c', 9) }} {{ d.get('c') }}",
       R"({"d": {"a": 1, "b": 2}})", "1 2 False 9 None"},
      {"{{ 'a\\tb\\n' }}{{ \"q'\" }}{{ '\\u00e9' }}", "{}", "a\tb\nq'é"},
      {"{{ 1.5 }} {{ 1e20 }} {{ 0.1 + 0.2 }} {{ 3.0 }} {{ 1e-5 }}", "{}",
       "1.5 1e+20 0.30000000000000004 3.0 1e-05"},
      {"{{ {'a': 'x', 'b': [none, true, 1.0]} }} {{ ['it\\'s'] }}", "{}",
       "{'a': 'x', 'b': [None, True, 1.0]} [\"it's\"]"},
  });
}

TEST(JinjaTemplate, ControlStructures) {
  ExpectCases({
      {"{% if x == 1 %}one{% elif x == 2 %}two{% else %}many{% endif %}", R"({"x": 2})", "two"},
      {"{% for i in [3, 4, 5] %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}"
       "{{ loop.length }}{{ loop.revindex }};{% endfor %}",
       "{}", "10TrueFalse33;21FalseFalse32;32FalseTrue31;"},
      {"{% for x in [] %}x{% else %}empty{% endfor %}", "{}", "empty"},
      {"{% for x in [1, 2, 3, 4] if x is even %}{{ x }}{{ loop.length }}{% endfor %}", "{}",
       "2242"},
      {"{% for x in range(10) %}{% if x == 3 %}{% break %}{% endif %}{% if x == 1 %}"
       "{% continue %}{% endif %}{{ x }}{% endfor %}",
       "{}", "02"},
      {"{% for k, v in d.items() %}{{ k }}={{ v }},{% endfor %}", R"({"d": {"b": 1, "a": 2}})",
       "b=1,a=2,"},
      {"{% for c in 'ab' %}{{ c }}.{% endfor %}{% for k in {'x': 1} %}{{ k }}{% endfor %}", "{}",
       "a.b.x"},
      {"{% for i in range(5, 0, -2) %}{{ i }}{% endfor %}", "{}", "531"},
      {"{% for x in [1, 2] %}{{ loop.cycle('a', 'b') }}{{ loop.previtem is defined }}{% endfor %}",
       "{}", "aFalsebTrue"},
  });
}

TEST(JinjaTemplate, ScopingSetAndNamespace) {
  ExpectCases({
      // `set` in a loop body does not leak out of it (nor into the next iteration).
      {"{% set x = 1 %}{% for i in [1, 2] %}{{ x }}{% set x = 5 %}{{ x }}{% endfor %}{{ x }}", "{}",
       "15151"},
      {"{% set ns = namespace(n=0) %}{% for i in [1, 2, 3] %}{% set ns.n = ns.n + i %}"
       "{% endfor %}{{ ns.n }}",
       "{}", "6"},
      {"{% set a, b = [1, 2] %}{{ b }}{{ a }}", "{}", "21"},
      {"{% set body %}  Hi {{ 'x' }}{% endset %}[{{ body }}]", "{}", "[  Hi x]"},
      {"{% set t | upper %}abc{% endset %}{{ t }}", "{}", "ABC"},
      {"{% with y = 3 %}{{ y }}{% endwith %}{{ y is defined }}", "{}", "3False"},
  });
}

TEST(JinjaTemplate, MacrosAndCall) {
  ExpectCases({
      {"{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}"
       "{{ greet('a') }} {{ greet('b', '?') }} {{ greet(punct='.', name='c') }}",
       "{}", "Hi a! Hi b? Hi c."},
      {"{% macro wrap() %}<{{ caller() }}>{% endmacro %}{% call wrap() %}in{% endcall %}", "{}",
       "<in>"},
      {"{% macro row(x) %}{{ caller(x * 2) }}{% endmacro %}{% call(v) row(4) %}[{{ v }}]"
       "{% endcall %}",
       "{}", "[8]"},
      {"{% filter upper %}shout{% endfilter %}", "{}", "SHOUT"},
  });
}

TEST(JinjaTemplate, Tests) {
  ExpectCases({
      {"{{ x is defined }}{{ y is undefined }}{{ n is none }}{{ s is string }}{{ d is mapping }}",
       R"({"x": 1, "n": null, "s": "s", "d": {}})", "TrueTrueTrueTrueTrue"},
      {"{{ l is iterable }}{{ l is sequence }}{{ 1 is number }}{{ 1.5 is float }}"
       "{{ 1 is integer }}{{ true is boolean }}{{ false is false }}",
       R"({"l": []})", "TrueTrueTrueTrueTrueTrueTrue"},
      {"{{ 4 is divisibleby 2 }}{{ 3 is odd }}{{ 'a' is eq 'a' }}{{ 2 is equalto(3) }}"
       "{{ 'x' is not string }}",
       "{}", "TrueTrueTrueFalseFalse"},
  });
}

TEST(JinjaTemplate, StringMethods) {
  ExpectCases({
      {"{{ s.startswith('ab') }}{{ s.endswith(('x', 'yz')) }}{{ s.upper() }}{{ s.split('c') }}",
       R"({"s": "abcxyz"})", "TrueTrueABCXYZ['ab', 'xyz']"},
      {"[{{ '  a b  '.strip() }}][{{ 'xxaxx'.lstrip('x') }}][{{ 'a  b '.split() }}]"
       "[{{ 'a,b,c'.rsplit(',', 1) }}][{{ 'aaa'.replace('a', 'b', 2) }}][{{ '-'.join(['a', 'b']) "
       "}}]",
       "{}", "[a b][axx][['a', 'b']][['a,b', 'c']][bba][a-b]"},
      {"{{ d.keys()|list }} {{ d.values()|list }}{% for k, v in d.items() %} {{ k }}{{ v }}"
       "{% endfor %}",
       R"({"d": {"a": 1}})", "['a'] [1] a1"},
  });
}

TEST(JinjaTemplate, Errors) {
  struct ErrorCase {
    const char* source;
    const char* message_part;
  };
  for (const ErrorCase& c : std::vector<ErrorCase>{
           {"{% if x %}", "line 1: unexpected end of template"},
           {"a\n{{ 1 +", "line 2"},
           {"{% endfor %}", "unexpected '{% endfor %}'"},
           {"{% break %}", "outside of a loop"},
           {"{% frobnicate %}", "unknown tag 'frobnicate'"},
           {"{{ 'abc }}", "unterminated string"},
           {"{# open", "unterminated comment"},
       }) {
    auto t = Template::Parse(c.source);
    ASSERT_FALSE(t.ok()) << c.source;
    EXPECT_EQ(t.status().code(), base::StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find(c.message_part), std::string::npos)
        << c.source << " -> " << t.status().message();
  }
  for (const ErrorCase& c : std::vector<ErrorCase>{
           {"a\n\n{{ raise_exception('No tools allowed') }}",
            "line 3: template error: No tools allowed"},
           {"{{ x.y }}", "'x' is undefined"},
           {"{{ 1 + 'a' }}", "unsupported operand type(s) for +: 'int' and 'str'"},
           {"{{ 1 / 0 }}", "division by zero"},
           {"{% for x in none %}{% endfor %}", "not iterable"},
           {"{{ x | nosuchfilter }}", "no filter named 'nosuchfilter'"},
           {"{{ 9223372036854775807 + 1 }}", "overflow"},
       }) {
    auto out = Render(c.source, "{}");
    ASSERT_FALSE(out.ok()) << c.source;
    EXPECT_NE(out.status().message().find(c.message_part), std::string::npos)
        << c.source << " -> " << out.status().message();
  }
}

TEST(JinjaTemplate, LimitsStopRunawayTemplates) {
  RenderOptions small;
  small.max_output_bytes = 1 << 16;
  small.max_steps = 100000;
  small.max_call_depth = 16;
  auto loop = Render("{% for i in range(1000000) %}{% endfor %}", "{}", small);
  EXPECT_EQ(loop.status().code(), base::StatusCode::kResourceExhausted);
  auto output = Render("{% for i in range(1000) %}{{ 'x' * 1000 }}{% endfor %}", "{}", small);
  EXPECT_EQ(output.status().code(), base::StatusCode::kResourceExhausted);
  auto recursion = Render("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "{}", small);
  EXPECT_EQ(recursion.status().code(), base::StatusCode::kResourceExhausted);
  auto growth = Render(
      "{% set ns = namespace(s='ab') %}{% for i in range(64) %}"
      "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
      "{}", small);
  EXPECT_EQ(growth.status().code(), base::StatusCode::kResourceExhausted);
  std::string deep(200, '(');
  EXPECT_FALSE(Template::Parse("{{ " + deep + " }}").ok());
}

}  // namespace
}  // namespace k3::text::jinja
