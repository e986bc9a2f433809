// k3 generate: greedy decoding on a checkpoint folder, for debugging the model runtime. Prints the
// generated text (or ids with --ids) and can dump every step's float32 logits.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/k3/backend_flags.h"
#include "apps/k3/commands.h"
#include "apps/k3/engine_flags.h"
#include "apps/k3/numa_flag.h"
#include "base/log.h"
#include "base/thread_pool.h"
#include "model/greedy.h"
#include "model/model.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::app {
namespace {

struct GenerateFlags {
  std::string model;
  std::string prompt;
  std::string prompt_ids;
  int max_tokens = 16;
  bool ids = false;
  bool ignore_eos = false;
  bool mxfp8_experts = false;
  std::string expert_activations = "fp32";
  std::string weight_quant = "auto";
  bool mmap_weights = false;
  std::string kv_cache_dtype = "auto";
  std::string dump_logits;
  std::string kda_mode = "auto";
  std::string mla_mode = "auto";
  std::string backend = "cpu";
  size_t threads = 0;
  int numa_node = -1;
};

base::Result<std::vector<int32_t>> ParseIds(const std::string& text) {
  std::vector<int32_t> ids;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    char* end = nullptr;
    long value = std::strtol(word.c_str(), &end, 10);
    if (*end != '\0' || value < 0 || value > INT32_MAX) {
      return base::InvalidArgument("--prompt-ids: '" + word + "' is not a token id");
    }
    ids.push_back(static_cast<int32_t>(value));
  }
  if (ids.empty()) return base::InvalidArgument("--prompt-ids is empty");
  return ids;
}

base::Status ParseModes(const GenerateFlags& f, model::ForwardOptions* options) {
  if (f.kda_mode == "recurrent") {
    options->kda_mode = model::KdaMode::kRecurrent;
  } else if (f.kda_mode == "chunked") {
    options->kda_mode = model::KdaMode::kChunked;
  } else if (f.kda_mode != "auto") {
    return base::InvalidArgument("--kda-mode must be auto, recurrent or chunked");
  }
  if (f.mla_mode == "naive") {
    options->mla_mode = model::MlaMode::kNaive;
  } else if (f.mla_mode == "absorbed") {
    options->mla_mode = model::MlaMode::kAbsorbed;
  } else if (f.mla_mode != "auto") {
    return base::InvalidArgument("--mla-mode must be auto, naive or absorbed");
  }
  options->mxfp8_experts = f.mxfp8_experts;
  return ApplyExpertActivations(f.expert_activations);
}

base::Status RunGenerate(const GenerateFlags& f) {
  K3_RETURN_IF_ERROR(ApplyNumaNode(f.numa_node));
  base::ThreadPool pool(f.threads);
  K3_LOG(kInfo) << "loading " << f.model;
  K3_ASSIGN_OR_RETURN(auto backend, MakeBackend(f.backend, &pool));
  K3_ASSIGN_OR_RETURN(model::WeightQuant quant, model::ParseWeightQuant(f.weight_quant));
  K3_ASSIGN_OR_RETURN(auto model, model::Model::Load(f.model, std::move(backend),
                                                     LoadOptionsOf(quant, f.mmap_weights), &pool));
  const model::ModelConfig& config = model->config();
  K3_LOG(kInfo) << model::FamilyName(config.family) << ": " << config.num_layers << " layers ("
                << config.num_kda_layers() << " KDA, " << config.num_mla_layers()
                << " MLA), hidden " << config.hidden << ", vocab " << config.vocab << ", "
                << model->checkpoint().mapped_bytes() / 1e6 << " MB of weights "
                << (f.mmap_weights ? "mapped" : "in memory") << ", "
                << model->checkpoint().released_bytes() / 1e6
                << " MB of them released after the load-time conversion";
  std::unique_ptr<text::Tokenizer> tokenizer;
  std::vector<int32_t> prompt;
  if (!f.prompt_ids.empty()) {
    K3_ASSIGN_OR_RETURN(prompt, ParseIds(f.prompt_ids));
  } else {
    auto loaded = text::Tokenizer::FromKimiDirectory(f.model);
    if (!loaded.ok()) {
      return loaded.status().WithContext(
          "--prompt needs the checkpoint's tokenizer (or use --prompt-ids)");
    }
    tokenizer = std::move(*loaded);
    K3_ASSIGN_OR_RETURN(auto ids, tokenizer->Encode(f.prompt));
    prompt.assign(ids.begin(), ids.end());
  }
  if (!f.ids && !tokenizer) {
    auto loaded = text::Tokenizer::FromKimiDirectory(f.model);
    if (loaded.ok()) tokenizer = std::move(*loaded);
  }
  model::GreedyOptions options;
  options.max_tokens = f.max_tokens;
  options.stop_at_eos = !f.ignore_eos;
  K3_RETURN_IF_ERROR(ParseModes(f, &options.forward));
  K3_ASSIGN_OR_RETURN(options.forward.cache_dtype, ParseKvCacheDtype(f.kv_cache_dtype));
  K3_ASSIGN_OR_RETURN(model::GreedyResult result, model::GreedyGenerate(*model, prompt, options));
  std::string out;
  if (f.ids || !tokenizer) {
    for (size_t i = 0; i < result.generated.size(); ++i) {
      out += (i ? " " : "") + std::to_string(result.generated[i]);
    }
  } else {
    std::vector<text::TokenId> ids(result.generated.begin(), result.generated.end());
    K3_ASSIGN_OR_RETURN(out, tokenizer->Decode(ids));
  }
  const size_t steps = result.generated.size();
  K3_LOG(kInfo) << "prompt " << prompt.size() << " tokens in " << result.prefill_seconds * 1e3
                << " ms; " << steps << " generated, "
                << (steps > 1 ? (steps - 1) / result.decode_seconds : 0.0) << " tokens/s decode";
  std::printf("%s\n", out.c_str());
  std::fflush(stdout);
  if (!f.dump_logits.empty()) {
    std::ofstream file(f.dump_logits, std::ios::binary);
    file.write(reinterpret_cast<const char*>(result.step_logits.data()),
               static_cast<std::streamsize>(result.step_logits.size() * sizeof(float)));
    if (!file) return base::Internal("cannot write " + f.dump_logits);
  }
  return base::Status::Ok();
}

}  // namespace

CommandFn AddGenerateCommand(CLI::App& app) {
  auto f = std::make_shared<GenerateFlags>();
  app.add_option("--model", f->model, "HF checkpoint folder (config.json + safetensors)")
      ->required();
  auto* prompt = app.add_option("--prompt", f->prompt, "Prompt text (needs tiktoken.model)");
  auto* ids = app.add_option("--prompt-ids", f->prompt_ids, "Prompt as token ids: \"ID ID ...\"");
  prompt->excludes(ids);
  app.add_option("--max-tokens", f->max_tokens, "Tokens to generate")->capture_default_str();
  app.add_flag("--ids", f->ids, "Print generated token ids on one line instead of text");
  app.add_flag("--ignore-eos", f->ignore_eos, "Keep generating past the end-of-sequence token");
  app.add_option("--dump-logits", f->dump_logits,
                 "Write float32 logits of every step, row-major [steps, vocab]");
  app.add_flag("--mxfp8-experts", f->mxfp8_experts,
               "Quantise routed-expert inputs to MXFP8 (default: exact FP32 activations)");
  AddExpertActivationsFlag(app, &f->expert_activations);
  AddWeightQuantFlag(app, &f->weight_quant);
  AddMmapWeightsFlag(app, &f->mmap_weights);
  AddKvCacheDtypeFlag(app, &f->kv_cache_dtype);
  app.add_option("--kda-mode", f->kda_mode, "auto, recurrent or chunked")->capture_default_str();
  app.add_option("--mla-mode", f->mla_mode, "auto, naive or absorbed")->capture_default_str();
  app.add_option("--backend", f->backend, kBackendHelp)->capture_default_str();
  app.add_option("--threads", f->threads, "Worker threads (0 = all cores)");
  AddNumaNodeFlag(app, &f->numa_node);
  return [f, prompt, ids]() {
    if (prompt->count() == 0 && ids->count() == 0) {
      std::fprintf(stderr, "k3 generate: give --prompt or --prompt-ids\n");
      return 2;
    }
    base::Status status = RunGenerate(*f);
    if (!status.ok()) {
      K3_LOG(kError) << status.ToString();
      return 1;
    }
    return 0;
  };
}

}  // namespace k3::app
