// Op cases of paged MLA, once per latent cache dtype (fp32, bf16, fp8 E4M3): WriteLatentCache must
// store the same bytes as the reference's encoder, and the three attention forms must match the
// reference reading those same stored entries (each decoding them with its own code), within the
// fp32 tolerance: the cache's rounding is in the stored bytes both read, not between the two.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/backend_conformance.h"
#include "kernels/mla_layout.h"
#include "kernels/reference/reference_backend.h"
#include "tensor/numeric.h"

namespace k3::kernels::conformance {
namespace {

// kv_b in one stored format: BF16, or FP8 E4M3 blocks of `block` (per-tile scales), or F32.
struct KvB {
  WeightFormat format = WeightFormat::kBF16;
  int64_t block = 0;
  std::vector<uint8_t> bytes;
  std::vector<float> scales;

  WeightMatrix Matrix(int64_t rows, int64_t cols) const {
    WeightMatrix w{format, rows, cols, bytes.data()};
    if (format == WeightFormat::kFp8Block) {
      w.block = block;
      w.block_scales = scales.data();
    }
    return w;
  }
};

// Values ~ N(0, 0.3) stored in `format`; FP8 tiles scaled so that their largest value maps to 448.
KvB MakeKvB(std::mt19937& rng, WeightFormat format, int64_t block, int64_t rows, int64_t cols) {
  const std::vector<float> values = Normal(rng, rows * cols, 0.3f);
  KvB kv{format, block, {}, {}};
  if (format == WeightFormat::kF32) {
    kv.bytes.resize(values.size() * 4);
    std::memcpy(kv.bytes.data(), values.data(), kv.bytes.size());
  } else if (format == WeightFormat::kBF16) {
    kv.bytes.resize(values.size() * 2);
    for (size_t i = 0; i < values.size(); ++i) {
      const uint16_t bits = tensor::FloatToBf16(values[i]);
      std::memcpy(&kv.bytes[2 * i], &bits, 2);
    }
  } else {
    const int64_t tr = (rows + block - 1) / block, tc = (cols + block - 1) / block;
    kv.scales.assign(tr * tc, 0.0f);
    for (int64_t i = 0; i < rows * cols; ++i) {
      float& s = kv.scales[(i / cols / block) * tc + i % cols / block];
      s = std::max(s, std::fabs(values[i]) / 448.0f);
    }
    kv.bytes.resize(values.size());
    for (int64_t i = 0; i < rows * cols; ++i) {
      kv.bytes[i] =
          tensor::FloatToE4M3(values[i] / kv.scales[(i / cols / block) * tc + i % cols / block]);
    }
  }
  return kv;
}

struct MlaProblem {
  MlaShape shape;
  LatentDtype dtype = LatentDtype::kF32;
  int64_t page_size = 5, num_pages = 6, entry = 0, entry_bytes = 0, page_stride = 0;
  std::vector<int32_t> pages_a = {4, 1, 5}, pages_b = {0, 3, 2};
  std::vector<PagedSequence> seqs;  // row ranges of the batch
  std::vector<uint8_t> cache;       // [pages, 2 layers, page_size, entry_bytes]
  std::vector<float> q, entries;
  KvB kv_b;
};

// past_b: positions cached before sequence b's decode token; past 9 the pages grow to 64 slots,
// enough for the absorbed form's blocks of 256 entries (AttendRow) to be several.
MlaProblem MakeMla(std::mt19937& rng, LatentDtype dtype, WeightFormat kv_format, int64_t block,
                   int64_t heads, int64_t past_b) {
  MlaProblem p;
  p.shape = {heads, 16, 8, 12, 20, 0.17f};
  if (past_b > 9) {
    p.page_size = 64;
    p.num_pages = 16;
    p.pages_a = {15, 3};
    p.pages_b = {0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  }
  p.dtype = dtype;
  p.entry = p.shape.latent_dim + p.shape.rope_dim;
  p.entry_bytes = LatentEntryBytes(dtype, p.entry);
  p.page_stride = 2 * p.page_size * p.entry_bytes;  // as if two layers shared the pages
  // a: a fresh 7-token prompt; b: one decode token after 9 cached positions.
  p.seqs = {{0, 7, 0, p.pages_a}, {7, 1, past_b, p.pages_b}};
  // Every slot holds a valid stored entry (random floats, encoded); k_pe 4x larger than c_kv, as
  // an unnormalised rotated key can be.
  const int64_t slots = p.num_pages * 2 * p.page_size;
  std::vector<float> initial = Normal(rng, slots * p.entry);
  for (int64_t i = 0; i < slots * p.entry; ++i) initial[i] *= i % p.entry < 20 ? 1.0f : 4.0f;
  p.cache.resize(slots * p.entry_bytes);
  for (int64_t i = 0; i < slots; ++i) {
    reference::EncodeLatentEntry(dtype, &initial[i * p.entry], p.entry,
                                 &p.cache[i * p.entry_bytes]);
  }
  p.q = Normal(rng, 8 * p.shape.heads * p.shape.qk_dim());
  p.entries = Normal(rng, 8 * p.entry);
  p.entries[3] = 0.0f;    // exact zero
  p.entries[5] = 1e-30f;  // far below the fp8 entry's smallest subnormal step
  const int64_t kv_rows = p.shape.heads * (p.shape.nope_dim + p.shape.value_dim);
  p.kv_b = MakeKvB(rng, kv_format, block, kv_rows, p.shape.latent_dim);
  return p;
}

// kv_b's absorbed layout is built in host memory, as the model builds it at load (CPU backends
// read host memory).
// heads: 3 runs the absorbed form one head per task; 16 runs it in groups of heads (2 with the
// 3-thread pool, 8 on the calling thread alone: HeadsPerTask).
void MlaCase(CaseEnv& env, LatentDtype dtype, WeightFormat kv_format = WeightFormat::kBF16,
             int64_t block = 0, int64_t heads = 3, int64_t past_b = 9) {
  const MlaProblem p = MakeMla(env.rng, dtype, kv_format, block, heads, past_b);
  const int64_t kv_rows = p.shape.heads * (p.shape.nope_dim + p.shape.value_dim);
  const WeightMatrix kv_host = p.kv_b.Matrix(kv_rows, p.shape.latent_dim);
  const AbsorbedKvBStorage absorbed(kv_host, p.shape);
  const std::string name = std::string(LatentDtypeName(dtype)) + " kv_b format " +
                           std::to_string(static_cast<int>(kv_format)) + " block " +
                           std::to_string(block);
  for (MlaForm form : {MlaForm::kNaive, MlaForm::kNaiveGemm, MlaForm::kAbsorbed}) {
    const std::string what = name + " form " + std::to_string(static_cast<int>(form));
    std::vector<uint8_t> host_cache = p.cache;
    std::vector<float> want(8 * p.shape.heads * p.shape.value_dim);
    DeviceArray<uint8_t> cache(env.backend, p.cache);
    DeviceArray<float> q(env.backend, p.q), entries(env.backend, p.entries),
        out(env.backend, std::vector<float>(want.size()));
    DeviceArray<uint8_t> kv_bytes(env.backend, p.kv_b.bytes);
    DeviceArray<float> kv_scales(env.backend, p.kv_b.scales);
    const int64_t layer = p.page_size * p.entry_bytes;  // the second layer's first entry
    const LatentCacheView view{cache.get() + layer, p.page_stride, p.page_size, p.entry, dtype};
    const LatentCacheView host_view{host_cache.data() + layer, p.page_stride, p.page_size, p.entry,
                                    dtype};
    env.backend.WriteLatentCache(view, p.seqs, entries.get());
    env.oracle.WriteLatentCache(host_view, p.seqs, p.entries.data());
    ExpectEqual(cache.Download(), host_cache, "WriteLatentCache " + name);
    WeightMatrix kv_dev = kv_host;
    kv_dev.data = kv_bytes.get();
    if (kv_format == WeightFormat::kFp8Block) kv_dev.block_scales = kv_scales.get();
    std::vector<MlaSequence> seqs = {{p.seqs[0], form}, {p.seqs[1], form}};
    env.backend.MlaAttention({p.shape, q.get(), view, &kv_dev, absorbed.layout(), out.get()}, seqs,
                             env.backend_ws);
    env.oracle.MlaAttention(
        {p.shape, p.q.data(), host_view, &kv_host, absorbed.layout(), want.data()}, seqs,
        env.oracle_ws);
    ExpectNear(out.Download(), want, {2e-5, 1e-4}, "MlaAttention " + what);
  }
}

}  // namespace

std::vector<OpCase> MlaOpCases() {
  return {{"MlaAttention", [](CaseEnv& env) { MlaCase(env, LatentDtype::kF32); }},
          {"MlaAttentionBf16", [](CaseEnv& env) { MlaCase(env, LatentDtype::kBf16); }},
          {"MlaAttentionFp8E4m3", [](CaseEnv& env) { MlaCase(env, LatentDtype::kFp8E4m3); }},
          // kv_b in F32 and in FP8 blocks: 4 divides latent 20, nope 16 and value 12 (keys
          // transposed tile by tile, values read from kv_b's rows); 8 does not (both float32).
          {"MlaAttentionKvbF32",
           [](CaseEnv& env) { MlaCase(env, LatentDtype::kBf16, WeightFormat::kF32); }},
          {"MlaAttentionKvbFp8Tiles",
           [](CaseEnv& env) { MlaCase(env, LatentDtype::kBf16, WeightFormat::kFp8Block, 4); }},
          {"MlaAttentionKvbFp8Unaligned",
           [](CaseEnv& env) { MlaCase(env, LatentDtype::kF32, WeightFormat::kFp8Block, 8); }},
          {"MlaAttentionHeadGroupsBf16",
           [](CaseEnv& env) { MlaCase(env, LatentDtype::kBf16, WeightFormat::kBF16, 0, 16); }},
          {"MlaAttentionHeadGroupsF32",
           [](CaseEnv& env) { MlaCase(env, LatentDtype::kF32, WeightFormat::kBF16, 0, 16); }},
          {"MlaAttentionHeadGroupsFp8",
           [](CaseEnv& env) { MlaCase(env, LatentDtype::kFp8E4m3, WeightFormat::kBF16, 0, 16); }},
          // 700 cached positions: three blocks of the absorbed form's single pass (with random
          // scores, some of the 16 heads' running maxima grow in a later block).
          {"MlaAttentionLongContextBf16",
           [](CaseEnv& env) { MlaCase(env, LatentDtype::kBf16, WeightFormat::kBF16, 0, 16, 700); }},
          {"MlaAttentionLongContextF32",
           [](CaseEnv& env) { MlaCase(env, LatentDtype::kF32, WeightFormat::kBF16, 0, 3, 700); }}};
}

}  // namespace k3::kernels::conformance
