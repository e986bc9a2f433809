// Fuzzes ParseSafetensorsHeader with arbitrary bytes, read two ways: (1) the input as a whole
// file, and (2) the input as [data length d (1 byte)] [header JSON] [d data bytes] with a correct
// length prefix added, so mutations of the JSON are not wasted on a mismatched prefix. Parsing must
// never crash, leak or fail other than with DATA_LOSS; a header it accepts must describe byte
// ranges that lie inside the file, match their shapes and never overlap.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/check.h"
#include "tensor/dtype.h"
#include "weights/safetensors.h"

namespace {

using k3::weights::SafetensorsEntry;
using k3::weights::SafetensorsHeader;

void CheckEntry(const SafetensorsEntry& e, const SafetensorsHeader& h, size_t file_size) {
  K3_CHECK(!e.name.empty());
  K3_CHECK(e.begin >= h.data_begin && e.begin <= e.end && e.end <= file_size)
      << e.name << " [" << e.begin << ", " << e.end << ") in a " << file_size << "-byte file";
  unsigned __int128 numel = 1;
  unsigned __int128 nonzero = 1;
  for (int64_t d : e.shape) {
    K3_CHECK(d >= 0) << e.name;
    numel *= static_cast<uint64_t>(d);
    if (d != 0) nonzero *= static_cast<uint64_t>(d);
    K3_CHECK(nonzero <= INT64_MAX) << e.name << ": TensorView::numel() could overflow";
  }
  K3_CHECK(numel * k3::tensor::DTypeSize(e.dtype) == e.end - e.begin) << e.name;
}

void CheckParse(std::span<const std::byte> file) {
  auto parsed = k3::weights::ParseSafetensorsHeader(file);
  if (!parsed.ok()) {
    K3_CHECK(parsed.status().code() == k3::base::StatusCode::kDataLoss)
        << parsed.status().ToString();
    K3_CHECK(!parsed.status().message().empty());
    return;
  }
  const SafetensorsHeader& h = *parsed;
  K3_CHECK(h.header_bytes <= k3::weights::kMaxSafetensorsHeaderBytes);
  K3_CHECK(h.data_begin == 8 + h.header_bytes && h.data_begin <= file.size());
  std::vector<const SafetensorsEntry*> ranges;
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    const SafetensorsEntry& e = h.tensors[i];
    CheckEntry(e, h, file.size());
    K3_CHECK(i == 0 || h.tensors[i - 1].name < e.name) << "names not sorted and unique";
    if (e.begin != e.end) ranges.push_back(&e);
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const auto* a, const auto* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < ranges.size(); ++i) {
    K3_CHECK(ranges[i - 1]->end <= ranges[i]->begin)
        << ranges[i - 1]->name << " overlaps " << ranges[i]->name;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  CheckParse(std::as_bytes(std::span(data, size)));
  if (size == 0) return 0;
  // Reading (2): a correct length prefix in front of the JSON.
  size_t data_bytes = std::min<size_t>(data[0], size - 1);
  uint64_t n = size - 1 - data_bytes;
  std::vector<std::byte> file(8);
  for (int i = 0; i < 8; ++i) file[i] = static_cast<std::byte>((n >> (8 * i)) & 0xFF);
  auto rest = std::as_bytes(std::span(data + 1, size - 1));
  file.insert(file.end(), rest.begin(), rest.end());
  CheckParse(file);
  return 0;
}
