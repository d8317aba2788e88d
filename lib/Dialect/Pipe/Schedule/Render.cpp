//===- Render.cpp - Pictures of a pipeline schedule -----------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Pipe/Schedule/Render.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace loom::pipe;

static const char *fillOf(ActionKind kind) {
  switch (kind) {
  case ActionKind::F:
    return "#4e79a7"; // blue
  case ActionKind::B:
    return "#e15759"; // red
  case ActionKind::I:
    return "#f28e2b"; // orange
  case ActionKind::W:
    return "#59a14f"; // green
  default:
    return "#000000";
  }
}

static std::string escape(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '&': out += "&amp;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

/// The filler's actions of device `d` as light boxes (F lighter than B),
/// labelled with their trial steps, beneath the main job's row.
static void drawFill(llvm::raw_ostream &os, const Schedule &s,
                     const Simulation &sim, int d, double y, double height,
                     llvm::function_ref<double(double)> x) {
  if (!s.filler || sim.fillTimes.size() <= size_t(d))
    return;
  for (size_t j = 0; j < sim.fillTimes[d].size(); ++j) {
    const FillAction &a = s.fills[d][j];
    const ActionTime &t = sim.fillTimes[d][j];
    double x0 = x(t.start), w = std::max(x(t.end) - x0, 0.5);
    os << llvm::format("<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                       "height=\"%.1f\" fill=\"%s\" stroke=\"white\" "
                       "stroke-width=\"0.5\"><title>filler %s %.6g-%.6g s"
                       "</title></rect>\n",
                       x0, y, w, height, a.backward ? "#9c9c9c" : "#c8c8c8",
                       escape(s.describe(a)).c_str(), t.start, t.end);
    std::string label = "t" + std::to_string(a.step);
    if (w >= 7.0 * label.size())
      os << llvm::format("<text x=\"%.2f\" y=\"%.1f\" "
                         "text-anchor=\"middle\">%s</text>\n",
                         x0 + w / 2, y + height - 6, label.c_str());
  }
}

void loom::pipe::writeTimelineSVG(llvm::raw_ostream &os, const Schedule &s,
                                  const Simulation &sim, int maxDevices) {
  const double left = 90, top = 40, rowHeight = 26, boxHeight = 20,
               width = 1200;
  int rows = std::min<int>(s.devices.size(), maxDevices);
  double height = top + rows * rowHeight + 50;
  double span = sim.makespan > 0 ? sim.makespan : 1;
  auto x = [&](double t) { return left + t / span * width; };
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\""
     << static_cast<int>(left + width + 20) << "\" height=\""
     << static_cast<int>(height) << "\" font-family=\"sans-serif\" "
     << "font-size=\"11\">\n";
  os << "<title>pipe.schedule @" << escape(s.name) << "</title>\n";
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << llvm::format("<text x=\"%.1f\" y=\"18\" font-size=\"13\">@%s: %zu "
                     "devices, %lld micro-batches, makespan %.4g s, mean "
                     "bubble %.1f%%",
                     left, escape(s.name).c_str(), s.devices.size(),
                     static_cast<long long>(s.microBatches), sim.makespan,
                     100 * sim.meanBubble);
  if (s.filler)
    os << llvm::format(" (%.1f%% with the filler's %lld trial steps, grey)",
                       100 * sim.meanFilledBubble,
                       static_cast<long long>(sim.fillSteps));
  os << "</text>\n";
  // Legend.
  double lx = left + width - 260;
  for (ActionKind k : {ActionKind::F, ActionKind::B, ActionKind::I,
                       ActionKind::W}) {
    os << llvm::format("<rect x=\"%.1f\" y=\"8\" width=\"12\" height=\"12\" "
                       "fill=\"%s\"/><text x=\"%.1f\" y=\"18\">%s</text>\n",
                       lx, fillOf(k), lx + 16, actionKindName(k).str().c_str());
    lx += 50;
  }
  // Time axis: ten ticks.
  for (int i = 0; i <= 10; ++i) {
    double t = span * i / 10, tx = x(t), ty = top + rows * rowHeight + 4;
    os << llvm::format("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                       "stroke=\"#bbbbbb\" stroke-width=\"0.5\"/>\n",
                       tx, top - 4, tx, ty);
    os << llvm::format("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
                       "%.3g</text>\n",
                       tx, ty + 14, t);
  }
  os << llvm::format("<text x=\"%.1f\" y=\"%.1f\">seconds</text>\n",
                     left + width / 2 - 20, top + rows * rowHeight + 36);
  if (static_cast<int>(s.devices.size()) > rows)
    os << llvm::format("<text x=\"%.1f\" y=\"%.1f\">(first %d of %zu "
                       "devices)</text>\n",
                       left, top + rows * rowHeight + 36, rows,
                       s.devices.size());
  for (int d = 0; d < rows; ++d) {
    double y = top + d * rowHeight;
    os << llvm::format("<text x=\"4\" y=\"%.1f\">@%s</text>\n",
                       y + boxHeight - 6, escape(s.devices[d].name).c_str());
    if (sim.times.empty())
      continue;
    drawFill(os, s, sim, d, y, boxHeight, x);
    const std::vector<Action> &program = s.programs[d];
    for (size_t i = 0; i < program.size(); ++i) {
      const Action &a = program[i];
      const ActionTime &t = sim.times[d][i];
      if (isCompute(a.kind)) {
        double x0 = x(t.start), w = std::max(x(t.end) - x0, 0.5);
        os << llvm::format("<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                           "height=\"%.1f\" fill=\"%s\" stroke=\"white\" "
                           "stroke-width=\"0.5\"><title>%s %.6g-%.6g s"
                           "</title></rect>\n",
                           x0, y, w, boxHeight, fillOf(a.kind),
                           escape(s.describe(a)).c_str(), t.start, t.end);
        std::string label = std::to_string(a.microBatch);
        if (w >= 7.0 * label.size())
          os << llvm::format("<text x=\"%.2f\" y=\"%.1f\" fill=\"white\" "
                             "text-anchor=\"middle\">%s</text>\n",
                             x0 + w / 2, y + boxHeight - 6, label.c_str());
      } else if (isSend(a.kind) && a.peerDevice < rows) {
        // A thin line from the sender when it leaves to the receiver's row
        // when it arrives.
        double y1 = a.peerDevice > d ? y + boxHeight : y;
        double y2 = top + a.peerDevice * rowHeight +
                    (a.peerDevice > d ? 0 : boxHeight);
        os << llvm::format("<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" "
                           "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"0.6\" "
                           "opacity=\"0.6\"><title>%s</title></line>\n",
                           x(t.start), y1, x(t.end), y2,
                           a.kind == ActionKind::SendF ? "#333333" : "#aa0000",
                           escape(s.describe(a)).c_str());
      }
    }
  }
  os << "</svg>\n";
}

static std::string quoteDot(llvm::StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

void loom::pipe::writeStageDot(llvm::raw_ostream &os, const Schedule &s) {
  os << "digraph " << quoteDot(s.name) << " {\n";
  os << "  rankdir=LR;\n  node [shape=box, style=rounded, fontname=\"sans-serif\"];\n";
  auto node = [&](size_t k) {
    const Stage &st = s.stages[k];
    auto num = [](double v) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%g", v);
      return std::string(buffer);
    };
    std::string label = st.name + "\\nF " + num(st.seconds(ActionKind::F)) +
                        " s, B " + num(st.seconds(ActionKind::B)) + " s\\non";
    for (int d : st.devices)
      label += " @" + s.devices[d].name;
    std::string text;
    for (char c : label) // quoteDot would escape the \n of the label
      text += c == '"' ? '\'' : c;
    return "    " + quoteDot(st.name) + " [label=\"" + text + "\"];\n";
  };
  std::vector<bool> drawn(s.stages.size(), false);
  for (size_t d = 0; d < s.devices.size(); ++d) {
    std::vector<size_t> own;
    for (size_t k = 0; k < s.stages.size(); ++k)
      if (s.stages[k].devices.size() == 1 && s.stages[k].devices[0] == (int)d)
        own.push_back(k);
    if (own.empty())
      continue;
    os << "  subgraph " << quoteDot("cluster_" + s.devices[d].name) << " {\n";
    os << "    label=" << quoteDot("@" + s.devices[d].name) << ";\n";
    for (size_t k : own) {
      os << node(k);
      drawn[k] = true;
    }
    os << "  }\n";
  }
  for (size_t k = 0; k < s.stages.size(); ++k)
    if (!drawn[k])
      os << node(k).substr(2);
  for (const Edge &e : s.edges)
    os << "  " << quoteDot(s.stages[e.from].name) << " -> "
       << quoteDot(s.stages[e.to].name) << " [label=\"" << e.bytes
       << " B\"];\n";
  os << "}\n";
}
