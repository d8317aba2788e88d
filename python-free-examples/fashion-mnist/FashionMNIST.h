//===- FashionMNIST.h - IDX reader for (Fashion-)MNIST -----------*- C++ -*-===//
//
// Part of Loom. Reads the four IDX files of Fashion-MNIST (Debian's
// dataset-fashion-mnist installs them, gzip'd, under
// /usr/share/datasets/fashion-mnist); plain files are read as well.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_EXAMPLES_FASHIONMNIST_H
#define LOOM_EXAMPLES_FASHIONMNIST_H

#include <cstdint>
#include <string>
#include <vector>

namespace loom::train {

/// One split: `count` images of rows x cols pixels (floats, after
/// normalisation) and their labels.
struct Split {
  int64_t count = 0, rows = 0, cols = 0;
  std::vector<float> images; // count * rows * cols
  std::vector<int64_t> labels;
  int64_t pixels() const { return rows * cols; }
};

struct Dataset {
  std::string dir;
  Split train, test;
};

/// The directory the Debian package installs to.
inline constexpr const char *kDefaultDataDir = "/usr/share/datasets/fashion-mnist";
inline constexpr const char *kDataPackage = "dataset-fashion-mnist";

/// Reads one IDX file (FILE or FILE.gz, gzip'd or not: zlib reads both).
/// Images (magic 0x00000803, 3 dimensions, unsigned bytes) go to `bytes` with
/// their dimensions in `dims`; labels (0x00000801, 1 dimension) likewise.
/// Returns false with a message naming the file on a bad or short file.
bool readIdx(const std::string &path, std::vector<uint8_t> &bytes,
             std::vector<int64_t> &dims, std::string &error);

/// Reads train-images-idx3-ubyte, train-labels-idx1-ubyte,
/// t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte (each possibly .gz) from
/// `dir`, scales pixels to [0, 1] and checks that labels lie in [0, 10).
/// A missing directory or file names the Debian package to install.
bool loadDataset(const std::string &dir, Dataset &data, std::string &error);

/// Per-pixel statistics of a split (over all its pixels).
void meanStd(const Split &split, double &mean, double &std);
/// x = (x - mean) / std for every pixel.
void standardize(Split &split, double mean, double std);

} // namespace loom::train

#endif
