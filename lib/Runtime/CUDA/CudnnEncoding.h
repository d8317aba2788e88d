//===- CudnnEncoding.h - A cudnn.conv step as cuDNN's graph -----*- C++ -*-===//
//
// Part of Loom. What the CUDA device gives cuDNN's backend API for a
// cudnn.conv step (docs/Artifact.md): the tensors (dimensions, packed
// strides, unique ids, which are virtual), the convolution's attributes and
// the pointwise operations after it (the bias add, the activation). A 1-d
// convolution is a 2-d one over a unit height (cuDNN's convolutions take
// 4-d and 5-d tensors). Plain data, no cuDNN types:
// test/Unit/Runtime/CudnnEncodingTest.cpp checks it against the manifest
// and the values below against cudnn_graph.h.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CUDNNENCODING_H
#define LOOM_LIB_RUNTIME_CUDNNENCODING_H

#include "loom/Artifact/Schema.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace loom::rt::cudnn {

// cuDNN 9's ABI values (cudnn_graph.h), declared here so that libloomrt
// builds without the library's headers.
constexpr int32_t kDataFloat = 0;        // CUDNN_DATA_FLOAT
constexpr int32_t kDataHalf = 2;         // CUDNN_DATA_HALF
constexpr int32_t kDataBFloat16 = 9;     // CUDNN_DATA_BFLOAT16
constexpr int32_t kCrossCorrelation = 1; // CUDNN_CROSS_CORRELATION

/// cudnnBackendDescriptorType_t.
enum DescriptorType : int32_t {
  kPointwiseDescriptor = 0,         // CUDNN_BACKEND_POINTWISE_DESCRIPTOR
  kConvolutionDescriptor = 1,       // ..._CONVOLUTION_DESCRIPTOR
  kEngineDescriptor = 2,            // ..._ENGINE_DESCRIPTOR
  kEngineCfgDescriptor = 3,         // ..._ENGINECFG_DESCRIPTOR
  kEngineHeurDescriptor = 4,        // ..._ENGINEHEUR_DESCRIPTOR
  kExecutionPlanDescriptor = 5,     // ..._EXECUTION_PLAN_DESCRIPTOR
  kConvForwardDescriptor = 10,      // ..._OPERATION_CONVOLUTION_FORWARD_...
  kPointwiseOperationDescriptor = 13, // ..._OPERATION_POINTWISE_DESCRIPTOR
  kOperationGraphDescriptor = 15,   // ..._OPERATIONGRAPH_DESCRIPTOR
  kVariantPackDescriptor = 16,      // ..._VARIANT_PACK_DESCRIPTOR
  kTensorDescriptor = 17,           // ..._TENSOR_DESCRIPTOR
};

/// cudnnBackendAttributeType_t.
enum AttributeType : int32_t {
  kTypeHandle = 0,
  kTypeDataType = 1,
  kTypeBoolean = 2,
  kTypeInt64 = 3,
  kTypeFloat = 4,
  kTypeVoidPtr = 6,
  kTypeConvolutionMode = 7,
  kTypeHeurMode = 8,
  kTypeNumericalNote = 11,
  kTypePointwiseMode = 14,
  kTypeBackendDescriptor = 15,
};

/// cudnnBackendAttributeName_t.
enum AttributeName : int32_t {
  kPointwiseMode = 0,            // CUDNN_ATTR_POINTWISE_MODE
  kPointwiseMathPrec = 1,        // CUDNN_ATTR_POINTWISE_MATH_PREC
  kConvCompType = 100,           // CUDNN_ATTR_CONVOLUTION_COMP_TYPE
  kConvMode = 101,               // CUDNN_ATTR_CONVOLUTION_CONV_MODE
  kConvDilations = 102,          // CUDNN_ATTR_CONVOLUTION_DILATIONS
  kConvFilterStrides = 103,      // CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES
  kConvPostPaddings = 104,       // CUDNN_ATTR_CONVOLUTION_POST_PADDINGS
  kConvPrePaddings = 105,        // CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS
  kConvSpatialDims = 106,        // CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS
  kHeurMode = 200,               // CUDNN_ATTR_ENGINEHEUR_MODE
  kHeurOperationGraph = 201,     // CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH
  kHeurResults = 202,            // CUDNN_ATTR_ENGINEHEUR_RESULTS
  kEngineCfgEngine = 300,        // CUDNN_ATTR_ENGINECFG_ENGINE
  kPlanHandle = 400,             // CUDNN_ATTR_EXECUTION_PLAN_HANDLE
  kPlanEngineConfig = 401,       // CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG
  kPlanWorkspaceSize = 402,      // CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE
  kConvForwardAlpha = 700,       // CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA
  kConvForwardBeta = 701,        // ..._BETA
  kConvForwardConvDesc = 702,    // ..._CONV_DESC
  kConvForwardW = 703,           // ..._W
  kConvForwardX = 704,           // ..._X
  kConvForwardY = 705,           // ..._Y
  kPointwisePwDescriptor = 750,  // CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR
  kPointwiseXDesc = 751,         // ..._XDESC
  kPointwiseBDesc = 752,         // ..._BDESC
  kPointwiseYDesc = 753,         // ..._YDESC
  kGraphHandle = 800,            // CUDNN_ATTR_OPERATIONGRAPH_HANDLE
  kGraphOps = 801,               // CUDNN_ATTR_OPERATIONGRAPH_OPS
  kTensorByteAlignment = 900,    // CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT
  kTensorDataType = 901,         // CUDNN_ATTR_TENSOR_DATA_TYPE
  kTensorDimensions = 902,       // CUDNN_ATTR_TENSOR_DIMENSIONS
  kTensorStrides = 903,          // CUDNN_ATTR_TENSOR_STRIDES
  kTensorUniqueId = 906,         // CUDNN_ATTR_TENSOR_UNIQUE_ID
  kTensorIsVirtual = 907,        // CUDNN_ATTR_TENSOR_IS_VIRTUAL
  kVariantPackUniqueIds = 1000,  // CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS
  kVariantPackDataPointers = 1001, // CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS
  kVariantPackWorkspace = 1003,  // CUDNN_ATTR_VARIANT_PACK_WORKSPACE
  kEngineNumericalNote = 1303,   // CUDNN_ATTR_ENGINE_NUMERICAL_NOTE
};

/// cudnnPointwiseMode_t.
enum PointwiseMode : int32_t {
  kPointwiseAdd = 0,          // CUDNN_POINTWISE_ADD
  kReluFwd = 100,             // CUDNN_POINTWISE_RELU_FWD
  kTanhFwd = 101,             // CUDNN_POINTWISE_TANH_FWD
  kSigmoidFwd = 102,          // CUDNN_POINTWISE_SIGMOID_FWD
  kGeluFwd = 104,             // CUDNN_POINTWISE_GELU_FWD (erf)
  kSwishFwd = 106,            // CUDNN_POINTWISE_SWISH_FWD
  kGeluApproxTanhFwd = 107,   // CUDNN_POINTWISE_GELU_APPROX_TANH_FWD
};

/// cudnnBackendHeurMode_t: the modes tried, in order.
constexpr int32_t kHeurModeA = 3, kHeurModeFallback = 2;
/// cudnnBackendNumericalNote_t: the notes of engines that may not compute
/// in f32 (tensor cores, inputs converted down: on f32 data, TF32 engines
/// carry both; a reduction in lower precision). computesExactly says which
/// the runtime takes.
constexpr int32_t kNoteTensorCore = 0, kNoteDownConvertInputs = 1,
                  kNoteReducedPrecisionReduction = 2;

/// Whether an engine with numerical notes \p notes computes a step of
/// operand type \p operandType as the interpreter does (docs/Precision.md):
/// f32 operands, only an engine with none of the three notes (a TF32 engine
/// would round them); tf32 operands (f32 data holding TF32 values), any
/// engine that reduces in f32 (its conversion to TF32 keeps them, its
/// tensor cores multiply them exactly); bf16 and f16, an engine that
/// neither converts them down nor reduces below f32 (tensor cores multiply
/// them exactly).
bool computesExactly(const std::vector<int32_t> &notes,
                     const std::string &operandType);
/// CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT: every buffer starts at a multiple of
/// 64 bytes (arena slices; staged buffers at 256).
constexpr int64_t kBufferAlignment = 64;

/// The tensors' unique ids: the step's buffers, then the virtual
/// intermediates (the convolution's result before the bias, the biased
/// result before the activation).
enum Uid : int64_t {
  kUidSrc = 1,
  kUidWeights = 2,
  kUidBias = 3,
  kUidDst = 4,
  kUidConvolved = 5,
  kUidBiased = 6,
};

/// One tensor descriptor: its cudnnDataType_t (the step's operand type for
/// src, weights and bias, its result type for dst, f32 for the virtual
/// intermediates), dense row-major (packed) strides.
struct Tensor {
  int64_t uid = 0;
  int32_t dataType = kDataFloat;
  std::vector<int64_t> dims, strides;
  bool isVirtual = false;
};

/// One pointwise operation: y = mode(x) or mode(x, b), by unique id.
struct Pointwise {
  int32_t mode = kPointwiseAdd;
  int64_t x = 0, b = -1, y = 0;
};

/// The whole graph: the convolution x (*) w -> convolved, then the
/// pointwise operations in order, the last writing the step's dst.
struct Encoding {
  std::vector<Tensor> tensors;
  int64_t spatialDims = 2;
  std::vector<int64_t> strides, prePaddings, postPaddings, dilations;
  int64_t convolved = kUidDst;
  std::vector<Pointwise> pointwise;

  const Tensor *tensor(int64_t uid) const;
};

/// cudnnPointwiseMode_t of \p a, or nullopt for none (and for what
/// artifact::cudnnRunsActivation refuses).
std::optional<int32_t> activationMode(Activation a);

/// cudnnDataType_t of a step's element type (f32, bf16, f16; tf32 data is
/// f32's; the reader admits no other).
int32_t dataType(const std::string &dtype);

/// The graph that computes \p step (one the reader accepted).
Encoding encode(const artifact::CudnnConvStep &step);

} // namespace loom::rt::cudnn

#endif // LOOM_LIB_RUNTIME_CUDNNENCODING_H
