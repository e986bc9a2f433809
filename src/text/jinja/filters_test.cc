// Filter tests. Expected strings follow the Jinja2 "List of Builtin Filters" and, for tojson,
// Python's json.dumps(x, ensure_ascii=False, indent, separators, sort_keys) as installed by
// Hugging Face transformers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "text/jinja/json_value.h"
#include "text/jinja/template.h"

namespace k3::text::jinja::filters_test {
namespace {

std::string Render(const std::string& source, const std::string& context_json = "{}") {
  auto t = Template::Parse(source);
  if (!t.ok()) return "PARSE ERROR: " + t.status().ToString();
  auto context = FromJson(nlohmann::ordered_json::parse(context_json));
  if (!context.ok()) return "CONTEXT ERROR";
  auto out = t->Render(*context);
  return out.ok() ? *out : "RENDER ERROR: " + out.status().ToString();
}

TEST(JinjaFilters, ToJsonMatchesPythonJsonDumps) {
  const char* tools = R"({"t": {"b": [1, 2.5, true, null], "a": "é\"\n\u0001", "c": {}}})";
  EXPECT_EQ(Render("{{ t | tojson }}", tools),
            R"({"b": [1, 2.5, true, null], "a": "é\"\n\u0001", "c": {}})");
  EXPECT_EQ(Render("{{ t | tojson(separators=(',', ':')) }}", tools),
            R"({"b":[1,2.5,true,null],"a":"é\"\n\u0001","c":{}})");
  EXPECT_EQ(Render("{{ t | tojson(sort_keys=true) }}", tools),
            R"({"a": "é\"\n\u0001", "b": [1, 2.5, true, null], "c": {}})");
  EXPECT_EQ(Render("{{ t.b | tojson(indent=2) }}", tools), "[\n  1,\n  2.5,\n  true,\n  null\n]");
  EXPECT_EQ(Render("{{ {'k': []} | tojson(indent=1) }}"), "{\n \"k\": []\n}");
  EXPECT_EQ(Render("{{ 'é😀' | tojson(ensure_ascii=true) }}"), R"("\u00e9\ud83d\ude00")");
  EXPECT_EQ(Render("{{ 1e100 | tojson }} {{ 3.0 | tojson }}"), "1e+100 3.0");
}

TEST(JinjaFilters, TextFilters) {
  EXPECT_EQ(Render("[{{ '  x y \n' | trim }}][{{ 'xxaxx' | trim('x') }}]"), "[x y][a]");
  EXPECT_EQ(Render("{{ 'Hello' | upper }}{{ 'Hello' | lower }}{{ 'hELLO wORLD' | capitalize }}"),
            "HELLOhelloHello world");
  EXPECT_EQ(Render("{{ 'hello big-world' | title }}"), "Hello Big-World");
  EXPECT_EQ(Render("{{ 'aXbX' | replace('X', '-') }}{{ 'aaa' | replace('a', 'b', 1) }}"),
            "a-b-baa");
  EXPECT_EQ(Render("{{ 42 | string }}{{ none | string }}{{ [1] | string }}"), "42None[1]");
  EXPECT_EQ(Render("{{ '<a href=\"x\">&' | e }}"), "&lt;a href=&#34;x&#34;&gt;&amp;");
  EXPECT_EQ(Render("{{ 'a\nb\n\nc' | indent(2) }}|{{ 'a\nb' | indent(2, true) }}"),
            "a\n  b\n\n  c|  a\n  b");
}

TEST(JinjaFilters, DefaultAndNumbers) {
  EXPECT_EQ(Render("{{ x | default('d') }}{{ '' | default('e') }}{{ '' | default('f', true) }}"),
            "df");
  EXPECT_EQ(Render("{{ x | d(1) }}"), "1");
  EXPECT_EQ(Render("{{ '42' | int }} {{ '4.7' | int }} {{ 'x' | int }} {{ 'x' | int(7) }} "
                   "{{ 3.9 | int }} {{ '0x1A' | int(base=16) }}"),
            "42 4 0 7 3 26");
  EXPECT_EQ(Render("{{ '2.5' | float }} {{ 3 | float }} {{ 'x' | float }}"), "2.5 3.0 0.0");
  EXPECT_EQ(Render("{{ 2.5 | round }} {{ 3.5 | round }} {{ 3.14159 | round(2) }} "
                   "{{ 2.1 | round(0, 'ceil') }} {{ 7 | round }} {{ -3 | abs }}"),
            "2.0 4.0 3.14 3.0 7 3");
}

TEST(JinjaFilters, SequenceFilters) {
  const char* ctx = R"({"users": [{"name": "b", "age": 3, "admin": true},
                                   {"name": "a", "age": 1, "admin": false},
                                   {"name": "c", "age": 2}]})";
  EXPECT_EQ(Render("{{ users | length }} {{ 'héllo' | length }} {{ {'a': 1} | count }}", ctx),
            "3 5 1");
  EXPECT_EQ(Render("{{ [1, 2, 3] | first }}{{ [1, 2, 3] | last }}{{ 'ab' | first }}"), "13a");
  EXPECT_EQ(Render("{{ users | map(attribute='name') | join(', ') }}", ctx), "b, a, c");
  EXPECT_EQ(Render("{{ users | selectattr('admin') | map(attribute='name') | list }}", ctx),
            "['b']");
  EXPECT_EQ(Render("{{ users | rejectattr('admin') | map(attribute='name') | join }}", ctx), "ac");
  EXPECT_EQ(Render("{{ users | selectattr('age', 'gt', 1) | map(attribute='age') | list }}", ctx),
            "[3, 2]");
  EXPECT_EQ(Render("{{ users | sort(attribute='age') | map(attribute='name') | join }}", ctx),
            "acb");
  EXPECT_EQ(Render("{{ [3, 1, 2] | sort(reverse=true) }} {{ ['b', 'A', 'a'] | sort }}"),
            "[3, 2, 1] ['A', 'a', 'b']");
  EXPECT_EQ(Render("{{ [1, 2, 3, 4] | select('odd') | list }} {{ [1, 2] | reject('odd') | list }}"),
            "[1, 3] [2]");
  EXPECT_EQ(
      Render("{{ [1, 2] | map('string') | join('-') }} {{ ['a', 'B'] | map('upper') | list }}"),
      "1-2 ['A', 'B']");
  EXPECT_EQ(Render("{{ [1, 2, 1] | unique | list }} {{ [4, 9, 2] | max }} {{ [4, 9, 2] | min }} "
                   "{{ [1, 2, 3] | sum }} {{ [1, 2] | reverse | list }} {{ 'abc' | reverse }}"),
            "[1, 2] 9 2 6 [2, 1] cba");
  EXPECT_EQ(Render("{% for k, v in {'b': 1, 'a': 2} | dictsort %}{{ k }}{{ v }}{% endfor %}"),
            "a2b1");
  EXPECT_EQ(Render("{% for k, v in {'b': 1, 'a': 2} | items %}{{ k }}{{ v }}{% endfor %}"), "b1a2");
  EXPECT_EQ(Render("{{ 'abc' | list }}"), "['a', 'b', 'c']");
}

}  // namespace
}  // namespace k3::text::jinja::filters_test
