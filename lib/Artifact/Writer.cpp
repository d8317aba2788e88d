//===- Writer.cpp - The manifest's JSON, written once ---------------------===//
//
// Part of Loom. See Schema.h and docs/Artifact.md: the one writer of the
// artifact schema (the compiler calls it; Reader.cpp reads what it writes).
//
//===----------------------------------------------------------------------===//

#include "loom/Artifact/Json.h"
#include "loom/Artifact/Schema.h"

#include <cstdio>

using namespace loom;
using namespace loom::artifact;

namespace {

Json strings(const std::vector<std::string> &values) {
  Json a = Json::makeArray();
  for (const std::string &v : values)
    a.push(v);
  return a;
}

/// "activation" and, when it takes parameters, both of them.
void writeActivation(const PostOp &a, Json &attrs) {
  attrs.set("activation", activationName(a.kind));
  if (activationParameters(a.kind) > 0) {
    attrs.set("activation_alpha", a.alpha);
    attrs.set("activation_beta", a.beta);
  }
}

void writeConvolution(const ConvolutionOperands &c, Json &args, Json &attrs) {
  args.set("src", c.src).set("weights", c.weights).set("dst", c.dst);
  attrs.set("src_shape", Json::integers(c.srcShape))
      .set("weights_shape", Json::integers(c.weightsShape))
      .set("dst_shape", Json::integers(c.dstShape))
      .set("strides", Json::integers(c.strides))
      .set("pads", Json::integers(c.pads))
      .set("dilations", Json::integers(c.dilations))
      .set("groups", c.groups);
}

/// A library step's element types, where they are not f32 (an f32 step's
/// record is as it was before there were others).
void writeElementTypes(const LibraryElementTypes &t, Json &attrs) {
  if (t.operandType != "f32")
    attrs.set("operand_type", t.operandType);
  if (t.resultType != "f32")
    attrs.set("result_type", t.resultType);
}

void writeOptional(Json &args, const char *role, int64_t id) {
  if (id != -1)
    args.set(role, id);
}

/// A matmul step's output scale (when not 1) and its operands' strided
/// views (when it has them).
void writeMatmulScaleAndViews(const MatmulStep &s, Json &attrs) {
  if (s.scale != 1)
    attrs.set("scale", s.scale);
  if (!s.views)
    return;
  const char *roles[] = {"src_view", "weights_view", "dst_view"};
  for (size_t i = 0; i < 3; ++i)
    attrs.set(roles[i], Json::makeObject()
                            .set("dims", Json::integers((*s.views)[i].dims))
                            .set("strides", Json::integers((*s.views)[i].strides))
                            .set("offset", (*s.views)[i].offset));
}

/// loomrt.update_slice's args and attrs.
void writeUpdateSlice(const UpdateSliceStep &s, Json &args, Json &attrs) {
  args.set("base", s.base)
      .set("update", s.update)
      .set("offsets", s.offsets)
      .set("dst", s.dst);
  attrs.set("dtype", s.dtype)
      .set("outer", s.outer)
      .set("dim", s.dim)
      .set("rows", s.rows)
      .set("inner", s.inner)
      .set("offset_count", s.offsetCount);
}

/// loomrt.attention's args and attrs.
void writeAttention(const AttentionStep &s, Json &args, Json &attrs) {
  args.set("q", s.q).set("k", s.k).set("v", s.v);
  writeOptional(args, "length", s.length);
  writeOptional(args, "shard", s.shard);
  args.set("dst", s.dst);
  writeOptional(args, "lse", s.lse);
  if (s.shards != 1)
    attrs.set("shards", s.shards);
  attrs.set("batch", s.batch)
      .set("q_heads", s.qHeads)
      .set("kv_heads", s.kvHeads)
      .set("q_len", s.qLen)
      .set("kv_len", s.kvLen)
      .set("head_dim", s.headDim)
      .set("length_per_batch", s.lengthPerBatch)
      .set("scale", s.scale)
      .set("causal", s.causal);
}

/// The selections' steps: their operands and the line or shape they run on.
/// A group's ranks; its stride and world where they are not the whole
/// world's (1 and ranks * stride).
void writeWorldGroup(const WorldGroup &g, Json &attrs) {
  attrs.set("ranks", g.ranks);
  if (g.stride != 1)
    attrs.set("stride", g.stride);
  if (g.world != g.ranks * g.stride)
    attrs.set("world", g.world);
}

void writeTopK(const TopKStep &s, Json &args, Json &attrs) {
  args.set("src", s.src);
  writeOptional(args, "valid", s.valid);
  args.set("values", s.values).set("indices", s.indices).set("count", s.count);
  attrs.set("dtype", s.dtype)
      .set("outer", s.outer)
      .set("dim", s.dim)
      .set("inner", s.inner)
      .set("k", s.k)
      .set("largest", s.largest);
}

void writeNonMaxSuppression(const NonMaxSuppressionStep &s, Json &args,
                            Json &attrs) {
  args.set("boxes", s.boxes).set("scores", s.scores);
  writeOptional(args, "valid", s.valid);
  args.set("selected", s.selected).set("count", s.count);
  attrs.set("batches", s.batches)
      .set("classes", s.classes)
      .set("num_boxes", s.numBoxes)
      .set("max_output_boxes_per_class", s.maxOutputPerClass)
      .set("center_point_box", s.centerPointBox)
      .set("iou_threshold", s.iouThreshold);
  if (s.scoreThreshold)
    attrs.set("score_threshold", *s.scoreThreshold);
}

void writeNonZero(const NonZeroStep &s, Json &args, Json &attrs) {
  args.set("src", s.src).set("indices", s.indices).set("count", s.count);
  attrs.set("dtype", s.dtype).set("shape", Json::integers(s.shape));
}

/// A library or control step's "args" and "attrs".
void writeOperands(const Step &step, Json &args, Json &attrs) {
  switch (step.kind()) {
  case StepKind::Kernel:
    return; // written by writeStep: positional args, no attrs
  case StepKind::Copy: {
    const auto &s = *step.getIf<CopyStep>();
    args.set("src", s.src).set("dst", s.dst);
    return;
  }
  case StepKind::Branch: {
    const auto &s = *step.getIf<BranchStep>();
    args.set("cond", s.cond);
    attrs.set("else", s.elseStep);
    return;
  }
  case StepKind::Jump:
    attrs.set("to", step.getIf<JumpStep>()->to);
    return;
  case StepKind::Conv2d: {
    const auto &s = *step.getIf<Conv2dStep>();
    writeConvolution(s, args, attrs);
    writeOptional(args, "bias", s.bias);
    writeOptional(args, "sum", s.sum);
    attrs.set("algorithm", convAlgorithmName(s.algorithm));
    writeActivation(s.activation, attrs);
    return;
  }
  case StepKind::Conv2dFilterGrad:
    writeConvolution(*step.getIf<Conv2dFilterGradStep>(), args, attrs);
    return;
  case StepKind::Matmul: {
    const auto &s = *step.getIf<MatmulStep>();
    args.set("src", s.src).set("weights", s.weights).set("dst", s.dst);
    writeOptional(args, "bias", s.bias);
    writeOptional(args, "sum", s.sum);
    attrs.set("src_shape", Json::integers(s.srcShape))
        .set("weights_shape", Json::integers(s.weightsShape))
        .set("dst_shape", Json::integers(s.dstShape))
        .set("weights_constant", s.weightsConstant);
    writeActivation(s.activation, attrs);
    writeMatmulScaleAndViews(s, attrs);
    return;
  }
  case StepKind::Pool2d: {
    const auto &s = *step.getIf<Pool2dStep>();
    args.set("src", s.src).set("dst", s.dst);
    attrs.set("src_shape", Json::integers(s.srcShape))
        .set("dst_shape", Json::integers(s.dstShape))
        .set("kernel", Json::integers(s.kernel))
        .set("strides", Json::integers(s.strides))
        .set("pads", Json::integers(s.pads))
        .set("algorithm", poolAlgorithmName(s.algorithm));
    return;
  }
  case StepKind::Concat: {
    const auto &s = *step.getIf<ConcatStep>();
    args.set("srcs", Json::integers(s.srcs)).set("dst", s.dst);
    attrs.set("src_channels", Json::integers(s.srcChannels))
        .set("dst_shape", Json::integers(s.dstShape));
    return;
  }
  case StepKind::Binary: {
    const auto &s = *step.getIf<BinaryStep>();
    args.set("src0", s.src0).set("src1", s.src1).set("dst", s.dst);
    attrs.set("dst_shape", Json::integers(s.dstShape))
        .set("src1_shape", Json::integers(s.src1Shape))
        .set("algorithm", binaryAlgorithmName(s.algorithm));
    writeOptional(args, "shift", s.shift);
    if (s.shift != -1)
      attrs.set("shift_shape", Json::integers(s.shiftShape));
    writeActivation(s.activation, attrs);
    return;
  }
  case StepKind::Sgemm: {
    const auto &s = *step.getIf<SgemmStep>();
    args.set("a", s.a).set("b", s.b).set("c", s.c);
    attrs.set("a_shape", Json::integers(s.aShape))
        .set("b_shape", Json::integers(s.bShape))
        .set("batch", s.batch);
    return;
  }
  case StepKind::Dispatch: {
    const auto &s = *step.getIf<DispatchStep>();
    args.set("buffers", Json::integers(s.args));
    attrs.set("kernel", s.kernel)
        .set("grid", Json::integers({s.grid.begin(), s.grid.end()}))
        .set("block", Json::integers({s.block.begin(), s.block.end()}))
        .set("shared_bytes", s.sharedBytes);
    return;
  }
  case StepKind::CublasMatmul: {
    const auto &s = *step.getIf<CublasMatmulStep>();
    args.set("a", s.a).set("b", s.b).set("d", s.d);
    writeOptional(args, "bias", s.bias);
    attrs.set("m", s.m)
        .set("n", s.n)
        .set("k", s.k)
        .set("batch", s.batch)
        .set("a_batch_stride", s.aBatchStride)
        .set("b_batch_stride", s.bBatchStride)
        .set("epilogue", cublasEpilogueName(s.epilogue));
    writeElementTypes(s, attrs);
    return;
  }
  case StepKind::CudnnConv: {
    const auto &s = *step.getIf<CudnnConvStep>();
    writeConvolution(s, args, attrs);
    writeOptional(args, "bias", s.bias);
    writeActivation(s.activation, attrs);
    writeElementTypes(s, attrs);
    return;
  }
  case StepKind::UpdateSlice:
    return writeUpdateSlice(*step.getIf<UpdateSliceStep>(), args, attrs);
  case StepKind::WorldRank: {
    const auto &s = *step.getIf<WorldRankStep>();
    args.set("dst", s.dst);
    writeWorldGroup(s.group, attrs);
    return;
  }
  case StepKind::AllGather: {
    const auto &s = *step.getIf<AllGatherStep>();
    args.set("src", s.src).set("dst", s.dst);
    attrs.set("bytes", s.bytes);
    writeWorldGroup(s.group, attrs);
    if (s.root >= 0)
      attrs.set("root", s.root);
    return;
  }
  case StepKind::TopK:
    return writeTopK(*step.getIf<TopKStep>(), args, attrs);
  case StepKind::NonMaxSuppression:
    return writeNonMaxSuppression(*step.getIf<NonMaxSuppressionStep>(), args,
                                  attrs);
  case StepKind::NonZero:
    return writeNonZero(*step.getIf<NonZeroStep>(), args, attrs);
  case StepKind::Attention:
    return writeAttention(*step.getIf<AttentionStep>(), args, attrs);
  }
}

Json writeStep(const Step &step) {
  Json o = Json::makeObject();
  o.set("op", stepKindName(step.kind()));
  if (const auto *k = step.getIf<KernelStep>()) {
    o.set("name", k->name)
        .set("args", Json::integers(k->args))
        .set("range", k->range)
        .set("grain", k->grain);
    if (k->team)
      o.set("team", true);
    if (k->elementwise)
      o.set("elementwise", true);
    return o;
  }
  Json args = Json::makeObject(), attrs = Json::makeObject();
  writeOperands(step, args, attrs);
  o.set("args", std::move(args));
  if (!attrs.object().empty())
    o.set("attrs", std::move(attrs));
  return o;
}

Json writeTensor(const TensorDesc &t) {
  Json o = Json::makeObject()
               .set("name", t.name)
               .set("dtype", t.dtype)
               .set("shape", Json::integers(t.shape));
  if (t.bound)
    o.set("bound", Json::makeObject()
                       .set("dim", t.bound->dim)
                       .set("length_output", t.bound->lengthOutput));
  if (t.tiedInput)
    o.set("tied_input", *t.tiedInput);
  return o;
}

Json writeBuffer(const Buffer &b) {
  Json o = Json::makeObject();
  o.set("kind", bufferKindName(b.kind)).set("device", b.device);
  switch (b.kind) {
  case BufferKind::Input:
  case BufferKind::Output:
    return o.set("index", b.index);
  case BufferKind::Weight:
    return o.set("name", b.weight);
  case BufferKind::Arena:
    o.set("offset", b.offset).set("bytes", b.bytes);
    if (b.shared)
      o.set("shared", true);
    return o;
  }
  return o;
}

Json writeEntry(const Entry &e) {
  Json inputs = Json::makeArray(), outputs = Json::makeArray(),
       buffers = Json::makeArray(), programs = Json::makeArray();
  for (const TensorDesc &t : e.inputs)
    inputs.push(writeTensor(t));
  for (const TensorDesc &t : e.outputs)
    outputs.push(writeTensor(t));
  for (const Buffer &b : e.buffers)
    buffers.push(writeBuffer(b));
  for (const Program &p : e.programs) {
    Json steps = Json::makeArray();
    for (const Step &s : p.steps)
      steps.push(writeStep(s));
    programs.push(Json::makeObject()
                      .set("device", p.device)
                      .set("arena_bytes", p.arenaBytes)
                      .set("steps", std::move(steps)));
  }
  Json o = Json::makeObject();
  o.set("name", e.name);
  if (e.rank >= 0)
    o.set("rank", e.rank);
  if (e.rankPeriod > 0)
    o.set("rank_period", e.rankPeriod);
  if (e.rankCount > 0)
    o.set("rank_count", e.rankCount);
  return o.set("inputs", std::move(inputs))
      .set("outputs", std::move(outputs))
      .set("buffers", std::move(buffers))
      .set("programs", std::move(programs));
}

Json writeDevice(const Device &d) {
  return Json::makeObject()
      .set("kind", deviceKindName(d.kind))
      .set("ordinal", d.ordinal)
      .set("triple", d.triple)
      .set("chip", d.chip)
      .set("features", strings(d.features))
      .set("image", d.image);
}

Json writeWeights(const Weights &w) {
  Json o = Json::makeObject();
  switch (w.storage) {
  case WeightStorage::None:
    return o.set("storage", "none");
  case WeightStorage::Embedded:
    o.set("storage", "embedded");
    break;
  case WeightStorage::External:
    o.set("storage", "external").set("file", w.file);
    break;
  }
  Json tensors = Json::makeArray();
  for (const WeightTensor &t : w.tensors)
    tensors.push(Json::makeObject()
                     .set("name", t.name)
                     .set("dtype", t.dtype)
                     .set("shape", Json::integers(t.shape))
                     .set("checksum", checksumHex(t.checksum)));
  return o.set("size", w.size)
      .set("checksum", checksumHex(w.checksum))
      .set("tensors", std::move(tensors));
}

Json writeSlot(const Slot &s) {
  Json o = Json::makeObject()
               .set("kind", std::string(slotKindName(s.kind)))
               .set("name", s.name)
               .set("dtype", s.dtype)
               .set("shape", Json::integers(s.shape));
  switch (s.kind) {
  case SlotKind::Input:
    return o.set("index", s.index);
  case SlotKind::Weight:
  case SlotKind::Gradient:
  case SlotKind::State:
    return o.set("tensor", s.tensor);
  case SlotKind::Value:
  case SlotKind::Sum:
    return o;
  }
  return o;
}

Json writeAction(const Action &a) {
  Json o = Json::makeObject().set("kind", std::string(actionKindName(a.kind())));
  switch (a.kind()) {
  case ActionKind::Compute: {
    const auto &c = std::get<ComputeAction>(a.record);
    Json outputs = Json::makeArray();
    for (int64_t s : c.outputs)
      outputs.push(Json(s));
    return o.set("entry", c.entry)
        .set("micro_batch", c.microBatch)
        .set("inputs", Json::integers(c.inputs))
        .set("outputs", std::move(outputs));
  }
  case ActionKind::Exchange: {
    Json messages = Json::makeArray();
    for (const ExchangeMessage &m : std::get<ExchangeAction>(a.record).messages)
      messages.push(Json::makeObject()
                        .set("channel", m.channel)
                        .set("slot", m.slot)
                        .set("micro_batch", m.microBatch));
    return o.set("messages", std::move(messages));
  }
  case ActionKind::Accumulate: {
    const auto &c = std::get<AccumulateAction>(a.record);
    return o.set("src", c.src).set("dst", c.dst).set("micro_batch",
                                                      c.microBatch);
  }
  case ActionKind::AllReduce: {
    const auto &c = std::get<AllReduceAction>(a.record);
    return o.set("ranks", Json::integers(c.ranks))
        .set("slots", Json::integers(c.slots));
  }
  case ActionKind::Update: {
    const auto &c = std::get<UpdateAction>(a.record);
    return o.set("params", Json::integers(c.params))
        .set("gradients", Json::integers(c.gradients))
        .set("states", Json::integers(c.states));
  }
  }
  return o;
}

Json writeWorld(const World &world) {
  Json ranks = Json::makeArray();
  for (const Rank &r : world.ranks) {
    Json programs = Json::makeArray(), channels = Json::makeArray();
    for (const std::vector<int64_t> &p : r.programs)
      programs.push(Json::integers(p));
    for (const Channel &c : r.channels)
      channels.push(
          Json::makeObject()
              .set("name", c.name)
              .set("direction",
                   c.direction == ChannelDirection::Send ? "send" : "recv")
              .set("peer", c.peer)
              .set("bytes", c.bytes)
              .set("dtype", c.dtype));
    Json rank = Json::makeObject()
                    .set("devices", Json::integers(r.devices))
                    .set("programs", std::move(programs))
                    .set("channels", std::move(channels));
    if (!r.slots.empty() || !r.actions.empty()) {
      Json slots = Json::makeArray(), actions = Json::makeArray();
      for (const Slot &s : r.slots)
        slots.push(writeSlot(s));
      for (const Action &a : r.actions)
        actions.push(writeAction(a));
      rank.set("slots", std::move(slots)).set("actions", std::move(actions));
    }
    ranks.push(std::move(rank));
  }
  Json out = Json::makeObject().set("ranks", std::move(ranks));
  if (world.microBatches == 0)
    return out;
  Json inputs = Json::makeArray();
  for (const TensorDesc &t : world.stepInputs)
    inputs.push(writeTensor(t));
  out.set("micro_batches", world.microBatches)
      .set("inputs", std::move(inputs));
  if (!world.results.empty()) {
    Json results = Json::makeArray();
    for (const TensorDesc &t : world.results)
      results.push(writeTensor(t));
    out.set("results", std::move(results));
  }
  const Optimizer &opt = world.optimizer;
  if (opt.kind != OptimizerKind::None)
    out.set("optimizer", Json::makeObject()
                             .set("kind", std::string(opt.name()))
                             .set("lr", opt.lr)
                             .set("momentum", opt.momentum)
                             .set("beta1", opt.beta1)
                             .set("beta2", opt.beta2)
                             .set("eps", opt.eps)
                             .set("weight_decay", opt.weightDecay));
  return out;
}

} // namespace

std::string artifact::writeManifest(const Manifest &m) {
  Json devices = Json::makeArray(), entries = Json::makeArray();
  for (const Device &d : m.devices)
    devices.push(writeDevice(d));
  bool bounded = false, tied = false;
  for (const Entry &e : m.entries) {
    entries.push(writeEntry(e));
    for (const TensorDesc &t : e.outputs) {
      bounded |= t.bound.has_value();
      tied |= t.tiedInput.has_value();
    }
  }
  int64_t version = tied      ? kTiedManifestVersion
                    : bounded ? kBoundedManifestVersion
                              : kManifestVersion;
  Json root = Json::makeObject()
                  .set("format", kManifestFormat)
                  .set("version", version)
                  .set("loom_version", m.loomVersion)
                  .set("devices", std::move(devices))
                  .set("weights", writeWeights(m.weights))
                  .set("entries", std::move(entries))
                  .set("world", writeWorld(m.world));
  if (m.source)
    root.set("source",
             Json::makeObject()
                 .set("graph", sourceGraphName(m.source->graph))
                 .set("weights", strings(m.source->weights)));
  return root.print();
}
