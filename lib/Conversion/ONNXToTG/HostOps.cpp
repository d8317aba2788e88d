//===- HostOps.cpp - Tensor operations on import-time values --------------===//
//
// Part of Loom. The few tensor operations the importer evaluates itself when
// their inputs are known at import time: shape computations (Shape, Gather,
// Concat, Slice, arithmetic on shapes, ...) fold to constants instead of
// becoming integer arithmetic that tg does not have.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include <cmath>

using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::ArrayRef;

namespace {


/// Calls fn(outIndex, srcOffset) for every element of `shape`, where
/// srcOffset = sum(index[d] * strides[d]) + base.
template <typename Fn>
void forEachIndex(ArrayRef<int64_t> shape, ArrayRef<int64_t> strides,
                  int64_t base, Fn &&fn) {
  int64_t n = onnxutil::numElementsOf(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = base;
    for (size_t d = 0; d < shape.size(); ++d)
      off += idx[d] * strides[d];
    fn(i, off);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
}

/// A tensor of `shape` whose element at index I is the element of `t` at
/// offset base + sum(I[d] * strides[d]).
HostTensor gatherElements(const HostTensor &t, std::vector<int64_t> shape,
                          ArrayRef<int64_t> strides, int64_t base) {
  HostTensor out;
  out.dataType = t.dataType;
  out.shape = std::move(shape);
  int64_t n = onnxutil::numElementsOf(out.shape);
  if (t.isFloat())
    out.floats.resize(n);
  else
    out.ints.resize(n);
  forEachIndex(out.shape, strides, base, [&](int64_t i, int64_t off) {
    if (t.isFloat())
      out.floats[i] = t.floats[off];
    else
      out.ints[i] = t.ints[off];
  });
  return out;
}

} // namespace

HostTensor onnx_to_tg::castHost(const HostTensor &t, int32_t dataType) {
  HostTensor out;
  out.dataType = dataType;
  out.shape = t.shape;
  bool toFloat = onnxutil::isFloatDataType(dataType);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    if (toFloat) {
      out.floats.push_back(t.asDouble(i));
    } else if (dataType == onnx::TensorProto::BOOL) {
      out.ints.push_back(t.asDouble(i) != 0);
    } else if (t.isFloat()) {
      double v = std::trunc(t.floats[i]);
      // Out-of-range and NaN conversions are undefined in ONNX; saturate.
      if (std::isnan(v))
        v = 0;
      v = std::max(v, -9.2233720368547758e18);
      v = std::min(v, 9.2233720368547748e18);
      out.ints.push_back(static_cast<int64_t>(v));
    } else {
      out.ints.push_back(t.ints[i]);
    }
  }
  onnxutil::roundToDataType(out);
  return out;
}


HostTensor onnx_to_tg::broadcastHost(const HostTensor &t,
                                     ArrayRef<int64_t> shape) {
  return gatherElements(t, std::vector<int64_t>(shape.begin(), shape.end()),
                        broadcastStrides(t.shape, shape), 0);
}

HostTensor
onnx_to_tg::binaryHost(const HostTensor &a, const HostTensor &b,
                       int32_t dataType,
                       llvm::function_ref<double(double, double)> fn,
                       llvm::function_ref<int64_t(int64_t, int64_t)> intFn) {
  std::vector<int64_t> shape = *broadcastHostShapes(a.shape, b.shape);
  HostTensor x = broadcastHost(a, shape), y = broadcastHost(b, shape);
  HostTensor out;
  out.dataType = dataType;
  out.shape = shape;
  bool intMath = !a.isFloat() && !b.isFloat() && intFn;
  for (int64_t i = 0; i < x.numElements(); ++i) {
    if (onnxutil::isFloatDataType(dataType))
      out.floats.push_back(fn(x.asDouble(i), y.asDouble(i)));
    else if (intMath)
      out.ints.push_back(intFn(x.ints[i], y.ints[i]));
    else
      out.ints.push_back(
          static_cast<int64_t>(fn(x.asDouble(i), y.asDouble(i))));
  }
  onnxutil::roundToDataType(out);
  return out;
}

HostTensor onnx_to_tg::gatherHost(const HostTensor &data,
                                  ArrayRef<int64_t> indices,
                                  ArrayRef<int64_t> indicesShape,
                                  int64_t axis) {
  HostTensor out;
  out.dataType = data.dataType;
  out.shape.assign(data.shape.begin(), data.shape.begin() + axis);
  out.shape.insert(out.shape.end(), indicesShape.begin(), indicesShape.end());
  out.shape.insert(out.shape.end(), data.shape.begin() + axis + 1,
                   data.shape.end());
  int64_t outer =
      onnxutil::numElementsOf(ArrayRef(data.shape).take_front(axis));
  int64_t inner =
      onnxutil::numElementsOf(ArrayRef(data.shape).drop_front(axis + 1));
  int64_t dim = data.shape[axis];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t idx : indices)
      for (int64_t k = 0; k < inner; ++k) {
        int64_t off = (o * dim + idx) * inner + k;
        if (data.isFloat())
          out.floats.push_back(data.floats[off]);
        else
          out.ints.push_back(data.ints[off]);
      }
  return out;
}

HostTensor onnx_to_tg::sliceHost(const HostTensor &t, ArrayRef<int64_t> starts,
                                 ArrayRef<int64_t> steps,
                                 ArrayRef<int64_t> sizes) {
  auto own = rowMajorStrides(t.shape);
  std::vector<int64_t> strides(t.shape.size());
  int64_t base = 0;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    base += starts[d] * own[d];
    strides[d] = steps[d] * own[d];
  }
  return gatherElements(t, std::vector<int64_t>(sizes.begin(), sizes.end()),
                        strides, base);
}

HostTensor onnx_to_tg::transposeHost(const HostTensor &t,
                                     ArrayRef<int64_t> perm) {
  auto own = rowMajorStrides(t.shape);
  std::vector<int64_t> shape, strides;
  for (int64_t p : perm) {
    shape.push_back(t.shape[p]);
    strides.push_back(own[p]);
  }
  return gatherElements(t, shape, strides, 0);
}

HostTensor onnx_to_tg::concatHost(ArrayRef<const HostTensor *> inputs,
                                  int64_t axis) {
  HostTensor out;
  out.dataType = inputs.front()->dataType;
  out.shape = inputs.front()->shape;
  out.shape[axis] = 0;
  for (const HostTensor *in : inputs)
    out.shape[axis] += in->shape[axis];
  int64_t outer = onnxutil::numElementsOf(ArrayRef(out.shape).take_front(axis));
  for (int64_t o = 0; o < outer; ++o)
    for (const HostTensor *in : inputs) {
      int64_t chunk =
          onnxutil::numElementsOf(ArrayRef(in->shape).drop_front(axis));
      for (int64_t k = 0; k < chunk; ++k) {
        if (out.isFloat())
          out.floats.push_back(in->asDouble(o * chunk + k));
        else
          out.ints.push_back(in->asInt(o * chunk + k));
      }
    }
  return out;
}
