//===- CostModelTest.cpp - Op work, rooflines, the cost database -----------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/CostModel.h"
#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace loom;

namespace {

class CostModelTest : public ::testing::Test {
protected:
  CostModelTest() { ctx.loadDialect<tg::TGDialect, func::FuncDialect>(); }

  OwningOpRef<ModuleOp> parse(StringRef ir) {
    return parseSourceString<ModuleOp>(ir, &ctx);
  }

  template <typename OpT> OpT first(ModuleOp m) {
    OpT found;
    m.walk([&](OpT op) {
      if (!found)
        found = op;
    });
    return found;
  }

  MLIRContext ctx;
};

constexpr const char *kModel = R"mlir(
func.func @main(%x: tensor<2x3x8x8xf32>, %w: tensor<6x1x3x3xf32>, %a: tensor<4x5x7xf16>, %b: tensor<7x9xf16>) -> (tensor<2x6x4x4xf32>, tensor<4x5x9xf16>) {
  %c = tg.conv %x, %w {groups = 3 : i64, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<2x6x4x4xf32>
  %m = tg.matmul %a, %b : (tensor<4x5x7xf16>, tensor<7x9xf16>) -> tensor<4x5x9xf16>
  %e = tg.exp %m : tensor<4x5x9xf16>
  %t = tg.transpose %c {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x6x4x4xf32>) -> tensor<2x6x4x4xf32>
  return %t, %e : tensor<2x6x4x4xf32>, tensor<4x5x9xf16>
}
)mlir";

TEST_F(CostModelTest, WorkOfEachOpKind) {
  auto m = parse(kModel);
  ASSERT_TRUE(m);
  // Grouped conv: 2*6*4*4 outputs, each 1*3*3 MACs.
  cost::OpWork conv = cost::workOf(first<tg::ConvOp>(*m));
  EXPECT_EQ(conv.flops, 2.0 * (2 * 6 * 4 * 4) * 9);
  EXPECT_EQ(conv.bytesRead, (2 * 3 * 8 * 8 + 6 * 9) * 4.0);
  EXPECT_EQ(conv.bytesWritten, 2 * 6 * 4 * 4 * 4.0);
  // Batched matmul in f16: 2 bytes per element.
  cost::OpWork mm = cost::workOf(first<tg::MatmulOp>(*m));
  EXPECT_EQ(mm.flops, 2.0 * 4 * 5 * 9 * 7);
  EXPECT_EQ(mm.bytesRead, (4 * 5 * 7 + 7 * 9) * 2.0);
  // Transcendental: 8 per element; data movement: no flops.
  EXPECT_EQ(cost::workOf(first<tg::ExpOp>(*m)).flops, 8.0 * 4 * 5 * 9);
  cost::OpWork tr = cost::workOf(first<tg::TransposeOp>(*m));
  EXPECT_EQ(tr.flops, 0);
  EXPECT_TRUE(tr.kernel);
  EXPECT_EQ(tr.bytes(), 2 * (2 * 6 * 4 * 4) * 4.0);
  // func.return launches nothing.
  EXPECT_FALSE(cost::workOf(first<func::ReturnOp>(*m)).kernel);
}

TEST_F(CostModelTest, RooflineIsMaxOfComputeAndMemoryPlusLaunch) {
  auto m = parse(kModel);
  ASSERT_TRUE(m);
  auto model = cost::createRooflineModel({"toy", 1e9, 1e9, 1e-3, ""});
  auto conv = first<tg::ConvOp>(*m);
  cost::OpWork w = cost::workOf(conv);
  EXPECT_DOUBLE_EQ(model->opCost(conv),
                   std::max(w.flops, w.bytes()) / 1e9 + 1e-3);
  auto fn = first<func::FuncOp>(*m);
  double sum = 0;
  fn.walk([&](Operation *op) {
    if (op != fn.getOperation())
      sum += model->opCost(op);
  });
  EXPECT_DOUBLE_EQ(model->funcCost(fn), sum);
  EXPECT_EQ(model->name(), "roofline:toy");
}

TEST_F(CostModelTest, Targets) {
  auto h100 = cost::lookupTarget("h100");
  auto h200 = cost::lookupTarget("h200");
  ASSERT_TRUE(bool(h100) && bool(h200));
  EXPECT_GT(h200->memBandwidth, h100->memBandwidth);
  auto bad = cost::lookupTarget("tpu");
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("unknown cost target 'tpu'"),
            std::string::npos);
  cost::RooflineTarget cpu = cost::calibrateCPU();
  EXPECT_GT(cpu.peakFlops, 1e8);
  EXPECT_GT(cpu.memBandwidth, 1e8);
  EXPECT_GT(cpu.launchOverhead, 0);
}

constexpr const char *kProducts = R"mlir(
func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %h: tensor<8x16xbf16>, %g: tensor<16x4xbf16>, %f: tensor<16x4xf16>, %x: tensor<1x4x6x6xf32>, %w: tensor<2x4x3x3xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xbf16>, tensor<8x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %ra = tg.round_tf32 %a : tensor<8x16xf32>
  %rb = tg.round_tf32 %b : tensor<16x4xf32>
  %p0 = tg.matmul %ra, %rb : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %p1 = tg.matmul %ra, %b : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %p2 = tg.matmul %h, %g : (tensor<8x16xbf16>, tensor<16x4xbf16>) -> tensor<8x4xbf16>
  %hf = tg.cast %h : tensor<8x16xbf16> to tensor<8x16xf32>
  %p3 = tg.matmul %hf, %b : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %rx = tg.round_tf32 %x : tensor<1x4x6x6xf32>
  %rw = tg.round_tf32 %w : tensor<2x4x3x3xf32>
  %c0 = tg.conv %rx, %rw : (tensor<1x4x6x6xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x4x4xf32>
  %c1 = tg.conv %x, %w : (tensor<1x4x6x6xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x4x4xf32>
  return %p0, %p1, %p2, %p3, %c0, %c1 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xbf16>, tensor<8x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
)mlir";

// What tensor cores multiply a product in (--precision's forms), and the
// peak a target reaches on it.
TEST_F(CostModelTest, TensorCorePeaks) {
  auto m = parse(kProducts);
  ASSERT_TRUE(m);
  SmallVector<Operation *> products;
  m->walk([&](Operation *op) {
    if (isa<tg::MatmulOp, tg::ConvOp>(op))
      products.push_back(op);
  });
  ASSERT_EQ(products.size(), 6u);
  auto typeOf = [&](Operation *op) {
    std::string s;
    llvm::raw_string_ostream os(s);
    if (Type t = cost::tensorCoreType(op))
      os << t;
    return s;
  };
  EXPECT_EQ(typeOf(products[0]), "tf32");
  EXPECT_EQ(typeOf(products[1]), ""); // one operand rounded
  EXPECT_EQ(typeOf(products[2]), "bf16");
  EXPECT_EQ(typeOf(products[3]), ""); // bf16 widened to f32
  EXPECT_EQ(typeOf(products[4]), "tf32");
  EXPECT_EQ(typeOf(products[5]), "");
  EXPECT_EQ(typeOf(first<tg::CastOp>(*m)), "");
  auto h100 = cost::lookupTarget("h100");
  ASSERT_TRUE(bool(h100));
  EXPECT_EQ(cost::peakFlopsOf(products[0], *h100, true), 495e12);
  EXPECT_EQ(cost::peakFlopsOf(products[2], *h100, true), 989e12);
  EXPECT_EQ(cost::peakFlopsOf(products[1], *h100, true), 67e12);
  // Code without tensor cores (Vulkan's), and a target without them (a
  // CPU's), run every product at the f32 peak.
  EXPECT_EQ(cost::peakFlopsOf(products[2], *h100, false), 67e12);
  cost::RooflineTarget cpu{"toy", 1e9, 1e9, 1e-3, ""};
  EXPECT_EQ(cost::peakFlopsOf(products[0], cpu, true), 1e9);
  EXPECT_EQ(cost::peakFlopsOf(products[2], cpu, true), 1e9);
  // The analytic model prices a TF32 product at the TF32 rate.
  auto model = cost::createRooflineModel(*h100);
  cost::OpWork w = cost::workOf(products[4]);
  EXPECT_DOUBLE_EQ(model->opCost(products[4]),
                   std::max(w.flops / 495e12, w.bytes() / 3.35e12) + 5e-6);
}

// The CPU calibration is measured once per machine: written to the cache
// file, then read from it (a planted value comes back); a file of another
// format version, or no file, is measured again.
TEST_F(CostModelTest, CalibrationIsCachedPerMachine) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("loom-roofline", dir));
  std::string path = (dir + "/sub/roofline-cpu.json").str();
  cost::RooflineTarget measured = cost::calibrateCPU(path);
  EXPECT_GT(measured.peakFlops, 1e8);
  ASSERT_TRUE(llvm::sys::fs::exists(path));

  auto rewrite = [&](int64_t version, double peak) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    ASSERT_TRUE(bool(buffer));
    auto json = llvm::json::parse((*buffer)->getBuffer());
    ASSERT_TRUE(bool(json));
    llvm::json::Object *root = json->getAsObject();
    ASSERT_NE(root, nullptr);
    (*root)["version"] = version;
    for (auto &[key, entry] : *root)
      if (llvm::json::Object *o = entry.getAsObject())
        (*o)["peak_flops"] = peak;
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << llvm::json::Value(std::move(*root));
  };
  rewrite(1, 12345.0);
  cost::RooflineTarget cached = cost::calibrateCPU(path);
  EXPECT_EQ(cached.peakFlops, 12345.0);
  EXPECT_EQ(cached.memBandwidth, measured.memBandwidth);
  EXPECT_NE(cached.description.find("cached in"), std::string::npos);

  rewrite(99, 12345.0); // another format: measured again, rewritten
  EXPECT_NE(cost::calibrateCPU(path).peakFlops, 12345.0);
  EXPECT_NE(cost::calibrateCPU(path).peakFlops, 12345.0);
  EXPECT_NE(cost::calibrateCPU("").peakFlops, 12345.0);
  llvm::sys::fs::remove_directories(dir);
}

TEST_F(CostModelTest, DatabaseRoundTripAndErrors) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("loom-cost", dir));
  std::string path = (dir + "/db.json").str();
  {
    auto db = cost::CostDatabase::load(path); // absent: empty
    ASSERT_TRUE(bool(db));
    EXPECT_EQ(db->size(), 0u);
    db->record("interp-f32|x", 0.5);
    ASSERT_FALSE(bool(db->save()));
  }
  auto again = cost::CostDatabase::load(path);
  ASSERT_TRUE(bool(again));
  EXPECT_EQ(again->lookup("interp-f32|x"), 0.5);
  EXPECT_EQ(again->lookup("other"), std::nullopt);

  std::string bad = (dir + "/bad.json").str();
  for (const char *text : {"not json", "{\"version\": 2, \"entries\": {}}",
                           "{\"version\": 1, \"entries\": {\"k\": -1}}"}) {
    std::error_code ec;
    llvm::raw_fd_ostream(bad, ec) << text;
    auto db = cost::CostDatabase::load(bad);
    ASSERT_FALSE(bool(db)) << text;
    EXPECT_NE(llvm::toString(db.takeError()).find(bad), std::string::npos);
  }
  llvm::sys::fs::remove_directories(dir);
}

TEST_F(CostModelTest, MeasuredModelTimesOncePerSignature) {
  auto m = parse(kModel);
  ASSERT_TRUE(m);
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("loom-cost", dir));
  auto db = cost::CostDatabase::load((dir + "/db.json").str());
  ASSERT_TRUE(bool(db));
  auto model = cost::createMeasuredModel(
      *db, cost::createRooflineModel({"toy", 1e9, 1e9, 1e-3, ""}));
  auto conv = first<tg::ConvOp>(*m);
  double t = model->opCost(conv);
  EXPECT_GT(t, 0);
  EXPECT_EQ(db->size(), 1u);
  EXPECT_EQ(model->opCost(conv), t); // cached, not re-measured
  EXPECT_EQ(db->lookup("interp-f32|" + cost::opSignature(conv)), t);
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
