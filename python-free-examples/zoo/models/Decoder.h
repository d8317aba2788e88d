//===- Decoder.h - The prefill and decode entries of zoo decoders -*- C++ -*-===//
//
// Part of Loom. What the zoo's decoder-only transformers (GPT2.cpp,
// Llama.cpp) share: the two entries of a decoder program over a key/value
// cache kept in place (docs/Decoding.md states the contract):
//
//   prefill  input_ids i64 [B, P], positions i64 [B], lengths i64 [B], the
//            caches -> logits f32 [B, V] (each sequence's last token), the
//            caches
//   decode   input_ids i64 [B, 1], positions i64 [B], the caches
//            -> logits f32 [B, V], the caches
//
// Both append their S tokens (P or 1) to each sequence's cache at its
// position and attend causally over the live positions, so prefill runs a
// prompt in chunks of P (a chunk at position 0 is the whole of a shorter
// one) and decode is a chunk of one token.
//
// Every layer's cache is `cache.<layer>.key` and `cache.<layer>.value`,
// f32 [B, Hkv, C, D], an input tied to the output of the same name. A model
// supplies one function, its body, that builds the logits of an entry from
// the entry's token ids; the body reaches the cache and the positions
// through DecoderEntry.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_EXAMPLES_ZOO_MODELS_DECODER_H
#define LOOM_EXAMPLES_ZOO_MODELS_DECODER_H

#include "../Zoo.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace loom::zoo {

/// The shape of a decoder program.
struct DecoderShape {
  int64_t batch = 1;
  /// P: the longest prompt the prefill entry takes.
  int64_t promptBound = 128;
  /// C: the cache's capacity in positions (prompt and generated tokens).
  int64_t capacity = 1024;
  int64_t layers = 12, hidden = 768, heads = 12, kvHeads = 12, vocab = 50257;
  int64_t headDim() const { return hidden / heads; }
};

/// A model's defaults of the options, and its query heads per key/value
/// head (1: multi-head attention).
struct DecoderDefaults {
  int64_t capacity, layers, hidden, vocab, kvGroup;
};

/// The shape from the command line: --batch, --seq (P, default 128),
/// --context (C), --layers, --hidden, --vocab over `defaults`. Heads of 64
/// (of hidden / 2 below a hidden of 128); `kvGroup` query heads per
/// key/value head, fewer when the heads are fewer. Reports bad settings and
/// returns nullopt.
std::optional<DecoderShape> decoderShape(GraphBuilder &b,
                                         const ModelOptions &o,
                                         const DecoderDefaults &defaults);

/// One entry being built: its phase, its inputs and its updated caches.
class DecoderEntry {
public:
  enum class Phase { Prefill, Decode };

  DecoderEntry(GraphBuilder &b, const DecoderShape &shape, Phase phase);

  Phase phase() const { return entryPhase; }
  /// The tokens this entry computes per sequence: P, or 1.
  int64_t tokens() const { return seq; }
  /// input_ids [B, tokens()].
  mlir::Value ids() const { return idsInput; }

  /// Rows of `table` [rows, cols] at this entry's tokens' positions,
  /// [B, tokens(), cols]: rows positions[b] .. positions[b] + S - 1.
  mlir::Value positionRows(mlir::Value table);

  /// Attention of layer `layer` for q [B, Hq, S, D] and this entry's new
  /// keys and values k, v [B, Hkv, S, D]: appends k and v to the layer's
  /// cache in place at each sequence's position and attends causally over
  /// the cache's live positions (positions + S). Returns [B, Hq, S, D].
  mlir::Value attend(unsigned layer, mlir::Value q, mlir::Value k,
                     mlir::Value v);

  /// The hidden state of each sequence's last token, [B, H], from the
  /// hidden states h [B, tokens(), H].
  mlir::Value lastToken(mlir::Value h);

  /// Ends the entry with `logits` [B, V]: the outputs `logits` and every
  /// updated cache, each tied to its input.
  Outputs outputs(mlir::Value logits);

private:
  GraphBuilder &b;
  DecoderShape shape;
  Phase entryPhase;
  int64_t seq;
  mlir::Value idsInput;
  /// positions [B]: where each sequence's tokens start in its cache;
  /// lengths [B] (prefill): how many of its P are real.
  mlir::Value positions, lengths;
  /// positions + S, the keys the last token of each sequence sees.
  mlir::Value liveLength;
  llvm::SmallVector<mlir::Value> caches, updated;
  llvm::SmallVector<std::string> cacheNames;
};

/// The body of a decoder: the logits [B, V] of an entry.
using DecoderBody =
    llvm::function_ref<mlir::Value(DecoderEntry &entry, const DecoderShape &)>;

/// Builds the prefill entry in `b`'s current function (a decoder's
/// ModelInfo names it `prefill`), then the decode entry in a new function
/// `decode`, at the shape decoderShape makes of `o` and `defaults`; returns
/// the decode entry's outputs for the caller to finish (none on error).
Outputs buildDecoder(GraphBuilder &b, const ModelOptions &o,
                     const DecoderDefaults &defaults, DecoderBody body);

/// Splits [B, S, heads * D] into heads: [B, heads, S, D].
mlir::Value splitHeads(GraphBuilder &b, mlir::Value x, int64_t heads);
/// Merges [B, heads, S, D] into [B, S, heads * D].
mlir::Value mergeHeads(GraphBuilder &b, mlir::Value x);

} // namespace loom::zoo

#endif // LOOM_EXAMPLES_ZOO_MODELS_DECODER_H
