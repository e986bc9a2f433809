// Python text forms: float repr, str()/repr() of containers and json.dumps escaping, checked
// against what CPython prints for the same values.
#include "text/jinja/py_format.h"

#include <gtest/gtest.h>

#include <string>

namespace k3::text::jinja {
namespace {

TEST(PyFormat, FloatRepr) {
  EXPECT_EQ(FloatRepr(1.0), "1.0");
  EXPECT_EQ(FloatRepr(-0.0), "-0.0");
  EXPECT_EQ(FloatRepr(0.1), "0.1");
  EXPECT_EQ(FloatRepr(26.1), "26.1");
  EXPECT_EQ(FloatRepr(1e16), "1e+16");
  EXPECT_EQ(FloatRepr(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(FloatRepr(0.0001), "0.0001");
  EXPECT_EQ(FloatRepr(0.00001), "1e-05");
  EXPECT_EQ(FloatRepr(1.5e-7), "1.5e-07");
  EXPECT_EQ(FloatRepr(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(FloatRepr(123.456), "123.456");
}

std::string Str(const Value& v) {
  std::string out;
  EXPECT_TRUE(AppendStr(v, 1 << 20, &out).ok());
  return out;
}

TEST(PyFormat, StrAndRepr) {
  EXPECT_EQ(Str(Value(true)), "True");
  EXPECT_EQ(Str(Value::None()), "None");
  EXPECT_EQ(Str(Value()), "");
  EXPECT_EQ(Str(Value("it's")), "it's");
  Value::List items{Value("a'b"), Value("a\"b"), Value("a'\"b"), Value("\n\x01\xc2\xa0"), Value(2)};
  EXPECT_EQ(Str(Value(items)), R"(["a'b", 'a"b', 'a\'"b', '\n\x01\xa0', 2])");
  Dict d;
  d.Set("k", Value(1.5));
  EXPECT_EQ(Str(Value(d)), "{'k': 1.5}");
}

TEST(PyFormat, JsonDumpsLimits) {
  std::string out;
  Value::List big(1000, Value("xxxxxxxxxx"));
  base::Status status = AppendJsonDumps(Value(big), {}, 100, &out);
  EXPECT_EQ(status.code(), base::StatusCode::kResourceExhausted);
  out.clear();
  EXPECT_FALSE(AppendJsonDumps(Value(), {}, 100, &out).ok());  // Undefined is not serializable
}

}  // namespace
}  // namespace k3::text::jinja
