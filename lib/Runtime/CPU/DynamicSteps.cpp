//===- DynamicSteps.cpp - The CPU device's dynamic steps ------------------===//
//
// Part of Loom. See Cpu.h and docs/Runtime.md "The dynamic steps":
// loomrt.topk, loomrt.non_max_suppression and loomrt.nonzero run
// loom/Support/DynamicAlgorithms.h (the interpreter's definition) on the
// step's buffers. libloomrt's own code: built with or without oneDNN and
// OpenBLAS.
//
//===----------------------------------------------------------------------===//

#include "CPU/Cpu.h"

#include "loom/Support/DynamicAlgorithms.h"

#include <cstring>

using namespace loom;
using namespace loom::rt;
using namespace loom::rt::cpu;
namespace art = loom::artifact;

namespace {

/// Calls \p f with a null pointer of the C++ type of \p dtype (one the
/// reader accepts for a dynamic step: f32, f64, i1, i8, i32, i64).
template <class F> void withElementType(const std::string &dtype, F f) {
  if (dtype == "f32")
    f(static_cast<float *>(nullptr));
  else if (dtype == "f64")
    f(static_cast<double *>(nullptr));
  else if (dtype == "i1")
    f(static_cast<uint8_t *>(nullptr));
  else if (dtype == "i8")
    f(static_cast<int8_t *>(nullptr));
  else if (dtype == "i32")
    f(static_cast<int32_t *>(nullptr));
  else
    f(static_cast<int64_t *>(nullptr));
}

/// The run-time length in buffer \p id (rank-0 i64) clamped to
/// [0, \p bound]; \p bound when there is none.
int64_t validLength(void *const *buffers, int64_t id, int64_t bound) {
  if (id == -1)
    return bound;
  int64_t v;
  std::memcpy(&v, buffers[id], sizeof v);
  return std::clamp<int64_t>(v, 0, bound);
}

void writeCount(void *const *buffers, int64_t id, int64_t count) {
  std::memcpy(buffers[id], &count, sizeof count);
}

template <class T> class TopK : public LibraryStep {
public:
  explicit TopK(const art::TopKStep &s) : s(s) {}
  StepDescription describe() const override {
    return {"loom topk", {}, "1"};
  }
  Error run(Stream &, void *const *buffers) const override {
    const T *src = static_cast<const T *>(buffers[s.src]);
    T *values = static_cast<T *>(buffers[s.values]);
    int64_t *indices = static_cast<int64_t *>(buffers[s.indices]);
    size_t outs = size_t(s.outer * s.k * s.inner);
    std::memset(values, 0, outs * sizeof(T));
    std::memset(indices, 0, outs * sizeof(int64_t));
    int64_t valid = validLength(buffers, s.valid, s.dim), count = 0;
    std::vector<int64_t> order;
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t in = 0; in < s.inner; ++in) {
        const T *line = src + o * s.dim * s.inner + in;
        auto at = [&](int64_t j) { return line[j * s.inner]; };
        count = dynamic::topKLine(valid, s.k, s.largest, at,
                                  dynamic::numberLess<T>, order);
        for (int64_t j = 0; j < count; ++j) {
          int64_t dst = (o * s.k + j) * s.inner + in;
          values[dst] = at(order[j]);
          indices[dst] = order[j];
        }
      }
    writeCount(buffers, s.count, std::min(s.k, valid));
    return Error::ok();
  }

private:
  art::TopKStep s;
};

class NonMaxSuppression : public LibraryStep {
public:
  explicit NonMaxSuppression(const art::NonMaxSuppressionStep &s) : s(s) {
    options.centerPointBox = s.centerPointBox;
    options.maxOutputPerClass = s.maxOutputPerClass;
    options.iouThreshold = float(s.iouThreshold);
    if (s.scoreThreshold)
      options.scoreThreshold = float(*s.scoreThreshold);
  }
  StepDescription describe() const override {
    return {"loom non_max_suppression", {}, "1"};
  }
  Error run(Stream &, void *const *buffers) const override {
    const float *boxes = static_cast<const float *>(buffers[s.boxes]);
    const float *scores = static_cast<const float *>(buffers[s.scores]);
    int64_t *selected = static_cast<int64_t *>(buffers[s.selected]);
    int64_t n = s.numBoxes;
    int64_t bound = dynamic::nmsBound(s.batches, s.classes, n,
                                      s.maxOutputPerClass);
    std::memset(selected, 0, size_t(bound * 3) * sizeof(int64_t));
    int64_t valid = validLength(buffers, s.valid, n), rows = 0;
    std::vector<dynamic::BoxExtent> extents(static_cast<size_t>(valid));
    dynamic::NMSScratch scratch;
    for (int64_t b = 0; b < s.batches; ++b) {
      for (int64_t j = 0; j < valid; ++j)
        extents[j] =
            dynamic::boxExtent(boxes + (b * n + j) * 4, s.centerPointBox);
      for (int64_t c = 0; c < s.classes; ++c) {
        const float *score = scores + (b * s.classes + c) * n;
        dynamic::nmsClass(
            valid, [&](int64_t j) { return score[j]; },
            dynamic::numberLess<float>, [](float v) { return v; },
            [&](int64_t j) { return extents[j]; }, options, scratch,
            [&](int64_t j) {
              int64_t *row = selected + 3 * rows++;
              row[0] = b;
              row[1] = c;
              row[2] = j;
            });
      }
    }
    writeCount(buffers, s.count, rows);
    return Error::ok();
  }

private:
  art::NonMaxSuppressionStep s;
  dynamic::NMSOptions options;
};

template <class T> class NonZero : public LibraryStep {
public:
  explicit NonZero(const art::NonZeroStep &s) : s(s) {
    for (int64_t d : s.shape)
      n *= d;
  }
  StepDescription describe() const override {
    return {"loom nonzero", {}, "1"};
  }
  Error run(Stream &, void *const *buffers) const override {
    const T *src = static_cast<const T *>(buffers[s.src]);
    int64_t *indices = static_cast<int64_t *>(buffers[s.indices]);
    int64_t rank = int64_t(s.shape.size());
    std::memset(indices, 0, size_t(rank * n) * sizeof(int64_t));
    int64_t count = dynamic::nonZero(
        n, s.shape, [&](int64_t i) { return !(src[i] == T(0)); },
        [&](int64_t column, const int64_t *coords) {
          for (int64_t d = 0; d < rank; ++d)
            indices[d * n + column] = coords[d];
        });
    writeCount(buffers, s.count, count);
    return Error::ok();
  }

private:
  art::NonZeroStep s;
  int64_t n = 1;
};

/// loomrt.update_slice: one memcpy of each row's slice (and of the whole
/// base first when the step is not in place).
class UpdateSlice : public LibraryStep {
public:
  explicit UpdateSlice(const art::UpdateSliceStep &s)
      : s(s), elem(art::dtypeBytes(s.dtype)) {}
  StepDescription describe() const override {
    return {s.base == s.dst ? "loom update_slice, in place"
                            : "loom update_slice, base copied to dst",
            {},
            "1"};
  }
  Error run(Stream &, void *const *buffers) const override {
    const char *base = static_cast<const char *>(buffers[s.base]);
    char *dst = static_cast<char *>(buffers[s.dst]);
    const char *update = static_cast<const char *>(buffers[s.update]);
    const int64_t *offsets = static_cast<const int64_t *>(buffers[s.offsets]);
    size_t row = size_t(s.inner * elem);
    if (base != dst)
      std::memcpy(dst, base, size_t(s.outer * s.dim) * row);
    int64_t perOffset = s.outer / s.offsetCount;
    for (int64_t o = 0; o < s.outer; ++o) {
      int64_t at = std::clamp<int64_t>(offsets[o / perOffset], 0,
                                       s.dim - s.rows);
      std::memcpy(dst + size_t(o * s.dim + at) * row,
                  update + size_t(o * s.rows) * row, size_t(s.rows) * row);
    }
    return Error::ok();
  }

private:
  art::UpdateSliceStep s;
  int64_t elem;
};

} // namespace

std::unique_ptr<LibraryStep> cpu::prepareDynamicStep(const art::Step &step) {
  std::unique_ptr<LibraryStep> out;
  if (const auto *s = step.getIf<art::TopKStep>())
    withElementType(s->dtype, [&](auto *type) {
      out = std::make_unique<TopK<std::remove_pointer_t<decltype(type)>>>(*s);
    });
  else if (const auto *s = step.getIf<art::NonMaxSuppressionStep>())
    out = std::make_unique<NonMaxSuppression>(*s);
  else if (const auto *s = step.getIf<art::UpdateSliceStep>())
    out = std::make_unique<UpdateSlice>(*s);
  else if (const auto *s = step.getIf<art::NonZeroStep>())
    withElementType(s->dtype, [&](auto *type) {
      out = std::make_unique<NonZero<std::remove_pointer_t<decltype(type)>>>(*s);
    });
  return out;
}
