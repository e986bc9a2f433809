// Base64 encoding (RFC 4648, standard alphabet, '=' padding), as tiktoken rank files write
// token bytes. Used to write rank files (the demo checkpoint, tests); readers decode in place.
#pragma once

#include <string>
#include <string_view>

namespace k3::base {

// Base64 of `bytes`; 4 output characters per 3 input bytes, rounded up.
std::string Base64Encode(std::string_view bytes);

}  // namespace k3::base
