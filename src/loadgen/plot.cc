#include "loadgen/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace k3::loadgen {
namespace {

constexpr double kWidth = 720, kHeight = 440, kLeft = 70, kRight = 180, kTop = 40, kBottom = 50;
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c",
                                   "#ff7f0e", "#9467bd", "#8c564b"};

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

// A "nice" tick step for a range: 1, 2 or 5 times a power of ten, about 5 ticks.
double TickStep(double range) {
  const double raw = range / 5;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

std::string Number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

}  // namespace

std::string LinePlotSvg(const std::string& title, const std::string& x_label,
                        const std::string& y_label, const std::vector<Series>& series) {
  double x_max = 0, y_max = 0;
  for (const Series& s : series) {
    for (const auto& [x, y] : s.points) {
      x_max = std::max(x_max, x);
      y_max = std::max(y_max, y);
    }
  }
  const double x_step = TickStep(x_max > 0 ? x_max : 1), y_step = TickStep(y_max > 0 ? y_max : 1);
  x_max = std::ceil((x_max > 0 ? x_max : 1) / x_step) * x_step;
  y_max = std::ceil((y_max > 0 ? y_max : 1) / y_step) * y_step;
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + x / x_max * plot_w; };
  auto py = [&](double y) { return kTop + plot_h - y / y_max * plot_h; };
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
                "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" "
                "height=\"100%%\" fill=\"white\"/>\n",
                kWidth, kHeight);
  std::string svg = buf;
  svg +=
      "<text x=\"" + Number(kLeft) + "\" y=\"22\" font-size=\"15\">" + Escape(title) + "</text>\n";
  for (double x = 0; x <= x_max + 1e-9; x += x_step) {
    svg += "<line x1=\"" + Number(px(x)) + "\" y1=\"" + Number(kTop) + "\" x2=\"" + Number(px(x)) +
           "\" y2=\"" + Number(kTop + plot_h) + "\" stroke=\"#eee\"/>\n";
    svg += "<text x=\"" + Number(px(x)) + "\" y=\"" + Number(kTop + plot_h + 16) +
           "\" text-anchor=\"middle\">" + Number(x) + "</text>\n";
  }
  for (double y = 0; y <= y_max + 1e-9; y += y_step) {
    svg += "<line x1=\"" + Number(kLeft) + "\" y1=\"" + Number(py(y)) + "\" x2=\"" +
           Number(kLeft + plot_w) + "\" y2=\"" + Number(py(y)) + "\" stroke=\"#eee\"/>\n";
    svg += "<text x=\"" + Number(kLeft - 6) + "\" y=\"" + Number(py(y) + 4) +
           "\" text-anchor=\"end\">" + Number(y) + "</text>\n";
  }
  svg += "<rect x=\"" + Number(kLeft) + "\" y=\"" + Number(kTop) + "\" width=\"" + Number(plot_w) +
         "\" height=\"" + Number(plot_h) + "\" fill=\"none\" stroke=\"#333\"/>\n";
  svg += "<text x=\"" + Number(kLeft + plot_w / 2) + "\" y=\"" + Number(kHeight - 12) +
         "\" text-anchor=\"middle\">" + Escape(x_label) + "</text>\n";
  svg += "<text transform=\"translate(16," + Number(kTop + plot_h / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">" + Escape(y_label) + "</text>\n";
  for (size_t i = 0; i < series.size(); ++i) {
    const std::string color = kColors[i % 6];
    std::string points;
    for (const auto& [x, y] : series[i].points) points += Number(px(x)) + "," + Number(py(y)) + " ";
    if (series[i].line && series[i].points.size() > 1) {
      svg += "<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"2\" points=\"" +
             points + "\"/>\n";
    }
    for (const auto& [x, y] : series[i].points) {
      svg += "<circle cx=\"" + Number(px(x)) + "\" cy=\"" + Number(py(y)) + "\" r=\"3.5\" fill=\"" +
             color + "\"/>\n";
    }
    const double ly = kTop + 10 + 18 * double(i);
    svg += "<rect x=\"" + Number(kLeft + plot_w + 12) + "\" y=\"" + Number(ly - 8) +
           "\" width=\"10\" height=\"10\" fill=\"" + color + "\"/>\n";
    svg += "<text x=\"" + Number(kLeft + plot_w + 28) + "\" y=\"" + Number(ly + 1) + "\">" +
           Escape(series[i].name) + "</text>\n";
  }
  return svg + "</svg>\n";
}

}  // namespace k3::loadgen
