// Workloads for `k3 bench serve`: conversations of one or more user turns, built from seeded
// random text, ShareGPT, multi-turn chats whose prompts grow turn by turn (shared prefixes), or
// Mooncake traces (arrival times, lengths, and prefix-block ids turned into text so that equal
// ids give equal text and the server's prefix cache sees the trace's reuse).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace k3::loadgen {

struct Conversation {
  std::string system;                   // empty: no system message
  std::vector<std::string> user_turns;  // at least one; turn k+1 follows turn k's reply
  int max_tokens = 128;                 // per turn
  double arrival_s = -1;                // trace time of the first turn; < 0: the runner decides
};

struct Workload {
  std::string name;
  std::vector<Conversation> conversations;
  int requests() const;  // all turns of all conversations
};

// Deterministic filler text: `words` words drawn from a 4,096-word synthetic lexicon.
std::string Words(uint64_t seed, int words);

struct RandomOptions {
  int conversations = 200;
  int input_words_min = 64, input_words_max = 512;
  int output_min = 16, output_max = 128;
  uint64_t seed = 1;
};
Workload RandomWorkload(const RandomOptions& options);

// ShareGPT JSON (a list of {"conversations": [{"from": "human"|"gpt", "value"}, ...]}): the
// first human turn is the prompt; the first reply's length (words x 1.3, capped at max_output)
// the output length, or max_output when the file keeps no replies.
base::Result<Workload> ShareGptWorkload(const std::string& path, int conversations, int max_output,
                                        uint64_t seed);

struct MultiTurnOptions {
  int conversations = 16;
  int turns = 4;
  int system_words = 400;   // the shared part each turn extends
  int question_words = 24;  // each new user turn
  int output = 32;
  uint64_t seed = 1;
};
Workload MultiTurnWorkload(const MultiTurnOptions& options);

struct MooncakeOptions {
  std::string path;
  int requests = 200;        // the first N lines
  int words_per_block = 32;  // text per 512-token hash block (scaled down for small models)
  double time_scale = 1.0;   // multiply the trace's timestamps
  int max_output = 64;       // cap on output_length
};
base::Result<Workload> MooncakeWorkload(const MooncakeOptions& options);

}  // namespace k3::loadgen
