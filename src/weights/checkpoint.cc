#include "weights/checkpoint.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>
#include <utility>

#include "weights/mapped_file.h"
#include "weights/safetensors.h"

namespace k3::weights {
namespace {

constexpr char kIndexFile[] = "model.safetensors.index.json";
constexpr char kSingleFile[] = "model.safetensors";

using Interval = std::pair<uint64_t, uint64_t>;  // [begin, end) offsets in a shard file

struct TensorLocation {
  size_t shard = 0;  // index into Impl::shards
  tensor::DType dtype = tensor::DType::kF32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // absolute offsets in the shard file
  uint64_t end = 0;
};

struct Shard {
  MappedFile file;
  SafetensorsHeader header;
};

base::Result<Shard> LoadShard(const std::filesystem::path& path, MappedFile::Pages pages) {
  K3_ASSIGN_OR_RETURN(MappedFile file, MappedFile::Open(path, pages));
  base::Result<SafetensorsHeader> header = ParseSafetensorsHeader(file.bytes());
  if (!header.ok()) return header.status().WithContext(path.string());
  return Shard{std::move(file), std::move(header).value()};
}

bool IsRegularFile(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);  // follows symlinks (Hugging Face caches)
}

// Shard names from the index must be plain file names inside the checkpoint folder.
base::Status CheckShardName(const std::string& tensor, const std::string& shard) {
  if (shard.empty() || shard == "." || shard == ".." ||
      shard.find_first_of(std::string_view("/\\\0", 3)) != std::string::npos)
    return base::DataLoss(std::string(kIndexFile) + ": tensor '" + tensor + "' names shard '" +
                          shard + "', which is not a file name inside the checkpoint folder");
  return base::Status::Ok();
}

// weight_map of the index: tensor name -> shard file name, each shard name checked.
base::Result<std::map<std::string, std::string>> ReadWeightMap(const std::filesystem::path& path) {
  K3_ASSIGN_OR_RETURN(MappedFile file, MappedFile::Open(path));
  std::string_view text(reinterpret_cast<const char*>(file.bytes().data()), file.size());
  nlohmann::json index = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (index.is_discarded() || !index.is_object())
    return base::DataLoss(path.string() + " is not a JSON object");
  auto it = index.find("weight_map");
  if (it == index.end() || !it->is_object())
    return base::DataLoss(path.string() + " has no \"weight_map\" object");
  std::map<std::string, std::string> weight_map;
  for (const auto& [tensor, shard] : it->items()) {
    if (!shard.is_string())
      return base::DataLoss(path.string() + ": shard of tensor '" + tensor + "' is not a string");
    K3_RETURN_IF_ERROR(CheckShardName(tensor, shard.get<std::string>()));
    weight_map[tensor] = shard.get<std::string>();
  }
  return weight_map;
}

// *.safetensors regular files in DIR, sorted by name.
base::Result<std::vector<std::filesystem::path>> ListShards(const std::filesystem::path& dir) {
  std::error_code ec;
  std::vector<std::filesystem::path> shards;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".safetensors" && IsRegularFile(it->path()))
      shards.push_back(it->path());
  }
  if (ec) return base::NotFound("cannot list " + dir.string() + ": " + ec.message());
  if (shards.empty())
    return base::NotFound(dir.string() + " has no " + kIndexFile + ", " + kSingleFile +
                          " or other *.safetensors file");
  std::sort(shards.begin(), shards.end());
  return shards;
}

const SafetensorsEntry* FindEntry(const SafetensorsHeader& header, std::string_view name) {
  auto it =
      std::lower_bound(header.tensors.begin(), header.tensors.end(), name,
                       [](const SafetensorsEntry& e, std::string_view n) { return e.name < n; });
  return it != header.tensors.end() && it->name == name ? &*it : nullptr;
}

TensorLocation Locate(size_t shard, const SafetensorsEntry& entry) {
  return {shard, entry.dtype, entry.shape, entry.begin, entry.end};
}

}  // namespace

struct Checkpoint::Impl {
  std::filesystem::path dir;
  std::string config_json;
  std::vector<MappedFile> shards;
  std::map<std::string, TensorLocation, std::less<>> tensors;
  uint64_t mapped_bytes = 0;
  MappedFile::Pages pages = MappedFile::Pages::kFile;
  // Per shard: released file ranges (whole release units), sorted and disjoint.
  std::vector<std::vector<Interval>> released;
  uint64_t released_bytes = 0;

  size_t AddShard(MappedFile file) {
    mapped_bytes += file.size();
    shards.push_back(std::move(file));
    return shards.size() - 1;
  }
  base::Status LoadIndexed(const std::filesystem::path& index_path);
  base::Status LoadAll(const std::vector<std::filesystem::path>& paths);

  bool IsReleased(const TensorLocation& t) const {
    if (released.empty() || t.begin == t.end) return false;
    const std::vector<Interval>& r = released[t.shard];
    auto it = std::upper_bound(r.begin(), r.end(), t.begin,
                               [](uint64_t at, const Interval& i) { return at < i.second; });
    return it != r.end() && it->first < t.end;
  }
};

// Maps each distinct shard of the weight_map once and places every listed tensor. Tensors a shard
// holds but the index does not list are not exposed.
base::Status Checkpoint::Impl::LoadIndexed(const std::filesystem::path& index_path) {
  K3_ASSIGN_OR_RETURN(auto weight_map, ReadWeightMap(index_path));
  std::map<std::string, std::pair<size_t, SafetensorsHeader>> loaded;  // shard name -> index
  for (const auto& [name, shard_name] : weight_map) {
    auto it = loaded.find(shard_name);
    if (it == loaded.end()) {
      base::Result<Shard> shard = LoadShard(dir / shard_name, pages);
      if (!shard.ok())
        return shard.status().WithContext(std::string(kIndexFile) + " shard '" + shard_name + "'");
      size_t id = AddShard(std::move(shard->file));
      it = loaded.emplace(shard_name, std::make_pair(id, std::move(shard->header))).first;
    }
    const SafetensorsEntry* entry = FindEntry(it->second.second, name);
    if (entry == nullptr)
      return base::DataLoss("tensor '" + name + "' is listed in " + kIndexFile + " for shard '" +
                            shard_name + "' but that shard does not hold it");
    tensors.emplace(name, Locate(it->second.first, *entry));
  }
  return base::Status::Ok();
}

// Every tensor of every shard; a name in two shards is ambiguous and rejected.
base::Status Checkpoint::Impl::LoadAll(const std::vector<std::filesystem::path>& paths) {
  std::vector<std::string> owner;  // shard file name per shard id, for messages
  for (const std::filesystem::path& path : paths) {
    K3_ASSIGN_OR_RETURN(Shard shard, LoadShard(path, pages));
    size_t id = AddShard(std::move(shard.file));
    owner.push_back(path.filename().string());
    for (const SafetensorsEntry& entry : shard.header.tensors) {
      auto [it, inserted] = tensors.emplace(entry.name, Locate(id, entry));
      if (!inserted)
        return base::DataLoss("tensor '" + entry.name + "' appears in both " +
                              owner[it->second.shard] + " and " + owner[id] + " in " +
                              dir.string());
    }
  }
  return base::Status::Ok();
}

Checkpoint::Checkpoint(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Checkpoint::Checkpoint(Checkpoint&&) noexcept = default;
Checkpoint& Checkpoint::operator=(Checkpoint&&) noexcept = default;
Checkpoint::~Checkpoint() = default;

base::Result<Checkpoint> Checkpoint::Open(const std::filesystem::path& dir,
                                          MappedFile::Pages pages) {
  auto impl = std::make_unique<Impl>();
  impl->dir = dir;
  impl->pages = pages;
  K3_ASSIGN_OR_RETURN(MappedFile config, MappedFile::Open(dir / "config.json"));
  impl->config_json.assign(reinterpret_cast<const char*>(config.bytes().data()), config.size());
  if (IsRegularFile(dir / kIndexFile)) {
    K3_RETURN_IF_ERROR(impl->LoadIndexed(dir / kIndexFile));
  } else if (IsRegularFile(dir / kSingleFile)) {
    K3_RETURN_IF_ERROR(impl->LoadAll({dir / kSingleFile}));
  } else {
    K3_ASSIGN_OR_RETURN(auto paths, ListShards(dir));
    K3_RETURN_IF_ERROR(impl->LoadAll(paths));
  }
  return Checkpoint(std::move(impl));
}

const std::filesystem::path& Checkpoint::dir() const { return impl_->dir; }
const std::string& Checkpoint::config_json() const { return impl_->config_json; }

bool Checkpoint::Contains(std::string_view name) const {
  return impl_->tensors.find(name) != impl_->tensors.end();
}

std::vector<std::string> Checkpoint::TensorNames() const {
  std::vector<std::string> names;
  names.reserve(impl_->tensors.size());
  for (const auto& [name, location] : impl_->tensors) names.push_back(name);
  return names;  // std::map order: sorted
}

base::Result<tensor::TensorView> Checkpoint::Get(std::string_view name) const {
  auto it = impl_->tensors.find(name);
  if (it == impl_->tensors.end())
    return base::NotFound("tensor '" + std::string(name) + "' is missing from the checkpoint (" +
                          impl_->dir.string() + ")");
  const TensorLocation& t = it->second;
  if (impl_->IsReleased(t))
    return base::Status(
        base::StatusCode::kFailedPrecondition,
        "tensor '" + std::string(name) + "' was released after the model converted it at load");
  std::span<const std::byte> file = impl_->shards[t.shard].bytes();
  return tensor::TensorView{t.dtype, t.shape, file.subspan(t.begin, t.end - t.begin)};
}

base::Result<tensor::TensorView> Checkpoint::Get(std::string_view name, tensor::DType dtype,
                                                 std::span<const int64_t> shape) const {
  K3_ASSIGN_OR_RETURN(tensor::TensorView view, Get(name));
  if (view.dtype != dtype)
    return base::InvalidArgument("tensor '" + std::string(name) + "' has dtype " +
                                 std::string(tensor::DTypeName(view.dtype)) + ", expected " +
                                 std::string(tensor::DTypeName(dtype)));
  if (!std::equal(view.shape.begin(), view.shape.end(), shape.begin(), shape.end()))
    return base::InvalidArgument("tensor '" + std::string(name) + "' has shape " +
                                 tensor::ShapeToString(view.shape) + ", expected " +
                                 tensor::ShapeToString(shape));
  return view;
}

uint64_t Checkpoint::mapped_bytes() const { return impl_->mapped_bytes; }
uint64_t Checkpoint::released_bytes() const { return impl_->released_bytes; }

namespace {

// Sorts and merges overlapping or touching intervals.
void Merge(std::vector<Interval>* v) {
  std::sort(v->begin(), v->end());
  std::vector<Interval> out;
  for (const Interval& i : *v) {
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  *v = std::move(out);
}

// [a, b) minus the sorted, disjoint `keep`.
std::vector<Interval> Subtract(Interval a, const std::vector<Interval>& keep) {
  std::vector<Interval> out;
  for (const Interval& k : keep) {
    if (k.second <= a.first || k.first >= a.second) continue;
    if (k.first > a.first) out.push_back({a.first, k.first});
    a.first = std::max(a.first, k.second);
  }
  if (a.first < a.second) out.push_back(a);
  return out;
}

}  // namespace

// Shard data starts page-aligned (mmap; 2 MiB-aligned for kHuge), so release units have the same
// boundaries in file offsets as in addresses. Cost: a binary search over the shards per live
// range (the loader passes every matrix's ranges after each layer).
uint64_t Checkpoint::ReleaseExcept(std::span<const std::span<const std::byte>> live) {
  Impl& impl = *impl_;
  const auto address = [](const std::byte* p) { return reinterpret_cast<uintptr_t>(p); };
  std::vector<std::pair<uintptr_t, size_t>> starts;  // shard data address -> index
  for (size_t i = 0; i < impl.shards.size(); ++i) {
    if (!impl.shards[i].bytes().empty())
      starts.emplace_back(address(impl.shards[i].bytes().data()), i);
  }
  std::sort(starts.begin(), starts.end());
  // The shard holding all of `bytes` and their offset in it; nullopt when none does.
  auto find = [&](std::span<const std::byte> bytes) -> std::optional<std::pair<size_t, uint64_t>> {
    auto it = std::upper_bound(starts.begin(), starts.end(),
                               std::make_pair(address(bytes.data()), impl.shards.size()));
    if (it == starts.begin()) return std::nullopt;
    const auto [start, shard] = *std::prev(it);
    const uintptr_t at = address(bytes.data());
    if (at + bytes.size() > start + impl.shards[shard].size()) return std::nullopt;
    return std::make_pair(shard, static_cast<uint64_t>(at - start));
  };
  std::vector<std::vector<Interval>> keep(impl.shards.size());
  for (std::span<const std::byte> bytes : live) {
    auto at = find(bytes);
    if (!at || bytes.empty()) continue;
    const uint64_t unit = impl.shards[at->first].ReleaseUnit();
    keep[at->first].push_back(
        {at->second / unit * unit, (at->second + bytes.size() + unit - 1) / unit * unit});
  }
  impl.released.resize(impl.shards.size());
  uint64_t released = 0;
  for (size_t s = 0; s < impl.shards.size(); ++s) {
    MappedFile& shard = impl.shards[s];
    keep[s].insert(keep[s].end(), impl.released[s].begin(), impl.released[s].end());  // once only
    Merge(&keep[s]);
    for (const Interval& piece : Subtract({0, shard.size()}, keep[s])) {
      const uint64_t n = shard.ReleasePages(piece.first, piece.second);
      if (n == 0) continue;
      released += n;
      const uint64_t unit = shard.ReleaseUnit();
      impl.released[s].push_back(
          {(piece.first + unit - 1) / unit * unit, (piece.first + unit - 1) / unit * unit + n});
    }
    Merge(&impl.released[s]);
  }
  impl.released_bytes += released;
  return released;
}

}  // namespace k3::weights
