//===- CandleUno.cpp - CANDLE Uno drug-response model ---------------------===//
//
// Part of Loom. CANDLE-Uno (the ECP-CANDLE Pilot 1 "Uno" model: predicts the
// growth of a tumour cell line under a combination of drugs) in the form
// GraphPipe trains, the candle_uno example of its artifact
// (cmu-catalyst/FlexFlow, examples/cpp/candle_uno/candle_uno.cc,
// CandleConfig defaults): nine inputs, seven of them with their own feature
// encoder, concatenated and fed to a dense tower:
//
//   inputs        cell.rnaseq [942], dose1 [1], dose2 [1],
//                 drug{1,2,3}.descriptors [5270], drug{1,2,3}.fingerprints
//                 [2048] (in that order, the artifact's std::map order)
//   encoders      each of the seven non-dose inputs: 4 dense layers of 4096
//                 (relu, no bias)
//   tower         concat -> [7 x 4096 + 2 = 28674] -> 2 dense layers of 4096
//                 (relu) -> dense 1 (the predicted growth)
//
// 7 x 4 + 2 + 1 = 31 matmuls, about 580 M parameters (2.3 GB in f32).
// --hidden sets the width of every dense layer, --layers the depth of each
// encoder.
//
//===----------------------------------------------------------------------===//

#include "../Zoo.h"

using namespace mlir;
using namespace loom;
using namespace loom::zoo;

Outputs zoo::buildCandleUno(GraphBuilder &b, const ModelOptions &o) {
  int64_t width = o.hidden.value_or(4096), depth = o.layers.value_or(4);
  if (!checkRange(b, "--hidden", width, 1, 1 << 20) ||
      !checkRange(b, "--layers", depth, 1, 1024))
    return {};
  struct Feature {
    const char *name;
    int64_t size;
    bool encoded;
  };
  static const Feature kInputs[] = {
      {"cell.rnaseq", 942, true},
      {"dose1", 1, false},
      {"dose2", 1, false},
      {"drug1.descriptors", 5270, true},
      {"drug1.fingerprints", 2048, true},
      {"drug2.descriptors", 5270, true},
      {"drug2.fingerprints", 2048, true},
      {"drug3.descriptors", 5270, true},
      {"drug3.fingerprints", 2048, true},
  };
  MlpOptions relu;
  relu.hidden = relu.last = Act::Relu;
  relu.bias = false;
  SmallVector<int64_t> encoder(depth, width);
  SmallVector<Value> encoded;
  for (const Feature &f : kInputs) {
    Value x = b.input(f.name, {o.batch, f.size});
    if (f.encoded)
      x = b.mlp(x, encoder, std::string(f.name) + ".encoder", relu);
    encoded.push_back(x);
  }
  MlpOptions tower;
  tower.hidden = Act::Relu;
  tower.last = Act::None;
  tower.bias = false;
  Value y = b.mlp(b.concat(encoded, 1), {width, width, 1}, "dense", tower);
  return {{"growth", y}};
}
