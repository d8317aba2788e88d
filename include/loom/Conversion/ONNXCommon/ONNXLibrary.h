//===- ONNXLibrary.h - Exception-safe calls into the ONNX library -*- C++
//-*-===//
//
// Part of Loom. The ONNX library (parser, checker, shape inference, version
// converter) reports errors by throwing C++ exceptions, and Loom, like LLVM,
// is built without exceptions and RTTI. ONNXLibrary.cpp is the one file
// compiled with -fexceptions -frtti: it calls the library, catches what it
// throws and returns the message as a string (empty on success). This header
// uses only standard and protobuf types, so that either side can include it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CONVERSION_ONNXCOMMON_ONNXLIBRARY_H
#define LOOM_CONVERSION_ONNXCOMMON_ONNXLIBRARY_H

#include "onnx/onnx_pb.h"

#include <cstdint>
#include <string>

namespace loom::onnxlib {

/// Parses ONNX's textual syntax into `model`.
std::string parseText(const std::string &text, onnx::ModelProto &model);

/// Runs onnx::checker::check_model (no full check: shapes are inferred
/// separately).
std::string checkModel(const onnx::ModelProto &model);

/// Runs ONNX shape inference (with data propagation) in place.
std::string inferShapes(onnx::ModelProto &model);

/// Converts `model` to opset `target` of the default domain in place.
std::string convertVersion(onnx::ModelProto &model, int64_t target);

/// The highest opset of the default domain the library knows.
int64_t maxKnownOpset();

/// Prints `model` in ONNX's textual syntax into `text`.
std::string printText(const onnx::ModelProto &model, std::string &text);

} // namespace loom::onnxlib

#endif // LOOM_CONVERSION_ONNXCOMMON_ONNXLIBRARY_H
