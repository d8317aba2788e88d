//===- Bandwidth.h - This machine's copy and read bandwidth -----*- C++ -*-===//
//
// Part of Loom. The physical limit of batch-1 decoding, measured in the same
// run as the decoders: a memcpy of a large buffer split over the threads,
// and a read-only stream (a sum of 64-bit words) over the same buffer.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_DECODE_BANDWIDTH_H
#define LOOM_BENCH_DECODE_BANDWIDTH_H

#include <cstdint>

namespace loom::bench {

struct Bandwidth {
  int64_t bytes = 0;
  unsigned threads = 0, repeat = 0;
  /// memcpy of `bytes`: (read + written) bytes per second, STREAM's count,
  /// 2 * bytes / time; best of `repeat`.
  double copyGBps = 0;
  /// The same copy counted once: bytes / time.
  double copiedGBps = 0;
  /// A sum over `bytes`: bytes read per second; best of `repeat`.
  double readGBps = 0;
};

/// Measures both over a buffer of `bytes` (source and destination of the
/// copy each that size) on `threads` threads, best of `repeat`.
Bandwidth measureBandwidth(int64_t bytes, unsigned threads, unsigned repeat);

} // namespace loom::bench

#endif // LOOM_BENCH_DECODE_BANDWIDTH_H
