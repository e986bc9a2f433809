#include "base/status.h"

#include <gtest/gtest.h>

#include <string>

#include "base/result.h"

namespace k3::base {
namespace {

Result<int> ParsePositive(int x) {
  if (x <= 0) return InvalidArgument("not positive: " + std::to_string(x));
  return x;
}

Result<int> DoubleIt(int x) {
  K3_ASSIGN_OR_RETURN(int v, ParsePositive(x));
  return 2 * v;
}

Status CheckBoth(int a, int b) {
  K3_RETURN_IF_ERROR(ParsePositive(a).status());
  K3_RETURN_IF_ERROR(ParsePositive(b).status().WithContext("second"));
  return Status::Ok();
}

TEST(StatusTest, OkAndErrorStrings) {
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().ToString(), "OK");
  Status s = NotFound("no such tensor");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "NOT_FOUND: no such tensor");
  EXPECT_EQ(s.WithContext("load").message(), "load: no such tensor");
}

TEST(ResultTest, PropagatesValuesAndErrors) {
  EXPECT_EQ(*DoubleIt(21), 42);
  Result<int> bad = DoubleIt(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "not positive: -1");
  EXPECT_TRUE(CheckBoth(1, 2).ok());
  EXPECT_EQ(CheckBoth(1, -2).message(), "second: not positive: -2");
}

TEST(ResultDeathTest, ValueOfErrorAborts) {
  Result<int> bad = ParsePositive(0);
  EXPECT_DEATH((void)bad.value(), "value\\(\\) of a failed Result");
}

}  // namespace
}  // namespace k3::base
