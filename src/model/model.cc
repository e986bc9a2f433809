#include "model/model.h"

#include <chrono>
#include <limits>
#include <string>

#include "base/log.h"
#include "kernels/cpu_backend.h"
#include "kernels/matmul.h"
#include "model/families.h"
#include "model/forward_context.h"
#include "model/lm_head.h"

namespace k3::model {
namespace {

// "sequence i: what": built only when a check fails, so valid batches allocate nothing here.
base::Status Refuse(size_t i, const std::string& what, bool out_of_range = false) {
  const std::string message = "sequence " + std::to_string(i) + ": " + what;
  return out_of_range ? base::OutOfRange(message) : base::InvalidArgument(message);
}

kernels::MlaForm FormOf(const ForwardOptions& o, int64_t rows) {
  const bool naive = o.mla_mode == MlaMode::kNaive || (o.mla_mode == MlaMode::kAuto && rows > 1);
  if (!naive) return kernels::MlaForm::kAbsorbed;
  return rows >= o.mla_gemm_rows ? kernels::MlaForm::kNaiveGemm : kernels::MlaForm::kNaive;
}

// The batch laid out for the blocks, in host memory: rows per sequence, their MLA views, ids and
// positions per row.
struct BatchLayout {
  std::span<const SequenceRows> seqs;
  std::span<const kernels::PagedSequence> paged;
  std::span<const kernels::MlaSequence> mla;
  int32_t* ids = nullptr;
  int64_t* positions = nullptr;
  int64_t rows = 0;
};

BatchLayout LayOut(std::span<const SequenceInput> batch, const ForwardOptions& options,
                   base::Arena& host) {
  const size_t n = batch.size();
  BatchLayout out;
  for (const SequenceInput& s : batch) out.rows += static_cast<int64_t>(s.tokens.size());
  auto* seqs = host.Allocate<SequenceRows>(n);
  auto* paged = host.Allocate<kernels::PagedSequence>(n);
  auto* mla = host.Allocate<kernels::MlaSequence>(n);
  out.ids = host.Allocate<int32_t>(out.rows);
  out.positions = host.Allocate<int64_t>(out.rows);
  int64_t row = 0;
  for (size_t i = 0; i < n; ++i) {
    const SequenceInput& s = batch[i];
    const int64_t count = static_cast<int64_t>(s.tokens.size());
    seqs[i] = {row, count, s.start_position, s.state_slot, s.pages};
    paged[i] = {row, count, s.start_position, s.pages};
    mla[i] = {paged[i], FormOf(options, count)};
    for (int64_t t = 0; t < count; ++t) {
      out.ids[row + t] = s.tokens[t];
      out.positions[row + t] = s.start_position + t;
    }
    row += count;
  }
  out.seqs = {seqs, n};
  out.paged = {paged, n};
  out.mla = {mla, n};
  return out;
}

}  // namespace

Workspace::Workspace(kernels::Backend& backend) : kernels_(backend.MakeWorkspace()) {}

Model::Model(weights::Checkpoint checkpoint, ModelConfig config, ModelWeights weights,
             std::unique_ptr<kernels::Backend> backend)
    : checkpoint_(std::move(checkpoint)),
      config_(std::move(config)),
      weights_(std::move(weights)),
      backend_(std::move(backend)) {
  if (config_.mla.rope.enabled) rope_.emplace(config_.mla.rope, config_.mla.qk_rope_dim);
  for (const LayerWeights& lw : weights_.layers) {
    experts_.push_back(lw.moe ? BuildExpertTable(lw.moe_weights) : ExpertTable{});
  }
}

Model::~Model() = default;

namespace {

// Opens `dir` with its shards placed as `pages` asks; logs where they went when that took long
// enough to notice.
base::Result<weights::Checkpoint> OpenCheckpoint(const std::filesystem::path& dir,
                                                 weights::MappedFile::Pages pages) {
  using Pages = weights::MappedFile::Pages;
  static const bool huge_available = weights::MappedFile::HugePagesAvailable();
  if (pages == Pages::kHuge && !huge_available) {
    K3_LOG(kWarning) << "transparent huge pages are off (/sys/kernel/mm/transparent_hugepage/"
                        "enabled): mapping the checkpoint files instead of reading them";
    pages = Pages::kFile;
  }
  const auto start = std::chrono::steady_clock::now();
  K3_ASSIGN_OR_RETURN(weights::Checkpoint checkpoint, weights::Checkpoint::Open(dir, pages));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (pages == Pages::kHuge && seconds > 0.5) {
    K3_LOG(kInfo) << "read " << checkpoint.mapped_bytes() / 1e9 << " GB of weights into 2 MiB "
                  << "pages in " << seconds << " s (--mmap-weights maps the files instead)";
  }
  return checkpoint;
}

}  // namespace

base::Result<std::unique_ptr<Model>> Model::Load(const std::filesystem::path& dir,
                                                 base::ThreadPool* pool, LoadOptions options) {
  return Load(dir, std::make_unique<kernels::CpuBackend>(pool), options, pool);
}

base::Result<std::unique_ptr<Model>> Model::Load(const std::filesystem::path& dir,
                                                 std::unique_ptr<kernels::Backend> backend,
                                                 LoadOptions options,
                                                 base::ThreadPool* quant_pool) {
  K3_CHECK(backend != nullptr) << "Model::Load needs a backend";
  K3_ASSIGN_OR_RETURN(weights::Checkpoint checkpoint, OpenCheckpoint(dir, options.pages));
  const WeightQuant quant = ResolveWeightQuant(options.quant);
  if (options.quant == WeightQuant::kAuto) K3_LOG(kInfo) << DescribeAutoWeightQuant();
  K3_ASSIGN_OR_RETURN(ModelConfig config, ParseModelConfig(checkpoint.config_json()));
  K3_ASSIGN_OR_RETURN(ModelWeights w, LoadModelWeights(checkpoint, config, quant_pool));
  // After each converted layer, everything of the checkpoint the model no longer reads is released
  // (the converted originals, the vectors copied at load, tensors no family reads): with kHuge the
  // whole checkpoint is private memory, which would otherwise hold the originals beside their
  // copies.
  uint64_t released = 0;
  const auto release = [&] { released += checkpoint.ReleaseExcept(MatrixBytes(w)); };
  if (quant == WeightQuant::kInt8) {
    const int changed = QuantizeDenseWeights(&w, quant_pool, release);
    K3_LOG(kInfo) << "--weight-quant int8: " << changed
                  << " dense projections re-quantised to int8 per 32"
                  << (kernels::MatMulHasInt8Dot()
                          ? std::string(" (W8A8 on ") + kernels::MatMulInt8DotName() + " dots)"
                          : std::string(" (no AVX2: dequantised per row group)"));
  }
  if (quant == WeightQuant::kBf16Panels && !kernels::Bf16PanelsRunFast()) {
    K3_LOG(kWarning) << "--weight-quant bf16-panels: no AVX-512 on this CPU, where the panels "
                        "would run on scalar code; the BF16 projections stay row-major";
  } else if (quant == WeightQuant::kBf16Panels) {
    const int changed = PackDenseWeightsIntoPanels(&w, quant_pool, release);
    K3_LOG(kInfo) << "--weight-quant bf16-panels: " << changed
                  << " BF16 projections repacked into column-pair panels (AVX-512 tiles)";
    if (kernels::GetGemmPrecision() == kernels::GemmPrecision::kBf16) {
      K3_LOG(kWarning) << "--gemm-precision bf16 does not apply to the repacked projections "
                          "(their products stay FP32); it still applies to the other weights";
    }
  }
  if (released > 0) {
    K3_LOG(kInfo) << "released the checkpoint memory the model no longer reads: "
                  << (released >= 1e9 ? released / 1e9 : released / 1e6)
                  << (released >= 1e9 ? " GB" : " MB");
  }
  return std::unique_ptr<Model>(
      new Model(std::move(checkpoint), std::move(config), std::move(w), std::move(backend)));
}

base::Status Model::Validate(std::span<const SequenceInput> batch, const KdaStatePool& states,
                             const MlaCache& cache) const {
  for (size_t i = 0; i < batch.size(); ++i) {
    const SequenceInput& s = batch[i];
    if (s.tokens.empty()) return Refuse(i, "no tokens");
    for (int32_t id : s.tokens) {
      if (id < 0 || id >= config_.vocab) {
        return Refuse(i,
                      "token id " + std::to_string(id) + " outside [0, " +
                          std::to_string(config_.vocab) + ")",
                      true);
      }
    }
    if (s.start_position < 0) return Refuse(i, "negative start position");
    if (s.num_logit_rows < 0 || s.num_logit_rows > static_cast<int64_t>(s.tokens.size())) {
      return Refuse(i, "num_logit_rows " + std::to_string(s.num_logit_rows) + " outside [0, " +
                           std::to_string(s.tokens.size()) + "]");
    }
    if (config_.num_kda_layers() > 0 && (s.state_slot < 0 || s.state_slot >= states.num_slots())) {
      return Refuse(i, "state slot " + std::to_string(s.state_slot) + " out of range");
    }
    if (config_.num_mla_layers() > 0) {
      const int64_t len = s.start_position + static_cast<int64_t>(s.tokens.size());
      const int64_t needed = (len + cache.page_size() - 1) / cache.page_size();
      if (static_cast<int64_t>(s.pages.size()) < needed) {
        return Refuse(i, "needs " + std::to_string(needed) + " cache pages, got " +
                             std::to_string(s.pages.size()));
      }
      for (int32_t page : s.pages) {
        if (page < 0 || page >= cache.num_pages()) {
          return Refuse(i, "cache page " + std::to_string(page) + " out of range");
        }
      }
    }
  }
  return base::Status::Ok();
}

base::Status Model::Forward(std::span<const SequenceInput> batch, const ForwardOptions& options,
                            const ForwardMemory& memory, ForwardResult* result) const {
  K3_RETURN_IF_ERROR(Validate(batch, memory.states, memory.cache));
  Workspace& ws = memory.workspace;
  ws.kernels_.Reset();
  ws.host_.Reset();
  const BatchLayout layout = LayOut(batch, options, ws.host_);
  kernels::Backend& b = *backend_;
  const int64_t rows = layout.rows;
  // Per-row inputs of the kernels, in backend memory.
  auto* positions = ws.kernels_.arena().Allocate<int64_t>(rows);
  b.CopyToDevice(positions, layout.positions, rows * sizeof(int64_t));
  float* host_gaps = ws.host_.Allocate<float>(rows);
  std::fill(host_gaps, host_gaps + rows, std::numeric_limits<float>::infinity());
  float* gaps = ws.kernels_.arena().Allocate<float>(rows);
  b.CopyToDevice(gaps, host_gaps, rows * sizeof(float));
  const ForwardContext ctx{.config = config_,
                           .options = options,
                           .backend = b,
                           .ws = ws.kernels_,
                           .host = ws.host_,
                           .seqs = layout.seqs,
                           .rows = rows,
                           .paged = layout.paged,
                           .mla_seqs = layout.mla,
                           .token_ids = layout.ids,
                           .positions = positions,
                           .states = memory.states,
                           .cache = memory.cache,
                           .rope = rope_ ? &*rope_ : nullptr,
                           .experts = experts_,
                           .router_gaps = gaps};
  float* hidden = ctx.Scratch<float>(rows * config_.hidden);  // [rows, hidden]
  Embed(ctx, weights_.embed, hidden);
  const float* final_input = GraphOf(config_.family).forward(ctx, weights_, hidden);
  LmHead(ctx, weights_, batch, final_input, result);
  return base::Status::Ok();
}

base::Status Model::Forward(std::span<const SequenceInput> batch, const ForwardOptions& options,
                            KdaStatePool& states, MlaCache& cache, ForwardResult* result) const {
  Workspace workspace = MakeWorkspace();
  return Forward(batch, options, {states, cache, workspace}, result);
}

}  // namespace k3::model
