// A small SVG line plot (axes, ticks, one polyline with markers per series, a legend) for
// latency-vs-throughput curves and sweep frontiers. Written here because no Debian package
// renders plots from C++ without pulling in a GUI toolkit; the output opens in any browser.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace k3::loadgen {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in the given order
  bool line = true;                               // false: markers only
};

std::string LinePlotSvg(const std::string& title, const std::string& x_label,
                        const std::string& y_label, const std::vector<Series>& series);

}  // namespace k3::loadgen
