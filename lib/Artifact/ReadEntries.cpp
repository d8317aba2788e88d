//===- ReadEntries.cpp - Devices, weights, the source and entries ---------===//
//
// Part of Loom. See Reader.h. An entry's programs and buffers, and the
// checks across them: every step's buffers exist on its program's device,
// control flow only goes forward, every step runs on its device's kind.
//
//===----------------------------------------------------------------------===//

#include "Reader.h"

#include <algorithm>
#include <set>

using namespace loom;
using namespace loom::artifact;
using namespace loom::artifact::detail;

bool Reader::device(const Json &d, const std::string &path, Device &out) {
  return enumeration(d, path, "kind", "device kind", parseDeviceKind,
                     out.kind) &&
         integer(d, path, "ordinal", out.ordinal) &&
         string(d, path, "triple", out.triple) &&
         string(d, path, "chip", out.chip) &&
         strings(d, path, "features", out.features) &&
         string(d, path, "image", out.image, false);
}

bool Reader::weights(const Json &w, Weights &m) {
  std::string storage;
  if (!string(w, "weights", "storage", storage))
    return false;
  if (storage == "none")
    return true;
  if (storage != "embedded" && storage != "external")
    return fail("weights.storage", "expected embedded, external or none");
  m.storage =
      storage == "embedded" ? WeightStorage::Embedded : WeightStorage::External;
  if (m.storage == WeightStorage::External &&
      !string(w, "weights", "file", m.file))
    return false;
  if (!integer(w, "weights", "size", m.size) ||
      !checksum(w, "weights", m.checksum))
    return false;
  const std::vector<Json> *ts = array(w, "weights", "tensors");
  if (!ts)
    return false;
  for (size_t i = 0; i < ts->size(); ++i) {
    const Json &t = (*ts)[i];
    std::string p = at("weights.tensors", i);
    WeightTensor s;
    if (!string(t, p, "name", s.name) || !string(t, p, "dtype", s.dtype) ||
        !ints(t, p, "shape", s.shape) || !checksum(t, p, s.checksum))
      return false;
    m.tensors.push_back(std::move(s));
  }
  return true;
}

/// The optional `source` (docs/Artifact.md "The embedded source"): which
/// graph the embedded source is, and the tensors of the weights only it
/// reads, each one of the weights' tensors that no buffer names.
bool Reader::source(const Json &j, Manifest &m) {
  Source s;
  if (!enumeration(j, "source", "graph", "source graph", parseSourceGraph,
                   s.graph) ||
      !strings(j, "source", "weights", s.weights))
    return false;
  for (size_t i = 0; i < s.weights.size(); ++i) {
    const std::string &name = s.weights[i];
    auto named = [&](const auto &w) { return w.name == name; };
    if (std::none_of(m.weights.tensors.begin(), m.weights.tensors.end(),
                     named))
      return fail(at("source.weights", i),
                  "'" + name + "' is not one of the weights' tensors");
    for (const Entry &e : m.entries)
      for (const Buffer &b : e.buffers)
        if (b.kind == BufferKind::Weight && b.weight == name)
          return fail(at("source.weights", i),
                      "'" + name + "' is a buffer's weight (only weights "
                      "that no buffer names are the source's own)");
  }
  m.source = std::move(s);
  return true;
}

bool Reader::program(const Json &p, const std::string &path,
                     int64_t numDevices, Program &out) {
  if (!integer(p, path, "device", out.device) ||
      !integer(p, path, "arena_bytes", out.arenaBytes))
    return false;
  if (!device(path + ".device", out.device, numDevices))
    return false;
  const std::vector<Json> *steps = array(p, path, "steps");
  if (!steps)
    return false;
  for (size_t i = 0; i < steps->size(); ++i) {
    out.steps.emplace_back();
    if (!step((*steps)[i], at(path + ".steps", i), out.steps.back()))
      return false;
  }
  return true;
}

bool Reader::buffer(const Json &b, const std::string &path, const Entry &e,
                    int64_t numDevices, Buffer &out) {
  if (!enumeration(b, path, "kind", "buffer kind", parseBufferKind,
                   out.kind) ||
      !integer(b, path, "device", out.device))
    return false;
  if (!device(path + ".device", out.device, numDevices))
    return false;
  switch (out.kind) {
  case BufferKind::Input:
  case BufferKind::Output: {
    bool input = out.kind == BufferKind::Input;
    const std::vector<TensorDesc> &ts = input ? e.inputs : e.outputs;
    if (!integer(b, path, "index", out.index))
      return false;
    if (out.index >= int64_t(ts.size()))
      return fail(path + ".index", "the entry has " +
                                       std::to_string(ts.size()) +
                                       (input ? " inputs" : " outputs"));
    out.bytes = ts[out.index].bytes;
    return true;
  }
  case BufferKind::Weight:
    return string(b, path, "name", out.weight);
  case BufferKind::Arena: {
    if (!integer(b, path, "offset", out.offset) ||
        !integer(b, path, "bytes", out.bytes) ||
        !boolean(b, path, "shared", out.shared))
      return false;
    auto program = std::find_if(
        e.programs.begin(), e.programs.end(),
        [&](const Program &p) { return p.device == out.device; });
    if (program == e.programs.end())
      return fail(path + ".device", "device " + std::to_string(out.device) +
                                        " runs no program of this entry");
    int64_t arena = program->arenaBytes;
    if (out.offset % 64 != 0)
      return fail(path + ".offset", "not a multiple of 64");
    if (out.offset > arena || out.bytes > arena - out.offset)
      return fail(path, "lies past the device's arena_bytes (" +
                            std::to_string(arena) + ")");
    return true;
  }
  }
  return fail(path + ".kind", "unknown buffer kind");
}

/// Every step's buffers exist and live on the program's device; control flow
/// only goes forward (every run ends) and lands on a step or just past the
/// last one.
bool Reader::checkSteps(const Entry &e, const std::string &path) {
  int64_t numBuffers = e.buffers.size();
  for (size_t p = 0; p < e.programs.size(); ++p) {
    const Program &program = e.programs[p];
    std::string pp = at(path + ".programs", p);
    int64_t numSteps = program.steps.size();
    for (int64_t i = 0; i < numSteps; ++i) {
      const Step &s = program.steps[i];
      std::string sp = at(pp + ".steps", i);
      std::optional<int64_t> target = controlTarget(s);
      if (target && (*target <= i || *target > numSteps))
        return fail(sp + ".attrs",
                    "goes to step " + std::to_string(*target) +
                        ", not after this step and within the " +
                        std::to_string(numSteps) + " steps");
      for (const Operand &o : operands(s)) {
        if (o.buffer < 0 || o.buffer >= numBuffers)
          return fail(sp + ".args", "buffer " + std::to_string(o.buffer) +
                                        " is out of range (the entry has " +
                                        std::to_string(numBuffers) + ")");
        if (e.buffers[o.buffer].device != program.device)
          return fail(sp + ".args." + std::string(o.role),
                      "buffer " + std::to_string(o.buffer) +
                          " is on device " +
                          std::to_string(e.buffers[o.buffer].device) +
                          "; the program runs on device " +
                          std::to_string(program.device));
      }
    }
  }
  return true;
}

/// Every step runs on its program's kind of device, and a device that runs
/// a generated GPU kernel has an image.
bool Reader::checkDevices(const Manifest &m) {
  for (size_t d = 0; d < m.devices.size(); ++d)
    if (m.devices[d].kind == DeviceKind::Cpu && !m.devices[d].image.empty())
      return fail(at("devices", d) + ".image",
                  "a cpu device's kernels are the artifact's own functions");
  for (size_t e = 0; e < m.entries.size(); ++e) {
    const Entry &entry = m.entries[e];
    for (size_t p = 0; p < entry.programs.size(); ++p) {
      const Program &program = entry.programs[p];
      const Device &device = m.devices[program.device];
      for (size_t i = 0; i < program.steps.size(); ++i) {
        const Step &s = program.steps[i];
        std::string sp = at(at(at("entries", e) + ".programs", p) + ".steps", i);
        if (!stepRunsOn(s.kind(), device.kind))
          return fail(sp, std::string(stepKindName(s.kind())) +
                              " does not run on a " +
                              std::string(deviceKindName(device.kind)) +
                              " device (the program's device " +
                              std::to_string(program.device) + ")");
        if (s.is<DispatchStep>() && device.image.empty())
          return fail(sp, "gpu.dispatch on device " +
                              std::to_string(program.device) +
                              ", which has no image");
      }
    }
  }
  return true;
}

bool Reader::entry(const Json &e, const std::string &path, int64_t numDevices,
                   Entry &out) {
  if (!string(e, path, "name", out.name) ||
      !integer(e, path, "rank", out.rank, /*required=*/false) ||
      !integer(e, path, "rank_period", out.rankPeriod, /*required=*/false, 1) ||
      !integer(e, path, "rank_count", out.rankCount, /*required=*/false, 1) ||
      !tensors(e, path, "inputs", out.inputs) ||
      !tensors(e, path, "outputs", out.outputs) || !bounds(out, path) ||
      !ties(out, path))
    return false;
  if (out.rankPeriod > 0 && out.rank < 0)
    return fail(path + ".rank_period", "needs a rank (the first it runs on)");
  if (out.rankPeriod > 0 && out.rankCount == 0 && out.rank >= out.rankPeriod)
    return fail(path + ".rank_period",
                "needs a rank below it without rank_count (the rank modulo "
                "the period)");
  if (out.rankCount > 0 && out.rankPeriod == 0)
    return fail(path + ".rank_count", "needs a rank_period");
  const std::vector<Json> *programs = array(e, path, "programs");
  const std::vector<Json> *buffers = programs ? array(e, path, "buffers")
                                              : nullptr;
  if (!buffers)
    return false;
  if (programs->empty())
    return fail(path + ".programs", "expected at least one program");
  std::set<int64_t> devices;
  for (size_t i = 0; i < programs->size(); ++i) {
    std::string pp = at(path + ".programs", i);
    out.programs.emplace_back();
    if (!program((*programs)[i], pp, numDevices, out.programs.back()))
      return false;
    if (!devices.insert(out.programs.back().device).second)
      return fail(pp + ".device", "another program of the entry runs on "
                                  "this device");
  }
  for (size_t i = 0; i < buffers->size(); ++i) {
    out.buffers.emplace_back();
    if (!buffer((*buffers)[i], at(path + ".buffers", i), out, numDevices,
                out.buffers.back()))
      return false;
  }
  return checkSteps(out, path);
}
