//===- Precision.h - What element types hold, where folds compute -*- C++ -*-===//
//
// Part of Loom. Two facts about precision that the interpreter's tg.cast
// and every compile-time evaluation share:
//
//  * roundToElemKind: the value an element of a given type holds for a
//    double (floats rounded to nearest, ties to even, in their format;
//    integers truncated toward zero; i1 is `!= 0`). tg.cast is exactly this
//    function (Kernels.h), and a value known at compile time is kept as the
//    double this function gives, so that it is what the type holds.
//
//  * foldDomainFor: the number domain in which compile time computes an op
//    (docs/Interpreter.md, "Compile-time evaluation"). A fold must give the
//    result the unfolded program gives at run time, and run-time f32 is f32
//    arithmetic: log(2) / log(16) is 0.25 in f32 but 0.2499999993 in f64 on
//    the same f32 operands, and a cast to an integer after it (a T5
//    relative-position bucket) turns that into a different integer.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_PRECISION_H
#define LOOM_INTERPRETER_PRECISION_H

#include "loom/Support/ElementTypes.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace loom::interp {

/// Rounds \p v to the nearest value (ties to even) of a binary floating point
/// format with \p precision significand bits (including the implicit one),
/// minimum normal exponent \p emin and maximum exponent \p emax; subnormals
/// are kept, overflow goes to infinity. One rounding, from the double.
inline double roundToFormat(double v, int precision, int emin, int emax) {
  if (!std::isfinite(v) || v == 0)
    return v;
  int e = 0;
  std::frexp(v, &e); // |v| in [2^(e-1), 2^e)
  int exponent = std::max(e - 1, emin);
  int ulp = exponent - (precision - 1);
  double r = std::ldexp(std::nearbyint(std::ldexp(v, -ulp)), ulp);
  double maxFinite = std::ldexp(2.0 - std::ldexp(1.0, 1 - precision), emax);
  if (std::fabs(r) > maxFinite)
    return std::copysign(std::numeric_limits<double>::infinity(), v);
  return r;
}

/// \p v rounded to TF32, the format a tensor core multiplies f32 operands
/// in: 11 significant bits, f32's exponent range (tg.round_tf32). Exact in
/// f32; for an f32 \p v the same as rounding its bits to the 13th
/// (lib/Conversion/TGToLinalg/ExpandTF32.cpp).
inline double roundToTF32(double v) { return roundToFormat(v, 11, -126, 127); }

/// The value an element of type \p kind holds for \p v: the nearest value
/// of a float format (one rounding from the double, ties to even), an
/// integer truncated toward zero (without -0), `v != 0` for i1. tg.cast's
/// definition.
inline double roundToElemKind(double v, ElemKind kind) {
  switch (kind) {
  case ElemKind::F64:
    return v;
  case ElemKind::F32:
    return static_cast<double>(static_cast<float>(v));
  case ElemKind::F16:
    return roundToFormat(v, 11, -14, 15);
  case ElemKind::BF16:
    return roundToFormat(v, 8, -126, 127);
  case ElemKind::I64:
  case ElemKind::I32:
    return std::trunc(v) + 0.0; // integers have no -0
  case ElemKind::I1:
    return v != 0 ? 1.0 : 0.0;
  }
  llvm_unreachable("unknown ElemKind");
}

/// The interpreter domain in which compile time computes an op.
enum class FoldDomain {
  /// F32Domain: each primitive in float, as the program computes at run
  /// time.
  F32,
  /// F64Domain: exact on integers below 2^53, f64 where the program
  /// computes in f64.
  F64,
};

/// The domain in which compile time computes an op whose operands and
/// results have element types \p kinds. The rule:
///
///  * an op with an f32, f16 or bf16 operand or result computes in F32:
///    f32 ops are f32 arithmetic at run time, and the CPU code computes an
///    f16 or bf16 op in f32 (x86 has no half-precision arithmetic; LLVM
///    promotes each operation) and rounds its result to the format, which
///    the caller does with roundToElemKind;
///  * an op entirely in f64 and integers (and i1) computes in F64, exact for
///    integers below 2^53 (the shapes and indices such ops compute);
///  * an op that only converts (\p convertsOnly: tg.cast, whose one
///    rounding is roundToElemKind of its operand) computes in F64 whatever
///    its types, where its operand is held exactly: in F32 an f64 operand
///    would be rounded twice, to f32 and then to f16.
inline FoldDomain foldDomainFor(llvm::ArrayRef<ElemKind> kinds,
                                bool convertsOnly) {
  if (convertsOnly)
    return FoldDomain::F64;
  for (ElemKind kind : kinds) {
    switch (kind) {
    case ElemKind::F32:
    case ElemKind::F16:
    case ElemKind::BF16:
      return FoldDomain::F32;
    case ElemKind::F64:
    case ElemKind::I64:
    case ElemKind::I32:
    case ElemKind::I1:
      break;
    }
  }
  return FoldDomain::F64;
}

} // namespace loom::interp

#endif // LOOM_INTERPRETER_PRECISION_H
