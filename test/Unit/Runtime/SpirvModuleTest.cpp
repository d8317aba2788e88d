//===- SpirvModuleTest.cpp - A SPIR-V module cut to one entry point -------===//
//
// Part of Loom. lib/Runtime/Vulkan/SpirvModule.h: what the Vulkan device gives the
// driver for each pipeline.
//
//===----------------------------------------------------------------------===//

#include "../../../lib/Runtime/Vulkan/SpirvModule.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstring>

using loom::rt::spirv::EntryPointModules;

namespace {

/// A SPIR-V module written instruction by instruction.
struct Writer {
  std::vector<uint32_t> words{0x07230203u, 0x00010300u, 0, 100, 0};
  void op(uint32_t opcode, std::vector<uint32_t> operands) {
    words.push_back(uint32_t(operands.size() + 1) << 16 | opcode);
    words.insert(words.end(), operands.begin(), operands.end());
  }
  /// \p text as a literal string's words.
  static std::vector<uint32_t> text(const std::string &s) {
    std::vector<uint32_t> w(s.size() / 4 + 1, 0);
    std::memcpy(w.data(), s.data(), s.size());
    return w;
  }
  void entryPoint(uint32_t function, const std::string &name,
                  std::vector<uint32_t> interface) {
    std::vector<uint32_t> ops{5, function};
    for (uint32_t w : text(name))
      ops.push_back(w);
    ops.insert(ops.end(), interface.begin(), interface.end());
    op(15, ops);
  }
};

// Ids: 1 void, 2 fn type, 3 uint, 4 ptr StorageBuffer uint, 5 ptr Input uint,
// 6 constant 7; variables 10 (a's buffer), 11 (b's buffer), 12 (an Input
// builtin a names in its interface); functions 20 (a), 21 (helper a calls),
// 22 (b); 30.. results inside functions.
std::vector<uint32_t> twoKernels() {
  Writer w;
  w.op(17, {1});       // OpCapability Shader
  w.op(14, {0, 1});    // OpMemoryModel Logical GLSL450
  w.entryPoint(20, "a", {12});
  w.entryPoint(22, "b", {});
  w.op(16, {20, 17, 128, 1, 1}); // LocalSize
  w.op(16, {22, 17, 64, 1, 1});
  w.op(5, {20, 'a'});
  w.op(5, {22, 'b'});
  w.op(5, {31, 'x'}); // a local of b
  w.op(71, {10, 34, 0});  // DescriptorSet 0
  w.op(71, {10, 33, 0});  // Binding 0
  w.op(71, {11, 34, 0});
  w.op(71, {11, 33, 0});
  w.op(71, {12, 11, 28}); // BuiltIn LocalInvocationIndex
  w.op(71, {31, 42});     // NoContraction on b's local
  w.op(19, {1});          // OpTypeVoid
  w.op(33, {2, 1});       // OpTypeFunction
  w.op(21, {3, 32, 0});   // OpTypeInt 32
  w.op(32, {4, 12, 3});   // OpTypePointer StorageBuffer
  w.op(32, {5, 1, 3});    // OpTypePointer Input
  w.op(43, {3, 6, 7});    // OpConstant 7
  w.op(59, {4, 10, 12});  // OpVariable
  w.op(59, {4, 11, 12});
  w.op(59, {5, 12, 1});
  // a: calls the helper, stores the builtin into its buffer.
  w.op(54, {1, 20, 0, 2});
  w.op(248, {40});            // OpLabel
  w.op(57, {1, 41, 21});      // OpFunctionCall helper
  w.op(61, {3, 42, 12});      // OpLoad builtin
  w.op(62, {10, 42});         // OpStore
  w.op(253, {});              // OpReturn
  w.op(56, {});
  w.op(54, {1, 21, 0, 2});    // helper
  w.op(248, {43});
  w.op(253, {});
  w.op(56, {});
  // b: stores the constant into its buffer.
  w.op(54, {1, 22, 0, 2});
  w.op(248, {44});
  w.op(128, {3, 31, 6, 6});   // OpIAdd
  w.op(62, {11, 31});
  w.op(253, {});
  w.op(56, {});
  return w.words;
}

/// The instructions of \p module as (opcode, first operand) pairs.
std::vector<std::pair<uint32_t, uint32_t>>
instructions(const std::vector<uint32_t> &module) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (size_t at = 5; at < module.size(); at += module[at] >> 16)
    out.push_back({module[at] & 0xffff,
                   (module[at] >> 16) > 1 ? module[at + 1] : 0});
  return out;
}

bool has(const std::vector<uint32_t> &module, uint32_t opcode,
         uint32_t first) {
  auto all = instructions(module);
  return std::find(all.begin(), all.end(), std::make_pair(opcode, first)) !=
         all.end();
}

/// Whether \p module defines the function \p id.
bool defines(const std::vector<uint32_t> &module, uint32_t id) {
  for (size_t at = 5; at < module.size(); at += module[at] >> 16)
    if ((module[at] & 0xffff) == 54 && module[at + 2] == id)
      return true;
  return false;
}

bool definesVariable(const std::vector<uint32_t> &module, uint32_t id) {
  for (size_t at = 5; at < module.size(); at += module[at] >> 16)
    if ((module[at] & 0xffff) == 59 && module[at + 2] == id)
      return true;
  return false;
}

TEST(SpirvModule, CutKeepsTheEntryPointAndWhatItCalls) {
  EntryPointModules m;
  std::string error;
  ASSERT_TRUE(m.index(twoKernels(), error)) << error;
  std::vector<uint32_t> a;
  ASSERT_TRUE(m.cut(20, a, error)) << error;
  EXPECT_EQ(a[3], 100u); // the bound stays
  EXPECT_TRUE(defines(a, 20));
  EXPECT_TRUE(defines(a, 21)); // called
  EXPECT_FALSE(defines(a, 22));
  EXPECT_TRUE(definesVariable(a, 10));
  EXPECT_TRUE(definesVariable(a, 12)); // named by the interface
  EXPECT_FALSE(definesVariable(a, 11));
  EXPECT_TRUE(has(a, 15, 5) && !has(a, 16, 22) && has(a, 16, 20));
  EXPECT_TRUE(has(a, 5, 20));
  EXPECT_FALSE(has(a, 5, 22)); // b's name
  EXPECT_FALSE(has(a, 5, 31)); // b's local's name
  EXPECT_TRUE(has(a, 71, 10) && has(a, 71, 12));
  EXPECT_FALSE(has(a, 71, 11));
  EXPECT_FALSE(has(a, 71, 31));
  // Types and constants stay.
  EXPECT_TRUE(has(a, 19, 1) && has(a, 43, 3));
  // One OpEntryPoint, a's.
  auto all = instructions(a);
  EXPECT_EQ(std::count_if(all.begin(), all.end(),
                          [](auto &i) { return i.first == 15; }),
            1);
}

TEST(SpirvModule, CutOfTheOtherEntryPoint) {
  EntryPointModules m;
  std::string error;
  ASSERT_TRUE(m.index(twoKernels(), error)) << error;
  std::vector<uint32_t> b;
  ASSERT_TRUE(m.cut(22, b, error)) << error;
  EXPECT_TRUE(defines(b, 22));
  EXPECT_FALSE(defines(b, 20) || defines(b, 21));
  EXPECT_TRUE(definesVariable(b, 11));
  EXPECT_FALSE(definesVariable(b, 10) || definesVariable(b, 12));
  EXPECT_TRUE(has(b, 71, 31) && has(b, 5, 31) && has(b, 5, 22));
  EXPECT_FALSE(has(b, 71, 10) || has(b, 71, 12) || has(b, 5, 20));
  EXPECT_TRUE(has(b, 16, 22) && !has(b, 16, 20));
}

TEST(SpirvModule, Errors) {
  EntryPointModules m;
  std::string error;
  std::vector<uint32_t> words = twoKernels();
  ASSERT_TRUE(m.index(words, error)) << error;
  std::vector<uint32_t> out;
  EXPECT_FALSE(m.cut(21, out, error)); // a function, not an entry point's
  EXPECT_NE(error.find("no entry point"), std::string::npos) << error;

  EntryPointModules truncated;
  words.back() = 5u << 16 | 56; // OpFunctionEnd of 5 words
  EXPECT_FALSE(truncated.index(words, error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;

  EntryPointModules bad;
  EXPECT_FALSE(bad.index({1, 2, 3, 4, 5}, error));
  EXPECT_NE(error.find("magic"), std::string::npos) << error;
}

} // namespace
