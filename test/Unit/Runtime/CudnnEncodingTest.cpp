//===- CudnnEncodingTest.cpp - cudnn.conv as cuDNN's operation graph ------===//
//
// Part of Loom. What the CUDA device gives cuDNN's backend API for a
// cudnn.conv step (lib/Runtime/CUDA/CudnnEncoding.h) is what the manifest says:
// packed tensors with their unique ids, the intermediates virtual, the
// convolution's per-dimension attributes, a 1-d convolution over a unit
// height, the bias add and the activation as pointwise operations. Where
// cuDNN's cudnn_graph.h is found (LOOM_HAVE_CUDNN_GRAPH_H), the ABI values
// the runtime declares are checked against it.
//
//===----------------------------------------------------------------------===//

#include "../../../lib/Runtime/CUDA/CudnnEncoding.h"

#include "gtest/gtest.h"

#ifdef LOOM_HAVE_CUDNN_GRAPH_H
#include <cudnn_graph.h>
#endif

using namespace loom;
using namespace loom::rt::cudnn;
namespace art = loom::artifact;

namespace {

using Dims = std::vector<int64_t>;

art::CudnnConvStep step2d(int64_t bias, Activation act) {
  art::CudnnConvStep s;
  s.src = 0;
  s.weights = 1;
  s.bias = bias;
  s.dst = 3;
  s.srcShape = {2, 6, 11, 13};
  s.weightsShape = {4, 3, 3, 2};
  s.dstShape = {2, 4, 5, 12};
  s.strides = {2, 1};
  s.pads = {1, 0, 0, 1};
  s.dilations = {1, 2};
  s.groups = 2;
  s.activation = {act, 0, 0};
  return s;
}

} // namespace

TEST(CudnnEncodingTest, ConvolutionBiasActivation) {
  Encoding e = encode(step2d(2, Activation::Relu));
  EXPECT_EQ(e.spatialDims, 2);
  EXPECT_EQ(e.strides, (Dims{2, 1}));
  EXPECT_EQ(e.dilations, (Dims{1, 2}));
  EXPECT_EQ(e.prePaddings, (Dims{1, 0}));
  EXPECT_EQ(e.postPaddings, (Dims{0, 1}));
  ASSERT_TRUE(e.tensor(kUidSrc) && e.tensor(kUidWeights) &&
              e.tensor(kUidDst) && e.tensor(kUidBias) &&
              e.tensor(kUidConvolved) && e.tensor(kUidBiased));
  EXPECT_EQ(e.tensor(kUidSrc)->dims, (Dims{2, 6, 11, 13}));
  EXPECT_EQ(e.tensor(kUidSrc)->strides, (Dims{858, 143, 13, 1}));
  // Groups are the input's channels over the filter's.
  EXPECT_EQ(e.tensor(kUidWeights)->dims, (Dims{4, 3, 3, 2}));
  EXPECT_EQ(e.tensor(kUidBias)->dims, (Dims{1, 4, 1, 1}));
  EXPECT_EQ(e.tensor(kUidBias)->strides, (Dims{4, 1, 1, 1}));
  EXPECT_FALSE(e.tensor(kUidDst)->isVirtual);
  EXPECT_TRUE(e.tensor(kUidConvolved)->isVirtual);
  EXPECT_TRUE(e.tensor(kUidBiased)->isVirtual);
  EXPECT_EQ(e.tensor(kUidBiased)->dims, (Dims{2, 4, 5, 12}));
  // conv -> convolved; convolved + bias -> biased; relu(biased) -> dst.
  EXPECT_EQ(e.convolved, kUidConvolved);
  ASSERT_EQ(e.pointwise.size(), 2u);
  EXPECT_EQ(e.pointwise[0].mode, kPointwiseAdd);
  EXPECT_EQ(std::tie(e.pointwise[0].x, e.pointwise[0].b, e.pointwise[0].y),
            std::make_tuple(int64_t(kUidConvolved), int64_t(kUidBias),
                            int64_t(kUidBiased)));
  EXPECT_EQ(e.pointwise[1].mode, kReluFwd);
  EXPECT_EQ(std::tie(e.pointwise[1].x, e.pointwise[1].b, e.pointwise[1].y),
            std::make_tuple(int64_t(kUidBiased), int64_t(-1),
                            int64_t(kUidDst)));
}

TEST(CudnnEncodingTest, FewerOperations) {
  // The convolution alone writes dst; no virtual tensor.
  Encoding alone = encode(step2d(-1, Activation::None));
  EXPECT_EQ(alone.convolved, kUidDst);
  EXPECT_TRUE(alone.pointwise.empty());
  EXPECT_EQ(alone.tensors.size(), 3u);
  // A bias alone: the add writes dst.
  Encoding bias = encode(step2d(2, Activation::None));
  ASSERT_EQ(bias.pointwise.size(), 1u);
  EXPECT_EQ(bias.pointwise[0].y, kUidDst);
  EXPECT_FALSE(bias.tensor(kUidBiased));
  // An activation alone reads the convolution's result.
  Encoding act = encode(step2d(-1, Activation::GeluErf));
  ASSERT_EQ(act.pointwise.size(), 1u);
  EXPECT_EQ(act.pointwise[0].mode, kGeluFwd);
  EXPECT_EQ(act.pointwise[0].x, kUidConvolved);
  EXPECT_FALSE(act.tensor(kUidBias));
}

TEST(CudnnEncodingTest, NarrowOperands) {
  // bf16 src, weights and bias with an f32 dst (the cast back to f32 taken
  // in): the intermediates f32, as the convolution accumulates.
  art::CudnnConvStep s = step2d(2, Activation::Relu);
  EXPECT_EQ(encode(s).tensor(kUidSrc)->dataType, kDataFloat);
  s.operandType = "bf16";
  Encoding e = encode(s);
  EXPECT_EQ(e.tensor(kUidSrc)->dataType, kDataBFloat16);
  EXPECT_EQ(e.tensor(kUidWeights)->dataType, kDataBFloat16);
  EXPECT_EQ(e.tensor(kUidBias)->dataType, kDataBFloat16);
  EXPECT_EQ(e.tensor(kUidConvolved)->dataType, kDataFloat);
  EXPECT_EQ(e.tensor(kUidBiased)->dataType, kDataFloat);
  EXPECT_EQ(e.tensor(kUidDst)->dataType, kDataFloat);
  s.operandType = s.resultType = "f16";
  e = encode(s);
  EXPECT_EQ(e.tensor(kUidSrc)->dataType, kDataHalf);
  EXPECT_EQ(e.tensor(kUidDst)->dataType, kDataHalf);
}

TEST(CudnnEncodingTest, TF32Operands) {
  // f32 data holding TF32 values: every tensor, the bias included, f32.
  art::CudnnConvStep s = step2d(2, Activation::Relu);
  s.operandType = "tf32";
  Encoding e = encode(s);
  for (int64_t uid : {kUidSrc, kUidWeights, kUidBias, kUidConvolved, kUidDst})
    EXPECT_EQ(e.tensor(uid)->dataType, kDataFloat) << uid;
}

TEST(CudnnEncodingTest, EnginesByOperandType) {
  // The notes of a TF32 engine on f32 data, of a tensor-core engine on
  // narrow data, of one reducing below f32, and of one with other notes
  // (FFT, Winograd: 3, 5) only.
  const std::vector<int32_t> tf32Engine = {kNoteTensorCore,
                                           kNoteDownConvertInputs},
                             tensorCores = {kNoteTensorCore},
                             reduced = {kNoteReducedPrecisionReduction},
                             other = {3, 5}, none = {};
  // f32: only engines without the three notes.
  EXPECT_FALSE(computesExactly(tf32Engine, "f32"));
  EXPECT_FALSE(computesExactly(tensorCores, "f32"));
  EXPECT_FALSE(computesExactly(reduced, "f32"));
  EXPECT_TRUE(computesExactly(other, "f32"));
  EXPECT_TRUE(computesExactly(none, "f32"));
  // tf32: the TF32 engines too, not a reduction below f32.
  EXPECT_TRUE(computesExactly(tf32Engine, "tf32"));
  EXPECT_TRUE(computesExactly(tensorCores, "tf32"));
  EXPECT_FALSE(computesExactly(reduced, "tf32"));
  EXPECT_TRUE(computesExactly(none, "tf32"));
  // bf16, f16: tensor cores, not a conversion down or a reduction below f32.
  for (const char *narrow : {"bf16", "f16"}) {
    EXPECT_FALSE(computesExactly(tf32Engine, narrow));
    EXPECT_TRUE(computesExactly(tensorCores, narrow));
    EXPECT_FALSE(computesExactly(reduced, narrow));
    EXPECT_TRUE(computesExactly(other, narrow));
  }
}

TEST(CudnnEncodingTest, OneAndThreeSpatialDimensions) {
  art::CudnnConvStep s;
  s.srcShape = {2, 3, 17};
  s.weightsShape = {4, 3, 5};
  s.dstShape = {2, 4, 8};
  s.strides = {2};
  s.pads = {2, 1};
  s.dilations = {1};
  Encoding e = encode(s);
  // A unit height without stride, padding or dilation.
  EXPECT_EQ(e.spatialDims, 2);
  EXPECT_EQ(e.tensor(kUidSrc)->dims, (Dims{2, 3, 1, 17}));
  EXPECT_EQ(e.tensor(kUidWeights)->dims, (Dims{4, 3, 1, 5}));
  EXPECT_EQ(e.tensor(kUidDst)->dims, (Dims{2, 4, 1, 8}));
  EXPECT_EQ(e.strides, (Dims{1, 2}));
  EXPECT_EQ(e.prePaddings, (Dims{0, 2}));
  EXPECT_EQ(e.postPaddings, (Dims{0, 1}));
  EXPECT_EQ(e.dilations, (Dims{1, 1}));
  s.srcShape = {1, 2, 5, 6, 7};
  s.weightsShape = {3, 2, 2, 3, 2};
  s.dstShape = {1, 3, 4, 4, 6};
  s.strides = {1, 1, 1};
  s.pads = {0, 0, 0, 0, 0, 0};
  s.dilations = {1, 1, 1};
  Encoding three = encode(s);
  EXPECT_EQ(three.spatialDims, 3);
  EXPECT_EQ(three.tensor(kUidDst)->strides, (Dims{288, 96, 24, 6, 1}));
}

TEST(CudnnEncodingTest, EveryActivation) {
  for (int i = 0; i <= int(Activation::LeakyRelu); ++i) {
    auto a = Activation(i);
    bool runs = art::cudnnRunsActivation(a);
    EXPECT_EQ(activationMode(a).has_value(), runs && a != Activation::None)
        << activationName(a);
  }
  EXPECT_EQ(activationMode(Activation::Sigmoid), kSigmoidFwd);
  EXPECT_EQ(activationMode(Activation::Tanh), kTanhFwd);
  EXPECT_EQ(activationMode(Activation::GeluTanh), kGeluApproxTanhFwd);
  EXPECT_EQ(activationMode(Activation::Swish), kSwishFwd);
}

#ifdef LOOM_HAVE_CUDNN_GRAPH_H
// The values the runtime declares are cuDNN 9's (enumerators of different
// types, compared as integers).
constexpr bool same(int64_t a, int64_t b) { return a == b; }
static_assert(same(kDataFloat, CUDNN_DATA_FLOAT));
static_assert(same(kDataHalf, CUDNN_DATA_HALF));
static_assert(same(kDataBFloat16, CUDNN_DATA_BFLOAT16));
static_assert(same(kCrossCorrelation, CUDNN_CROSS_CORRELATION));
static_assert(same(kPointwiseDescriptor, CUDNN_BACKEND_POINTWISE_DESCRIPTOR));
static_assert(same(kConvolutionDescriptor, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR));
static_assert(same(kEngineDescriptor, CUDNN_BACKEND_ENGINE_DESCRIPTOR));
static_assert(same(kEngineCfgDescriptor, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
static_assert(same(kEngineHeurDescriptor, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR));
static_assert(same(kExecutionPlanDescriptor, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR));
static_assert(same(kConvForwardDescriptor, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR));
static_assert(same(kPointwiseOperationDescriptor, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR));
static_assert(same(kOperationGraphDescriptor, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR));
static_assert(same(kVariantPackDescriptor, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR));
static_assert(same(kTensorDescriptor, CUDNN_BACKEND_TENSOR_DESCRIPTOR));
static_assert(same(kTypeHandle, CUDNN_TYPE_HANDLE));
static_assert(same(kTypeDataType, CUDNN_TYPE_DATA_TYPE));
static_assert(same(kTypeBoolean, CUDNN_TYPE_BOOLEAN));
static_assert(same(kTypeInt64, CUDNN_TYPE_INT64));
static_assert(same(kTypeFloat, CUDNN_TYPE_FLOAT));
static_assert(same(kTypeVoidPtr, CUDNN_TYPE_VOID_PTR));
static_assert(same(kTypeConvolutionMode, CUDNN_TYPE_CONVOLUTION_MODE));
static_assert(same(kTypeHeurMode, CUDNN_TYPE_HEUR_MODE));
static_assert(same(kTypeNumericalNote, CUDNN_TYPE_NUMERICAL_NOTE));
static_assert(same(kTypePointwiseMode, CUDNN_TYPE_POINTWISE_MODE));
static_assert(same(kTypeBackendDescriptor, CUDNN_TYPE_BACKEND_DESCRIPTOR));
static_assert(same(kPointwiseMode, CUDNN_ATTR_POINTWISE_MODE));
static_assert(same(kPointwiseMathPrec, CUDNN_ATTR_POINTWISE_MATH_PREC));
static_assert(same(kConvCompType, CUDNN_ATTR_CONVOLUTION_COMP_TYPE));
static_assert(same(kConvMode, CUDNN_ATTR_CONVOLUTION_CONV_MODE));
static_assert(same(kConvDilations, CUDNN_ATTR_CONVOLUTION_DILATIONS));
static_assert(same(kConvFilterStrides, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES));
static_assert(same(kConvPostPaddings, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS));
static_assert(same(kConvPrePaddings, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS));
static_assert(same(kConvSpatialDims, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS));
static_assert(same(kHeurMode, CUDNN_ATTR_ENGINEHEUR_MODE));
static_assert(same(kHeurOperationGraph, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH));
static_assert(same(kHeurResults, CUDNN_ATTR_ENGINEHEUR_RESULTS));
static_assert(same(kEngineCfgEngine, CUDNN_ATTR_ENGINECFG_ENGINE));
static_assert(same(kPlanEngineConfig, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG));
static_assert(same(kPlanWorkspaceSize, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE));
static_assert(same(kConvForwardAlpha, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA));
static_assert(same(kConvForwardBeta, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA));
static_assert(same(kConvForwardConvDesc, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC));
static_assert(same(kConvForwardW, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W));
static_assert(same(kConvForwardX, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X));
static_assert(same(kConvForwardY, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y));
static_assert(same(kPointwisePwDescriptor, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR));
static_assert(same(kPointwiseXDesc, CUDNN_ATTR_OPERATION_POINTWISE_XDESC));
static_assert(same(kPointwiseBDesc, CUDNN_ATTR_OPERATION_POINTWISE_BDESC));
static_assert(same(kPointwiseYDesc, CUDNN_ATTR_OPERATION_POINTWISE_YDESC));
static_assert(same(kGraphOps, CUDNN_ATTR_OPERATIONGRAPH_OPS));
static_assert(same(kTensorByteAlignment, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT));
static_assert(same(kTensorDataType, CUDNN_ATTR_TENSOR_DATA_TYPE));
static_assert(same(kTensorDimensions, CUDNN_ATTR_TENSOR_DIMENSIONS));
static_assert(same(kTensorStrides, CUDNN_ATTR_TENSOR_STRIDES));
static_assert(same(kTensorUniqueId, CUDNN_ATTR_TENSOR_UNIQUE_ID));
static_assert(same(kTensorIsVirtual, CUDNN_ATTR_TENSOR_IS_VIRTUAL));
static_assert(same(kVariantPackUniqueIds, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS));
static_assert(same(kVariantPackDataPointers, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS));
static_assert(same(kVariantPackWorkspace, CUDNN_ATTR_VARIANT_PACK_WORKSPACE));
static_assert(same(kEngineNumericalNote, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE));
static_assert(same(kPointwiseAdd, CUDNN_POINTWISE_ADD));
static_assert(same(kReluFwd, CUDNN_POINTWISE_RELU_FWD));
static_assert(same(kTanhFwd, CUDNN_POINTWISE_TANH_FWD));
static_assert(same(kSigmoidFwd, CUDNN_POINTWISE_SIGMOID_FWD));
static_assert(same(kGeluFwd, CUDNN_POINTWISE_GELU_FWD));
static_assert(same(kSwishFwd, CUDNN_POINTWISE_SWISH_FWD));
static_assert(same(kGeluApproxTanhFwd, CUDNN_POINTWISE_GELU_APPROX_TANH_FWD));
static_assert(same(kHeurModeA, CUDNN_HEUR_MODE_A));
static_assert(same(kHeurModeFallback, CUDNN_HEUR_MODE_FALLBACK));
static_assert(same(kNoteTensorCore, CUDNN_NUMERICAL_NOTE_TENSOR_CORE));
static_assert(same(kNoteDownConvertInputs, CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS));
static_assert(same(kNoteReducedPrecisionReduction, CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION));
// The element types the runtime passes: enums are 32-bit, a boolean is a
// C++ bool (cudnn_graph.h documents CUDNN_TYPE_BOOLEAN as bool).
static_assert(sizeof(cudnnBackendHeurMode_t) == sizeof(int32_t));
static_assert(sizeof(cudnnPointwiseMode_t) == sizeof(int32_t));
static_assert(sizeof(cudnnDataType_t) == sizeof(int32_t));
static_assert(sizeof(cudnnBackendNumericalNote_t) == sizeof(int32_t));
static_assert(sizeof(cudnnConvolutionMode_t) == sizeof(int32_t));

TEST(CudnnEncodingTest, CheckedAgainstCudnnGraphH) { SUCCEED(); }
#endif
