#include "apps/k3/bench_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/utf8.h"

namespace k3::app {

void Table::Print() const {
  std::vector<size_t> widths;
  for (const auto& row : rows_) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], base::CountCodePoints(row[c]));
  }
  for (size_t r = 0; r < rows_.size(); ++r) {
    std::string line;
    for (size_t c = 0; c < rows_[r].size(); ++c) {
      const std::string& cell = rows_[r][c];
      size_t pad = widths[c] - base::CountCodePoints(cell);
      if (c == 0) {
        line += cell + std::string(pad, ' ');
      } else {
        line += "  " + std::string(pad, ' ') + cell;
      }
    }
    std::printf("%s\n", line.c_str());
    if (r == 0) {
      size_t total = 0;
      for (size_t w : widths) total += w + 2;
      std::printf("%s\n", std::string(total - 2, '-').c_str());
    }
  }
  std::printf("\n");
}

std::string Fixed(double value, int decimals) {
  if (!(value >= 0) || std::isinf(value)) return "-";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

std::string Ratio(double ours, double theirs) {
  if (!(ours > 0) || !(theirs > 0)) return "-";
  return Fixed(ours / theirs, 1) + "x";
}

double Median(std::vector<double> values) {
  if (values.empty()) return -1;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string Range(const std::vector<double>& values, int decimals) {
  if (values.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return Fixed(*lo, decimals) + "-" + Fixed(*hi, decimals);
}

}  // namespace k3::app
