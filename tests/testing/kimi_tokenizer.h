// The real Kimi tokenizers from ../shared/kimi/<model> (k25: K2.5/K2.6 specials, k3: K3 specials),
// loaded once per test binary; aborts the test binary when they cannot be loaded.
#pragma once

#include <string>

#include "text/tokenizer/tokenizer.h"

namespace k3::testing {

const text::Tokenizer& KimiTokenizer(const std::string& model = "k25");

}  // namespace k3::testing
