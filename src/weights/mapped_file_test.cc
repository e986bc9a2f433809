#include "weights/mapped_file.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "weights/test_util.h"

namespace k3::weights {
namespace {

using testing::TempDir;
using testing::WriteFile;

std::string Text(const MappedFile& file) {
  return std::string(reinterpret_cast<const char*>(file.bytes().data()), file.size());
}

TEST(MappedFileTest, MapsTheWholeFile) {
  TempDir tmp;
  WriteFile(tmp.path() / "a.bin", std::string("hello\0world", 11));
  auto file = MappedFile::Open(tmp.path() / "a.bin");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->size(), 11u);
  EXPECT_EQ(Text(*file), std::string("hello\0world", 11));
  EXPECT_EQ(file->path(), tmp.path() / "a.bin");
  file->Advise(MappedFile::Advice::kWillNeed);  // a hint: nothing observable changes
  file->Advise(MappedFile::Advice::kRandom);
  EXPECT_EQ(Text(*file), std::string("hello\0world", 11));
}

// kHuge reads the file into its own memory: the same bytes, at a 2 MiB-aligned address, for sizes
// below, at and across a huge page (the mapping is rounded out to whole huge pages).
TEST(MappedFileTest, HugePagesHoldTheSameBytes) {
  TempDir tmp;
  // 40 MiB + 5: read by several threads where the machine has several cores (16 MiB pieces).
  for (size_t size :
       {size_t{1}, size_t{4097}, size_t{2} << 20, (size_t{2} << 20) + 3, (size_t{40} << 20) + 5}) {
    std::string content(size, '\0');
    for (size_t i = 0; i < size; ++i) content[i] = static_cast<char>((i * 131 + size) % 251);
    WriteFile(tmp.path() / "w.bin", content);
    auto file = MappedFile::Open(tmp.path() / "w.bin", MappedFile::Pages::kHuge);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    EXPECT_EQ(file->pages(), MappedFile::Pages::kHuge);
    EXPECT_EQ(file->size(), size);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(file->bytes().data()) % (size_t{2} << 20), 0u);
    EXPECT_TRUE(Text(*file) == content) << size;
    MappedFile moved(std::move(file).value());  // the move keeps the memory and its release
    EXPECT_TRUE(Text(moved) == content) << size;
  }
  auto empty_dir = MappedFile::Open(tmp.path(), MappedFile::Pages::kHuge);
  EXPECT_EQ(empty_dir.status().code(), base::StatusCode::kDataLoss);
  WriteFile(tmp.path() / "empty", "");
  auto empty = MappedFile::Open(tmp.path() / "empty", MappedFile::Pages::kHuge);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->bytes().empty());
}

// ReleasePages gives back the whole release units inside a range (kFile: pages; kHuge: 2 MiB,
// so that no huge page is split) and keeps the partial ones at its ends: the bytes outside stay
// readable and unchanged, the kHuge memory inside is no longer resident.
TEST(MappedFileTest, ReleasePagesFreesWholeUnitsOnly) {
  TempDir tmp;
  for (MappedFile::Pages pages : {MappedFile::Pages::kFile, MappedFile::Pages::kHuge}) {
    const uint64_t u =
        pages == MappedFile::Pages::kHuge ? uint64_t{2} << 20 : MappedFile::PageBytes();
    const size_t size = 10 * u + 100;
    std::string content(size, '\0');
    for (size_t i = 0; i < size; ++i) content[i] = static_cast<char>((i * 7 + 3) % 253);
    WriteFile(tmp.path() / "w.bin", content);
    auto file = MappedFile::Open(tmp.path() / "w.bin", pages);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ASSERT_EQ(file->ReleaseUnit(), u);
    if (pages == MappedFile::Pages::kHuge) {
      EXPECT_EQ(file->ResidentBytes(0, size), 10 * u + MappedFile::PageBytes());
    }
    // [u + 1, 8 u - 1) holds the whole units 2..6: five of them.
    EXPECT_EQ(file->ReleasePages(u + 1, 8 * u - 1), 5 * u);
    EXPECT_EQ(file->ReleasePages(3 * u + 1, 4 * u - 1), 0u) << "no whole unit inside";
    EXPECT_EQ(file->ReleasePages(9 * u, 100 * u), u) << "clamped to the file";
    EXPECT_EQ(file->ReleasePages(5, 5), 0u);
    const std::string_view text(reinterpret_cast<const char*>(file->bytes().data()), size);
    const std::string_view want(content);
    EXPECT_TRUE(text.substr(0, 2 * u) == want.substr(0, 2 * u));
    EXPECT_TRUE(text.substr(7 * u, 2 * u) == want.substr(7 * u, 2 * u));
    if (pages == MappedFile::Pages::kHuge) {
      EXPECT_EQ(file->ResidentBytes(2 * u, 7 * u), 0u);
      EXPECT_EQ(file->ResidentBytes(0, 2 * u), 2 * u);
      EXPECT_EQ(file->ResidentBytes(7 * u, 9 * u), 2 * u);
    }
  }
}

// The file is copied, not mapped: changing it afterwards changes nothing read (and cannot SIGBUS).
TEST(MappedFileTest, HugePagesAreACopy) {
  TempDir tmp;
  WriteFile(tmp.path() / "a.bin", "abcdef");
  auto file = MappedFile::Open(tmp.path() / "a.bin", MappedFile::Pages::kHuge);
  ASSERT_TRUE(file.ok());
  WriteFile(tmp.path() / "a.bin", "");
  EXPECT_EQ(Text(*file), "abcdef");
}

TEST(MappedFileTest, EmptyFileIsAnEmptySpan) {
  TempDir tmp;
  WriteFile(tmp.path() / "empty", "");
  auto file = MappedFile::Open(tmp.path() / "empty");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->size(), 0u);
  EXPECT_TRUE(file->bytes().empty());
  file->Advise(MappedFile::Advice::kSequential);
}

TEST(MappedFileTest, MissingFileIsNotFoundNamingThePath) {
  TempDir tmp;
  auto file = MappedFile::Open(tmp.path() / "nope.safetensors");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), base::StatusCode::kNotFound);
  EXPECT_NE(file.status().message().find((tmp.path() / "nope.safetensors").string()),
            std::string::npos)
      << file.status().message();
}

TEST(MappedFileTest, DirectoryIsDataLoss) {
  TempDir tmp;
  auto file = MappedFile::Open(tmp.path());
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), base::StatusCode::kDataLoss);
  EXPECT_NE(file.status().message().find(tmp.path().string()), std::string::npos);
}

TEST(MappedFileTest, MoveKeepsTheMapping) {
  TempDir tmp;
  WriteFile(tmp.path() / "a.bin", "abcdef");
  auto opened = MappedFile::Open(tmp.path() / "a.bin");
  ASSERT_TRUE(opened.ok());
  const std::byte* data = opened->bytes().data();
  MappedFile moved(std::move(opened).value());
  EXPECT_EQ(moved.bytes().data(), data);
  MappedFile assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned.bytes().data(), data);
  EXPECT_EQ(Text(assigned), "abcdef");
  EXPECT_TRUE(moved.bytes().empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  // Assigning over a live mapping unmaps the old one (ASan/LSan would not see a leaked mapping,
  // but the test at least exercises the path).
  WriteFile(tmp.path() / "b.bin", "xyz");
  auto other = MappedFile::Open(tmp.path() / "b.bin");
  ASSERT_TRUE(other.ok());
  assigned = std::move(other).value();
  EXPECT_EQ(Text(assigned), "xyz");
}

}  // namespace
}  // namespace k3::weights
