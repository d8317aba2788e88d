//===- DynamicSymbolsTest.cpp - Libraries opened at run time --------------===//
//
// Part of Loom. lib/Runtime/DynamicSymbols.h: how the runtime opens the CUDA
// driver, cuBLASLt, cuDNN, NCCL and the Vulkan loader, tried on libm (which
// every process here has): the variable's file before the sonames, what was
// tried, a table's first missing required symbol, optional symbols left null.
//
//===----------------------------------------------------------------------===//

#include "../../../lib/Runtime/DynamicSymbols.h"

#include "gtest/gtest.h"

#include <cstdlib>

using namespace loom::rt;

namespace {

constexpr const char *kVariable = "LOOM_TEST_DYNAMIC_SYMBOLS_LIBRARY";

using Unary = double(double);

TEST(DynamicSymbolsTest, OpensTheFirstSonameThatOpens) {
  unsetenv(kVariable);
  DynamicLibrary m;
  ASSERT_TRUE(m.open(kVariable, {"libloom-no-such-library.so.1", "libm.so.6",
                                 "libm-never-tried.so"}));
  EXPECT_EQ(m.tried(), "libloom-no-such-library.so.1, libm.so.6");
  EXPECT_NE(m.symbol("cos"), nullptr);
}

TEST(DynamicSymbolsTest, ResolvesATableAtOnce) {
  DynamicLibrary m;
  ASSERT_TRUE(m.open(nullptr, {"libm.so.6"}));
  Unary *cosine = nullptr, *sine = nullptr, *absent = nullptr;
  EXPECT_EQ(m.resolve({requiredSymbol("cos", cosine),
                       optionalSymbol("loom_no_such_symbol", absent),
                       requiredSymbol("sin", sine)}),
            nullptr);
  ASSERT_NE(cosine, nullptr);
  ASSERT_NE(sine, nullptr);
  EXPECT_EQ(absent, nullptr);
  EXPECT_DOUBLE_EQ(cosine(0.0), 1.0);
  EXPECT_DOUBLE_EQ(sine(0.0), 0.0);
}

TEST(DynamicSymbolsTest, NamesTheFirstMissingRequiredSymbol) {
  DynamicLibrary m;
  ASSERT_TRUE(m.open(nullptr, {"libm.so.6"}));
  Unary *cosine = nullptr, *first = nullptr, *second = nullptr;
  const char *missing = m.resolve({requiredSymbol("cos", cosine),
                                   requiredSymbol("loom_missing_1", first),
                                   requiredSymbol("loom_missing_2", second)});
  ASSERT_NE(missing, nullptr);
  EXPECT_STREQ(missing, "loom_missing_1");
  EXPECT_NE(cosine, nullptr);
}

TEST(DynamicSymbolsTest, TheVariableNamesTheOnlyFileTried) {
  setenv(kVariable, "/nonexistent/libloom-none.so", 1);
  DynamicLibrary m;
  EXPECT_FALSE(m.open(kVariable, {"libm.so.6"}));
  EXPECT_FALSE(m.isOpen());
  EXPECT_EQ(m.tried(), "/nonexistent/libloom-none.so");
  EXPECT_NE(m.reason().find("libloom-none.so"), std::string::npos)
      << m.reason();
  EXPECT_EQ(m.symbol("cos"), nullptr);
  // An empty variable is unset.
  setenv(kVariable, "", 1);
  DynamicLibrary fallback;
  EXPECT_TRUE(fallback.open(kVariable, {"libm.so.6"}));
  unsetenv(kVariable);
}

TEST(DynamicSymbolsTest, ResolvesThroughAnotherLookup) {
  // As the CUDA driver's entry points come through cuGetProcAddress.
  Unary *f = nullptr;
  int asked = 0;
  SymbolLookup lookup = [&](const char *name) -> void * {
    ++asked;
    return std::string(name) == "half"
               ? reinterpret_cast<void *>(+[](double x) { return x / 2; })
               : nullptr;
  };
  EXPECT_EQ(resolveSymbols({requiredSymbol("half", f)}, lookup), nullptr);
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f(3.0), 1.5);
  EXPECT_STREQ(resolveSymbols({requiredSymbol("double", f)}, lookup), "double");
  EXPECT_EQ(asked, 2);
}

} // namespace
