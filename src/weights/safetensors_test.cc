#include "weights/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tensor/numeric.h"
#include "tensor/tensor_view.h"
#include "weights/mapped_file.h"
#include "weights/test_util.h"

namespace k3::weights {
namespace {

using tensor::DType;
using testing::AsBytes;
using testing::RawSafetensors;
using testing::TempDir;

constexpr DType kAllDTypes[] = {
    DType::kBool, DType::kU8,   DType::kI8,  DType::kU16,    DType::kI16,    DType::kU32,
    DType::kI32,  DType::kU64,  DType::kI64, DType::kF8E4M3, DType::kF8E5M2, DType::kE8M0,
    DType::kF16,  DType::kBF16, DType::kF32, DType::kF64,
};

std::vector<std::byte> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> out(n);
  for (auto& b : out) b = static_cast<std::byte>(rng() & 0xFF);
  return out;
}

std::string Slice(std::span<const std::byte> file, const SafetensorsEntry& e) {
  return std::string(reinterpret_cast<const char*>(file.data()) + e.begin, e.end - e.begin);
}

std::string Str(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

TEST(SafetensorsTest, RoundTripsEveryDType) {
  TempDir tmp;
  std::vector<std::vector<std::byte>> data;
  std::vector<TensorToWrite> tensors;
  for (DType dtype : kAllDTypes) {
    std::vector<int64_t> shape = {3, 5};
    data.push_back(RandomBytes(15 * tensor::DTypeSize(dtype), data.size()));
    tensors.push_back({"t." + std::string(tensor::DTypeName(dtype)), dtype, shape, data.back()});
  }
  ASSERT_TRUE(WriteSafetensors(tmp.path() / "all.safetensors", tensors).ok());
  auto file = MappedFile::Open(tmp.path() / "all.safetensors");
  ASSERT_TRUE(file.ok());
  auto header = ParseSafetensorsHeader(file->bytes());
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  EXPECT_EQ(header->header_bytes % 8, 0u);
  EXPECT_EQ(header->data_begin, 8 + header->header_bytes);
  ASSERT_EQ(header->tensors.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorToWrite& want = tensors[i];
    auto it = std::find_if(header->tensors.begin(), header->tensors.end(),
                           [&](const SafetensorsEntry& e) { return e.name == want.name; });
    ASSERT_NE(it, header->tensors.end()) << want.name;
    EXPECT_EQ(it->dtype, want.dtype) << want.name;
    EXPECT_EQ(it->shape, want.shape) << want.name;
    EXPECT_EQ(Slice(file->bytes(), *it), Str(want.bytes)) << want.name;
    EXPECT_EQ(it->begin % tensor::DTypeSize(it->dtype), 0u) << want.name << " is misaligned";
  }
  for (size_t i = 1; i < header->tensors.size(); ++i)
    EXPECT_LT(header->tensors[i - 1].name, header->tensors[i].name);
}

TEST(SafetensorsTest, RoundTripsNarrowFloatValues) {
  TempDir tmp;
  const std::vector<float> values = {0.0f, 1.0f, -2.5f, 448.0f, 0.015625f, -0.25f};
  std::vector<uint16_t> bf16;
  std::vector<uint8_t> e4m3;
  for (float v : values) {
    bf16.push_back(tensor::FloatToBf16(v));
    e4m3.push_back(tensor::FloatToE4M3(v));
  }
  const int64_t n = static_cast<int64_t>(values.size());
  std::vector<TensorToWrite> tensors = {
      {"e4m3", DType::kF8E4M3, {n}, std::as_bytes(std::span(e4m3))},
      {"bf16", DType::kBF16, {2, n / 2}, std::as_bytes(std::span(bf16))},
      {"f32", DType::kF32, {n}, std::as_bytes(std::span(values))},
  };
  ASSERT_TRUE(WriteSafetensors(tmp.path() / "f.safetensors", tensors).ok());
  auto file = MappedFile::Open(tmp.path() / "f.safetensors");
  ASSERT_TRUE(file.ok());
  auto header = ParseSafetensorsHeader(file->bytes());
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  ASSERT_EQ(header->tensors.size(), 3u);  // sorted: bf16, e4m3, f32
  const auto& [bf, e4, f32] = std::tie(header->tensors[0], header->tensors[1], header->tensors[2]);
  EXPECT_EQ(f32.begin, header->data_begin);  // the largest element size goes first
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t b;
    std::memcpy(&b, file->bytes().data() + bf.begin + 2 * i, 2);
    EXPECT_EQ(tensor::Bf16ToFloat(b), values[i]);
    EXPECT_EQ(tensor::E4M3ToFloat(std::to_integer<uint8_t>(file->bytes()[e4.begin + i])),
              values[i]);
    float f;
    std::memcpy(&f, file->bytes().data() + f32.begin + 4 * i, 4);
    EXPECT_EQ(f, values[i]);
  }
}

TEST(SafetensorsTest, WritesTheStandardLayout) {
  TempDir tmp;
  const std::vector<uint8_t> bytes = {1, 2, 3};
  std::vector<TensorToWrite> tensors = {{"x", DType::kU8, {3}, std::as_bytes(std::span(bytes))}};
  ASSERT_TRUE(WriteSafetensors(tmp.path() / "x.safetensors", tensors, {{"format", "pt"}}).ok());
  std::string file = testing::ReadFile(tmp.path() / "x.safetensors");
  uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);  // little-endian host
  ASSERT_EQ(n % 8, 0u);
  ASSERT_EQ(file.size(), 8 + n + 3);
  std::string json = file.substr(8, n);
  EXPECT_EQ(json.substr(0, json.find_last_not_of(' ') + 1),
            R"({"__metadata__":{"format":"pt"},"x":{"data_offsets":[0,3],"dtype":"U8",)"
            R"("shape":[3]}})");
  EXPECT_EQ(file.substr(8 + n), "\x01\x02\x03");
  auto header = ParseSafetensorsHeader(AsBytes(file));
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  EXPECT_EQ(header->metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
}

TEST(SafetensorsTest, ScalarsEmptyTensorsAndEmptyFiles) {
  TempDir tmp;
  const std::vector<float> one = {3.5f};
  std::vector<TensorToWrite> tensors = {
      {"scalar", DType::kF32, {}, std::as_bytes(std::span(one))},
      {"empty", DType::kBF16, {0, 4}, {}},
      {"empty2", DType::kI64, {4, 0}, {}},
  };
  ASSERT_TRUE(WriteSafetensors(tmp.path() / "s.safetensors", tensors).ok());
  std::string file = testing::ReadFile(tmp.path() / "s.safetensors");
  auto header = ParseSafetensorsHeader(AsBytes(file));
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  ASSERT_EQ(header->tensors.size(), 3u);
  EXPECT_EQ(header->tensors[0].name, "empty");
  EXPECT_EQ(header->tensors[0].begin, header->tensors[0].end);
  EXPECT_TRUE(header->tensors[2].shape.empty());
  EXPECT_EQ(header->tensors[2].end - header->tensors[2].begin, 4u);

  ASSERT_TRUE(WriteSafetensors(tmp.path() / "none.safetensors", {}).ok());
  file = testing::ReadFile(tmp.path() / "none.safetensors");
  EXPECT_EQ(file.size(), 16u);  // "{}" padded to 8
  header = ParseSafetensorsHeader(AsBytes(file));
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  EXPECT_TRUE(header->tensors.empty());
}

TEST(SafetensorsTest, AcceptsPaddingTrailingBytesAndEmptyTensorsAnywhere) {
  // Zero-byte tensors own no bytes, so sharing an offset with another tensor is fine.
  std::string file = RawSafetensors(R"(  {"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                                    R"("z":{"dtype":"F32","shape":[0],"data_offsets":[2,2]}}   )",
                                    "abcdTRAILING");
  auto header = ParseSafetensorsHeader(AsBytes(file));
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  EXPECT_EQ(header->tensors.size(), 2u);
  EXPECT_EQ(Slice(AsBytes(file), header->tensors[0]), "abcd");
}

TEST(SafetensorsTest, WriterRejectsBadTensorsNamingThem) {
  TempDir tmp;
  const std::vector<float> six(6, 1.0f);
  auto bytes = std::as_bytes(std::span(six));
  struct Case {
    TensorToWrite tensor;
    std::string expected;
  };
  const Case cases[] = {
      {{"w", DType::kF32, {2, 2}, bytes}, "cannot write tensor 'w': 24 bytes given, shape [2, 2]"},
      {{"w", DType::kF32, {-2, -3}, bytes}, "tensor 'w': negative dimension -2"},
      {{"", DType::kF32, {6}, bytes}, "name is empty"},
      {{"__metadata__", DType::kF32, {6}, bytes}, "reserved"},
      {{"bad\xff", DType::kF32, {6}, bytes}, "not UTF-8"},
      {{"w", DType::kF32, {int64_t{1} << 62, 8}, bytes}, "needs too many"},
  };
  for (const Case& c : cases) {
    base::Status s = WriteSafetensors(tmp.path() / "bad.safetensors", std::span(&c.tensor, 1));
    EXPECT_EQ(s.code(), base::StatusCode::kInvalidArgument) << c.expected;
    EXPECT_NE(s.message().find(c.expected), std::string::npos) << s.message();
  }
  std::vector<TensorToWrite> twice = {{"w", DType::kF32, {6}, bytes},
                                      {"w", DType::kU8, {24}, bytes}};
  base::Status s = WriteSafetensors(tmp.path() / "bad.safetensors", twice);
  EXPECT_NE(s.message().find("tensor 'w': duplicate name"), std::string::npos) << s.message();
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "bad.safetensors"));
}

TEST(SafetensorsTest, WriterReportsIoErrorsNamingThePath) {
  TempDir tmp;
  std::filesystem::path path = tmp.path() / "no_such_dir" / "x.safetensors";
  base::Status s = WriteSafetensors(path, {});
  EXPECT_EQ(s.code(), base::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find(path.string()), std::string::npos) << s.message();
}

// Hand-crafted malformed files: each must fail with DATA_LOSS and a message naming the problem
// (and the tensor, where there is one).
struct MalformedCase {
  const char* what;
  std::string file;
  std::string expected;
};

std::string Entry(const std::string& name, const std::string& body) {
  return "{\"" + name + "\":" + body + "}";
}

// The 64-byte data section of the hand-crafted files.
constexpr std::string_view kData =
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";

// A file whose only entry is tensor 'w' with BODY.
std::string W(const std::string& body) { return RawSafetensors(Entry("w", body), kData); }

// Problems with the length prefix, the JSON as a whole, or several entries together.
std::vector<MalformedCase> FileCases() {
  return {
      {"empty file", "", "file is 0 bytes, too short"},
      {"short file", std::string("\x02\x00\x00", 3), "file is 3 bytes, too short"},
      {"absurd header length", std::string("\xff\xff\xff\xff\x00\x00\x00\x00{}", 10),
       "header length 4294967295 exceeds the limit"},
      {"header past the end", std::string("\x40\x00\x00\x00\x00\x00\x00\x00{}", 10),
       "header length 64 runs past the end of the 10-byte file"},
      {"not json", RawSafetensors("{\"w\": ", kData), "header is not valid JSON"},
      {"not utf-8", RawSafetensors("{\"w\xff\": 1}", kData), "header is not valid JSON"},
      {"array", RawSafetensors("[1, 2]", kData), "header is not a JSON object"},
      {"overlap",
       RawSafetensors(R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
                      R"("b":{"dtype":"U8","shape":[8],"data_offsets":[4,12]}})",
                      kData),
       "tensor 'b' overlaps tensor 'a'"},
      {"duplicate name",
       RawSafetensors(R"({"w":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
                      R"("w":{"dtype":"U8","shape":[8],"data_offsets":[8,16]}})",
                      kData),
       "tensor 'w' appears twice"},
      {"empty name",
       RawSafetensors(Entry("", R"({"dtype":"U8","shape":[1],"data_offsets":[0,1]})"), kData),
       "a tensor has an empty name"},
      {"metadata not an object", RawSafetensors(R"({"__metadata__":[1]})", kData),
       "\"__metadata__\" is not a JSON object"},
      {"metadata value not a string", RawSafetensors(R"({"__metadata__":{"format":1}})", kData),
       "\"__metadata__\" value for 'format' is not a string"},
  };
}

// Problems inside the entry of tensor 'w'.
std::vector<MalformedCase> EntryCases() {
  return {
      {"entry not an object", W("3"), "tensor 'w': entry is not a JSON object"},
      {"missing dtype", W(R"({"shape":[1],"data_offsets":[0,1]})"),
       "tensor 'w': missing \"dtype\""},
      {"dtype not a string", W(R"({"dtype":7,"shape":[1],"data_offsets":[0,1]})"),
       "tensor 'w': \"dtype\" is not a string"},
      {"unknown dtype", W(R"({"dtype":"F7","shape":[1],"data_offsets":[0,1]})"),
       "tensor 'w': unknown dtype 'F7'"},
      {"missing shape", W(R"({"dtype":"U8","data_offsets":[0,1]})"),
       "tensor 'w': missing \"shape\""},
      {"shape not an array", W(R"({"dtype":"U8","shape":1,"data_offsets":[0,1]})"),
       "tensor 'w': \"shape\" is not an array"},
      {"shape of strings", W(R"({"dtype":"U8","shape":["1"],"data_offsets":[0,1]})"),
       "tensor 'w': shape has a dimension that is not an integer"},
      {"fractional dim", W(R"({"dtype":"U8","shape":[1.5],"data_offsets":[0,1]})"),
       "tensor 'w': shape has a dimension that is not an integer"},
      {"negative dim", W(R"({"dtype":"U8","shape":[-2,-1],"data_offsets":[0,2]})"),
       "tensor 'w': negative dimension -2"},
      {"dim beyond int64",
       W(R"({"dtype":"U8","shape":[9223372036854775808],"data_offsets":[0,1]})"),
       "tensor 'w': dimension 9223372036854775808 too big"},
      {"overflowing product",
       W(R"({"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,1]})"),
       "tensor 'w': shape [4294967296, 4294967296] is too large"},
      {"overflow hidden by a zero dim",
       W(R"({"dtype":"U8","shape":[4294967296,4294967296,0],"data_offsets":[0,0]})"),
       "tensor 'w': shape [4294967296, 4294967296, 0] is too large"},
      {"bytes overflow", W(R"({"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,1]})"),
       "tensor 'w': shape [4611686018427387904] is too large"},
      {"missing offsets", W(R"({"dtype":"U8","shape":[1]})"),
       "tensor 'w': missing \"data_offsets\""},
      {"one offset", W(R"({"dtype":"U8","shape":[1],"data_offsets":[0]})"),
       "tensor 'w': \"data_offsets\" is not an array of two integers"},
      {"negative offset", W(R"({"dtype":"U8","shape":[1],"data_offsets":[-1,0]})"),
       "tensor 'w': \"data_offsets\" are not non-negative integers"},
      {"begin after end", W(R"({"dtype":"U8","shape":[1],"data_offsets":[5,4]})"),
       "tensor 'w': data_offsets [5, 4] begin after end"},
      {"end past the data", W(R"({"dtype":"U8","shape":[65],"data_offsets":[0,65]})"),
       "tensor 'w': data_offsets [0, 65] run past the data section (64 bytes"},
      {"huge offsets", W(R"({"dtype":"U8","shape":[1],"data_offsets":[1,18446744073709551616]})"),
       "tensor 'w': \"data_offsets\" are not non-negative integers"},
      {"size mismatch", W(R"({"dtype":"F32","shape":[2,3],"data_offsets":[0,20]})"),
       "tensor 'w': data_offsets span 20 bytes, but shape [2, 3] of F32 needs 24"},
  };
}

TEST(SafetensorsTest, RejectsMalformedHeaders) {
  std::vector<MalformedCase> cases = FileCases();
  for (MalformedCase& c : EntryCases()) cases.push_back(std::move(c));
  for (const MalformedCase& c : cases) {
    auto header = ParseSafetensorsHeader(AsBytes(c.file));
    ASSERT_FALSE(header.ok()) << c.what;
    EXPECT_EQ(header.status().code(), base::StatusCode::kDataLoss) << c.what;
    EXPECT_NE(header.status().message().find(c.expected), std::string::npos)
        << c.what << ": " << header.status().message();
  }
}

TEST(SafetensorsTest, TruncatedFileNamesTheTensorThatRunsOff) {
  TempDir tmp;
  std::vector<std::byte> a = RandomBytes(64, 1), b = RandomBytes(32, 2);
  std::vector<TensorToWrite> tensors = {{"layer.0.w", DType::kF32, {4, 4}, a},
                                        {"layer.1.w", DType::kBF16, {16}, b}};
  ASSERT_TRUE(WriteSafetensors(tmp.path() / "t.safetensors", tensors).ok());
  std::string file = testing::ReadFile(tmp.path() / "t.safetensors");
  ASSERT_TRUE(ParseSafetensorsHeader(AsBytes(file)).ok());
  // F32 first, then BF16: cutting 1 byte breaks only the BF16 tensor.
  auto cut = ParseSafetensorsHeader(AsBytes(std::string_view(file).substr(0, file.size() - 1)));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("tensor 'layer.1.w': data_offsets [64, 96] run past"),
            std::string::npos)
      << cut.status().message();
  // Cut inside the header: the length now runs past the end.
  cut = ParseSafetensorsHeader(AsBytes(std::string_view(file).substr(0, 20)));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("runs past the end"), std::string::npos);
}

TEST(SafetensorsTest, LongNamesAreCutInMessages) {
  std::string name(5000, 'n');
  std::string file =
      RawSafetensors(Entry(name, R"({"dtype":"F7","shape":[1],"data_offsets":[0,1]})"), "x");
  auto header = ParseSafetensorsHeader(AsBytes(file));
  ASSERT_FALSE(header.ok());
  EXPECT_LT(header.status().message().size(), 400u);
  EXPECT_NE(header.status().message().find("(5000 bytes)"), std::string::npos);
}

}  // namespace
}  // namespace k3::weights
