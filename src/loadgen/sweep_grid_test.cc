// k3 sweep's grid: parsing (skipped empties, errors naming the part) and expansion order.
#include "loadgen/sweep_grid.h"

#include <gtest/gtest.h>

namespace k3::loadgen {
namespace {

const std::set<std::string> kAllowed = {"max-running", "threads", "block-size"};

std::vector<std::string> Labels(const std::vector<GridPoint>& points) {
  std::vector<std::string> labels;
  for (const GridPoint& p : points) labels.push_back(p.label);
  return labels;
}

TEST(SweepGridTest, ParsesDimensionsInOrder) {
  auto dims = ParseGrid("max-running=4,32;threads=1", kAllowed);
  ASSERT_TRUE(dims.ok()) << dims.status().ToString();
  ASSERT_EQ(dims->size(), 2u);
  EXPECT_EQ((*dims)[0].name, "max-running");
  EXPECT_EQ((*dims)[0].values, (std::vector<std::string>{"4", "32"}));
  EXPECT_EQ((*dims)[1].name, "threads");
  EXPECT_EQ((*dims)[1].values, (std::vector<std::string>{"1"}));
}

TEST(SweepGridTest, SkipsEmptyPartsAndValues) {
  auto dims = ParseGrid(";;threads=,2,,4,;", kAllowed);
  ASSERT_TRUE(dims.ok()) << dims.status().ToString();
  ASSERT_EQ(dims->size(), 1u);
  EXPECT_EQ((*dims)[0].values, (std::vector<std::string>{"2", "4"}));
}

TEST(SweepGridTest, RejectsUnknownNamesMissingEqualsAndEmptyGrids) {
  auto unknown = ParseGrid("threads=1;color=red", kAllowed);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(),
            "'color=red': want NAME=V1,V2,... with NAME one of block-size max-running threads");
  auto no_equals = ParseGrid("threads", kAllowed);
  ASSERT_FALSE(no_equals.ok());
  EXPECT_EQ(no_equals.status().message().rfind("'threads': want NAME=", 0), 0u);
  auto no_values = ParseGrid("threads=,,", kAllowed);
  ASSERT_FALSE(no_values.ok());
  EXPECT_EQ(no_values.status().message(), "'threads=,,': no values");
  for (const char* empty : {"", ";", ";;"}) {
    auto dims = ParseGrid(empty, kAllowed);
    ASSERT_FALSE(dims.ok()) << empty;
    EXPECT_EQ(dims.status().message(), "is empty");
  }
}

TEST(SweepGridTest, ExpandsEveryCombinationFirstDimensionSlowest) {
  auto dims = ParseGrid("max-running=4,32;threads=1,2,8", kAllowed);
  ASSERT_TRUE(dims.ok());
  const std::vector<GridPoint> points = ExpandGrid(*dims);
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(Labels(points),
            (std::vector<std::string>{"max-running=4 threads=1", "max-running=4 threads=2",
                                      "max-running=4 threads=8", "max-running=32 threads=1",
                                      "max-running=32 threads=2", "max-running=32 threads=8"}));
  EXPECT_EQ(points[5].args, (std::vector<std::string>{"--max-running", "32", "--threads", "8"}));
}

TEST(SweepGridTest, ExpandsOneDimensionAndNone) {
  const std::vector<GridPoint> one = ExpandGrid({{"block-size", {"16"}}});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].label, "block-size=16");
  EXPECT_EQ(one[0].args, (std::vector<std::string>{"--block-size", "16"}));
  const std::vector<GridPoint> none = ExpandGrid({});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_TRUE(none[0].args.empty());
  EXPECT_TRUE(none[0].label.empty());
}

}  // namespace
}  // namespace k3::loadgen
