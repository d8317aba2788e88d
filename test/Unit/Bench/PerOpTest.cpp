//===- PerOpTest.cpp - loom-bench-cpu --per-op's matching -------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//
//
// Which of Loom's steps ONNX Runtime's profiled nodes are put on
// (bench/cpu/PerOp.cpp), from the three files loom-bench-cpu joins, written
// here: the nodes of ONNX Runtime's NCHWc transformer are named after the
// tensor they write, and must still find the step of the node they replaced.
//
//===----------------------------------------------------------------------===//

#include "../../../bench/cpu/PerOp.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace loom::bench;
using llvm::StringRef;

namespace {

std::vector<std::string> origins(StringRef name) {
  std::vector<std::string> out;
  for (StringRef s : ortNodeOrigins(name))
    out.push_back(s.str());
  return out;
}

TEST(PerOp, OriginsOfFusedAndNchwcNodes) {
  using V = std::vector<std::string>;
  EXPECT_EQ(origins("/a/Conv"), (V{"/a/Conv", "/a"}));
  EXPECT_EQ(origins("/l0/MatMul/MatMulAddFusion"),
            (V{"/l0/MatMul/MatMulAddFusion", "/l0", "/l0/MatMul"}));
  EXPECT_EQ(origins("/a/Conv_output_0_nchwc"),
            (V{"/a/Conv_output_0_nchwc", "/a/Conv_output_0", "/a/Conv"}));
  EXPECT_EQ(origins("y_nchwc_token_12"), (V{"y_nchwc_token_12", "y"}));
  // Not an NCHWc node's name: nothing is cut.
  EXPECT_EQ(origins("x_output_0"), (V{"x_output_0"}));
  EXPECT_EQ(origins("ReorderInput_token_3"), (V{"ReorderInput_token_3"}));
}

void write(StringRef path, StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec) << path.str();
  os << text;
}

TEST(PerOp, NchwcNodesFindTheirSteps) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("perop", dir));
  auto file = [&](StringRef name) {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  };
  // Step 0: a PyTorch convolution and its ReLU; step 1: a node without a
  // name, which the importer names after its output; step 2: a pool.
  write(file("steps.json"), R"({"entries": [{"name": "main", "steps": [
    {"index": 0, "kind": "onednn.conv", "ops": ["tg.conv", "tg.relu"],
     "sources": ["/b/Conv", "/b/Relu"]},
    {"index": 1, "kind": "onednn.conv", "ops": ["tg.conv"],
     "sources": ["t7"]},
    {"index": 2, "kind": "onednn.pool", "ops": ["tg.max_pool"],
     "sources": ["/p/MaxPool"]}]}]})");
  write(file("loom.json"), R"({"entries": [{"name": "main", "runs": 2,
    "steps": [{"median_ms": 1.0, "count": 2}, {"median_ms": 0.5, "count": 2},
              {"median_ms": 0.25, "count": 2}]}]})");
  write(file("ort.json"), R"({"runs": 2, "nodes": [
    {"name": "/b/Relu_output_0_nchwc", "op": "Conv", "count": 2,
     "median_ms": 0.75},
    {"name": "t7_nchwc_token_4", "op": "Conv", "count": 2,
     "median_ms": 0.5},
    {"name": "/p/MaxPool", "op": "MaxPool", "count": 2, "median_ms": 0.125},
    {"name": "ReorderOutput", "op": "ReorderOutput", "count": 2,
     "median_ms": 0.0625}]})");
  auto table = buildPerOpTable(file("steps.json"), file("loom.json"),
                               file("ort.json"));
  ASSERT_TRUE(bool(table)) << llvm::toString(table.takeError());
  ASSERT_EQ(table->steps.size(), 3u);
  EXPECT_EQ(table->steps[0].ortNodes,
            std::vector<std::string>{"/b/Relu_output_0_nchwc"});
  EXPECT_DOUBLE_EQ(table->steps[0].ortMs, 0.75);
  EXPECT_EQ(table->steps[1].ortNodes,
            std::vector<std::string>{"t7_nchwc_token_4"});
  EXPECT_DOUBLE_EQ(table->steps[2].ortMs, 0.125);
  ASSERT_EQ(table->unmatched.size(), 1u);
  EXPECT_EQ(table->unmatched[0].op, "ReorderOutput");
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
