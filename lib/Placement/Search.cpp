//===- Search.cpp - Sites, options, the cover search, placement files -----===//
//
// Part of Loom. See Placement.h and docs/Placement.md.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Fragments.h"
#include "loom/Placement/Placement.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <chrono>
#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::compiler;
using namespace loom::placement;
using llvm::json::Array;
using llvm::json::Object;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The most combinations the search enumerates in one group of sites that
/// share ops; a larger group is decided site by site (never seen in the zoo).
constexpr size_t kMaxCombinations = 4096;

/// One way to compute a site: a fragment on a backend, plus the rest of
/// the site's chain as one generated fragment when the fragment is shorter.
struct Option {
  LibraryCall call;
  std::optional<LibraryCall> leftover;
  size_t callCost = 0, leftoverCost = 0; // indices into the cost requests
};

/// An op some library backend runs, with its options.
struct Site {
  Operation *anchor;
  /// The anchor's position among the ops of its block (placement files).
  int64_t index;
  /// The anchor and the elementwise consumers generated code would fuse.
  SmallVector<Operation *, 4> chain;
  std::vector<Option> options;
  int chosen = -1;
};

/// What the search knows about one function.
struct FunctionPlan {
  mutable func::FuncOp fn;
  std::vector<Site> sites;
};

std::string oneLine(StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '\n')
      c = ' ';
    if (c == ' ' && !out.empty() && out.back() == ' ')
      continue;
    out += c;
  }
  return out;
}

bool allowed(const PlaceOptions &options, tg::Backend kind) {
  if (kind == tg::Backend::Codegen || options.backends.empty())
    return true;
  return llvm::is_contained(options.backends, tg::stringifyBackend(kind));
}

class Placer {
public:
  Placer(ModuleOp module, const PlaceOptions &options)
      : module(module), options(options),
        registry(options.registry ? *options.registry
                                  : BackendRegistry::builtin()) {}

  LogicalResult run();

private:
  ModuleOp module;
  const PlaceOptions &options;
  const BackendRegistry &registry;
  std::vector<FunctionPlan> plans;
  /// Every fragment priced, with its key.
  std::vector<std::unique_ptr<LibraryCall>> pricedCalls;
  std::vector<CostRequest> requests;

  void findSites(FunctionPlan &plan, bool allPrefixes);
  size_t request(const LibraryCall &call);
  double optionSeconds(const Option &o) const {
    return requests[o.callCost].seconds +
           (o.leftover ? requests[o.leftoverCost].seconds : 0.0);
  }
  void solve(FunctionPlan &plan);
  LogicalResult applyPlacementFile(llvm::json::Object &root);
  void writeReport(llvm::raw_ostream &os) const;
  llvm::json::Value toJSON() const;
  void form(FunctionPlan &plan);
};

void Placer::findSites(FunctionPlan &plan, bool allPrefixes) {
  const Backend *codegen = registry.lookup(tg::Backend::Codegen);
  auto available = [](Operation *op) { return !staysOutside(op); };
  int64_t index = 0;
  for (Operation &op : plan.fn.getBody().front()) {
    int64_t position = index++;
    if (staysOutside(&op))
      continue;
    bool library = false;
    for (const auto &backend : registry.all()) {
      if (!backend->isLibrary() || !allowed(options, backend->kind()))
        continue;
      SmallVector<LibraryCall> calls;
      backend->candidates(&op, available, calls);
      library |= !calls.empty();
    }
    if (!library)
      continue;
    Site site{&op, position, {}, {}, -1};
    SmallVector<LibraryCall> chain;
    if (codegen)
      codegen->candidates(&op, available, chain);
    site.chain.assign(chain.empty() ? SmallVector<Operation *, 4>{&op}
                                    : chain.front().ops);
    plan.sites.push_back(std::move(site));
  }
  // Sites whose chains share an op decide together and need every prefix.
  llvm::DenseMap<Operation *, unsigned> owner;
  llvm::DenseSet<unsigned> shared;
  for (auto [i, site] : llvm::enumerate(plan.sites))
    for (Operation *op : site.chain)
      if (auto [it, inserted] = owner.try_emplace(op, i); !inserted) {
        shared.insert(i);
        shared.insert(it->second);
      }
  for (auto [i, site] : llvm::enumerate(plan.sites)) {
    bool prefixes = allPrefixes || shared.count(i);
    for (const auto &backend : registry.all()) {
      if (!allowed(options, backend->kind()))
        continue;
      SmallVector<LibraryCall> calls;
      backend->candidates(site.anchor, available, calls);
      for (LibraryCall &call : calls) {
        // Only fragments along the chain: the rest of it is a leftover.
        if (call.ops.size() > site.chain.size() ||
            !std::equal(call.ops.begin(), call.ops.end(), site.chain.begin()))
          continue;
        Option option{call, std::nullopt};
        if (call.ops.size() < site.chain.size()) {
          LibraryCall rest;
          rest.backend = tg::Backend::Codegen;
          rest.anchor = site.chain[call.ops.size()];
          rest.ops.assign(site.chain.begin() + call.ops.size(),
                          site.chain.end());
          option.leftover = std::move(rest);
        }
        site.options.push_back(std::move(option));
        if (!prefixes)
          break;
      }
    }
  }
}

size_t Placer::request(const LibraryCall &call) {
  pricedCalls.push_back(std::make_unique<LibraryCall>(call));
  CostRequest r;
  r.call = pricedCalls.back().get();
  r.key = oneLine(fragmentKey(call));
  requests.push_back(std::move(r));
  return requests.size() - 1;
}

/// Cheapest cover of the sites: the sites' costs add up except where two
/// sites' chains share an op (a residual add two convolutions could take),
/// so each group of sites sharing ops is solved exactly by enumeration and
/// the groups independently: the optimum under the additive model.
void Placer::solve(FunctionPlan &plan) {
  llvm::EquivalenceClasses<unsigned> groups;
  llvm::DenseMap<Operation *, unsigned> owner;
  for (auto [i, site] : llvm::enumerate(plan.sites)) {
    groups.insert(i);
    for (Operation *op : site.chain)
      if (auto [it, inserted] = owner.try_emplace(op, i); !inserted)
        groups.unionSets(i, it->second);
  }
  for (auto it = groups.begin(); it != groups.end(); ++it) {
    if (!(*it)->isLeader())
      continue;
    SmallVector<unsigned> members;
    for (auto m = groups.member_begin(**it); m != groups.member_end(); ++m)
      members.push_back(*m);
    llvm::sort(members);
    size_t combinations = 1;
    for (unsigned m : members)
      combinations =
          std::min(kMaxCombinations + 1,
                   combinations * std::max<size_t>(
                                      1, plan.sites[m].options.size()));
    if (combinations > kMaxCombinations) {
      // Site by site, in order, skipping options that clash.
      llvm::DenseSet<Operation *> claimed;
      for (unsigned m : members) {
        Site &site = plan.sites[m];
        double best = kInf;
        for (auto [k, o] : llvm::enumerate(site.options)) {
          if (llvm::any_of(o.call.ops,
                           [&](Operation *op) { return claimed.count(op); }))
            continue;
          if (optionSeconds(o) < best) {
            best = optionSeconds(o);
            site.chosen = k;
          }
        }
        if (site.chosen >= 0)
          claimed.insert(site.options[site.chosen].call.ops.begin(),
                         site.options[site.chosen].call.ops.end());
      }
      continue;
    }
    SmallVector<int> pick(members.size(), 0), bestPick;
    double best = kInf;
    while (true) {
      llvm::DenseSet<Operation *> claimed;
      bool clash = false;
      for (auto [m, k] : llvm::zip(members, pick))
        for (Operation *op : plan.sites[m].options[k].call.ops)
          clash |= !claimed.insert(op).second;
      if (!clash) {
        double total = 0;
        // Each op left over is one generated kernel, counted once.
        llvm::DenseSet<Operation *> leftoverCounted;
        for (size_t a = 0; a < members.size(); ++a) {
          const Option &o = plan.sites[members[a]].options[pick[a]];
          total += requests[o.callCost].seconds;
          if (!o.leftover)
            continue;
          // A leftover another site computes costs nothing here.
          bool elsewhere = llvm::all_of(o.leftover->ops, [&](Operation *op) {
            for (size_t b = 0; b < members.size(); ++b)
              if (b != a && llvm::is_contained(
                                plan.sites[members[b]].options[pick[b]].call.ops,
                                op))
                return true;
            return false;
          });
          if (!elsewhere &&
              leftoverCounted.insert(o.leftover->ops.front()).second)
            total += requests[o.leftoverCost].seconds;
        }
        if (total < best) {
          best = total;
          bestPick = pick;
        }
      }
      // Next combination.
      size_t d = 0;
      for (; d < pick.size(); ++d) {
        if (++pick[d] < int(plan.sites[members[d]].options.size()))
          break;
        pick[d] = 0;
      }
      if (d == pick.size())
        break;
    }
    for (auto [m, k] : llvm::zip(members, bestPick))
      plan.sites[m].chosen = k;
  }
}

void Placer::form(FunctionPlan &plan) {
  llvm::DenseMap<Operation *, const LibraryCall *> chosen;
  for (const Site &site : plan.sites)
    if (site.chosen >= 0)
      chosen[site.anchor] = &site.options[site.chosen].call;
  auto choose = [&](Operation *op,
                    Available available) -> std::optional<LibraryCall> {
    const LibraryCall *call = chosen.lookup(op);
    if (!call || !llvm::all_of(ArrayRef(call->ops).drop_front(), available))
      return std::nullopt;
    return *call;
  };
  formFragments(plan.fn, choose);
}

std::string describe(const LibraryCall &call) {
  return (tg::stringifyBackend(call.backend) + " " + call.pattern()).str();
}

void Placer::writeReport(llvm::raw_ostream &os) const {
  for (const FunctionPlan &plan : plans) {
    double total = 0;
    os << "placement of @" << plan.fn.getName() << ": " << plan.sites.size()
       << " sites\n";
    os << llvm::format("  %-4s %-6s %-34s %10s  %s\n", "#", "op", "chosen",
                       "ms", "alternatives (ms)");
    for (auto [i, site] : llvm::enumerate(plan.sites)) {
      if (site.chosen < 0)
        continue;
      const Option &c = site.options[site.chosen];
      std::string alternatives;
      for (auto [k, o] : llvm::enumerate(site.options)) {
        if (int(k) == site.chosen)
          continue;
        if (!alternatives.empty())
          alternatives += ", ";
        alternatives += describe(o.call);
        if (!requests.empty())
          alternatives += llvm::formatv(" {0:f3}", optionSeconds(o) * 1e3);
      }
      double seconds = requests.empty() ? NAN : optionSeconds(c);
      if (!requests.empty())
        total += seconds;
      os << llvm::format("  %-4zu %-6lld %-34s %10.3f  %s\n", i,
                         (long long)site.index, describe(c.call).c_str(),
                         seconds * 1e3, alternatives.c_str());
    }
    if (!requests.empty())
      os << llvm::format("  sites total: %.3f ms (%s)\n", total * 1e3,
                         options.costModel ? options.costModel->name().c_str()
                                           : "");
  }
}

llvm::json::Value Placer::toJSON() const {
  Array functions;
  for (const FunctionPlan &plan : plans) {
    Array fragments;
    for (const Site &site : plan.sites) {
      if (site.chosen < 0)
        continue;
      auto optionObject = [&](const Option &o) {
        Object obj{{"backend", tg::stringifyBackend(o.call.backend)},
                   {"pattern", o.call.pattern()},
                   {"ops", int64_t(o.call.ops.size())}};
        if (!requests.empty()) {
          obj["seconds"] = optionSeconds(o);
          obj["source"] = requests[o.callCost].source;
          if (o.leftover)
            obj["leftover_seconds"] = requests[o.leftoverCost].seconds;
        }
        return obj;
      };
      Object fragment = optionObject(site.options[site.chosen]);
      std::string loc;
      llvm::raw_string_ostream los(loc);
      site.anchor->getLoc().print(los);
      fragment["anchor"] = site.index;
      fragment["op"] = site.anchor->getName().getStringRef();
      fragment["signature"] = cost::opSignature(site.anchor);
      fragment["loc"] = loc;
      Array alternatives;
      for (auto [k, o] : llvm::enumerate(site.options))
        if (int(k) != site.chosen)
          alternatives.push_back(optionObject(o));
      fragment["alternatives"] = std::move(alternatives);
      fragments.push_back(std::move(fragment));
    }
    functions.push_back(Object{{"name", plan.fn.getName()},
                               {"fragments", std::move(fragments)}});
  }
  Object root{{"format", "loom-placement"},
              {"version", 1},
              {"functions", std::move(functions)}};
  if (options.costModel)
    root["cost_model"] = options.costModel->name();
  return root;
}

LogicalResult Placer::applyPlacementFile(Object &root) {
  StringRef file = options.placementIn;
  auto fail = [&](Operation *at, const Twine &message) {
    return (at ? at : module.getOperation())->emitError()
           << "placement " << file << ": " << message;
  };
  if (root.getString("format") != "loom-placement" ||
      root.getInteger("version") != 1)
    return fail(nullptr, "not a Loom placement (need \"format\": "
                         "\"loom-placement\", \"version\": 1)");
  Array *functions = root.getArray("functions");
  if (!functions)
    return fail(nullptr, "no \"functions\" array");
  for (FunctionPlan &plan : plans) {
    Object *entry = nullptr;
    for (llvm::json::Value &f : *functions)
      if (auto *obj = f.getAsObject();
          obj && obj->getString("name") == plan.fn.getName())
        entry = obj;
    if (!entry)
      return fail(plan.fn, "has no function @" + plan.fn.getName());
    Array *fragments = entry->getArray("fragments");
    if (!fragments || fragments->size() != plan.sites.size())
      return fail(plan.fn, "@" + plan.fn.getName() + " has " +
                               Twine(fragments ? fragments->size() : 0) +
                               " fragments, this model " +
                               Twine(plan.sites.size()) +
                               " sites: it was searched for another model "
                               "(search again with --placement-out)");
    for (auto [site, value] : llvm::zip(plan.sites, *fragments)) {
      Object *frag = value.getAsObject();
      auto anchor = frag ? frag->getInteger("anchor") : std::nullopt;
      auto op = frag ? frag->getString("op") : std::nullopt;
      auto signature = frag ? frag->getString("signature") : std::nullopt;
      auto backend = frag ? frag->getString("backend") : std::nullopt;
      auto count = frag ? frag->getInteger("ops") : std::nullopt;
      if (!anchor || !op || !backend || !count || !signature)
        return fail(site.anchor, "a fragment lacks anchor, op, signature, "
                                 "backend or ops");
      if (*anchor != site.index || *op != site.anchor->getName().getStringRef() ||
          *signature != cost::opSignature(site.anchor))
        return fail(site.anchor,
                    "fragment at op " + Twine(*anchor) + " (" + *op +
                        ") does not match this model's site at op " +
                        Twine(site.index) + " (" +
                        site.anchor->getName().getStringRef() +
                        "): it was searched for another model");
      for (auto [k, o] : llvm::enumerate(site.options))
        if (tg::stringifyBackend(o.call.backend) == *backend &&
            int64_t(o.call.ops.size()) == *count)
          site.chosen = k;
      if (site.chosen < 0) {
        std::string valid;
        for (const Option &o : site.options)
          valid += (valid.empty() ? "" : ", ") + describe(o.call) + " (" +
                   std::to_string(o.call.ops.size()) + " ops)";
        return fail(site.anchor, "no fragment of " + Twine(*count) +
                                     " ops on '" + *backend +
                                     "' starts here; the choices are: " +
                                     valid);
      }
    }
  }
  return success();
}

LogicalResult Placer::run() {
  auto start = std::chrono::steady_clock::now();
  bool fromFile = !options.placementIn.empty();
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    plans.push_back({fn, {}});
    findSites(plans.back(), /*allPrefixes=*/fromFile);
  }
  if (fromFile) {
    auto buffer = llvm::MemoryBuffer::getFile(options.placementIn);
    if (!buffer)
      return module.emitError("cannot read placement ")
             << options.placementIn << ": " << buffer.getError().message();
    auto json = llvm::json::parse((*buffer)->getBuffer());
    if (!json)
      return module.emitError("placement ")
             << options.placementIn
             << " is not JSON: " << llvm::toString(json.takeError());
    Object *root = json->getAsObject();
    if (!root)
      return module.emitError("placement ")
             << options.placementIn << " is not a JSON object";
    if (failed(applyPlacementFile(*root)))
      return failure();
  } else {
    if (!options.costModel)
      return module.emitError("tg-place-backends: no cost model");
    for (FunctionPlan &plan : plans)
      for (Site &site : plan.sites)
        for (Option &o : site.options) {
          o.callCost = request(o.call);
          if (o.leftover)
            o.leftoverCost = request(*o.leftover);
        }
    if (failed(options.costModel->estimate(module, requests)))
      return failure();
    for (FunctionPlan &plan : plans)
      solve(plan);
  }
  if (options.report)
    writeReport(*options.report);
  if (!options.placementOut.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(options.placementOut, ec);
    if (ec)
      return module.emitError("cannot write placement ")
             << options.placementOut << ": " << ec.message();
    os << llvm::formatv("{0:2}", toJSON()) << "\n";
  }
  size_t sites = 0;
  for (FunctionPlan &plan : plans) {
    form(plan);
    sites += plan.sites.size();
  }
  if (options.progress)
    *options.progress << llvm::format(
        "tg-place-backends: placed %zu sites in %.2f s (%s)\n", sites,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count(),
        fromFile ? ("from " + options.placementIn).c_str()
                 : options.costModel->name().c_str());
  return success();
}

} // namespace

LogicalResult placement::placeBackends(ModuleOp module,
                                       const PlaceOptions &options) {
  return Placer(module, options).run();
}
