// Internal: recovers and validates tool names from what the model wrote.
//
// K2 ids: the model should write "functions.NAME:IDX", but copies whatever ids clients echoed
// back (engine bugs #1, #2, #6), so the id is trimmed, a trailing ":digits" removed, and these
// candidates are tried in order against the declared names; the first declared one wins:
//   1. without a "functions." prefix          functions.get-weather:0 -> get-weather
//   2. as is                                  get_weather:0, a.b      -> get_weather, a.b
//   3. after the last '.'                     tools.x.get_weather     -> get_weather
//   4. "functions_NAME_N" / "functions_NAME"  functions_get_weather_1 -> get_weather
//   5. "functionsNAMEN"                       functionsexec5          -> exec
//   6. without a trailing "_N"                get_weather_0           -> get_weather
// Names may contain '-' and '.': exact matches (1, 2) come first so a declared "a.b" wins over
// "b". Ids that name nothing declared ("call00003", "0") give no name: the call is dropped.
// With accept_undeclared, an unmatched id yields candidate 1 when it matches
// [A-Za-z0-9_.-]{1,256}.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace k3::text::output {

class ToolNames {
 public:
  ToolNames(const std::vector<std::string>& declared, bool accept_undeclared);

  // The name for a K2 call id, or nullopt when the call must be dropped.
  std::optional<std::string> FromK2Id(std::string_view raw_id) const;
  // The name for a K3 tool="..." attribute (already unescaped), or nullopt.
  std::optional<std::string> FromK3Name(std::string_view name) const;

 private:
  bool Declared(std::string_view name) const;

  std::unordered_set<std::string> declared_;
  bool accept_undeclared_;
};

// [A-Za-z0-9_.-]{1,256}.
bool IsPlausibleToolName(std::string_view name);

}  // namespace k3::text::output
