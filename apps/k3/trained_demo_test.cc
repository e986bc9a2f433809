// The trained demo embedded in the binary is models/k3-demo/ byte for byte, is written whole
// (marker last) and rewritten when a file is damaged.
#include "apps/k3/trained_demo.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/staged_folder.h"

namespace k3::app {
namespace {

namespace fs = std::filesystem;

class TrainedDemoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("k3_trained_demo_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(TrainedDemoTest, EmbeddedFilesAreTheSourceTreeFiles) {
  int count = 0;
  const EmbeddedFile* files = TrainedDemoFiles(&count);
  ASSERT_EQ(count, 5);
  for (int i = 0; i < count; ++i) {
    auto source = base::ReadFileBytes(fs::path(K3_TRAINED_DEMO_DIR) / files[i].name);
    ASSERT_TRUE(source.ok()) << files[i].name;
    EXPECT_GT(files[i].bytes.size(), 0u) << files[i].name;
    EXPECT_TRUE(files[i].bytes == *source) << files[i].name << " differs from models/k3-demo";
  }
  EXPECT_EQ(TrainedDemoFingerprint().size(), 16u);
}

TEST_F(TrainedDemoTest, WritesEveryFileThenTheMarker) {
  EXPECT_FALSE(HasTrainedDemo(dir_));
  ASSERT_TRUE(WriteTrainedDemo(dir_).ok());
  EXPECT_TRUE(HasTrainedDemo(dir_));
  int count = 0;
  const EmbeddedFile* files = TrainedDemoFiles(&count);
  for (int i = 0; i < count; ++i) {
    auto written = base::ReadFileBytes(dir_ / files[i].name);
    ASSERT_TRUE(written.ok());
    EXPECT_TRUE(*written == files[i].bytes) << files[i].name;
  }
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, count + 1) << "the files and the marker, no staging folder left";
}

TEST_F(TrainedDemoTest, RewritesADamagedCopy) {
  ASSERT_TRUE(WriteTrainedDemo(dir_).ok());
  fs::resize_file(dir_ / "model.safetensors", 100);
  EXPECT_FALSE(HasTrainedDemo(dir_));
  ASSERT_TRUE(WriteTrainedDemo(dir_).ok());
  EXPECT_TRUE(HasTrainedDemo(dir_));
  EXPECT_GT(fs::file_size(dir_ / "model.safetensors"), 100u);
}

TEST_F(TrainedDemoTest, CacheFolderIsNamedByTheWeights) {
  const std::string leaf = DefaultTrainedDemoDir().filename().string();
  EXPECT_EQ(leaf, "k3-demo-" + std::string(TrainedDemoFingerprint()));
}

}  // namespace
}  // namespace k3::app
