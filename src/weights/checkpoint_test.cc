#include "weights/checkpoint.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "weights/safetensors.h"
#include "weights/test_util.h"

namespace k3::weights {
namespace {

using tensor::DType;
using testing::TempDir;
using testing::WriteFile;

constexpr char kConfig[] = R"({"model_type": "kimi_linear", "hidden_size": 8})";

// A tensor to write plus the bytes it owns.
struct OwnedTensor {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;
};

OwnedTensor Random(std::string name, DType dtype, std::vector<int64_t> shape) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  std::mt19937 rng(static_cast<uint32_t>(std::hash<std::string>()(name)));
  std::vector<std::byte> bytes(static_cast<size_t>(numel) * tensor::DTypeSize(dtype));
  for (auto& b : bytes) b = static_cast<std::byte>(rng() & 0xFF);
  return {std::move(name), dtype, std::move(shape), std::move(bytes)};
}

void Write(const std::filesystem::path& path, const std::vector<OwnedTensor>& owned) {
  std::vector<TensorToWrite> tensors;
  for (const OwnedTensor& t : owned) tensors.push_back({t.name, t.dtype, t.shape, t.bytes});
  base::Status s = WriteSafetensors(path, tensors);
  ASSERT_TRUE(s.ok()) << s.ToString();
}

// Index JSON for name -> shard pairs.
std::string Index(const std::vector<std::pair<std::string, std::string>>& weight_map) {
  std::string out = R"({"metadata": {"total_size": 0}, "weight_map": {)";
  for (size_t i = 0; i < weight_map.size(); ++i) {
    out += (i ? ", \"" : "\"") + weight_map[i].first + "\": \"" + weight_map[i].second + "\"";
  }
  return out + "}}";
}

void ExpectSameTensor(const Checkpoint& ckpt, const OwnedTensor& want) {
  auto view = ckpt.Get(want.name, want.dtype, want.shape);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->dtype, want.dtype);
  EXPECT_EQ(view->shape, want.shape);
  ASSERT_EQ(view->bytes.size(), want.bytes.size()) << want.name;
  EXPECT_TRUE(std::equal(want.bytes.begin(), want.bytes.end(), view->bytes.begin())) << want.name;
}

void ExpectError(const base::Result<Checkpoint>& ckpt, base::StatusCode code,
                 const std::vector<std::string>& parts) {
  ASSERT_FALSE(ckpt.ok());
  EXPECT_EQ(ckpt.status().code(), code) << ckpt.status().ToString();
  for (const std::string& part : parts)
    EXPECT_NE(ckpt.status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << ckpt.status().message();
}

uint64_t FileSize(const std::filesystem::path& path) { return std::filesystem::file_size(path); }

TEST(CheckpointTest, OpensASingleFile) {
  TempDir tmp;
  WriteFile(tmp.path() / "config.json", kConfig);
  std::vector<OwnedTensor> tensors = {Random("model.norm.weight", DType::kBF16, {8}),
                                      Random("lm_head.weight", DType::kF8E4M3, {4, 8}),
                                      Random("model.embed_tokens.weight", DType::kF32, {4, 8}),
                                      Random("experts.scale", DType::kE8M0, {4, 1})};
  Write(tmp.path() / "model.safetensors", tensors);
  auto ckpt = Checkpoint::Open(tmp.path());
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_EQ(ckpt->config_json(), kConfig);
  EXPECT_EQ(ckpt->dir(), tmp.path());
  EXPECT_EQ(ckpt->TensorNames(),
            (std::vector<std::string>{"experts.scale", "lm_head.weight",
                                      "model.embed_tokens.weight", "model.norm.weight"}));
  for (const OwnedTensor& t : tensors) ExpectSameTensor(*ckpt, t);
  EXPECT_TRUE(ckpt->Contains("lm_head.weight"));
  EXPECT_FALSE(ckpt->Contains("lm_head"));
  EXPECT_EQ(ckpt->mapped_bytes(), FileSize(tmp.path() / "model.safetensors"));
  auto view = ckpt->Get("model.embed_tokens.weight");
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->numel(), 32);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(view->data<float>()) % alignof(float), 0u);
}

TEST(CheckpointTest, ViewsSurviveMovingTheCheckpoint) {
  TempDir tmp;
  WriteFile(tmp.path() / "config.json", kConfig);
  OwnedTensor t = Random("w", DType::kI64, {3});
  Write(tmp.path() / "model.safetensors", {t});
  auto opened = Checkpoint::Open(tmp.path());
  ASSERT_TRUE(opened.ok());
  auto view = opened->Get("w");
  ASSERT_TRUE(view.ok());
  Checkpoint moved = std::move(opened).value();
  Checkpoint assigned = std::move(moved);
  EXPECT_EQ(assigned.Get("w")->bytes.data(), view->bytes.data());
  ExpectSameTensor(assigned, t);
}

// ReleaseExcept frees every whole release unit that no live view touches; from then on Get
// refuses every tensor with released bytes, and every other tensor reads as written.
TEST(CheckpointTest, ReleaseExceptKeepsLiveUnitsAndRefusesReleasedTensors) {
  TempDir tmp;
  WriteFile(tmp.path() / "config.json", kConfig);
  for (MappedFile::Pages pages : {MappedFile::Pages::kFile, MappedFile::Pages::kHuge}) {
    const int64_t u =
        pages == MappedFile::Pages::kHuge ? int64_t{2} << 20 : MappedFile::PageBytes();
    // a, b, c, d, e laid out in this order (the writer keeps the order given), b and d several
    // units long; the data section starts a header away from a unit boundary.
    std::vector<OwnedTensor> tensors = {
        Random("a", DType::kU8, {u / 2}), Random("b", DType::kU8, {5, u}),
        Random("c", DType::kU8, {3}), Random("d", DType::kU8, {4, u}),
        Random("e", DType::kU8, {2, u})};
    Write(tmp.path() / "model.safetensors", tensors);
    auto ckpt = Checkpoint::Open(tmp.path(), pages);
    ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
    auto bytes = [&](const char* name) { return ckpt->Get(name).value().bytes; };
    // Live: a, e, and d's first row (as a row range of a matrix would be).
    const std::span<const std::byte> d = bytes("d");
    const std::vector<std::span<const std::byte>> live = {bytes("a"), bytes("e"), d.first(64)};
    const uint64_t released = ckpt->ReleaseExcept(live);
    // a ends in unit 0, b ends and c and d's first row lie in unit 5, e starts in unit 9: units
    // 1-4 and 6-8 are released.
    EXPECT_EQ(released, 7 * static_cast<uint64_t>(u));
    EXPECT_EQ(ckpt->released_bytes(), released);
    for (const char* gone : {"b", "d"}) {
      auto view = ckpt->Get(gone);
      EXPECT_EQ(view.status().code(), base::StatusCode::kFailedPrecondition) << gone;
      EXPECT_NE(view.status().message().find(gone), std::string::npos);
    }
    EXPECT_EQ(std::memcmp(d.data(), tensors[3].bytes.data(), 64), 0) << "the live row is intact";
    for (size_t i : {0u, 2u, 4u}) ExpectSameTensor(*ckpt, tensors[i]);  // c shares d's live unit
    EXPECT_EQ(ckpt->ReleaseExcept(live), 0u) << "released memory counts once";
    EXPECT_EQ(ckpt->released_bytes(), released);
    // With nothing live, the rest goes too (but e's partial last unit).
    EXPECT_GT(ckpt->ReleaseExcept({}), 0u);
    EXPECT_EQ(ckpt->Get("a").status().code(), base::StatusCode::kFailedPrecondition);
  }
}

TEST(CheckpointTest, MissingConfigIsNotFound) {
  TempDir tmp;
  Write(tmp.path() / "model.safetensors", {Random("w", DType::kF32, {2})});
  ExpectError(Checkpoint::Open(tmp.path()), base::StatusCode::kNotFound,
              {(tmp.path() / "config.json").string()});
  ExpectError(Checkpoint::Open(tmp.path() / "absent"), base::StatusCode::kNotFound,
              {"config.json"});
}

TEST(CheckpointTest, GetChecksNameDTypeAndShape) {
  TempDir tmp;
  WriteFile(tmp.path() / "config.json", kConfig);
  Write(tmp.path() / "model.safetensors", {Random("w", DType::kBF16, {2, 3})});
  auto ckpt = Checkpoint::Open(tmp.path());
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();

  auto missing = ckpt->Get("nope");
  EXPECT_EQ(missing.status().code(), base::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "tensor 'nope' is missing from the checkpoint (" + tmp.path().string() + ")");

  const int64_t good[] = {2, 3}, transposed[] = {3, 2}, flat[] = {6};
  EXPECT_TRUE(ckpt->Get("w", DType::kBF16, good).ok());
  auto wrong_dtype = ckpt->Get("w", DType::kF16, good);
  EXPECT_EQ(wrong_dtype.status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong_dtype.status().message(), "tensor 'w' has dtype BF16, expected F16");
  auto wrong_shape = ckpt->Get("w", DType::kBF16, transposed);
  EXPECT_EQ(wrong_shape.status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong_shape.status().message(), "tensor 'w' has shape [2, 3], expected [3, 2]");
  EXPECT_EQ(ckpt->Get("w", DType::kBF16, flat).status().message(),
            "tensor 'w' has shape [2, 3], expected [6]");
  EXPECT_EQ(ckpt->Get("nope", DType::kBF16, good).status().code(), base::StatusCode::kNotFound);
}

// Two shards named by an index; shard 2 also holds a tensor the index does not list.
struct ShardedFixture {
  TempDir tmp;
  std::vector<OwnedTensor> shard1 = {Random("a.weight", DType::kBF16, {4, 4}),
                                     Random("b.weight", DType::kF32, {3})};
  std::vector<OwnedTensor> shard2 = {Random("c.weight", DType::kF8E4M3, {16}),
                                     Random("c.scale", DType::kU8, {2}),
                                     Random("unlisted", DType::kI32, {1})};
  std::filesystem::path s1 = tmp.path() / "model-00001-of-00002.safetensors";
  std::filesystem::path s2 = tmp.path() / "model-00002-of-00002.safetensors";

  ShardedFixture() {
    WriteFile(tmp.path() / "config.json", kConfig);
    Write(s1, shard1);
    Write(s2, shard2);
  }
  void WriteIndex(const std::vector<std::pair<std::string, std::string>>& weight_map) {
    WriteFile(tmp.path() / "model.safetensors.index.json", Index(weight_map));
  }
  void WriteGoodIndex() {
    WriteIndex({{"a.weight", s1.filename()},
                {"b.weight", s1.filename()},
                {"c.weight", s2.filename()},
                {"c.scale", s2.filename()}});
  }
};

TEST(CheckpointTest, OpensAShardedCheckpointThroughItsIndex) {
  ShardedFixture f;
  f.WriteGoodIndex();
  // A stray model.safetensors is ignored when the index exists.
  Write(f.tmp.path() / "model.safetensors", {Random("stray", DType::kF32, {1})});
  // Mapped, or read into 2 MiB pages: the same tensors either way.
  for (MappedFile::Pages pages : {MappedFile::Pages::kFile, MappedFile::Pages::kHuge}) {
    auto ckpt = Checkpoint::Open(f.tmp.path(), pages);
    ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
    EXPECT_EQ(ckpt->TensorNames(),
              (std::vector<std::string>{"a.weight", "b.weight", "c.scale", "c.weight"}));
    for (const OwnedTensor& t : f.shard1) ExpectSameTensor(*ckpt, t);
    ExpectSameTensor(*ckpt, f.shard2[0]);
    ExpectSameTensor(*ckpt, f.shard2[1]);
    EXPECT_FALSE(ckpt->Contains("unlisted"));
    EXPECT_FALSE(ckpt->Contains("stray"));
    EXPECT_EQ(ckpt->mapped_bytes(), FileSize(f.s1) + FileSize(f.s2));  // each shard read once
  }
}

TEST(CheckpointTest, IndexNamingAMissingShardIsNotFound) {
  ShardedFixture f;
  f.WriteIndex({{"a.weight", f.s1.filename()}, {"z.weight", "model-00003-of-00002.safetensors"}});
  ExpectError(Checkpoint::Open(f.tmp.path()), base::StatusCode::kNotFound,
              {"model-00003-of-00002.safetensors", "model.safetensors.index.json"});
}

TEST(CheckpointTest, IndexNamingATensorAbsentFromItsShardIsDataLoss) {
  ShardedFixture f;
  f.WriteIndex({{"a.weight", f.s1.filename()}, {"c.weight", f.s1.filename()}});
  ExpectError(Checkpoint::Open(f.tmp.path()), base::StatusCode::kDataLoss,
              {"tensor 'c.weight'", "shard 'model-00001-of-00002.safetensors'"});
}

TEST(CheckpointTest, TruncatedShardIsDataLossNamingShardAndTensor) {
  ShardedFixture f;
  f.WriteGoodIndex();
  std::string bytes = testing::ReadFile(f.s2);
  WriteFile(f.s2, std::string_view(bytes).substr(0, bytes.size() - 1));  // c.scale (U8) is last
  ExpectError(Checkpoint::Open(f.tmp.path()), base::StatusCode::kDataLoss,
              {f.s2.string(), "tensor 'c.scale'", "run past the data section"});
  WriteFile(f.s2, std::string_view(bytes).substr(0, 5));
  ExpectError(Checkpoint::Open(f.tmp.path()), base::StatusCode::kDataLoss,
              {f.s2.string(), "too short"});
}

TEST(CheckpointTest, RejectsShardNamesOutsideTheFolder) {
  for (std::string bad : {"../model.safetensors", "sub/model.safetensors", "..", ".", "",
                          "/etc/passwd", "a\\\\b.safetensors"}) {
    ShardedFixture f;
    f.WriteIndex({{"a.weight", bad}});
    ExpectError(Checkpoint::Open(f.tmp.path()), base::StatusCode::kDataLoss,
                {"tensor 'a.weight' names shard", "not a file name inside the checkpoint folder"});
  }
}

TEST(CheckpointTest, RejectsMalformedIndexes) {
  ShardedFixture f;
  WriteFile(f.tmp.path() / "model.safetensors.index.json", "{\"weight_map\": ");
  ExpectError(Checkpoint::Open(f.tmp.path()), base::StatusCode::kDataLoss,
              {"model.safetensors.index.json is not a JSON object"});
  WriteFile(f.tmp.path() / "model.safetensors.index.json", R"({"metadata": {}})");
  ExpectError(Checkpoint::Open(f.tmp.path()), base::StatusCode::kDataLoss,
              {"has no \"weight_map\" object"});
  WriteFile(f.tmp.path() / "model.safetensors.index.json", R"({"weight_map": {"a.weight": 1}})");
  ExpectError(Checkpoint::Open(f.tmp.path()), base::StatusCode::kDataLoss,
              {"shard of tensor 'a.weight' is not a string"});
}

TEST(CheckpointTest, WithoutIndexUsesEverySafetensorsFile) {
  ShardedFixture f;
  WriteFile(f.tmp.path() / "notes.txt", "not a shard");
  auto ckpt = Checkpoint::Open(f.tmp.path());
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_EQ(ckpt->TensorNames(),
            (std::vector<std::string>{"a.weight", "b.weight", "c.scale", "c.weight", "unlisted"}));
  for (const OwnedTensor& t : f.shard1) ExpectSameTensor(*ckpt, t);
  for (const OwnedTensor& t : f.shard2) ExpectSameTensor(*ckpt, t);
  EXPECT_EQ(ckpt->mapped_bytes(), FileSize(f.s1) + FileSize(f.s2));
}

TEST(CheckpointTest, WithoutIndexATensorInTwoShardsIsDataLoss) {
  ShardedFixture f;
  Write(f.tmp.path() / "extra.safetensors", {Random("b.weight", DType::kF32, {3})});
  ExpectError(Checkpoint::Open(f.tmp.path()), base::StatusCode::kDataLoss,
              {"tensor 'b.weight' appears in both", "extra.safetensors",
               "model-00001-of-00002.safetensors"});
}

TEST(CheckpointTest, FolderWithoutWeightsIsNotFound) {
  TempDir tmp;
  WriteFile(tmp.path() / "config.json", kConfig);
  ExpectError(Checkpoint::Open(tmp.path()), base::StatusCode::kNotFound,
              {tmp.path().string(), "model.safetensors.index.json", "*.safetensors"});
}

TEST(CheckpointTest, EmptyTensorsHaveEmptyViews) {
  TempDir tmp;
  WriteFile(tmp.path() / "config.json", kConfig);
  Write(tmp.path() / "model.safetensors", {Random("e", DType::kF16, {0, 5})});
  auto ckpt = Checkpoint::Open(tmp.path());
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  auto view = ckpt->Get("e");
  ASSERT_TRUE(view.ok());
  EXPECT_TRUE(view->bytes.empty());
  EXPECT_EQ(view->numel(), 0);
}

}  // namespace
}  // namespace k3::weights
