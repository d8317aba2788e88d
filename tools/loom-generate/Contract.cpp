//===- Contract.cpp - What loom-generate expects of an artifact -----------===//
//
// Part of Loom. See Contract.h. Every departure from the contract is an
// error naming the entry and the input or output, before anything runs.
//
//===----------------------------------------------------------------------===//

#include "Contract.h"
#include "HostTensor.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

using namespace loom;
using namespace loom::generate;
using loom::tools::typeText;

namespace {

llvm::Error contractError(const llvm::Twine &msg) {
  return llvm::createStringError(
      msg + " (docs/tools/loom-generate.md \"The contract\")");
}

/// Finds entry \p io.name, its state (inputs tied to outputs), its inputs
/// `input_ids`, `positions` and `lengths` (those \p required and those
/// \p optional; any other is an error), and its output `logits`.
llvm::Error readEntry(const loom_model *model, llvm::StringRef path,
                      llvm::ArrayRef<llvm::StringRef> required,
                      llvm::ArrayRef<llvm::StringRef> optional, EntryIO &io) {
  io.entry = loom_model_find_entry(model, io.name.c_str());
  if (io.entry < 0)
    return contractError(path + " has no entry '" + io.name +
                         "': a decoder artifact has a 'prefill' and a "
                         "'decode' entry");
  io.numInputs = loom_entry_num_inputs(model, io.entry);
  io.numOutputs = loom_entry_num_outputs(model, io.entry);
  io.tied.assign(io.numInputs, false);
  io.tiedInput.assign(io.numOutputs, -1);
  for (int64_t j = 0; j < io.numOutputs; ++j) {
    io.tiedInput[j] = loom_entry_output_tied_input(model, io.entry, j);
    if (io.tiedInput[j] >= 0)
      io.tied[io.tiedInput[j]] = true;
  }
  std::string entry = "entry '" + io.name + "'";
  for (int64_t i = 0; i < io.numInputs; ++i) {
    loom_tensor_desc d;
    loom_entry_input(model, io.entry, i, &d);
    llvm::StringRef name = d.name;
    if (io.tied[i])
      continue;
    auto allowed = [&](llvm::StringRef n) {
      return name == n && (llvm::is_contained(required, n) ||
                           llvm::is_contained(optional, n));
    };
    if (allowed("input_ids"))
      io.ids = i;
    else if (allowed("positions"))
      io.positions = i;
    else if (allowed("lengths"))
      io.lengths = i;
    else
      return contractError(entry + ": input '" + name +
                           "' is neither state (tied to an output) nor '" +
                           llvm::join(required, "', '") + "'" +
                           (optional.empty()
                                ? std::string()
                                : " or '" + llvm::join(optional, "', '") +
                                      "'"));
  }
  for (int64_t j = 0; j < io.numOutputs; ++j) {
    loom_tensor_desc d;
    loom_entry_output(model, io.entry, j, &d);
    if (io.tiedInput[j] < 0 && llvm::StringRef(d.name) == "logits")
      io.logits = j;
  }
  for (llvm::StringRef name : required) {
    int64_t index = name == "input_ids"   ? io.ids
                    : name == "positions" ? io.positions
                                          : io.lengths;
    if (index < 0)
      return contractError(entry + " has no input '" + name + "'");
  }
  if (io.logits < 0)
    return contractError(entry + " has no output 'logits'");
  return llvm::Error::success();
}

/// Checks a tensor against the contract: \p dtype, and \p shape where a
/// dimension is given (-1: any); \p want says it in words ("i64 [B, P]").
llvm::Error expect(const EntryIO &io, bool input, int64_t index,
                   const loom_model *model, llvm::StringRef dtype,
                   llvm::ArrayRef<int64_t> shape, llvm::StringRef want) {
  loom_tensor_desc d;
  if (input)
    loom_entry_input(model, io.entry, index, &d);
  else
    loom_entry_output(model, io.entry, index, &d);
  bool ok =
      llvm::StringRef(d.dtype) == dtype && d.rank == int64_t(shape.size());
  for (int64_t i = 0; ok && i < d.rank; ++i)
    ok = shape[i] < 0 || shape[i] == d.shape[i];
  if (ok)
    return llvm::Error::success();
  return contractError("entry '" + io.name +
                       "': " + (input ? "input '" : "output '") + d.name +
                       "' is " + typeText(d) + ", the contract wants " + want);
}

int64_t dim(const loom_model *model, const EntryIO &io, bool input,
            int64_t index, int64_t d) {
  loom_tensor_desc desc;
  if (input)
    loom_entry_input(model, io.entry, index, &desc);
  else
    loom_entry_output(model, io.entry, index, &desc);
  return d < desc.rank ? desc.shape[d] : -1;
}

/// The shards of the cache in \p model's world: P of an artifact compiled
/// with --cache-parallel=P (alone, or beside T tensor-parallel ranks), 1
/// otherwise. Its world's ranks over the copies of each entry (T
/// `prefill.rank<t>` of a tensor-parallel or pipeline-stage artifact).
int64_t cacheShards(const loom_model *model) {
  int64_t copies = 0;
  for (int64_t e = 0, n = loom_model_num_entries(model); e < n; ++e)
    copies += llvm::StringRef(loom_model_entry_name(model, e))
                  .starts_with("prefill.rank");
  return loom_model_world_ranks(model) / std::max<int64_t>(1, copies);
}

/// The cache's capacity: dimension 2 of every state tensor of \p io
/// ([B, Hkv, C, D]), the same for all; in an artifact of P cache shards
/// each holds C / P + 1 positions (docs/CacheParallel.md), so C is
/// P * (shard - 1).
llvm::Error readCapacity(const loom_model *model, const EntryIO &io,
                         DecoderContract &c) {
  for (int64_t i = 0; i < io.numInputs; ++i) {
    if (!io.tied[i])
      continue;
    if (llvm::Error e = expect(io, true, i, model, "f32", {c.batch, -1, -1, -1},
                               "f32 [B, Hkv, C, D] for the state"))
      return e;
    int64_t capacity = dim(model, io, true, i, 2);
    if (int64_t shards = cacheShards(model); shards > 1)
      capacity = (capacity - 1) * shards;
    if (c.capacity && capacity != c.capacity) {
      loom_tensor_desc d;
      loom_entry_input(model, io.entry, i, &d);
      return contractError("entry '" + io.name + "': state '" + d.name +
                           "' holds " + llvm::Twine(capacity) +
                           " positions, another " + llvm::Twine(c.capacity));
    }
    c.capacity = capacity;
  }
  if (!c.capacity)
    return contractError("entry '" + io.name +
                         "' has no state (no input tied to an output): "
                         "where would its cache live?");
  return llvm::Error::success();
}

/// Every state tensor of decode is one of prefill's (the context shares
/// state by name, docs/Runtime.md "State"): what prefill writes, decode
/// reads.
llvm::Error checkSharedState(const loom_model *model, const EntryIO &p,
                             const EntryIO &d) {
  for (int64_t i = 0; i < d.numInputs; ++i) {
    if (!d.tied[i])
      continue;
    loom_tensor_desc want;
    loom_entry_input(model, d.entry, i, &want);
    bool found = false;
    for (int64_t k = 0; k < p.numInputs && !found; ++k) {
      loom_tensor_desc got;
      loom_entry_input(model, p.entry, k, &got);
      found = p.tied[k] && llvm::StringRef(got.name) == want.name &&
              got.bytes == want.bytes;
    }
    if (!found)
      return contractError("entry 'decode': state '" + llvm::Twine(want.name) +
                           "' is not state of entry 'prefill' (of the same "
                           "name and size)");
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<DecoderContract>
loom::generate::readContract(const loom_model *model, llvm::StringRef path,
                             int64_t rank) {
  DecoderContract c;
  c.path = path.str();
  c.prefill.function = c.prefill.name = "prefill";
  c.decode.function = c.decode.name = "decode";
  // A tensor-parallel artifact: the entries `prefill.rank<t>` that run on
  // this world rank.
  if (loom_model_find_entry(model, "prefill") < 0)
    for (int64_t e = 0, n = loom_model_num_entries(model); e < n; ++e) {
      llvm::StringRef name = loom_model_entry_name(model, e);
      if (!name.starts_with("prefill.rank") ||
          !loom_model_entry_runs_on(model, e, rank))
        continue;
      c.rank = rank;
      std::string suffix = name.substr(c.prefill.name.size()).str();
      c.prefill.name += suffix;
      c.decode.name += suffix;
      break;
    }
  if (llvm::Error e = readEntry(model, path, {"input_ids", "lengths"},
                               {"positions"}, c.prefill))
    return std::move(e);
  if (llvm::Error e =
          readEntry(model, path, {"input_ids", "positions"}, {}, c.decode))
    return std::move(e);
  const EntryIO &p = c.prefill, &d = c.decode;
  if (llvm::Error e =
          expect(p, true, p.ids, model, "i64", {-1, -1}, "i64 [B, P]"))
    return std::move(e);
  c.batch = dim(model, p, true, p.ids, 0);
  c.promptBound = dim(model, p, true, p.ids, 1);
  if (llvm::Error e =
          expect(p, false, p.logits, model, "f32", {c.batch, -1}, "f32 [B, V]"))
    return std::move(e);
  c.vocab = dim(model, p, false, p.logits, 1);
  struct Check {
    const EntryIO &io;
    bool input;
    int64_t index;
    llvm::SmallVector<int64_t> shape;
    const char *dtype, *want;
  } checks[] = {
      {p, true, p.lengths, {c.batch}, "i64", "i64 [B]"},
      {d, true, d.ids, {c.batch, 1}, "i64", "i64 [B, 1]"},
      {d, true, d.positions, {c.batch}, "i64", "i64 [B]"},
      {d, false, d.logits, {c.batch, c.vocab}, "f32", "f32 [B, V]"},
  };
  if (c.chunked())
    if (llvm::Error e = expect(p, true, p.positions, model, "i64", {c.batch},
                               "i64 [B]"))
      return std::move(e);
  for (const Check &k : checks)
    if (llvm::Error e =
            expect(k.io, k.input, k.index, model, k.dtype, k.shape, k.want))
      return std::move(e);
  if (llvm::Error e = readCapacity(model, p, c))
    return std::move(e);
  if (llvm::Error e = readCapacity(model, d, c))
    return std::move(e);
  if (llvm::Error e = checkSharedState(model, p, d))
    return std::move(e);
  return c;
}
