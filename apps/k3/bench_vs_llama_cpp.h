// k3 bench model --vs-llama-cpp DIR: the same decode and prefill figures measured for llama.cpp on
// the same checkpoint, converted by llama.cpp's own convert_hf_to_gguf.py, interleaved round by
// round with k3's own measurements so that both see the same machine state.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace k3::app {

struct LlamaCppFlags {
  std::string dir;  // llama.cpp source folder with build/bin (empty: off)
  std::string python = "/usr/bin/python3";
  std::string outtype = "auto";  // convert.py --outtype: auto, bf16, q8_0
  int rounds = 3;                // interleaved k3 / llama.cpp rounds
};

// What is measured, with k3's side as callbacks (tokens/s) so that rounds can interleave.
struct PeerComparison {
  std::vector<int> batches, prefill;
  int decode_context = 16, decode_steps = 8;
  size_t threads = 1;
  std::function<double(int batch)> ours_decode;
  std::function<double(int tokens)> ours_prefill;
  std::function<double(int batch)> decode_roofline;  // tokens/s at the bandwidth/compute limit
  std::function<double(int tokens)> prefill_peak;    // tokens/s at the instruction-set peak
  std::function<void()> before_round;                // e.g. measure the bandwidth again
};

// Converts `model_dir` once (GGUF kept beside it), then runs the rounds and prints the table.
// Returns a process exit code (0, or 1 with the reason logged).
int PrintVsLlamaCpp(const LlamaCppFlags& flags, const std::string& model_dir,
                    const PeerComparison& plan);

}  // namespace k3::app
