// Op cases of paged MLA, once per latent cache dtype (fp32, bf16, fp8 E4M3): WriteLatentCache must
// store the same bytes as the reference's encoder, and the three attention forms must match the
// reference reading those same stored entries (each decoding them with its own code), within the
// fp32 tolerance: the cache's rounding is in the stored bytes both read, not between the two.
#include <vector>

#include "kernels/backend_conformance.h"
#include "kernels/reference/reference_backend.h"
#include "tensor/numeric.h"

namespace k3::kernels::conformance {
namespace {

struct MlaProblem {
  MlaShape shape;
  LatentDtype dtype = LatentDtype::kF32;
  int64_t page_size = 5, num_pages = 6, entry = 0, entry_bytes = 0, page_stride = 0;
  std::vector<int32_t> pages_a = {4, 1, 5}, pages_b = {0, 3, 2};
  std::vector<PagedSequence> seqs;  // row ranges of the batch
  std::vector<uint8_t> cache;       // [pages, 2 layers, page_size, entry_bytes]
  std::vector<float> q, entries, kv_b_absorbed;
  std::vector<uint16_t> kv_b_bf16;
};

MlaProblem MakeMla(std::mt19937& rng, LatentDtype dtype) {
  MlaProblem p;
  p.shape = {3, 16, 8, 12, 20, 0.17f};
  p.dtype = dtype;
  p.entry = p.shape.latent_dim + p.shape.rope_dim;
  p.entry_bytes = LatentEntryBytes(dtype, p.entry);
  p.page_stride = 2 * p.page_size * p.entry_bytes;  // as if two layers shared the pages
  // a: a fresh 7-token prompt; b: one decode token after 9 cached positions.
  p.seqs = {{0, 7, 0, p.pages_a}, {7, 1, 9, p.pages_b}};
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
  for (float x : Normal(rng, kv_rows * p.shape.latent_dim, 0.3f)) {
    p.kv_b_bf16.push_back(tensor::FloatToBf16(x));
  }
  p.kv_b_absorbed.resize(p.kv_b_bf16.size());
  AbsorbedKvB({WeightFormat::kBF16, kv_rows, p.shape.latent_dim, p.kv_b_bf16.data()}, p.shape,
              p.kv_b_absorbed.data());
  return p;
}

void MlaCase(CaseEnv& env, LatentDtype dtype) {
  const MlaProblem p = MakeMla(env.rng, dtype);
  const int64_t kv_rows = p.shape.heads * (p.shape.nope_dim + p.shape.value_dim);
  const std::string name = LatentDtypeName(dtype);
  for (MlaForm form : {MlaForm::kNaive, MlaForm::kNaiveGemm, MlaForm::kAbsorbed}) {
    const std::string what = name + " form " + std::to_string(static_cast<int>(form));
    std::vector<uint8_t> host_cache = p.cache;
    std::vector<float> want(8 * p.shape.heads * p.shape.value_dim);
    DeviceArray<uint8_t> cache(env.backend, p.cache);
    DeviceArray<float> q(env.backend, p.q), entries(env.backend, p.entries),
        kv_f32(env.backend, p.kv_b_absorbed), out(env.backend, std::vector<float>(want.size()));
    DeviceArray<uint16_t> kv_bf16(env.backend, p.kv_b_bf16);
    const int64_t layer = p.page_size * p.entry_bytes;  // the second layer's first entry
    const LatentCacheView view{cache.get() + layer, p.page_stride, p.page_size, p.entry, dtype};
    const LatentCacheView host_view{host_cache.data() + layer, p.page_stride, p.page_size, p.entry,
                                    dtype};
    env.backend.WriteLatentCache(view, p.seqs, entries.get());
    env.oracle.WriteLatentCache(host_view, p.seqs, p.entries.data());
    ExpectEqual(cache.Download(), host_cache, "WriteLatentCache " + name);
    const WeightMatrix kv_dev{WeightFormat::kBF16, kv_rows, p.shape.latent_dim, kv_bf16.get()};
    const WeightMatrix kv_host{WeightFormat::kBF16, kv_rows, p.shape.latent_dim,
                               p.kv_b_bf16.data()};
    std::vector<MlaSequence> seqs = {{p.seqs[0], form}, {p.seqs[1], form}};
    env.backend.MlaAttention({p.shape, q.get(), view, &kv_dev, kv_f32.get(), out.get()}, seqs,
                             env.backend_ws);
    env.oracle.MlaAttention(
        {p.shape, p.q.data(), host_view, &kv_host, p.kv_b_absorbed.data(), want.data()}, seqs,
        env.oracle_ws);
    ExpectNear(out.Download(), want, {2e-5, 1e-4}, "MlaAttention " + what);
  }
}

}  // namespace

std::vector<OpCase> MlaOpCases() {
  return {{"MlaAttention", [](CaseEnv& env) { MlaCase(env, LatentDtype::kF32); }},
          {"MlaAttentionBf16", [](CaseEnv& env) { MlaCase(env, LatentDtype::kBf16); }},
          {"MlaAttentionFp8E4m3", [](CaseEnv& env) { MlaCase(env, LatentDtype::kFp8E4m3); }}};
}

}  // namespace k3::kernels::conformance
