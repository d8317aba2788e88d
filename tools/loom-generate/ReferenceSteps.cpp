//===- ReferenceSteps.cpp - The entries run by the interpreter ------------===//
//
// Part of Loom. See ReferenceSteps.h.
//
//===----------------------------------------------------------------------===//

#include "ReferenceSteps.h"

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
  std::vector<RefTensor> args;
  std::vector<std::string> names(io.numInputs);
  for (int64_t i = 0; i < io.numInputs; ++i) {
    loom_tensor_desc d;
    loom_entry_input(model, io.entry, i, &d);
    names[i] = d.name;
    std::vector<int64_t> shape(d.shape, d.shape + d.rank);
    if (io.tied[i]) {
      // The source's shape: an artifact of several ranks holds a shard of
      // the cache the source (one process's program) holds whole.
      auto type = mlir::cast<mlir::RankedTensorType>(
          source->function(io.function).getArgument(i).getType());
      auto it = state.try_emplace(names[i], RefTensor(type.getShape().vec()))
                    .first;
      args.push_back(it->second);
      continue;
    }
    llvm::ArrayRef<int64_t> values = tokens.of(io, i);
    args.push_back(RefTensor::fromDoubles(
        shape, std::vector<double>(values.begin(), values.end())));
  }
  auto results = interpreter->run(source->function(io.function), args);
  if (failed(results))
    return llvm::createStringError("--check: the interpreter failed on @" +
                                   io.function + " of the artifact's source");
  for (int64_t j = 0; j < io.numOutputs; ++j)
    if (io.tiedInput[j] >= 0)
      state.insert_or_assign(names[io.tiedInput[j]], (*results)[j]);
  std::vector<double> out = (*results)[io.logits].toDoubles();
  logits.assign(out.begin(), out.end());
  return llvm::Error::success();
}
