//===- FashionMNIST.cpp - IDX reader for (Fashion-)MNIST ------------------===//
#include "FashionMNIST.h"

#include <cmath>
#include <sys/stat.h>
#include <zlib.h>

namespace loom::train {

static bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool readIdx(const std::string &path, std::vector<uint8_t> &bytes,
             std::vector<int64_t> &dims, std::string &error) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) {
    error = path + ": cannot open";
    return false;
  }
  auto fail = [&](const std::string &why) {
    error = path + ": " + why;
    gzclose(f);
    return false;
  };
  unsigned char header[4];
  if (gzread(f, header, 4) != 4)
    return fail("truncated IDX header");
  // Magic: two zero bytes, the element type (0x08: unsigned byte), the rank.
  if (header[0] != 0 || header[1] != 0)
    return fail("not an IDX file (bad magic)");
  if (header[2] != 0x08)
    return fail("IDX element type " + std::to_string(header[2]) +
                " is not unsigned byte (0x08)");
  int rank = header[3];
  if (rank < 1 || rank > 3)
    return fail("IDX rank " + std::to_string(rank) + " is not 1 to 3");
  dims.assign(rank, 0);
  int64_t total = 1;
  for (int i = 0; i < rank; ++i) {
    unsigned char d[4];
    if (gzread(f, d, 4) != 4)
      return fail("truncated IDX header");
    dims[i] = (int64_t(d[0]) << 24) | (int64_t(d[1]) << 16) |
              (int64_t(d[2]) << 8) | int64_t(d[3]);
    if (dims[i] <= 0 || dims[i] > (int64_t(1) << 24))
      return fail("implausible IDX dimension " + std::to_string(dims[i]));
    total *= dims[i];
    if (total > (int64_t(1) << 32))
      return fail("IDX file too large");
  }
  bytes.resize(size_t(total));
  int64_t done = 0;
  while (done < total) {
    unsigned chunk = unsigned(std::min<int64_t>(total - done, 1 << 30));
    int got = gzread(f, bytes.data() + done, chunk);
    if (got <= 0)
      return fail("truncated: " + std::to_string(done) + " of " +
                  std::to_string(total) + " data bytes");
    done += got;
  }
  unsigned char extra;
  if (gzread(f, &extra, 1) != 0)
    return fail("trailing bytes after " + std::to_string(total) + " data bytes");
  gzclose(f);
  return true;
}

static std::string installHint() {
  return std::string(" (the Debian package ") + kDataPackage + " installs it under " +
         kDefaultDataDir + ": apt-get install " + kDataPackage +
         "; --data names another directory holding the four IDX files)";
}

static bool findFile(const std::string &dir, const std::string &base,
                     std::string &path, std::string &error) {
  for (const char *suffix : {".gz", ""}) {
    std::string p = dir + "/" + base + suffix;
    if (exists(p)) {
      path = p;
      return true;
    }
  }
  error = "Fashion-MNIST not found: " + dir + "/" + base + "(.gz) is missing" + installHint();
  return false;
}

static bool loadSplit(const std::string &dir, const std::string &prefix,
                      Split &split, std::string &error) {
  std::string imagesPath, labelsPath;
  if (!findFile(dir, prefix + "-images-idx3-ubyte", imagesPath, error) ||
      !findFile(dir, prefix + "-labels-idx1-ubyte", labelsPath, error))
    return false;
  std::vector<uint8_t> pixels, labels;
  std::vector<int64_t> idims, ldims;
  if (!readIdx(imagesPath, pixels, idims, error) ||
      !readIdx(labelsPath, labels, ldims, error))
    return false;
  if (idims.size() != 3) {
    error = imagesPath + ": images have rank " + std::to_string(idims.size()) +
            ", expected 3 (count, rows, cols)";
    return false;
  }
  if (ldims.size() != 1 || ldims[0] != idims[0]) {
    error = labelsPath + ": " + std::to_string(ldims[0]) + " labels for " +
            std::to_string(idims[0]) + " images";
    return false;
  }
  split.count = idims[0];
  split.rows = idims[1];
  split.cols = idims[2];
  split.images.resize(pixels.size());
  for (size_t i = 0; i < pixels.size(); ++i)
    split.images[i] = float(pixels[i]) / 255.0f;
  split.labels.resize(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] >= 10) {
      error = labelsPath + ": label " + std::to_string(labels[i]) + " at " +
              std::to_string(i) + " is not a class in [0, 10)";
      return false;
    }
    split.labels[i] = labels[i];
  }
  return true;
}

bool loadDataset(const std::string &dir, Dataset &data, std::string &error) {
  if (!exists(dir)) {
    error = "Fashion-MNIST not found: " + dir + " does not exist" + installHint();
    return false;
  }
  data.dir = dir;
  return loadSplit(dir, "train", data.train, error) &&
         loadSplit(dir, "t10k", data.test, error);
}

void meanStd(const Split &split, double &mean, double &std) {
  double sum = 0, sq = 0;
  for (float x : split.images) {
    sum += x;
    sq += double(x) * x;
  }
  double n = double(split.images.size());
  mean = n ? sum / n : 0;
  std = n ? std::sqrt(std::max(0.0, sq / n - mean * mean)) : 1;
}

void standardize(Split &split, double mean, double std) {
  float m = float(mean), inv = float(1.0 / std);
  for (float &x : split.images)
    x = (x - m) * inv;
}

} // namespace loom::train
