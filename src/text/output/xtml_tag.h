// Internal: the text between <|open|> and <|sep|> of a K3 XTML tag: `NAME k="v" …`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace k3::text::output {

struct XtmlTag {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attrs;  // values unescaped, in order

  // The first attribute named `key`, or null.
  const std::string* Find(std::string_view key) const;
};

// Parses `NAME k="v" …`. Whitespace around the name, the attributes, '=' and the whole header
// is tolerated (detokenizers that put spaces around special tokens, engine bug #10). nullopt
// when the name is empty or an attribute is not `key="value"`.
std::optional<XtmlTag> ParseXtmlTag(std::string_view header);

// Undoes the renderer's attribute escaping (&amp; &quot;) plus &lt; &gt; &apos; &#39;. Other
// '&' sequences are kept as written.
std::string UnescapeXtmlAttr(std::string_view value);

}  // namespace k3::text::output
