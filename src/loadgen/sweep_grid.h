// The settings grid of `k3 sweep`: "NAME=V1,V2;NAME=..." parsed into dimensions and expanded into
// every combination, each as command-line arguments ("--NAME", "V", ...) and a readable label.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace k3::loadgen {

// One dimension of a grid: a flag name and its values, in the order given.
struct GridDimension {
  std::string name;
  std::vector<std::string> values;
};

// One combination: {"--name", "value", ...} in dimension order, and "name=value name2=value2".
struct GridPoint {
  std::vector<std::string> args;
  std::string label;
};

// Parses `grid`: parts separated by ';', each NAME=V1,V2,... (empty parts and empty values are
// skipped). INVALID_ARGUMENT, quoting the part, when NAME is not in `allowed` ("'x=1': want
// NAME=V1,V2,... with NAME one of a b") or has no values ("'a=': no values"), and "is empty" when
// no part is left.
base::Result<std::vector<GridDimension>> ParseGrid(std::string_view grid,
                                                   const std::set<std::string>& allowed);

// Every combination of the dimensions' values, the first dimension varying slowest. The product
// of the value counts; one empty point for no dimensions.
std::vector<GridPoint> ExpandGrid(const std::vector<GridDimension>& dims);

}  // namespace k3::loadgen
