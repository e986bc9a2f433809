// Measurements and plain-text tables for the benchmark commands.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace k3::app {

struct Measurement {
  size_t bytes = 0;
  size_t tokens = 0;
  uint32_t hash = 0;   // of the ids, to check that two tokenizers agree
  double cold_ms = 0;  // first encode of this text
  double warm_ms = 0;  // best of the repeats after it
  bool valid() const { return bytes > 0; }
  double WarmMs() const { return warm_ms < 1e299 ? warm_ms : cold_ms; }  // cold if no repeats
  double ColdMBps() const { return bytes / 1e3 / cold_ms; }
  double WarmMBps() const { return bytes / 1e3 / warm_ms; }
};

// A table printed with aligned columns: Table t({"a", "b"}); t.Row({"1", "2"}); t.Print();
class Table {
 public:
  explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
  void Row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void Print() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

// "12.3" style formatting; "-" for a missing value (negative or NaN).
std::string Fixed(double value, int decimals = 1);
// "21.4x", or "-" when either side is missing.
std::string Ratio(double ours, double theirs);
// The median of `values` (the mean of the middle two for an even count); -1 when empty.
double Median(std::vector<double> values);
// "lo-hi" of `values` with Fixed's decimals; "-" when empty.
std::string Range(const std::vector<double>& values, int decimals = 1);

}  // namespace k3::app
