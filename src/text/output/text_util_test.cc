// Helpers of the output parsers: tool-name recovery, XTML tag headers, JSON escaping.
#include "text/output/text_util.h"

#include <gtest/gtest.h>

#include "text/output/tool_names.h"
#include "text/output/xtml_tag.h"

namespace k3::text::output {
namespace {

TEST(ToolNames, RecoversNamesFromK2Ids) {
  ToolNames names({"get_weather", "search", "get-time", "a.b", "tool2"}, false);
  EXPECT_EQ(names.FromK2Id("functions.get_weather:0"), "get_weather");
  EXPECT_EQ(names.FromK2Id("get_weather:12"), "get_weather");
  EXPECT_EQ(names.FromK2Id("functions.get_weather"), "get_weather");
  EXPECT_EQ(names.FromK2Id("\n functions.get_weather : 3 \n"), "get_weather");
  EXPECT_EQ(names.FromK2Id("functions_get_weather_1"), "get_weather");
  EXPECT_EQ(names.FromK2Id("functions_get_weather"), "get_weather");
  EXPECT_EQ(names.FromK2Id("functionssearch5"), "search");
  EXPECT_EQ(names.FromK2Id("get_weather_0"), "get_weather");
  EXPECT_EQ(names.FromK2Id("functions.get-time:0"), "get-time");
  EXPECT_EQ(names.FromK2Id("functions.a.b:0"), "a.b");
  EXPECT_EQ(names.FromK2Id("functions.x.search:0"), "search");
  EXPECT_EQ(names.FromK2Id("functions.tool2:0"), "tool2");
  EXPECT_EQ(names.FromK2Id("call00003"), std::nullopt);
  EXPECT_EQ(names.FromK2Id("0"), std::nullopt);
  EXPECT_EQ(names.FromK2Id(""), std::nullopt);
  EXPECT_EQ(names.FromK2Id("functions.img_gen:0"), std::nullopt);
}

TEST(ToolNames, AcceptUndeclared) {
  ToolNames names({}, true);
  EXPECT_EQ(names.FromK2Id("functions.img_gen:0"), "img_gen");
  EXPECT_EQ(names.FromK2Id("x.y:1"), "x.y");
  EXPECT_EQ(names.FromK2Id("bad name:0"), std::nullopt);
  EXPECT_EQ(names.FromK3Name("img_gen"), "img_gen");
  ToolNames none({}, false);
  EXPECT_EQ(none.FromK2Id("functions.img_gen:0"), std::nullopt);
  EXPECT_EQ(none.FromK3Name("img_gen"), std::nullopt);
}

TEST(XtmlTag, ParsesNameAndUnescapedAttributes) {
  auto tag = ParseXtmlTag(R"( call tool="a&amp;&quot;b"  index = "1" )");
  ASSERT_TRUE(tag.has_value());
  EXPECT_EQ(tag->name, "call");
  ASSERT_EQ(tag->attrs.size(), 2u);
  EXPECT_EQ(*tag->Find("tool"), "a&\"b");
  EXPECT_EQ(*tag->Find("index"), "1");
  EXPECT_EQ(tag->Find("key"), nullptr);
  EXPECT_FALSE(ParseXtmlTag("").has_value());
  EXPECT_FALSE(ParseXtmlTag("call tool=x").has_value());
  EXPECT_FALSE(ParseXtmlTag("call tool=\"x").has_value());
  EXPECT_EQ(UnescapeXtmlAttr("&lt;&gt;&apos;&#39;&foo;&"), "<>''&foo;&");
}

TEST(TextUtil, JsonEscaping) {
  EXPECT_EQ(JsonQuoted("a\"b\\c\n\t\r\b\f\x01\x1f é"), R"("a\"b\\c\n\t\r\b\f\u0001\u001f é")");
  EXPECT_TRUE(IsJson(" [1, 2] "));
  EXPECT_FALSE(IsJson("{a: 1}"));
  EXPECT_FALSE(IsJson(""));
  EXPECT_EQ(TrimAscii(" \n x y\t"), "x y");
}

}  // namespace
}  // namespace k3::text::output
