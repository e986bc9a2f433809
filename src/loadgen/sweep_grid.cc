#include "loadgen/sweep_grid.h"

#include <sstream>

namespace k3::loadgen {

base::Result<std::vector<GridDimension>> ParseGrid(std::string_view grid,
                                                   const std::set<std::string>& allowed) {
  std::vector<GridDimension> dims;
  std::stringstream parts{std::string(grid)};
  for (std::string part; std::getline(parts, part, ';');) {
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    if (eq == std::string::npos || !allowed.count(part.substr(0, eq))) {
      std::string names;
      for (const std::string& n : allowed) names += " " + n;
      return base::InvalidArgument("'" + part + "': want NAME=V1,V2,... with NAME one of" + names);
    }
    GridDimension d{part.substr(0, eq), {}};
    std::stringstream values(part.substr(eq + 1));
    for (std::string v; std::getline(values, v, ',');) {
      if (!v.empty()) d.values.push_back(v);
    }
    if (d.values.empty()) return base::InvalidArgument("'" + part + "': no values");
    dims.push_back(std::move(d));
  }
  if (dims.empty()) return base::InvalidArgument("is empty");
  return dims;
}

std::vector<GridPoint> ExpandGrid(const std::vector<GridDimension>& dims) {
  std::vector<GridPoint> points = {{}};
  for (const GridDimension& dim : dims) {
    std::vector<GridPoint> next;
    next.reserve(points.size() * dim.values.size());
    for (const GridPoint& p : points) {
      for (const std::string& v : dim.values) {
        GridPoint q = p;
        q.args.push_back("--" + dim.name);
        q.args.push_back(v);
        q.label += (q.label.empty() ? "" : " ") + dim.name + "=" + v;
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  return points;
}

}  // namespace k3::loadgen
