//===- Plot.cpp - The training curve as a hand-written SVG ----------------===//
#include "Plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace loom::train {

std::vector<double> movingAverage(const std::vector<float> &v, int64_t window) {
  std::vector<double> out(v.size());
  double sum = 0;
  window = std::max<int64_t>(window, 1);
  for (size_t i = 0; i < v.size(); ++i) {
    sum += v[i];
    if (int64_t(i) >= window)
      sum -= v[i - size_t(window)];
    out[i] = sum / double(std::min<int64_t>(int64_t(i) + 1, window));
  }
  return out;
}

namespace {

/// A tick spacing of 1, 2 or 5 times a power of ten giving about `n` ticks.
double niceStep(double range, int n) {
  if (!(range > 0))
    return 1;
  double raw = range / n, p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * p)
      return m * p;
  return 10 * p;
}

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", std::round(x * 1e6) / 1e6);
  return buf;
}

std::string esc(const std::string &s) {
  std::string r;
  for (char c : s) {
    if (c == '<') r += "&lt;";
    else if (c == '>') r += "&gt;";
    else if (c == '&') r += "&amp;";
    else r += c;
  }
  return r;
}

/// A panel: data coordinates [x0, x1] x [y0, y1] mapped onto a pixel box.
struct Panel {
  double left, top, width, height, x0, x1, y0, y1;
  double px(double x) const { return left + (x - x0) / (x1 - x0) * width; }
  double py(double y) const { return top + height - (y - y0) / (y1 - y0) * height; }

  void axes(std::ostringstream &o, const std::string &title, const std::string &xlabel,
            const std::string &ylabel, double xstep, double ystep, bool percent) const {
    o << "<rect x='" << left << "' y='" << top << "' width='" << width << "' height='"
      << height << "' fill='white' stroke='#444'/>\n";
    for (double y = std::ceil(y0 / ystep) * ystep; y <= y1 + 1e-9; y += ystep) {
      o << "<line x1='" << left << "' x2='" << left + width << "' y1='" << py(y)
        << "' y2='" << py(y) << "' stroke='#e4e4e4'/>\n";
      o << "<text x='" << left - 6 << "' y='" << py(y) + 4
        << "' text-anchor='end'>" << (percent ? fmt(y * 100) + "%" : fmt(y)) << "</text>\n";
    }
    for (double x = std::ceil(x0 / xstep) * xstep; x <= x1 + 1e-9; x += xstep)
      o << "<text x='" << px(x) << "' y='" << top + height + 16
        << "' text-anchor='middle'>" << fmt(x) << "</text>\n";
    o << "<text x='" << left + width / 2 << "' y='" << top - 10
      << "' text-anchor='middle' font-weight='bold'>" << esc(title) << "</text>\n";
    o << "<text x='" << left + width / 2 << "' y='" << top + height + 34
      << "' text-anchor='middle'>" << esc(xlabel) << "</text>\n";
    o << "<text transform='translate(" << left - 44 << "," << top + height / 2
      << ") rotate(-90)' text-anchor='middle'>" << esc(ylabel) << "</text>\n";
  }

  template <typename F>
  void polyline(std::ostringstream &o, size_t n, F point, const std::string &style) const {
    o << "<polyline fill='none' " << style << " points='";
    for (size_t i = 0; i < n; ++i) {
      auto [x, y] = point(i);
      char buf[48];
      std::snprintf(buf, sizeof buf, "%.1f,%.1f ", px(x), py(y));
      o << buf;
    }
    o << "'/>\n";
  }
};

} // namespace

bool writeTrainingCurve(const std::string &path, const std::string &title,
                        const std::vector<float> &stepLoss, int64_t stepsPerEpoch,
                        int64_t smoothing, const std::vector<EpochAccuracy> &epochs,
                        std::string &error) {
  std::ostringstream o;
  const double W = 1000, H = 420;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H
    << "' viewBox='0 0 " << W << " " << H
    << "' font-family='sans-serif' font-size='12'>\n"
    << "<rect width='100%' height='100%' fill='#fafafa'/>\n"
    << "<text x='" << W / 2 << "' y='22' text-anchor='middle' font-size='15'>" << esc(title)
    << "</text>\n";

  // Loss per step.
  size_t n = stepLoss.size();
  double maxLoss = 0;
  for (float l : stepLoss)
    if (std::isfinite(l))
      maxLoss = std::max(maxLoss, double(l));
  double ystep = niceStep(maxLoss, 5);
  Panel loss{70, 60, 400, 300, 0, double(std::max<size_t>(n, 1)), 0,
             std::max(ystep, std::ceil(maxLoss / ystep) * ystep)};
  loss.axes(o, "training loss per step", "step", "loss", niceStep(loss.x1, 6), ystep, false);
  if (stepsPerEpoch > 0)
    for (int64_t s = stepsPerEpoch; s < int64_t(n); s += stepsPerEpoch)
      o << "<line x1='" << loss.px(double(s)) << "' x2='" << loss.px(double(s)) << "' y1='"
        << loss.top << "' y2='" << loss.top + loss.height
        << "' stroke='#999' stroke-dasharray='4,4'/>\n";
  auto clampLoss = [&](double l) { return std::isfinite(l) ? std::min(l, loss.y1) : loss.y1; };
  loss.polyline(o, n, [&](size_t i) { return std::pair(double(i + 1), clampLoss(stepLoss[i])); },
                "stroke='#9ecae1' stroke-width='1'");
  std::vector<double> avg = movingAverage(stepLoss, smoothing);
  loss.polyline(o, n, [&](size_t i) { return std::pair(double(i + 1), clampLoss(avg[i])); },
                "stroke='#08519c' stroke-width='2'");
  o << "<text x='" << loss.left + loss.width - 8 << "' y='" << loss.top + 18
    << "' text-anchor='end' fill='#08519c'>moving average of " << smoothing
    << " steps</text>\n<text x='" << loss.left + loss.width - 8 << "' y='" << loss.top + 34
    << "' text-anchor='end' fill='#6baed6'>each step</text>\n";

  // Accuracy per epoch.
  double lo = 1;
  for (const EpochAccuracy &e : epochs)
    lo = std::min({lo, e.train, e.test});
  double astep = niceStep(1 - std::min(lo, 0.95), 5);
  double a0 = std::max(0.0, std::floor((std::min(lo, 0.95) - astep / 2) / astep) * astep);
  int lastEpoch = epochs.empty() ? 1 : epochs.back().epoch;
  Panel acc{570, 60, 400, 300, 0.5, lastEpoch + 0.5, a0, 1.0};
  acc.axes(o, "accuracy per epoch", "epoch", "accuracy", niceStep(lastEpoch, 6) < 1 ? 1 : niceStep(lastEpoch, 6),
           astep, true);
  struct Series { const char *name, *color; double EpochAccuracy::*field; };
  int row = 0;
  for (Series s : {Series{"train", "#31a354", &EpochAccuracy::train},
                   Series{"test", "#e6550d", &EpochAccuracy::test}}) {
    acc.polyline(o, epochs.size(),
                 [&](size_t i) { return std::pair(double(epochs[i].epoch), epochs[i].*s.field); },
                 std::string("stroke='") + s.color + "' stroke-width='2'");
    for (const EpochAccuracy &e : epochs)
      o << "<circle cx='" << acc.px(e.epoch) << "' cy='" << acc.py(e.*s.field)
        << "' r='3.5' fill='" << s.color << "'><title>epoch " << e.epoch << " " << s.name
        << " " << fmt(e.*s.field * 100) << "%</title></circle>\n";
    std::string last = epochs.empty() ? "" : " (" + fmt(std::round(epochs.back().*s.field * 1e4) / 100) + "%)";
    o << "<text x='" << acc.left + acc.width - 8 << "' y='" << acc.top + acc.height - 28 + 16 * row
      << "' text-anchor='end' fill='" << s.color << "'>" << s.name << last << "</text>\n";
    ++row;
  }
  o << "</svg>\n";

  FILE *f = std::fopen(path.c_str(), "w");
  if (!f) {
    error = path + ": cannot write";
    return false;
  }
  std::string s = o.str();
  bool ok = std::fwrite(s.data(), 1, s.size(), f) == s.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok)
    error = path + ": write failed";
  return ok;
}

} // namespace loom::train
