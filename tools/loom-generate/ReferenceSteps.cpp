//===- ReferenceSteps.cpp - The entries run by the interpreter ------------===//
//
// Part of Loom. See ReferenceSteps.h.
//
//===----------------------------------------------------------------------===//

#include "ReferenceSteps.h"

#include "loom/Dialect/TG/IR/SignatureNames.h"
#include "loom/Dialect/TG/IR/TiedArguments.h"

using namespace loom;
using namespace loom::generate;
using loom::tools::RefTensor;

llvm::Expected<std::unique_ptr<ReferenceSteps>>
ReferenceSteps::create(const loom_model *model,
                       const DecoderContract &contract) {
  std::unique_ptr<ReferenceSteps> steps(new ReferenceSteps(model, contract));
  steps->source = tools::parseArtifactSource(model);
  if (!steps->source)
    return llvm::createStringError(
        "--check needs the artifact's embedded source (it was compiled with "
        "--source none)");
  for (const EntryIO *io : {&contract.prefill, &contract.decode})
    if (!steps->source->function(io->function))
      return llvm::createStringError("--check: the artifact's source has no "
                                     "function @" +
                                     io->function);
  auto interpreter = tools::SourceInterpreter::create(model, *steps->source);
  if (!interpreter)
    return interpreter.takeError();
  steps->interpreter = std::move(*interpreter);
  return steps;
}

llvm::Error ReferenceSteps::run(const EntryIO &io, const TokenInputs &tokens,
                                std::vector<float> &logits) {
  // The source's function is the program of one process: its arguments
  // are matched with the entry's inputs by name. A rank's entry may hold
  // only a part of the state (a pipeline stage's layers' caches) or a
  // shard of each (cache parallelism); the interpreter carries the whole
  // state by name, zeros before its first call.
  mlir::func::FuncOp fn = source->function(io.function);
  std::map<std::string, int64_t> inputOf;
  for (int64_t i = 0; i < io.numInputs; ++i) {
    loom_tensor_desc d;
    loom_entry_input(model, io.entry, i, &d);
    inputOf[d.name] = i;
  }
  std::vector<RefTensor> args;
  std::vector<std::string> names;
  for (unsigned k = 0, e = fn.getNumArguments(); k < e; ++k) {
    names.push_back(tg::signatureName(fn.getArgAttrDict(k), "arg", k));
    auto type = mlir::cast<mlir::RankedTensorType>(fn.getArgument(k).getType());
    if (tg::getTiedResult(fn, k)) {
      auto it =
          state.try_emplace(names[k], RefTensor(type.getShape().vec())).first;
      args.push_back(it->second);
      continue;
    }
    auto input = inputOf.find(names[k]);
    if (input == inputOf.end() || io.tied[input->second])
      return llvm::createStringError(
          "--check: @" + io.function + " of the artifact's source takes '" +
          names[k] + "', which entry '" + io.name + "' does not");
    llvm::ArrayRef<int64_t> values = tokens.of(io, input->second);
    args.push_back(RefTensor::fromDoubles(
        type.getShape().vec(),
        std::vector<double>(values.begin(), values.end())));
  }
  auto results = interpreter->run(fn, args);
  if (failed(results))
    return llvm::createStringError("--check: the interpreter failed on @" +
                                   io.function + " of the artifact's source");
  std::optional<unsigned> logitsAt;
  for (unsigned j = 0, e = fn.getNumResults(); j < e; ++j) {
    if (std::optional<unsigned> tied = tg::getTiedArgument(fn, j))
      state.insert_or_assign(names[*tied], (*results)[j]);
    else if (tg::signatureName(fn.getResultAttrDict(j), "result", j) ==
             "logits")
      logitsAt = j;
  }
  if (!logitsAt)
    return llvm::createStringError("--check: @" + io.function +
                                   " of the artifact's source has no result "
                                   "'logits'");
  std::vector<double> out = (*results)[*logitsAt].toDoubles();
  logits.assign(out.begin(), out.end());
  return llvm::Error::success();
}
