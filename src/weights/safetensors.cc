#include "weights/safetensors.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "base/utf8.h"
#include "tensor/tensor_view.h"

namespace k3::weights {
namespace {

using nlohmann::json;

constexpr std::string_view kMetadataKey = "__metadata__";
constexpr uint64_t kMaxI64 = std::numeric_limits<int64_t>::max();

// 'NAME', cut short so a hostile 100 MB name cannot make a 100 MB message.
std::string Quoted(std::string_view name) {
  constexpr size_t kMaxShown = 200;
  // Built by appending: GCC 12 misreports `"'" + std::string(...)` under -Wrestrict.
  std::string out = "'";
  out.append(name.substr(0, kMaxShown));
  out += '\'';
  if (name.size() > kMaxShown) out.append("... (" + std::to_string(name.size()) + " bytes)");
  return out;
}

base::Status TensorError(std::string_view name, const std::string& what) {
  return base::DataLoss("tensor " + Quoted(name) + ": " + what);
}

// numel * DTypeSize(dtype), or nullopt when it does not fit. The product of the non-zero dims
// must fit in int64 too, so TensorView::numel() cannot overflow part-way even with a zero dim.
std::optional<uint64_t> ByteSize(std::span<const int64_t> shape, tensor::DType dtype) {
  uint64_t nonzero = 1;
  bool has_zero = false;
  for (int64_t d : shape) {
    if (d == 0) {
      has_zero = true;
      continue;
    }
    if (__builtin_mul_overflow(nonzero, static_cast<uint64_t>(d), &nonzero) || nonzero > kMaxI64)
      return std::nullopt;
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(nonzero, uint64_t{tensor::DTypeSize(dtype)}, &bytes) ||
      bytes > kMaxI64)
    return std::nullopt;
  return has_zero ? 0 : bytes;
}

// A JSON integer >= 0 (floats such as 2.0 are not integers here), or nullopt.
std::optional<uint64_t> NonNegativeInteger(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return v.get<uint64_t>();
  return std::nullopt;
}

base::Result<std::vector<int64_t>> ParseShape(std::string_view name, const json& entry) {
  auto it = entry.find("shape");
  if (it == entry.end()) return TensorError(name, "missing \"shape\"");
  if (!it->is_array()) return TensorError(name, "\"shape\" is not an array");
  std::vector<int64_t> shape;
  shape.reserve(it->size());
  for (const json& d : *it) {
    if (d.is_number_integer() && !d.is_number_unsigned() && d.get<int64_t>() < 0)
      return TensorError(name, "negative dimension " + std::to_string(d.get<int64_t>()));
    std::optional<uint64_t> dim = NonNegativeInteger(d);
    if (!dim) return TensorError(name, "shape has a dimension that is not an integer");
    if (*dim > kMaxI64) return TensorError(name, "dimension " + std::to_string(*dim) + " too big");
    shape.push_back(static_cast<int64_t>(*dim));
  }
  return shape;
}

base::Result<tensor::DType> ParseDType(std::string_view name, const json& entry) {
  auto it = entry.find("dtype");
  if (it == entry.end()) return TensorError(name, "missing \"dtype\"");
  if (!it->is_string()) return TensorError(name, "\"dtype\" is not a string");
  const std::string& text = it->get_ref<const std::string&>();
  std::optional<tensor::DType> dtype = tensor::DTypeFromName(text);
  if (!dtype) return TensorError(name, "unknown dtype " + Quoted(text));
  return *dtype;
}

// Relative [begin, end) from "data_offsets", checked against the data section's size.
base::Result<std::pair<uint64_t, uint64_t>> ParseOffsets(std::string_view name, const json& entry,
                                                         uint64_t data_size) {
  auto it = entry.find("data_offsets");
  if (it == entry.end()) return TensorError(name, "missing \"data_offsets\"");
  if (!it->is_array() || it->size() != 2)
    return TensorError(name, "\"data_offsets\" is not an array of two integers");
  std::optional<uint64_t> begin = NonNegativeInteger((*it)[0]);
  std::optional<uint64_t> end = NonNegativeInteger((*it)[1]);
  if (!begin || !end) return TensorError(name, "\"data_offsets\" are not non-negative integers");
  std::string range = "[" + std::to_string(*begin) + ", " + std::to_string(*end) + "]";
  if (*begin > *end) return TensorError(name, "data_offsets " + range + " begin after end");
  if (*end > data_size)
    return TensorError(name, "data_offsets " + range + " run past the data section (" +
                                 std::to_string(data_size) + " bytes; file truncated?)");
  return std::make_pair(*begin, *end);
}

base::Result<SafetensorsEntry> ParseEntry(const std::string& name, const json& entry,
                                          uint64_t data_begin, uint64_t file_size) {
  if (name.empty()) return base::DataLoss("a tensor has an empty name");
  if (!entry.is_object()) return TensorError(name, "entry is not a JSON object");
  SafetensorsEntry out;
  out.name = name;
  K3_ASSIGN_OR_RETURN(out.dtype, ParseDType(name, entry));
  K3_ASSIGN_OR_RETURN(out.shape, ParseShape(name, entry));
  std::optional<uint64_t> bytes = ByteSize(out.shape, out.dtype);
  if (!bytes)
    return TensorError(name, "shape " + tensor::ShapeToString(out.shape) + " is too large");
  K3_ASSIGN_OR_RETURN(auto offsets, ParseOffsets(name, entry, file_size - data_begin));
  if (offsets.second - offsets.first != *bytes)
    return TensorError(name, "data_offsets span " + std::to_string(offsets.second - offsets.first) +
                                 " bytes, but shape " + tensor::ShapeToString(out.shape) + " of " +
                                 std::string(tensor::DTypeName(out.dtype)) + " needs " +
                                 std::to_string(*bytes));
  out.begin = data_begin + offsets.first;
  out.end = data_begin + offsets.second;
  return out;
}

base::Status ParseMetadata(const json& value, std::map<std::string, std::string>* metadata) {
  if (!value.is_object()) return base::DataLoss("\"__metadata__\" is not a JSON object");
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string())
      return base::DataLoss("\"__metadata__\" value for " + Quoted(key) + " is not a string");
    (*metadata)[key] = v.get<std::string>();
  }
  return base::Status::Ok();
}

// Non-empty ranges must be disjoint (empty tensors own no bytes and may sit anywhere).
base::Status CheckNoOverlap(const std::vector<SafetensorsEntry>& tensors) {
  std::vector<const SafetensorsEntry*> by_begin;
  for (const SafetensorsEntry& t : tensors) {
    if (t.begin != t.end) by_begin.push_back(&t);
  }
  std::sort(by_begin.begin(), by_begin.end(),
            [](const auto* a, const auto* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_begin.size(); ++i) {
    if (by_begin[i]->begin < by_begin[i - 1]->end)
      return base::DataLoss("tensor " + Quoted(by_begin[i]->name) + " overlaps tensor " +
                            Quoted(by_begin[i - 1]->name) + " in the data section");
  }
  return base::Status::Ok();
}

// Parses the JSON, reporting a key that appears twice at the top level (the parser would
// silently keep the last one).
base::Result<json> ParseHeaderJson(std::string_view text) {
  std::optional<std::string> duplicate;
  std::set<std::string> keys;
  json::parser_callback_t on_event = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 && !duplicate &&
        !keys.insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  json header = json::parse(text, on_event, /*allow_exceptions=*/false);
  if (header.is_discarded()) return base::DataLoss("header is not valid JSON");
  if (!header.is_object()) return base::DataLoss("header is not a JSON object");
  if (duplicate) return base::DataLoss("tensor " + Quoted(*duplicate) + " appears twice");
  return header;
}

}  // namespace

base::Result<SafetensorsHeader> ParseSafetensorsHeader(std::span<const std::byte> file) {
  const uint64_t file_size = file.size();
  if (file_size < 8)
    return base::DataLoss("file is " + std::to_string(file_size) +
                          " bytes, too short for the 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | std::to_integer<uint64_t>(file[i]);
  if (n > kMaxSafetensorsHeaderBytes)
    return base::DataLoss("header length " + std::to_string(n) + " exceeds the limit of " +
                          std::to_string(kMaxSafetensorsHeaderBytes) + " bytes");
  if (n > file_size - 8)
    return base::DataLoss("header length " + std::to_string(n) + " runs past the end of the " +
                          std::to_string(file_size) + "-byte file (truncated?)");
  SafetensorsHeader out;
  out.header_bytes = n;
  out.data_begin = 8 + n;
  std::string_view text(reinterpret_cast<const char*>(file.data()) + 8, n);
  K3_ASSIGN_OR_RETURN(json header, ParseHeaderJson(text));
  out.tensors.reserve(header.size());
  for (const auto& [key, value] : header.items()) {
    if (key == kMetadataKey) {
      K3_RETURN_IF_ERROR(ParseMetadata(value, &out.metadata));
      continue;
    }
    K3_ASSIGN_OR_RETURN(SafetensorsEntry entry, ParseEntry(key, value, out.data_begin, file_size));
    out.tensors.push_back(std::move(entry));
  }
  // nlohmann::json objects iterate in key order, so `tensors` is already sorted by name.
  K3_RETURN_IF_ERROR(CheckNoOverlap(out.tensors));
  return out;
}

namespace {

base::Status ValidateForWrite(std::span<const TensorToWrite> tensors,
                              const std::map<std::string, std::string>& metadata) {
  std::set<std::string_view> names;
  for (const TensorToWrite& t : tensors) {
    std::string what = "cannot write tensor " + Quoted(t.name) + ": ";
    if (t.name.empty() || t.name == kMetadataKey || !base::IsValidUtf8(t.name))
      return base::InvalidArgument(what + "the name is empty, reserved or not UTF-8");
    if (!names.insert(t.name).second) return base::InvalidArgument(what + "duplicate name");
    for (int64_t d : t.shape) {
      if (d < 0) return base::InvalidArgument(what + "negative dimension " + std::to_string(d));
    }
    std::optional<uint64_t> bytes = ByteSize(t.shape, t.dtype);
    if (!bytes || *bytes != t.bytes.size())
      return base::InvalidArgument(what + std::to_string(t.bytes.size()) + " bytes given, shape " +
                                   tensor::ShapeToString(t.shape) + " of " +
                                   std::string(tensor::DTypeName(t.dtype)) + " needs " +
                                   (bytes ? std::to_string(*bytes) : "too many"));
  }
  for (const auto& [key, value] : metadata) {
    if (!base::IsValidUtf8(key) || !base::IsValidUtf8(value))
      return base::InvalidArgument("metadata entry " + Quoted(key) + " is not UTF-8");
  }
  return base::Status::Ok();
}

// Loops over short writes and EINTR.
bool WriteAll(int fd, const std::byte* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, std::min<size_t>(size, size_t{1} << 30));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;  // no progress and no reason: report it as an IO error
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

base::Status WriteSafetensors(const std::filesystem::path& path,
                              std::span<const TensorToWrite> tensors,
                              const std::map<std::string, std::string>& metadata) {
  K3_RETURN_IF_ERROR(ValidateForWrite(tensors, metadata));
  // Largest elements first keeps every tensor aligned to its element size.
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return tensor::DTypeSize(tensors[a].dtype) > tensor::DTypeSize(tensors[b].dtype);
  });
  json header = json::object();
  if (!metadata.empty()) header[std::string(kMetadataKey)] = metadata;
  uint64_t offset = 0;
  for (size_t i : order) {
    const TensorToWrite& t = tensors[i];
    header[t.name] = {{"dtype", tensor::DTypeName(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string text = header.dump(-1, ' ', false, json::error_handler_t::replace);
  text.append((8 - text.size() % 8) % 8, ' ');
  std::byte length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<std::byte>((text.size() >> (8 * i)) & 0xFF);

  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return base::DataLoss("cannot create " + path.string() + ": " + std::strerror(errno));
  bool ok = WriteAll(fd, length, sizeof length) &&
            WriteAll(fd, reinterpret_cast<const std::byte*>(text.data()), text.size());
  for (size_t i = 0; ok && i < order.size(); ++i)
    ok = WriteAll(fd, tensors[order[i]].bytes.data(), tensors[order[i]].bytes.size());
  int error = ok ? 0 : errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    ::unlink(path.c_str());
    return base::DataLoss("cannot write " + path.string() + ": " + std::strerror(error));
  }
  return base::Status::Ok();
}

}  // namespace k3::weights
