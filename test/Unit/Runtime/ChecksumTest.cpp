//===- ChecksumTest.cpp - The artifact checksum ---------------------------===//
//
// Part of Loom. include/loom/Runtime/Checksum.h: loom_checksum64 keeps the
// values of the format (docs/Artifact.md; known values computed by the
// definition's loop written out in Python), and a checksum taken in pieces
// of whole words (loom_checksum_words, then loom_checksum_end: how the
// runtime hashes a weights file while giving back its pages) equals the
// whole's for every split and tail; so does loom::ChecksumStream's, fed
// pieces of any size (how the compiler checksums a weights file it writes).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Checksum.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

TEST(Checksum, KnownValues) {
  std::vector<unsigned char> hundred(100);
  for (size_t i = 0; i < hundred.size(); ++i)
    hundred[i] = static_cast<unsigned char>(i);
  EXPECT_EQ(loom_checksum64(nullptr, 0), 0xe9e0033e3badaf36ULL);
  EXPECT_EQ(loom_checksum64("loom", 4), 0xfe488b1a21636619ULL);
  EXPECT_EQ(loom_checksum64(hundred.data(), hundred.size()),
            0x9d446a75d003db80ULL);
}

TEST(Checksum, PiecesOfWholeWordsEqualTheWhole) {
  std::vector<unsigned char> bytes(203);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<unsigned char>(i * 37 + 11);
  for (size_t size : {size_t(0), size_t(7), size_t(8), size_t(64), size_t(203)})
    for (size_t piece = 1; piece <= 5; ++piece) {
      // Pieces of `piece` words, then the remaining words and the tail.
      uint64_t h = LOOM_CHECKSUM_START;
      size_t at = 0;
      for (; size - at >= 8 * piece; at += 8 * piece)
        h = loom_checksum_words(h, bytes.data() + at, piece);
      size_t words = (size - at) / 8;
      h = loom_checksum_words(h, bytes.data() + at, words);
      size_t rest = at + 8 * words;
      h = loom_checksum_end(h, bytes.data() + rest, size - rest, size);
      EXPECT_EQ(h, loom_checksum64(bytes.data(), size))
          << size << " bytes in pieces of " << piece << " word(s)";
    }
}

TEST(Checksum, StreamOfPiecesOfAnySizeEqualsTheWhole) {
  std::vector<unsigned char> bytes(203);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<unsigned char>(i * 53 + 5);
  for (size_t size : {size_t(0), size_t(5), size_t(8), size_t(61), size_t(203)})
    for (size_t piece : {size_t(1), size_t(3), size_t(7), size_t(8), size_t(13),
                         size_t(300)}) {
      loom::ChecksumStream stream;
      for (size_t at = 0; at < size; at += piece)
        stream.add(bytes.data() + at, std::min(piece, size - at));
      EXPECT_EQ(stream.value(), loom_checksum64(bytes.data(), size))
          << size << " bytes in pieces of " << piece;
    }
  // Pieces of different sizes in one stream, empty ones among them.
  loom::ChecksumStream mixed;
  size_t at = 0;
  for (size_t piece : {3, 0, 9, 1, 16, 2, 0, 5}) {
    mixed.add(bytes.data() + at, piece);
    at += piece;
  }
  EXPECT_EQ(mixed.value(), loom_checksum64(bytes.data(), at));
}

} // namespace
