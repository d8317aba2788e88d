//===- NarrowFloats.h - f16 and bf16 bit patterns to and from float -*- C++
//-*-===//
//
// Part of Loom. The conversions between float and the 16-bit floats (IEEE
// binary16, bfloat16) that the safetensors reader and writer, and the
// runtime-only tools (loom-gpu-run, no LLVM), share: header-only, the
// standard library alone.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_NARROWFLOATS_H
#define LOOM_SUPPORT_NARROWFLOATS_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace loom::safetensors {

namespace narrow_detail {
/// The bits of \p from read as a \p To of the same size.
template <class To, class From> To bitsAs(From from) {
  static_assert(sizeof(To) == sizeof(From), "sizes differ");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}
} // namespace narrow_detail

/// Converts an IEEE 754 binary16 bit pattern to float (exact).
inline float halfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) // Infinity or NaN (payload kept).
    return narrow_detail::bitsAs<float>(sign | 0x7f800000u | (mantissa << 13));
  return narrow_detail::bitsAs<float>(sign | ((exponent + 112) << 23) |
                                      (mantissa << 13));
}

/// Converts a float to an IEEE 754 binary16 bit pattern, rounding to nearest
/// even. Values that round past the largest finite half become infinity; NaNs
/// stay NaNs (quiet, sign and top payload bits kept).
inline uint16_t floatToHalf(float value) {
  uint32_t bits = narrow_detail::bitsAs<uint32_t>(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffffu;

  if (magnitude >= 0x7f800000u) {
    if (magnitude == 0x7f800000u)
      return sign | 0x7c00; // Infinity.
    // NaN: keep the top payload bits, force the quiet bit so it stays a NaN.
    return sign | 0x7e00 | static_cast<uint16_t>((magnitude >> 13) & 0x3ff);
  }
  // 65520 = 65504 + half an ulp: it and everything above rounds to infinity
  // (ties go to the even neighbour, which is infinity).
  if (magnitude >= 0x477ff000u)
    return sign | 0x7c00;

  uint32_t exponent = magnitude >> 23;
  uint32_t mantissa = magnitude & 0x7fffffu;
  if (exponent < 113) {
    // Below 2^-14: the result is a half subnormal (or zero), an integer
    // multiple of 2^-24. value = (mantissa | implicit) * 2^(exponent - 150).
    if (exponent == 0)
      return sign; // Float zero or subnormal (< 2^-126) rounds to zero.
    uint32_t full = mantissa | 0x800000u;
    uint32_t shift = 126 - exponent; // >= 14
    if (shift > 24)
      return sign; // < 2^-25, at most half of the smallest subnormal.
    uint32_t quotient = full >> shift;
    uint32_t remainder = full & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (quotient & 1)))
      ++quotient; // May carry into the smallest normal, which is correct.
    return sign | static_cast<uint16_t>(quotient);
  }

  uint32_t result = ((exponent - 112) << 10) | (mantissa >> 13);
  uint32_t remainder = mantissa & 0x1fff;
  if (remainder > 0x1000 || (remainder == 0x1000 && (result & 1)))
    ++result; // A carry into the exponent is correct rounding.
  return sign | static_cast<uint16_t>(result);
}

/// Converts a bfloat16 bit pattern to float (exact).
inline float bfloat16ToFloat(uint16_t bits) {
  return narrow_detail::bitsAs<float>(static_cast<uint32_t>(bits) << 16);
}

/// Converts a float to a bfloat16 bit pattern, rounding to nearest even.
/// NaNs stay NaNs (quiet, sign and top payload bits kept).
inline uint16_t floatToBFloat16(float value) {
  uint32_t bits = narrow_detail::bitsAs<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: truncate, keep it quiet.
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t roundingBias = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

} // namespace loom::safetensors

#endif // LOOM_SUPPORT_NARROWFLOATS_H
