//===- ScheduleOutput.cpp - What a built schedule becomes -----------------===//
//
// Part of Loom. See Schedule.h. A schedule built by buildSchedule
// (Schedule.cpp) becomes GPU dispatches (expandDispatches), the artifact's
// entry (toArtifact), the printed host program (printSchedule) and the
// step sources of `loom-compile --step-sources` (stepSourcesJSON).
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Schedule.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace loom;
using namespace loom::compiler;
namespace art = loom::artifact;

namespace {

/// The operands of a library or copy step as `role=id` (a list of them,
/// onednn.concat's srcs, as `role=[a,b]`), and where a control step goes.
void printOperands(const art::Step &step, llvm::raw_ostream &os) {
  std::vector<art::Operand> operands = art::operands(step);
  for (size_t i = 0; i < operands.size();) {
    size_t j = i + 1;
    while (j < operands.size() && operands[j].role == operands[i].role)
      ++j;
    os << " " << operands[i].role << "=";
    if (j - i > 1 || operands[i].role == "srcs") {
      os << "[";
      for (size_t k = i; k < j; ++k)
        os << (k > i ? "," : "") << operands[k].buffer;
      os << "]";
    } else {
      os << operands[i].buffer;
    }
    i = j;
  }
  if (const auto *branch = step.getIf<art::BranchStep>())
    os << " else=" << branch->elseStep;
  if (const auto *jump = step.getIf<art::JumpStep>())
    os << " to=" << jump->to;
}

} // namespace


namespace {

/// The dispatch steps of kernel step \p step (of fragment \p fragment),
/// appended to \p out; its scratch buffers are added to \p entry.
LogicalResult dispatchesOf(EntrySchedule &entry, const art::KernelStep &step,
                           tg::FragmentOp fragment,
                           const codegen::gpu::DeviceKernel &kernel,
                           std::vector<Step> &out) {
  std::vector<int64_t> params = step.args;
  for (int64_t bytes : kernel.scratchBytes) {
    Buffer b;
    b.record.kind = art::BufferKind::Arena;
    b.record.bytes = bytes;
    b.firstStep = int64_t(out.size());
    b.lastStep = int64_t(out.size() + kernel.launches.size()) - 1;
    entry.buffers.push_back(std::move(b));
    params.push_back(int64_t(entry.buffers.size()) - 1);
  }
  for (const codegen::gpu::Launch &launch : kernel.launches) {
    art::DispatchStep dispatch;
    dispatch.kernel = launch.kernel;
    for (int64_t p : launch.params) {
      if (p < 0 || p >= int64_t(params.size()))
        return fragment.emitOpError("kernel ")
               << step.name << ": launch " << launch.kernel
               << " binds parameter " << p << " of " << params.size();
      dispatch.args.push_back(params[p]);
    }
    dispatch.grid = launch.grid;
    dispatch.block = launch.block;
    dispatch.sharedBytes = launch.sharedBytes;
    Step s;
    s.record = std::move(dispatch);
    s.fragment = fragment;
    out.push_back(std::move(s));
  }
  return success();
}

} // namespace

LogicalResult compiler::expandDispatches(
    EntrySchedule &entry,
    const llvm::StringMap<codegen::gpu::DeviceKernel> &kernels) {
  // first[i]: the new index of old step i (first[n]: the new end).
  std::vector<int64_t> first;
  std::vector<Step> steps;
  size_t oldBuffers = entry.buffers.size();
  for (Step &step : entry.steps) {
    first.push_back(int64_t(steps.size()));
    const art::KernelStep *kernel = step.kernel();
    if (!kernel) {
      steps.push_back(std::move(step));
      continue;
    }
    auto it = kernels.find(kernel->name);
    if (it == kernels.end())
      return step.fragment.emitOpError("kernel ")
             << kernel->name << " has no GPU launches";
    if (failed(dispatchesOf(entry, *kernel, step.fragment, it->second, steps)))
      return failure();
  }
  first.push_back(int64_t(steps.size()));
  auto lastOf = [&](int64_t old) {
    return std::max(first[old], first[old + 1] - 1);
  };
  for (Step &s : steps) {
    if (auto *branch = s.record.getIf<art::BranchStep>())
      branch->elseStep = first[branch->elseStep];
    if (auto *jump = s.record.getIf<art::JumpStep>())
      jump->to = first[jump->to];
  }
  for (size_t id = 0; id < oldBuffers; ++id) {
    Buffer &b = entry.buffers[id];
    if (b.kind() != art::BufferKind::Arena)
      continue;
    b.firstStep = first[b.firstStep];
    b.lastStep = lastOf(b.lastStep);
  }
  entry.steps = std::move(steps);
  entry.arenaBytes = entry.unplannedBytes = 0;
  planArena(entry);
  return success();
}

art::Entry compiler::toArtifact(const EntrySchedule &entry, int64_t device) {
  art::Entry out;
  out.name = entry.name;
  out.rank = entry.rank;
  out.rankPeriod = entry.rankPeriod;
  out.rankCount = entry.rankCount;
  out.inputs = entry.inputs;
  out.outputs = entry.outputs;
  for (const Buffer &b : entry.buffers) {
    out.buffers.push_back(b.record);
    out.buffers.back().device = device;
  }
  art::Program program;
  program.device = device;
  program.arenaBytes = entry.arenaBytes;
  for (const Step &s : entry.steps)
    program.steps.push_back(s.record);
  out.programs.push_back(std::move(program));
  return out;
}

void compiler::printSchedule(const EntrySchedule &entry,
                             llvm::raw_ostream &os) {
  os << "entry @" << entry.name << ": " << entry.steps.size() << " steps, "
     << entry.buffers.size() << " buffers\n";
  for (auto [i, s] : llvm::enumerate(entry.steps)) {
    os << llvm::format("  %3d ", int(i))
       << art::stepKindName(s.record.kind());
    if (const art::KernelStep *k = s.kernel()) {
      os << " " << k->name << " range " << k->range << " grain " << k->grain
         << (k->team ? " team" : "")
         << (k->elementwise ? " elementwise" : "") << " args";
      for (int64_t id : k->args)
        os << " " << id;
    } else {
      printOperands(s.record, os);
    }
    os << "\n";
  }
  for (auto [id, b] : llvm::enumerate(entry.buffers)) {
    if (b.aliasOf == -1)
      continue;
    if (b.record.shared)
      os << "    buffer " << id << " is bytes [" << b.aliasOffset << ", "
         << b.aliasOffset + b.record.bytes << ") of buffer " << b.aliasOf
         << (b.splitPiece ? " (split in place)\n"
                          : " (concatenation in place)\n");
    else
      os << "    buffer " << id << " written in place of buffer "
         << b.aliasOf << "\n";
  }
  os << llvm::format("memory plan: arena %.2f MiB (without reuse %.2f MiB)\n",
                     entry.arenaBytes / 1048576.0,
                     entry.unplannedBytes / 1048576.0);
}

namespace {

/// The first NameLoc in \p loc (through fused, call-site and nested name
/// locations), or an empty name.
StringRef sourceName(Location loc) {
  StringRef found;
  loc->walk([&](Location inner) {
    if (auto name = dyn_cast<NameLoc>(inner)) {
      found = name.getName().getValue();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

llvm::json::Array strings(ArrayRef<StringRef> values) {
  llvm::json::Array a;
  for (StringRef v : values)
    a.push_back(v.str());
  return a;
}

} // namespace

std::string compiler::stepSourcesJSON(ArrayRef<EntrySchedule> entries) {
  llvm::json::Array entriesJSON;
  for (const EntrySchedule &entry : entries) {
    llvm::json::Array steps;
    for (auto [i, s] : llvm::enumerate(entry.steps)) {
      llvm::SetVector<StringRef> names, ops;
      if (tg::FragmentOp fragment = s.fragment)
        fragment.getBody().walk([&](Operation *op) {
          if (op->hasTrait<OpTrait::IsTerminator>())
            return;
          ops.insert(op->getName().getStringRef());
          if (StringRef name = sourceName(op->getLoc()); !name.empty())
            names.insert(name);
        });
      const art::KernelStep *kernel = s.kernel();
      steps.push_back(llvm::json::Object{
          {"index", int64_t(i)},
          {"kind", std::string(art::stepKindName(s.record.kind()))},
          {"kernel", kernel ? kernel->name : std::string()},
          {"ops", strings(ops.getArrayRef())},
          {"sources", strings(names.getArrayRef())}});
    }
    entriesJSON.push_back(llvm::json::Object{{"name", entry.name},
                                             {"steps", std::move(steps)}});
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:1}",
                      llvm::json::Value(llvm::json::Object{
                          {"entries", std::move(entriesJSON)}}))
     << "\n";
  return text;
}
