//===- SafeTensorsTest.cpp - Tests for the safetensors library --*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//
//
// Round trips, f16/bf16 conversion edge cases, and one test per rule of the
// strict reader, each on bytes crafted here (no files are checked in).
//
//===----------------------------------------------------------------------===//

#include "loom/Support/SafeTensors.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cfloat>
#include <cmath>
#include <limits>
#include <random>

using namespace loom::safetensors;
using llvm::StringRef;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

constexpr const char *kName = "hostile.safetensors";

/// Builds a file: 8-byte little-endian length, \p header, then \p dataBytes
/// bytes of \p fill.
std::string makeFile(StringRef header, size_t dataBytes = 0, uint8_t fill = 0) {
  std::string bytes(8, '\0');
  llvm::support::endian::write<uint64_t>(bytes.data(), header.size(),
                                         llvm::endianness::little);
  bytes += header.str();
  bytes.append(dataBytes, static_cast<char>(fill));
  return bytes;
}

/// Builds a file whose length field says \p length, followed by \p rest.
std::string makeRawFile(uint64_t length, StringRef rest) {
  std::string bytes(8, '\0');
  llvm::support::endian::write<uint64_t>(bytes.data(), length,
                                         llvm::endianness::little);
  bytes += rest.str();
  return bytes;
}

/// Parses \p bytes from an exactly-sized copy (no null terminator).
llvm::Expected<File> parseBytes(StringRef bytes, StringRef name = kName) {
  return File::parse(llvm::MemoryBuffer::getMemBufferCopy(bytes, name));
}

/// Returns the parse error message for \p bytes, or "<parsed>" on success.
std::string parseError(StringRef bytes) {
  llvm::Expected<File> file = parseBytes(bytes);
  if (file)
    return "<parsed>";
  return llvm::toString(file.takeError());
}

std::string errorText(llvm::Error err) {
  if (!err)
    return "<success>";
  return llvm::toString(std::move(err));
}

/// Expects \p message to start with the file name and contain each of
/// \p words.
void expectMessage(const std::string &message,
                   std::initializer_list<const char *> words,
                   StringRef path = kName) {
  EXPECT_TRUE(StringRef(message).starts_with((path + ": ").str()))
      << "message: " << message;
  for (const char *word : words)
    EXPECT_NE(message.find(word), std::string::npos)
        << "missing '" << word << "' in: " << message;
}

/// A header entry for a one-element F32 tensor at [begin, begin + 4).
std::string f32Entry(StringRef name, unsigned begin) {
  return ("\"" + name +
          "\":{\"dtype\":\"F32\",\"shape\":[1],"
          "\"data_offsets\":[" +
          llvm::Twine(begin) + "," + llvm::Twine(begin + 4) + "]}")
      .str();
}

//===----------------------------------------------------------------------===//
// DType helpers
//===----------------------------------------------------------------------===//

constexpr DType kAllDTypes[] = {DType::F64, DType::F32, DType::F16, DType::BF16,
                                DType::I64, DType::I32, DType::I16, DType::I8,
                                DType::U8,  DType::Bool};

TEST(SafeTensorsDType, NamesAndSizes) {
  EXPECT_EQ(dtypeName(DType::Bool), "BOOL");
  EXPECT_EQ(dtypeName(DType::BF16), "BF16");
  for (DType dtype : kAllDTypes) {
    std::optional<DType> parsed = parseDType(dtypeName(dtype));
    ASSERT_TRUE(parsed.has_value()) << dtypeName(dtype).str();
    EXPECT_EQ(*parsed, dtype);
  }
  EXPECT_FALSE(parseDType("f32").has_value());
  EXPECT_FALSE(parseDType("U32").has_value());
  EXPECT_FALSE(parseDType("").has_value());
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
  EXPECT_EQ(dtypeSize(DType::F32), 4u);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::I16), 2u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
  EXPECT_EQ(formatShape({2, 3}), "[2, 3]");
  EXPECT_EQ(formatShape({}), "[]");
}

TEST(SafeTensorsDType, NumElements) {
  TensorInfo info;
  EXPECT_EQ(info.numElements(), 1); // Scalar.
  info.shape = {2, 3, 4};
  EXPECT_EQ(info.numElements(), 24);
  info.shape = {int64_t(1) << 62, int64_t(1) << 62, 0};
  EXPECT_EQ(info.numElements(), 0);
  info.shape = {int64_t(1) << 62, 4};
  EXPECT_EQ(info.numElements(), -1);
  info.shape = {-1};
  EXPECT_EQ(info.numElements(), -1);
}

//===----------------------------------------------------------------------===//
// Half precision
//===----------------------------------------------------------------------===//

float fromBits(uint32_t bits) { return llvm::bit_cast<float>(bits); }
uint32_t toBits(float value) { return llvm::bit_cast<uint32_t>(value); }

TEST(SafeTensorsHalf, Zeros) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(toBits(halfToFloat(0x0000)), toBits(0.0f));
  EXPECT_EQ(toBits(halfToFloat(0x8000)), toBits(-0.0f));
  // Float subnormals are far below the half range.
  EXPECT_EQ(floatToHalf(fromBits(0x00000001)), 0x0000);
  EXPECT_EQ(floatToHalf(-FLT_MIN), 0x8000);
}

TEST(SafeTensorsHalf, Subnormals) {
  const float minSub = std::ldexp(1.0f, -24);
  EXPECT_EQ(halfToFloat(0x0001), minSub);
  EXPECT_EQ(halfToFloat(0x8001), -minSub);
  EXPECT_EQ(halfToFloat(0x03ff), 1023 * minSub);
  EXPECT_EQ(halfToFloat(0x0400), std::ldexp(1.0f, -14)); // Smallest normal.
  EXPECT_EQ(floatToHalf(minSub), 0x0001);
  EXPECT_EQ(floatToHalf(1023 * minSub), 0x03ff);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400);
  // Half of the smallest subnormal ties to even (zero); just above rounds up.
  EXPECT_EQ(floatToHalf(minSub / 2), 0x0000);
  EXPECT_EQ(floatToHalf(std::nextafter(minSub / 2, 1.0f)), 0x0001);
  EXPECT_EQ(floatToHalf(-minSub / 2), 0x8000);
  // 1.5 and 2.5 units tie to 2; 3.5 ties to 4.
  EXPECT_EQ(floatToHalf(1.5f * minSub), 0x0002);
  EXPECT_EQ(floatToHalf(2.5f * minSub), 0x0002);
  EXPECT_EQ(floatToHalf(3.5f * minSub), 0x0004);
  // Rounding up out of the subnormal range gives the smallest normal.
  EXPECT_EQ(floatToHalf(1023.5f * minSub), 0x0400);
}

TEST(SafeTensorsHalf, MaxAndInfinity) {
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.996f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // Tie rounds to even: infinity.
  EXPECT_EQ(floatToHalf(-65520.0f), 0xfc00);
  EXPECT_EQ(floatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(floatToHalf(FLT_MAX), 0x7c00);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(floatToHalf(inf), 0x7c00);
  EXPECT_EQ(floatToHalf(-inf), 0xfc00);
  EXPECT_EQ(halfToFloat(0x7c00), inf);
  EXPECT_EQ(halfToFloat(0xfc00), -inf);
}

TEST(SafeTensorsHalf, NaN) {
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7c01))); // Signalling.
  EXPECT_TRUE(std::isnan(halfToFloat(0xfe00)));
  uint16_t h = floatToHalf(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(h & 0x7c00, 0x7c00);
  EXPECT_NE(h & 0x03ff, 0);
  // A NaN whose payload lives only in the low bits must not become infinity.
  uint16_t low = floatToHalf(fromBits(0x7f800001));
  EXPECT_EQ(low & 0x7c00, 0x7c00);
  EXPECT_NE(low & 0x03ff, 0);
  EXPECT_EQ(floatToHalf(fromBits(0xffc00000)) & 0x8000, 0x8000);
}

TEST(SafeTensorsHalf, RoundToNearestEven) {
  // Spacing at 1.0 is 2^-10.
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00); // Tie, even.
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(floatToHalf(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)),
            0x3c01);
  EXPECT_EQ(floatToHalf(std::nextafter(1.0f + std::ldexp(1.0f, -11), 0.0f)),
            0x3c00);
  // Rounding up across a binade: largest value below 2 rounds to 2.
  EXPECT_EQ(floatToHalf(std::nextafter(2.0f, 0.0f)), 0x4000);
  EXPECT_EQ(floatToHalf(-1.5f), 0xbe00);
  EXPECT_EQ(floatToHalf(0.1f), 0x2e66);
}

TEST(SafeTensorsHalf, ExhaustiveRoundTrip) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    float f = halfToFloat(static_cast<uint16_t>(h));
    if ((h & 0x7c00) == 0x7c00 && (h & 0x03ff)) {
      ASSERT_TRUE(std::isnan(f)) << h;
      ASSERT_TRUE(std::isnan(halfToFloat(floatToHalf(f)))) << h;
      continue;
    }
    ASSERT_EQ(floatToHalf(f), h) << "half bits " << h;
  }
}

/// Checks that \p rounded (a half or bfloat16 bit pattern decoded by
/// \p decode) is a correctly rounded (nearest, ties to even) image of \p x.
template <typename Decode>
void expectNearestEven(float x, uint16_t rounded, Decode decode) {
  if (std::isnan(x) || std::isinf(decode(rounded)))
    return; // Overflow cases are covered by dedicated tests.
  double exact = x;
  double got = decode(rounded);
  // Neighbours in the direction of larger and smaller magnitude.
  for (int delta : {-1, 1}) {
    uint16_t neighbour = static_cast<uint16_t>(rounded + delta);
    if ((rounded & 0x7fff) == 0 && delta == -1)
      neighbour = rounded ^ 0x8000; // Across zero.
    double other = decode(neighbour);
    if (std::isnan(other) || std::isinf(other))
      continue;
    double dGot = std::fabs(exact - got), dOther = std::fabs(exact - other);
    ASSERT_LE(dGot, dOther) << "x bits " << toBits(x);
    if (dGot == dOther && got != other) {
      ASSERT_EQ(rounded & 1, 0) << "tie not to even, x bits " << toBits(x);
    }
  }
}

TEST(SafeTensorsHalf, RandomFloatsRoundCorrectly) {
  std::mt19937 rng(12345);
  for (int i = 0; i < 200000; ++i) {
    // Exponents concentrated around the half range.
    uint32_t bits = rng();
    uint32_t exponent = 95 + rng() % 50; // 2^-32 .. 2^17
    bits = (bits & 0x807fffffu) | (exponent << 23);
    float x = fromBits(bits);
    expectNearestEven(x, floatToHalf(x), halfToFloat);
  }
}

//===----------------------------------------------------------------------===//
// bfloat16
//===----------------------------------------------------------------------===//

TEST(SafeTensorsBFloat16, EdgeCases) {
  EXPECT_EQ(floatToBFloat16(0.0f), 0x0000);
  EXPECT_EQ(floatToBFloat16(-0.0f), 0x8000);
  EXPECT_EQ(toBits(bfloat16ToFloat(0x8000)), toBits(-0.0f));
  // Subnormal: bfloat16 shares float's exponent range.
  EXPECT_EQ(bfloat16ToFloat(0x0001), std::ldexp(1.0f, -133));
  EXPECT_EQ(floatToBFloat16(std::ldexp(1.0f, -133)), 0x0001);
  EXPECT_EQ(floatToBFloat16(fromBits(0x00008000)), 0x0000); // Tie to even.
  EXPECT_EQ(floatToBFloat16(fromBits(0x00018000)), 0x0002); // Tie to even.
  // Max finite, and overflow to infinity.
  EXPECT_EQ(bfloat16ToFloat(0x7f7f), fromBits(0x7f7f0000));
  EXPECT_EQ(floatToBFloat16(fromBits(0x7f7f0000)), 0x7f7f);
  EXPECT_EQ(floatToBFloat16(fromBits(0x7f7f7fff)), 0x7f7f);
  EXPECT_EQ(floatToBFloat16(FLT_MAX), 0x7f80);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(floatToBFloat16(inf), 0x7f80);
  EXPECT_EQ(floatToBFloat16(-inf), 0xff80);
  EXPECT_EQ(bfloat16ToFloat(0xff80), -inf);
  // NaN stays NaN, including payloads only in the truncated bits.
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(
      floatToBFloat16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(
      std::isnan(bfloat16ToFloat(floatToBFloat16(fromBits(0x7f800001)))));
  EXPECT_TRUE(
      std::isnan(bfloat16ToFloat(floatToBFloat16(fromBits(0xff800001)))));
  // Rounding: spacing at 1.0 is 2^-7.
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBFloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(floatToBFloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(floatToBFloat16(std::nextafter(1.0f + std::ldexp(1.0f, -8), 2.f)),
            0x3f81);
  EXPECT_EQ(floatToBFloat16(std::nextafter(2.0f, 0.0f)), 0x4000);
}

TEST(SafeTensorsBFloat16, ExhaustiveAndRandom) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    float f = bfloat16ToFloat(static_cast<uint16_t>(b));
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(bfloat16ToFloat(floatToBFloat16(f))));
      continue;
    }
    ASSERT_EQ(floatToBFloat16(f), b);
  }
  std::mt19937 rng(54321);
  for (int i = 0; i < 200000; ++i) {
    float x = fromBits(rng());
    expectNearestEven(x, floatToBFloat16(x), bfloat16ToFloat);
  }
}

//===----------------------------------------------------------------------===//
// Round trips through Writer and File
//===----------------------------------------------------------------------===//

/// Gives each test its own temporary directory.
class SafeTensorsFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::error_code ec =
        llvm::sys::fs::createUniqueDirectory("loom-safetensors-test", Dir);
    ASSERT_FALSE(ec) << ec.message();
  }
  void TearDown() override {
    if (!Dir.empty())
      llvm::sys::fs::remove_directories(Dir);
  }
  std::string pathFor(StringRef name) const {
    llvm::SmallString<128> path(Dir);
    llvm::sys::path::append(path, name);
    return std::string(path);
  }
  /// Names of the entries in the temporary directory.
  std::vector<std::string> listDir() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(Dir, ec), end; !ec && it != end;
         it.increment(ec))
      names.push_back(llvm::sys::path::filename(it->path()).str());
    llvm::sort(names);
    return names;
  }

  llvm::SmallString<128> Dir;
};

struct Sample {
  const char *name;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<double> values;
};

std::vector<Sample> allDTypeSamples() {
  const double inf = std::numeric_limits<double>::infinity();
  return {
      {"f64", DType::F64, {2, 2}, {1.0, -0.0, 1e300, 0.1}},
      {"f32", DType::F32, {3}, {0.5, -3.25, inf}},
      {"f16", DType::F16, {2, 1}, {65504.0, -0.000060975551605224609375}},
      {"bf16", DType::BF16, {2}, {-2.5, 3.0e38}},
      {"i64",
       DType::I64,
       {3},
       {-9223372036854775808.0, 4611686018427387904.0, -7.0}},
      {"i32", DType::I32, {2}, {-2147483648.0, 2147483647.0}},
      {"i16", DType::I16, {2}, {-32768.0, 32767.0}},
      {"i8", DType::I8, {2}, {-128.0, 127.0}},
      {"u8", DType::U8, {3}, {0.0, 255.0, 17.0}},
      {"bool", DType::Bool, {2, 2}, {1.0, 0.0, 0.0, 1.0}},
  };
}

TEST_F(SafeTensorsFileTest, RoundTripEveryDType) {
  Writer writer;
  for (const Sample &sample : allDTypeSamples())
    ASSERT_EQ(errorText(writer.add(sample.name, sample.dtype, sample.shape,
                                   sample.values)),
              "<success>")
        << sample.name;
  writer.setMetadata("format", "pt");
  std::string path = pathFor("all.safetensors");
  ASSERT_EQ(errorText(writer.write(path)), "<success>");
  EXPECT_EQ(listDir(), std::vector<std::string>{"all.safetensors"});

  llvm::Expected<File> file = File::open(path);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(file->path(), path);
  ASSERT_EQ(file->tensors().size(), allDTypeSamples().size());
  for (size_t i = 1; i < file->tensors().size(); ++i)
    EXPECT_LT(file->tensors()[i - 1].name, file->tensors()[i].name);
  EXPECT_EQ(file->metadata().at("format"), "pt");

  for (const Sample &sample : allDTypeSamples()) {
    SCOPED_TRACE(sample.name);
    const TensorInfo *info = file->lookup(sample.name);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->dtype, sample.dtype);
    EXPECT_EQ(info->shape, sample.shape);
    EXPECT_EQ(file->rawBytes(*info).size(),
              sample.values.size() * dtypeSize(sample.dtype));
    EXPECT_EQ(errorText(file->check(sample.name, sample.dtype, sample.shape)),
              "<success>");
    llvm::Expected<std::vector<double>> values =
        file->readAsDouble(sample.name);
    ASSERT_TRUE(bool(values)) << llvm::toString(values.takeError());
    ASSERT_EQ(values->size(), sample.values.size());
    for (size_t i = 0; i < values->size(); ++i) {
      double expected = sample.values[i];
      if (sample.dtype == DType::F32)
        expected = static_cast<float>(expected);
      else if (sample.dtype == DType::F16)
        expected = halfToFloat(floatToHalf(static_cast<float>(expected)));
      else if (sample.dtype == DType::BF16)
        expected =
            bfloat16ToFloat(floatToBFloat16(static_cast<float>(expected)));
      EXPECT_EQ((*values)[i], expected) << "element " << i;
      EXPECT_EQ(std::signbit((*values)[i]), std::signbit(expected));
    }
    llvm::Expected<std::vector<float>> floats = file->readAsFloat(sample.name);
    ASSERT_TRUE(bool(floats)) << llvm::toString(floats.takeError());
    ASSERT_EQ(floats->size(), sample.values.size());
  }

  // Spot-check the stored little-endian bytes.
  llvm::ArrayRef<uint8_t> i16 = file->rawBytes(*file->lookup("i16"));
  EXPECT_EQ(std::vector<uint8_t>(i16.begin(), i16.end()),
            (std::vector<uint8_t>{0x00, 0x80, 0xff, 0x7f}));
  llvm::ArrayRef<uint8_t> f16 = file->rawBytes(*file->lookup("f16"));
  EXPECT_EQ(f16[0], 0xff);
  EXPECT_EQ(f16[1], 0x7b);
  // 1e300 does not fit in a float: readAsFloat gives infinity.
  llvm::Expected<std::vector<float>> f64 = file->readAsFloat("f64");
  ASSERT_TRUE(bool(f64));
  EXPECT_EQ((*f64)[2], std::numeric_limits<float>::infinity());
  EXPECT_EQ((*f64)[3], 0.1f);
}

TEST(SafeTensorsWriter, SerializeIsDeterministic) {
  Writer a, b;
  ASSERT_FALSE(bool(a.add("z", DType::F32, {1}, {1.0})));
  ASSERT_FALSE(bool(a.add("a", DType::U8, {3}, {1, 2, 3})));
  a.setMetadata("k", "v");
  b.setMetadata("k", "v");
  ASSERT_FALSE(bool(b.add("a", DType::U8, {3}, {1, 2, 3})));
  ASSERT_FALSE(bool(b.add("z", DType::F32, {1}, {1.0})));
  std::string bytes = a.serialize();
  EXPECT_EQ(bytes, b.serialize());

  uint64_t headerSize = llvm::support::endian::read<uint64_t>(
      bytes.data(), llvm::endianness::little);
  EXPECT_EQ(headerSize % 8, 0u);
  ASSERT_EQ(bytes.size(), 8 + headerSize + 3 + 4);
  StringRef header = StringRef(bytes).substr(8, headerSize);
  EXPECT_TRUE(header.starts_with("{\"__metadata__\":{\"k\":\"v\"},\"a\":"))
      << header.str();
  EXPECT_EQ(StringRef(bytes).substr(8 + headerSize, 3), "\x01\x02\x03");

  llvm::Expected<File> file = parseBytes(bytes);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(file->lookup("a")->begin, 0u);
  EXPECT_EQ(file->lookup("z")->begin, 3u);
}

TEST(SafeTensorsWriter, ViewsAreWrittenFromWhereTheyAre) {
  // addView's bytes are not copied: a change before writing shows; the file
  // is the one addRaw would give, and writeTo(), toBuffer() and
  // serializedSize() agree with serialize().
  std::vector<uint8_t> odd = {1, 0, 1};
  std::vector<uint8_t> f32 = {0, 0, 0x80, 0x3f, 0, 0, 0, 0x40};
  Writer view, copy;
  ASSERT_FALSE(bool(view.addView("b", DType::Bool, {3}, odd)));
  ASSERT_FALSE(bool(view.addView("a", DType::F32, {2}, f32)));
  ASSERT_FALSE(bool(view.add("c", DType::I16, {1}, {-2})));
  f32[7] = 0x41; // 1.0, 8.0
  ASSERT_FALSE(bool(copy.addRaw("b", DType::Bool, {3}, odd)));
  ASSERT_FALSE(bool(copy.addRaw("a", DType::F32, {2}, f32)));
  ASSERT_FALSE(bool(copy.add("c", DType::I16, {1}, {-2})));
  std::string bytes = view.serialize();
  EXPECT_EQ(bytes, copy.serialize());
  EXPECT_EQ(view.serializedSize(), bytes.size());
  std::string streamed;
  llvm::raw_string_ostream os(streamed);
  view.writeTo(os);
  EXPECT_EQ(streamed, bytes);
  std::unique_ptr<llvm::MemoryBuffer> buffer = view.toBuffer("in memory");
  EXPECT_EQ(buffer->getBuffer(), bytes);
  EXPECT_EQ(buffer->getBufferIdentifier(), "in memory");
  llvm::Expected<File> file = parseBytes(bytes);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  llvm::Expected<std::vector<float>> a = file->readAsFloat("a");
  ASSERT_TRUE(bool(a));
  EXPECT_EQ(*a, (std::vector<float>{1.0f, 8.0f}));
  std::vector<std::string> order;
  view.forEachTensor([&](StringRef name, DType, llvm::ArrayRef<int64_t>,
                         llvm::ArrayRef<uint8_t> data) {
    order.push_back(name.str());
    if (name == "b")
      EXPECT_EQ(data.data(), odd.data());
  });
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c"}));
  // The same checks as addRaw's.
  EXPECT_TRUE(
      bool(llvm::errorToBool(view.addView("short", DType::F32, {3}, f32))));
  std::vector<uint8_t> notBool = {2};
  EXPECT_TRUE(
      bool(llvm::errorToBool(view.addView("nb", DType::Bool, {1}, notBool))));
  EXPECT_TRUE(bool(llvm::errorToBool(view.addView("a", DType::F32, {2}, f32))));
}

TEST(SafeTensorsWriter, EmptyScalarAndZeroElementTensors) {
  Writer writer;
  EXPECT_EQ(writer.serialize().size() % 8, 0u);
  ASSERT_FALSE(bool(writer.add("scalar", DType::I32, {}, {-5})));
  ASSERT_FALSE(bool(writer.add("empty", DType::F32, {0, 3}, {})));
  ASSERT_FALSE(bool(writer.addRaw("empty2", DType::I64, {4, 0}, {})));
  llvm::Expected<File> file = parseBytes(writer.serialize());
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(file->lookup("scalar")->numElements(), 1);
  EXPECT_EQ(file->lookup("empty")->numElements(), 0);
  llvm::Expected<std::vector<double>> scalar = file->readAsDouble("scalar");
  ASSERT_TRUE(bool(scalar));
  EXPECT_EQ(*scalar, std::vector<double>{-5.0});
  llvm::Expected<std::vector<float>> empty = file->readAsFloat("empty2");
  ASSERT_TRUE(bool(empty));
  EXPECT_TRUE(empty->empty());

  // An empty file (no tensors) round trips too.
  llvm::Expected<File> none = parseBytes(Writer().serialize());
  ASSERT_TRUE(bool(none)) << llvm::toString(none.takeError());
  EXPECT_TRUE(none->tensors().empty());
}

TEST(SafeTensorsWriter, ConversionRulesAndErrors) {
  Writer writer;
  // Integers truncate toward zero.
  ASSERT_FALSE(
      bool(writer.add("i8", DType::I8, {4}, {-1.9, 1.9, -128.9, 127.9})));
  ASSERT_FALSE(bool(writer.add("u8", DType::U8, {2}, {-0.5, 255.99})));
  llvm::Expected<File> file = parseBytes(writer.serialize());
  ASSERT_TRUE(bool(file));
  EXPECT_EQ(*file->readAsDouble("i8"), (std::vector<double>{-1, 1, -128, 127}));
  EXPECT_EQ(*file->readAsDouble("u8"), (std::vector<double>{0, 255}));

  auto expectAddError = [&](DType dtype, double value, const char *word) {
    std::string message =
        errorText(writer.add("bad", dtype, {1}, llvm::ArrayRef<double>(value)));
    EXPECT_NE(message.find(word), std::string::npos) << message;
    EXPECT_NE(message.find("'bad'"), std::string::npos) << message;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  expectAddError(DType::I8, 128.0, "out of range");
  expectAddError(DType::I8, -129.0, "out of range");
  expectAddError(DType::U8, -1.0, "out of range");
  expectAddError(DType::U8, 256.0, "out of range");
  expectAddError(DType::I32, nan, "out of range");
  expectAddError(DType::I64, inf, "out of range");
  expectAddError(DType::I64, 9223372036854775808.0, "out of range");
  expectAddError(DType::I16, 32768.0, "out of range");
  expectAddError(DType::Bool, 2.0, "0 or 1");
  expectAddError(DType::Bool, nan, "0 or 1");

  EXPECT_NE(errorText(writer.add("n", DType::F32, {2, 2}, {1, 2, 3}))
                .find("4 elements but 3 values"),
            std::string::npos);
  EXPECT_NE(errorText(writer.add("i8", DType::F32, {}, {1})).find("duplicate"),
            std::string::npos);
  EXPECT_NE(errorText(writer.add("__metadata__", DType::F32, {}, {1}))
                .find("reserved"),
            std::string::npos);
  EXPECT_NE(errorText(writer.add("neg", DType::F32, {-1}, {})).find("negative"),
            std::string::npos);
  EXPECT_NE(errorText(writer.add("\xff", DType::F32, {}, {1})).find("UTF-8"),
            std::string::npos);
  EXPECT_NE(errorText(writer.addRaw("raw", DType::I32, {2}, {1, 2, 3}))
                .find("needs 8 bytes"),
            std::string::npos);
  const uint8_t two = 2;
  EXPECT_NE(errorText(writer.addRaw("raw", DType::Bool, {1}, two))
                .find("expected 0 or 1"),
            std::string::npos);
  // Failed adds leave nothing behind.
  llvm::Expected<File> again = parseBytes(writer.serialize());
  ASSERT_TRUE(bool(again));
  EXPECT_EQ(again->tensors().size(), 2u);

  // Overflow to infinity is IEEE rounding, not an error.
  Writer floats;
  ASSERT_FALSE(bool(floats.add("f", DType::F16, {2}, {1e6, -1e300})));
  ASSERT_FALSE(bool(floats.add("g", DType::F32, {1}, {1e300})));
  llvm::Expected<File> ff = parseBytes(floats.serialize());
  ASSERT_TRUE(bool(ff));
  EXPECT_EQ(*ff->readAsDouble("f"), (std::vector<double>{inf, -inf}));
  EXPECT_EQ(*ff->readAsDouble("g"), std::vector<double>{inf});
}

TEST(SafeTensorsWriter, MetadataInvalidUTF8IsReplaced) {
  Writer writer;
  writer.setMetadata("k\xff", "v\xfe");
  writer.setMetadata("plain", "x");
  writer.setMetadata("plain", "y"); // Replaces.
  llvm::Expected<File> file = parseBytes(writer.serialize());
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(file->metadata().size(), 2u);
  EXPECT_EQ(file->metadata().at("plain"), "y");
  EXPECT_EQ(file->metadata().at("k\xef\xbf\xbd"), "v\xef\xbf\xbd");
}

TEST(SafeTensorsReader, LargeIntegersToFloat) {
  Writer writer;
  // 2^24 + 1 is not a float; readAsFloat rounds once, to even.
  ASSERT_FALSE(bool(writer.add("i", DType::I64, {2},
                               {16777217.0, 9007199254740993.0 /* 2^53 */})));
  llvm::Expected<File> file = parseBytes(writer.serialize());
  ASSERT_TRUE(bool(file));
  llvm::Expected<std::vector<float>> floats = file->readAsFloat("i");
  ASSERT_TRUE(bool(floats));
  EXPECT_EQ((*floats)[0], 16777216.0f);
  llvm::Expected<std::vector<double>> doubles = file->readAsDouble("i");
  ASSERT_TRUE(bool(doubles));
  EXPECT_EQ((*doubles)[0], 16777217.0);

  // Rounding int64 -> double -> float would round twice: 2^53 + 2^29 + 1
  // becomes 2^53 + 2^29 (a float tie, then 2^53), but the nearest float is
  // 2^53 + 2^30.
  Writer raw;
  int64_t tricky = (int64_t(1) << 53) + (int64_t(1) << 29) + 1;
  uint8_t bytes[8];
  llvm::support::endian::write<uint64_t>(bytes, uint64_t(tricky),
                                         llvm::endianness::little);
  ASSERT_FALSE(bool(raw.addRaw("t", DType::I64, {1}, bytes)));
  llvm::Expected<File> rf = parseBytes(raw.serialize());
  ASSERT_TRUE(bool(rf));
  llvm::Expected<std::vector<float>> tf = rf->readAsFloat("t");
  ASSERT_TRUE(bool(tf));
  EXPECT_EQ((*tf)[0], std::ldexp(1.0f, 53) + std::ldexp(1.0f, 30));
}

TEST_F(SafeTensorsFileTest, WriteToMissingDirectoryFails) {
  Writer writer;
  ASSERT_FALSE(bool(writer.add("x", DType::F32, {1}, {1.0})));
  std::string path = pathFor("no/such/dir/out.safetensors");
  std::string message = errorText(writer.write(path));
  EXPECT_TRUE(StringRef(message).starts_with(path + ":")) << message;
  EXPECT_TRUE(listDir().empty());
}

TEST_F(SafeTensorsFileTest, WriteReplacesExistingFile) {
  std::string path = pathFor("w.safetensors");
  Writer first, second;
  ASSERT_FALSE(bool(first.add("a", DType::F32, {1}, {1.0})));
  ASSERT_FALSE(bool(second.add("b", DType::F32, {1}, {2.0})));
  ASSERT_FALSE(bool(first.write(path)));
  ASSERT_FALSE(bool(second.write(path)));
  EXPECT_EQ(listDir(), std::vector<std::string>{"w.safetensors"});
  llvm::Expected<File> file = File::open(path);
  ASSERT_TRUE(bool(file));
  EXPECT_EQ(file->lookup("a"), nullptr);
  EXPECT_NE(file->lookup("b"), nullptr);
}

TEST_F(SafeTensorsFileTest, OpenErrors) {
  std::string missing = pathFor("missing.safetensors");
  llvm::Expected<File> file = File::open(missing);
  ASSERT_FALSE(bool(file));
  expectMessage(llvm::toString(file.takeError()), {"cannot open"}, missing);

  // Errors from open() name the path given.
  std::string bad = pathFor("bad.safetensors");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(bad, ec);
    ASSERT_FALSE(ec);
    os << makeRawFile(9999, std::string(112, ' '));
  }
  llvm::Expected<File> badFile = File::open(bad);
  ASSERT_FALSE(bool(badFile));
  EXPECT_EQ(llvm::toString(badFile.takeError()),
            bad + ": header length 9999 runs past the end of the file (120 "
                  "bytes)");
}

TEST(SafeTensorsReader, FileIsMovable) {
  Writer writer;
  ASSERT_FALSE(bool(writer.add("x", DType::I16, {2}, {3, 4})));
  std::string bytes = writer.serialize();
  llvm::Expected<File> parsed = parseBytes(bytes);
  ASSERT_TRUE(bool(parsed));
  File moved = std::move(*parsed);
  File target = std::move(moved);
  EXPECT_EQ(target.path(), kName);
  llvm::Expected<std::vector<double>> values = target.readAsDouble("x");
  ASSERT_TRUE(bool(values));
  EXPECT_EQ(*values, (std::vector<double>{3, 4}));
}

//===----------------------------------------------------------------------===//
// check()
//===----------------------------------------------------------------------===//

TEST(SafeTensorsCheck, MissingDTypeAndShapeMismatch) {
  Writer writer;
  ASSERT_FALSE(bool(writer.add("w", DType::F16, {2, 3}, {1, 2, 3, 4, 5, 6})));
  llvm::Expected<File> file = parseBytes(writer.serialize());
  ASSERT_TRUE(bool(file));
  EXPECT_FALSE(bool(file->check("w", DType::F16, {2, 3})));

  expectMessage(errorText(file->check("v", DType::F32, {4})),
                {"'v'", "not found", "F32", "[4]"});
  expectMessage(errorText(file->check("w", DType::F32, {2, 3})),
                {"'w'", "dtype F16", "expected F32"});
  expectMessage(errorText(file->check("w", DType::F16, {3, 2})),
                {"'w'", "shape [2, 3]", "expected [3, 2]"});
  expectMessage(errorText(file->check("w", DType::F16, {6})),
                {"'w'", "shape [2, 3]", "expected [6]"});

  EXPECT_EQ(file->lookup("v"), nullptr);
  llvm::Expected<std::vector<double>> missing = file->readAsDouble("v");
  ASSERT_FALSE(bool(missing));
  expectMessage(llvm::toString(missing.takeError()), {"'v'", "not found"});
}

//===----------------------------------------------------------------------===//
// Hostile files: one test per rule
//===----------------------------------------------------------------------===//

TEST(SafeTensorsHostile, TooShort) {
  expectMessage(parseError(""), {"too short", "0 bytes"});
  expectMessage(parseError(StringRef("\x08\0\0\0\0\0\0", 7)),
                {"too short", "7 bytes"});
}

TEST(SafeTensorsHostile, HeaderLengthPastEnd) {
  expectMessage(parseError(makeRawFile(9999, std::string(112, ' '))),
                {"header length 9999 runs past the end of the file (120 "
                 "bytes)"});
  expectMessage(parseError(makeRawFile(1, "")), {"runs past the end"});
  // Lengths near 2^64 must not wrap around.
  expectMessage(parseError(makeRawFile(UINT64_MAX, "{}")), {"header length"});
  expectMessage(parseError(makeRawFile(UINT64_MAX - 7, "{}")),
                {"header length"});
}

TEST(SafeTensorsHostile, HeaderLengthOverLimit) {
  uint64_t tooBig = File::kMaxHeaderSize + 1;
  expectMessage(parseError(makeRawFile(tooBig, "{}")),
                {"header length 104857601", "100 MiB"});
}

TEST(SafeTensorsHostile, HeaderNotUTF8) {
  expectMessage(parseError(makeFile("{\"a\xff\":1}")), {"UTF-8"});
  expectMessage(parseError(makeFile("{\"\xc0\x80\":1}")), {"UTF-8"});
}

TEST(SafeTensorsHostile, HeaderNotJSON) {
  expectMessage(parseError(makeFile("")), {"not valid JSON"});
  expectMessage(parseError(makeFile("{")), {"not valid JSON"});
  expectMessage(parseError(makeFile("{\"a\":}")), {"not valid JSON"});
  expectMessage(parseError(makeFile("{} {}")), {"not valid JSON"});
  expectMessage(parseError(makeFile(StringRef("{}\0", 3))), {"not valid JSON"});
}

TEST(SafeTensorsHostile, HeaderTooDeep) {
  // llvm::json::parse recurses per level: deep nesting must be refused first.
  std::string deep(200000, '[');
  expectMessage(parseError(makeFile(deep)), {"nests deeper"});
  std::string deepObject;
  for (int i = 0; i < 100000; ++i)
    deepObject += "{\"a\":";
  expectMessage(parseError(makeFile(deepObject)), {"nests deeper"});
  // Brackets inside strings do not count.
  std::string inString = "{\"" + std::string(1000, '[') + "\":1}";
  expectMessage(parseError(makeFile(inString)), {"not a JSON object"});
}

TEST(SafeTensorsHostile, HeaderNotObject) {
  expectMessage(parseError(makeFile("[]")), {"not an object"});
  expectMessage(parseError(makeFile("1")), {"not an object"});
  expectMessage(parseError(makeFile("\"x\"")), {"not an object"});
  expectMessage(parseError(makeFile("null")), {"not an object"});
}

TEST(SafeTensorsHostile, EntryNotObject) {
  expectMessage(parseError(makeFile("{\"w\":[1,2]}")),
                {"tensor 'w'", "not a JSON object"});
  expectMessage(parseError(makeFile("{\"w\":\"F32\"}")),
                {"tensor 'w'", "not a JSON object"});
}

TEST(SafeTensorsHostile, MissingOrUnknownDType) {
  expectMessage(
      parseError(makeFile("{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4)),
      {"tensor 'w'", "missing dtype"});
  expectMessage(parseError(makeFile("{\"w\":{\"dtype\":\"U32\",\"shape\":[1],"
                                    "\"data_offsets\":[0,4]}}",
                                    4)),
                {"tensor 'w'", "dtype 'U32'"});
  expectMessage(parseError(makeFile("{\"w\":{\"dtype\":\"f32\",\"shape\":[1],"
                                    "\"data_offsets\":[0,4]}}",
                                    4)),
                {"tensor 'w'", "dtype 'f32'"});
  expectMessage(parseError(makeFile("{\"w\":{\"dtype\":4,\"shape\":[1],"
                                    "\"data_offsets\":[0,4]}}",
                                    4)),
                {"tensor 'w'", "dtype is not a string"});
}

TEST(SafeTensorsHostile, BadShape) {
  auto withShape = [](StringRef shape) {
    return makeFile(("{\"w\":{\"dtype\":\"U8\",\"shape\":" + shape +
                     ",\"data_offsets\":[0,0]}}")
                        .str());
  };
  for (const char *shape :
       {"3", "\"[1]\"", "{}", "[-1]", "[2.5]", "[2.0]", "[1e2]", "[\"2\"]",
        "[null]", "[[1]]", "[true]", "[9223372036854775808]",
        "[18446744073709551615]", "[-0.0]"})
    expectMessage(parseError(withShape(shape)),
                  {"tensor 'w'", "shape is not an array of non-negative "
                                 "integers"});
  expectMessage(
      parseError(makeFile("{\"w\":{\"dtype\":\"U8\",\"data_offsets\":[0,0]}}")),
      {"tensor 'w'", "missing shape"});
}

TEST(SafeTensorsHostile, ShapeOverflow) {
  auto withShape = [](StringRef dtype, StringRef shape) {
    return makeFile(("{\"w\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
                     ",\"data_offsets\":[0,0]}}")
                        .str());
  };
  expectMessage(parseError(withShape("F32", "[4294967296,4294967296]")),
                {"tensor 'w'", "overflows"});
  expectMessage(parseError(withShape("U8", "[9223372036854775807,2]")),
                {"tensor 'w'", "overflows"});
  // Fits as an element count, but not once multiplied by the dtype size.
  expectMessage(parseError(withShape("F64", "[4611686018427387904]")),
                {"tensor 'w'", "overflows"});
  // A zero dimension makes the element count 0, whatever the others are.
  llvm::Expected<File> zero = parseBytes(
      withShape("F64", "[9223372036854775807,0,9223372036854775807]"));
  ASSERT_TRUE(bool(zero)) << llvm::toString(zero.takeError());
  EXPECT_EQ(zero->tensors()[0].numElements(), 0);
}

TEST(SafeTensorsHostile, BadDataOffsets) {
  auto withOffsets = [](StringRef offsets) {
    return makeFile(("{\"w\":{\"dtype\":\"U8\",\"shape\":[2],"
                     "\"data_offsets\":" +
                     offsets + "}}")
                        .str(),
                    16);
  };
  for (const char *offsets :
       {"[0]", "[0,2,4]", "[]", "2", "{}", "[-1,1]", "[0,-2]", "[0.0,2]",
        "[0,2.5]", "[\"0\",2]", "[null,2]", "[0,18446744073709551616]"})
    expectMessage(parseError(withOffsets(offsets)),
                  {"tensor 'w'", "data_offsets is not an array of two "
                                 "non-negative integers"});
  expectMessage(parseError(withOffsets("[4,2]")),
                {"tensor 'w'", "begin 4 is greater than end 2"});
  expectMessage(
      parseError(makeFile("{\"w\":{\"dtype\":\"U8\",\"shape\":[2]}}", 2)),
      {"tensor 'w'", "missing data_offsets"});
}

TEST(SafeTensorsHostile, EndPastDataSection) {
  std::string header = "{" + f32Entry("w", 4) + "}";
  expectMessage(parseError(makeFile(header, 7)),
                {"tensor 'w'", "end 8 is past the end of the data section "
                               "(7 bytes)"});
  expectMessage(parseError(makeFile("{\"w\":{\"dtype\":\"U8\",\"shape\":[0],"
                                    "\"data_offsets\":[18446744073709551615,"
                                    "18446744073709551615]}}")),
                {"tensor 'w'", "past the end of the data section"});
  // A tensor that ends exactly at the end of the data section is fine.
  ASSERT_EQ(parseError(makeFile("{" + f32Entry("w", 0) + "}", 4)), "<parsed>");
}

TEST(SafeTensorsHostile, ByteSizeMismatch) {
  expectMessage(
      parseError(makeFile("{\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],"
                          "\"data_offsets\":[0,20]}}",
                          24)),
      {"tensor 'w'", "span 20 bytes", "F32", "[2, 3]", "needs 24 bytes"});
  expectMessage(parseError(makeFile("{\"w\":{\"dtype\":\"F32\",\"shape\":[],"
                                    "\"data_offsets\":[0,0]}}",
                                    4)),
                {"tensor 'w'", "needs 4 bytes"});
}

TEST(SafeTensorsHostile, OverlappingRanges) {
  expectMessage(
      parseError(makeFile(
          "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}," +
              f32Entry("b", 4) + "}",
          12)),
      {"'a'", "'b'", "overlap", "[0, 8)", "[4, 8)"});
  // Identical ranges.
  expectMessage(parseError(makeFile(
                    "{" + f32Entry("a", 0) + "," + f32Entry("b", 0) + "}", 4)),
                {"'a'", "'b'", "overlap"});
  // A long range hides behind a short one that starts after it.
  expectMessage(parseError(makeFile("{\"big\":{\"dtype\":\"U8\",\"shape\":[16],"
                                    "\"data_offsets\":[0,16]}," +
                                        f32Entry("x", 0 + 4) + "," +
                                        f32Entry("y", 12) + "}",
                                    16)),
                {"'big'", "'x'", "overlap"});
  // Adjacent ranges and empty ranges anywhere are fine.
  llvm::Expected<File> ok = parseBytes(makeFile(
      "{" + f32Entry("a", 0) + "," + f32Entry("b", 4) +
          ",\"e1\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[2,2]},"
          "\"e2\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[2,2]}}",
      8));
  ASSERT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
  EXPECT_EQ(ok->tensors().size(), 4u);
}

TEST(SafeTensorsHostile, DuplicateNames) {
  expectMessage(parseError(makeFile(
                    "{" + f32Entry("w", 0) + "," + f32Entry("w", 4) + "}", 8)),
                {"duplicate tensor name 'w'"});
  // The same name spelled with an escape is still the same name.
  expectMessage(
      parseError(makeFile(
          "{" + f32Entry("w", 0) + "," + f32Entry("\\u0077", 4) + "}", 8)),
      {"duplicate tensor name 'w'"});
  expectMessage(
      parseError(makeFile("{\"__metadata__\":{},\"__metadata__\":{}}")),
      {"duplicate '__metadata__'"});
  expectMessage(parseError(makeFile("{\"w\":{\"dtype\":\"U8\",\"dtype\":\"U8\","
                                    "\"shape\":[],\"data_offsets\":[0,1]}}",
                                    1)),
                {"tensor 'w'", "duplicate key 'dtype'"});
  expectMessage(
      parseError(makeFile("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}")),
      {"__metadata__", "duplicate key 'k'"});
  // An empty tensor name is still a name.
  expectMessage(parseError(makeFile("{\"\":{\"shape\":[],\"shape\":[]}}")),
                {"tensor ''", "duplicate key 'shape'"});
}

TEST(SafeTensorsHostile, BadMetadata) {
  expectMessage(parseError(makeFile("{\"__metadata__\":[]}")),
                {"__metadata__ is not an object of strings"});
  expectMessage(parseError(makeFile("{\"__metadata__\":\"x\"}")),
                {"__metadata__ is not an object of strings"});
  expectMessage(parseError(makeFile("{\"__metadata__\":{\"k\":1}}")),
                {"__metadata__ is not an object of strings", "'k'"});
  expectMessage(parseError(makeFile("{\"__metadata__\":{\"k\":{}}}")),
                {"__metadata__ is not an object of strings", "'k'"});
  llvm::Expected<File> ok =
      parseBytes(makeFile("{\"__metadata__\":{\"a\":\"\\u00e9\",\"b\":\"\"}}"));
  ASSERT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
  EXPECT_EQ(ok->metadata().at("a"), "\xc3\xa9");
  EXPECT_EQ(ok->metadata().at("b"), "");
}

TEST(SafeTensorsHostile, UnknownKeyInEntry) {
  expectMessage(parseError(makeFile("{\"w\":{\"dtype\":\"U8\",\"shape\":[1],"
                                    "\"data_offsets\":[0,1],\"foo\":1}}",
                                    1)),
                {"tensor 'w'", "unknown key 'foo'"});
}

TEST(SafeTensorsHostile, AcceptsPaddingAndZeroElementTensors) {
  // Trailing spaces (the spec's padding), a scalar, and empty tensors.
  llvm::Expected<File> file = parseBytes(makeFile(
      "{\"s\":{\"dtype\":\"BOOL\",\"shape\":[],\"data_offsets\":[0,1]},"
      "\"z\":{\"shape\":[0,7],\"data_offsets\":[1,1],\"dtype\":\"I64\"}}   "
      "     ",
      1, 1));
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(file->tensors()[0].name, "s");
  EXPECT_EQ(*file->readAsDouble("s"), std::vector<double>{1.0});
  EXPECT_TRUE(file->readAsDouble("z")->empty());
}

TEST(SafeTensorsHostile, BoolBytesMustBeZeroOrOne) {
  llvm::Expected<File> file = parseBytes(makeFile(
      "{\"b\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2,
      2));
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  llvm::Expected<std::vector<double>> values = file->readAsDouble("b");
  ASSERT_FALSE(bool(values));
  expectMessage(llvm::toString(values.takeError()),
                {"tensor 'b'", "byte value 2"});
  llvm::Expected<std::vector<float>> floats = file->readAsFloat("b");
  ASSERT_FALSE(bool(floats));
  llvm::consumeError(floats.takeError());
}

TEST(SafeTensorsHostile, UnalignedDataSection) {
  // A header of odd length puts the data at an odd offset: loads must not
  // assume alignment (UBSan checks this).
  std::string h =
      "{\"d\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}";
  ASSERT_NE(h.size() % 8, 0u);
  std::string bytes = makeFile(h, 8);
  llvm::support::endian::write<uint64_t>(&bytes[8 + h.size()],
                                         llvm::bit_cast<uint64_t>(1.0),
                                         llvm::endianness::little);
  llvm::Expected<File> file = parseBytes(bytes);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(*file->readAsDouble("d"), std::vector<double>{1.0});
}

TEST(SafeTensorsHostile, HolesAndTrailingBytes) {
  // The tensors must tile the data section exactly, as the format requires.
  expectMessage(parseError(makeFile("{} ", 5)),
                {"bytes [0, 5)", "at the end of the data section",
                 "belong to no tensor"});
  expectMessage(
      parseError(makeFile(
          "{\"d\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}",
          2)),
      {"bytes [0, 1)", "before tensor 'd'"});
  expectMessage(
      parseError(makeFile(
          "{\"d\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
          3)),
      {"bytes [1, 3)", "at the end"});
}

TEST(SafeTensorsOpen, RejectsNonRegularFiles) {
  llvm::Expected<File> dir = File::open("/");
  ASSERT_FALSE(bool(dir));
  expectMessage(llvm::toString(dir.takeError()), {"not a regular file"}, "/");
  llvm::Expected<File> dev = File::open("/dev/zero");
  ASSERT_FALSE(bool(dev));
  expectMessage(llvm::toString(dev.takeError()), {"not a regular file"},
                "/dev/zero");
}

} // namespace
