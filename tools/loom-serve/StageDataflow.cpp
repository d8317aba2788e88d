//===- StageDataflow.cpp - What a served pipeline's stages exchange -------===//
//
// Part of Loom. See StageDataflow.h.
//
//===----------------------------------------------------------------------===//

#include "StageDataflow.h"

#include "ArtifactSource.h"
#include "HostTensor.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace loom;
using namespace loom::serve;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(message.str());
}

/// The protocol's view of a value of type \p t named \p name.
llvm::Expected<TensorSpec> specOf(Type t, std::string name) {
  auto rt = dyn_cast<RankedTensorType>(t);
  if (!rt || !rt.hasStaticShape())
    return fail("'" + name + "' is not a tensor of static shape");
  std::string dtype;
  llvm::raw_string_ostream os(dtype);
  rt.getElementType().print(os);
  std::optional<ElemKind> kind = tools::elemKindOfDtype(dtype);
  if (!kind)
    return fail("'" + name + "' has elements of " + dtype +
                ", which the protocol does not carry");
  TensorSpec s;
  s.name = std::move(name);
  s.kind = *kind;
  s.shape.assign(rt.getShape().begin(), rt.getShape().end());
  // A byte per element of i1, as the runtime keeps them.
  s.rowBytes = (elementTypeInfo(*kind).bits + 7) / 8 * rt.getNumElements();
  return s;
}

/// Reads stage \p k's function into \p flow.
llvm::Error readStage(func::FuncOp stage, int64_t k, int64_t numArgs,
                      const std::vector<int64_t> &numOutputs,
                      StageDataflow &flow) {
  std::vector<StageSource> sources;
  for (unsigned i = 0; i < stage.getNumArguments(); ++i) {
    auto src = stage.getArgAttrOfType<DenseI64ArrayAttr>(i, "loom.source");
    if (!src || src.size() != 2)
      return fail("@" + stage.getSymName() + " argument " + llvm::Twine(i) +
                  " has no loom.source: a stage that takes parameters as "
                  "arguments is a training step's, not a served model's");
    StageSource s{src[0], src[1]};
    bool known = s.stage == -1 ? s.index >= 0 && s.index < numArgs
                               : s.stage >= 0 && s.stage < k && s.index >= 0 &&
                                     s.index < numOutputs[s.stage];
    if (!known)
      return fail("@" + stage.getSymName() + " argument " + llvm::Twine(i) +
                  " comes from (" + llvm::Twine(s.stage) + ", " +
                  llvm::Twine(s.index) +
                  "), which is not an argument nor an earlier stage's output");
    sources.push_back(s);
  }
  flow.inputs.push_back(std::move(sources));
  for (unsigned j = 0; j < stage.getNumResults(); ++j)
    if (auto ret = stage.getResultAttrOfType<DenseI64ArrayAttr>(
            j, "loom.returned"))
      for (int64_t p : ret.asArrayRef()) {
        if (p < 0 || p >= int64_t(flow.outputs.size()))
          return fail("@" + stage.getSymName() + " result " + llvm::Twine(j) +
                      " is returned at position " + llvm::Twine(p) +
                      ", which the function does not have");
        flow.outputs[p] = {k, j};
      }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<StageDataflow>
serve::readStageDataflow(const loom_model *model, const std::string &function,
                         int64_t numStages) {
  std::unique_ptr<tools::ArtifactSource> source =
      tools::parseArtifactSource(model);
  if (!source)
    return fail("the artifact embeds no module that parses (compiled with "
                "--source none?): the served pipeline's dataflow is read "
                "from it");
  func::FuncOp fn = source->function(function);
  if (!fn)
    return fail("the embedded module has no @" + function);
  StageDataflow flow;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    auto name = fn.getArgAttrOfType<StringAttr>(i, "tg.name");
    auto spec = specOf(fn.getArgumentTypes()[i],
                       name ? name.str() : "arg" + std::to_string(i));
    if (!spec)
      return spec.takeError();
    flow.requestInputs.push_back(std::move(*spec));
  }
  for (unsigned j = 0; j < fn.getNumResults(); ++j) {
    auto name = fn.getResultAttrOfType<StringAttr>(j, "tg.name");
    auto spec = specOf(fn.getResultTypes()[j],
                       name ? name.str() : "result" + std::to_string(j));
    if (!spec)
      return spec.takeError();
    flow.requestOutputs.push_back(std::move(*spec));
  }
  flow.outputs.assign(fn.getNumResults(), {-2, 0});
  std::vector<int64_t> numOutputs;
  for (int64_t k = 0; k < numStages; ++k) {
    std::string name = function + "_s" + std::to_string(k) + "_forward";
    func::FuncOp stage = source->function(name);
    if (!stage)
      return fail("the embedded module has no @" + name);
    if (llvm::Error e = readStage(stage, k, fn.getNumArguments(), numOutputs,
                                  flow))
      return std::move(e);
    numOutputs.push_back(stage.getNumResults());
  }
  for (size_t p = 0; p < flow.outputs.size(); ++p)
    if (flow.outputs[p].stage < 0)
      return fail("result " + llvm::Twine(p) + " of @" + function +
                  " is no stage's output (a result that is an argument or "
                  "a constant is not served across ranks)");
  return flow;
}
