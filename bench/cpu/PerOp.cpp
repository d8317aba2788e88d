//===- PerOp.cpp - Loom's steps beside ONNX Runtime's nodes ---------------===//
//
// Part of Loom. See PerOp.h.
//
//===----------------------------------------------------------------------===//

#include "PerOp.h"
#include "BenchSupport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>

using namespace llvm;

namespace loom::bench {

namespace {

Error malformed(StringRef path, const Twine &what) {
  return createStringError((path + ": " + what).str());
}

/// The `steps` of the entry called `entry` in a file of the form
/// {"entries": [{"name": ..., "steps": [...]}]}.
Expected<const json::Array *> entrySteps(const json::Value &root,
                                         StringRef path, StringRef entry) {
  const json::Object *o = root.getAsObject();
  const json::Array *entries = o ? o->getArray("entries") : nullptr;
  if (!entries)
    return malformed(path, "no \"entries\" array");
  for (const json::Value &e : *entries) {
    const json::Object *eo = e.getAsObject();
    if (eo && eo->getString("name") == entry)
      if (const json::Array *steps = eo->getArray("steps"))
        return steps;
  }
  return malformed(path, "no entry '" + entry + "' with steps");
}

/// Milliseconds per run of a profiled step or node: its median execution
/// times its executions per run.
double perRunMs(const json::Object &o, int64_t runs) {
  double median = o.getNumber("median_ms").value_or(0);
  int64_t count = o.getInteger("count").value_or(0);
  return runs > 0 ? median * double(count) / double(runs) : 0;
}

/// The Loom steps, with their sources from `sourcesPath` and times from
/// `profilePath`.
Expected<std::vector<PerOpStep>> loomSteps(StringRef sourcesPath,
                                           StringRef profilePath,
                                           StringRef entry) {
  auto sources = readJSONFile(sourcesPath);
  if (!sources)
    return sources.takeError();
  auto profile = readJSONFile(profilePath);
  if (!profile)
    return profile.takeError();
  auto sourceSteps = entrySteps(*sources, sourcesPath, entry);
  if (!sourceSteps)
    return sourceSteps.takeError();
  auto profileSteps = entrySteps(*profile, profilePath, entry);
  if (!profileSteps)
    return profileSteps.takeError();
  if ((*sourceSteps)->size() != (*profileSteps)->size())
    return createStringError(
        formatv("{0} has {1} steps, the profile {2} {3}", sourcesPath,
                (*sourceSteps)->size(), profilePath, (*profileSteps)->size())
            .str());
  int64_t runs = 0;
  for (const json::Value &e : *profile->getAsObject()->getArray("entries"))
    if (e.getAsObject()->getString("name") == entry)
      runs = e.getAsObject()->getInteger("runs").value_or(0);
  std::vector<PerOpStep> steps;
  for (auto [s, p] : zip(**sourceSteps, **profileSteps)) {
    const json::Object *so = s.getAsObject(), *po = p.getAsObject();
    if (!so || !po)
      return malformed(sourcesPath, "a step is not an object");
    PerOpStep step;
    step.index = so->getInteger("index").value_or(int64_t(steps.size()));
    step.kind = so->getString("kind").value_or("").str();
    std::vector<std::string> ops;
    if (const json::Array *a = so->getArray("ops"))
      for (const json::Value &op : *a)
        if (auto name = op.getAsString();
            name && *name != "tg.constant")
          ops.push_back(name->starts_with("tg.") ? name->drop_front(3).str()
                                                 : name->str());
    step.ops = join(ops, "+");
    if (const json::Array *a = so->getArray("sources"))
      for (const json::Value &name : *a)
        if (auto n = name.getAsString())
          step.sources.push_back(n->str());
    step.loomMs = perRunMs(*po, runs);
    steps.push_back(std::move(step));
  }
  return steps;
}

/// Puts each node of ort-run.js's profile `path` on the step that computes
/// it, else into `table.unmatched`.
Error matchOrtNodes(StringRef path, PerOpTable &table) {
  auto profile = readJSONFile(path);
  if (!profile)
    return profile.takeError();
  const json::Object *root = profile->getAsObject();
  const json::Array *nodes = root ? root->getArray("nodes") : nullptr;
  if (!nodes)
    return malformed(path, "no \"nodes\" array");
  int64_t runs = root->getInteger("runs").value_or(0);
  StringMap<size_t> stepOf;
  for (auto [i, step] : enumerate(table.steps))
    for (const std::string &name : step.sources)
      stepOf.try_emplace(name, i);
  std::map<std::string, PerOpUnmatched> unmatched;
  for (const json::Value &n : *nodes) {
    const json::Object *o = n.getAsObject();
    if (!o)
      return malformed(path, "a node is not an object");
    StringRef name = o->getString("name").value_or("");
    double ms = perRunMs(*o, runs);
    auto it = stepOf.end();
    for (StringRef candidate : ortNodeOrigins(name))
      if ((it = stepOf.find(candidate)) != stepOf.end())
        break;
    if (it != stepOf.end()) {
      PerOpStep &step = table.steps[it->second];
      step.ortNodes.push_back(name.str());
      step.ortMs += ms;
      continue;
    }
    std::string op = o->getString("op").value_or("?").str();
    PerOpUnmatched &u = unmatched[op];
    u.op = op;
    ++u.nodes;
    u.ortMs += ms;
  }
  for (auto &[op, u] : unmatched)
    table.unmatched.push_back(u);
  llvm::sort(table.unmatched, [](const auto &a, const auto &b) {
    return a.ortMs > b.ortMs;
  });
  table.haveOrt = true;
  return Error::success();
}

} // namespace

std::vector<StringRef> ortNodeOrigins(StringRef name) {
  std::vector<StringRef> names{name};
  // An NCHWc node: named after the tensor the node it replaced wrote, with
  // "_nchwc" (and "_token_N" where that name was taken). The tensor is the
  // name of a node without one; PyTorch names a node's outputs after it
  // (`/a/Conv` writes `/a/Conv_output_0`).
  StringRef tensor = name;
  if (size_t token = tensor.rfind("_token_"); token != StringRef::npos &&
      token + 7 < tensor.size() &&
      all_of(tensor.drop_front(token + 7), isDigit))
    tensor = tensor.take_front(token);
  if (tensor.consume_back("_nchwc")) {
    names.push_back(tensor);
    if (size_t cut = tensor.rfind("_output_"); cut != StringRef::npos)
      names.push_back(tensor.take_front(cut));
    return names;
  }
  // The node a fusion replaced: the name before a "/" suffix.
  for (size_t cut = name.find('/', 1); cut != StringRef::npos;
       cut = name.find('/', cut + 1))
    names.push_back(name.take_front(cut));
  return names;
}

namespace {

std::string fmt(double ms) { return formatv("{0:f3}", ms).str(); }

std::string fmtRatio(double loom, double ort) {
  return ort > 0 ? formatv("{0:f2}", loom / ort).str() : "n/a";
}

} // namespace

double PerOpTable::loomTotalMs() const {
  double total = 0;
  for (const PerOpStep &s : steps)
    total += s.loomMs;
  return total;
}

double PerOpTable::ortTotalMs() const {
  double total = 0;
  for (const PerOpStep &s : steps)
    total += s.ortMs;
  for (const PerOpUnmatched &u : unmatched)
    total += u.ortMs;
  return total;
}

Expected<PerOpTable> buildPerOpTable(StringRef stepSources,
                                     StringRef loomProfile,
                                     StringRef ortProfile, StringRef entry) {
  PerOpTable table;
  auto steps = loomSteps(stepSources, loomProfile, entry);
  if (!steps)
    return steps.takeError();
  table.steps = std::move(*steps);
  if (!ortProfile.empty())
    if (Error err = matchOrtNodes(ortProfile, table))
      return std::move(err);
  return table;
}

void printPerOpTable(raw_ostream &os, StringRef model, const PerOpTable &table,
                     unsigned rows) {
  os << "\nper op: " << model << " (ms per inference: median of the "
     << "profiled runs; ORT = the nodes of ONNX Runtime's profile that the "
     << "step computes)\n";
  // By kind and ops: where the time goes.
  struct Group {
    int64_t steps = 0;
    double loomMs = 0, ortMs = 0;
  };
  std::map<std::string, Group> groups;
  for (const PerOpStep &s : table.steps) {
    Group &g = groups[s.kind + " " + s.ops];
    ++g.steps;
    g.loomMs += s.loomMs;
    g.ortMs += s.ortMs;
  }
  std::vector<std::pair<std::string, Group>> byTime(groups.begin(),
                                                    groups.end());
  llvm::sort(byTime, [](const auto &a, const auto &b) {
    return a.second.loomMs > b.second.loomMs;
  });
  os << format("  %-52s %6s %10s %10s %8s\n", "step kind and ops", "steps",
               "Loom ms", "ORT ms", "Loom/ORT");
  for (const auto &[name, g] : byTime)
    os << format("  %-52s %6lld %10s %10s %8s\n", name.c_str(),
                 (long long)g.steps, fmt(g.loomMs).c_str(),
                 table.haveOrt ? fmt(g.ortMs).c_str() : "n/a",
                 fmtRatio(g.loomMs, g.ortMs).c_str());
  for (const PerOpUnmatched &u : table.unmatched)
    os << format("  %-52s %6s %10s %10s %8s\n",
                 ("(ORT only) " + u.op + " x" + std::to_string(u.nodes))
                     .c_str(),
                 "", "", fmt(u.ortMs).c_str(), "");
  os << format("  %-52s %6zu %10s %10s %8s\n", "total", table.steps.size(),
               fmt(table.loomTotalMs()).c_str(),
               table.haveOrt ? fmt(table.ortTotalMs()).c_str() : "n/a",
               table.haveOrt
                   ? fmtRatio(table.loomTotalMs(), table.ortTotalMs()).c_str()
                   : "n/a");

  // The steps where Loom loses most (without ORT: the slowest).
  std::vector<const PerOpStep *> order;
  for (const PerOpStep &s : table.steps)
    order.push_back(&s);
  llvm::sort(order, [](const PerOpStep *a, const PerOpStep *b) {
    return a->loomMs - a->ortMs > b->loomMs - b->ortMs;
  });
  if (order.size() > rows)
    order.resize(rows);
  os << format("  %5s %-14s %-22s %9s %9s %8s  %s\n", "step", "kind", "ops",
               "Loom ms", "ORT ms", "Loom/ORT", "first ONNX node");
  for (const PerOpStep *s : order) {
    std::string ops = s->ops.size() > 22 ? s->ops.substr(0, 21) + "~" : s->ops;
    std::string kind =
        s->kind.size() > 14 ? s->kind.substr(0, 13) + "~" : s->kind;
    os << format("  %5lld %-14s %-22s %9s %9s %8s  %s\n", (long long)s->index,
                 kind.c_str(), ops.c_str(), fmt(s->loomMs).c_str(),
                 table.haveOrt ? fmt(s->ortMs).c_str() : "n/a",
                 fmtRatio(s->loomMs, s->ortMs).c_str(),
                 s->sources.empty() ? "" : s->sources.front().c_str());
  }
  os.flush();
}

json::Object perOpJSON(const PerOpTable &table) {
  json::Array steps;
  for (const PerOpStep &s : table.steps)
    steps.push_back(json::Object{
        {"index", s.index},
        {"kind", s.kind},
        {"ops", s.ops},
        {"sources", json::Array(s.sources)},
        {"loom_ms", s.loomMs},
        {"ort_nodes", json::Array(s.ortNodes)},
        {"ort_ms", table.haveOrt ? json::Value(s.ortMs) : nullptr}});
  json::Array unmatched;
  for (const PerOpUnmatched &u : table.unmatched)
    unmatched.push_back(
        json::Object{{"op", u.op}, {"nodes", u.nodes}, {"ort_ms", u.ortMs}});
  return json::Object{
      {"steps", std::move(steps)},
      {"ort_unmatched", std::move(unmatched)},
      {"loom_total_ms", table.loomTotalMs()},
      {"ort_total_ms",
       table.haveOrt ? json::Value(table.ortTotalMs()) : nullptr}};
}

} // namespace loom::bench
