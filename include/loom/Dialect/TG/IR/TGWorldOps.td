//===- TGWorldOps.td - Ops of a program run on every rank of a world -*- tablegen -*-===//
//
// Part of Loom. Included from TGOps.td. A program compiled for a world of
// `ranks` processes (cache parallelism, docs/CacheParallel.md) runs the
// same ops on every rank; these ops are where the ranks differ or meet:
// which rank this is, the attention over this rank's shard of a cache
// sharded by position, and the gather of a tensor from every rank.
//
// The rank and the gather are over a group of the world's ranks: `ranks`
// ranks spaced `stride` apart in a world of `world` ranks (0: `ranks *
// stride`, the group the whole world). The world is seen as a grid
// [world / (ranks * stride), ranks, stride]; world rank `w` is index `(w /
// stride) % ranks` of its group, whose members are `w + (i - (w / stride) %
// ranks) * stride`, `i < ranks`. A world of cache- and tensor-parallel
// ranks (CP x TP, docs/CacheParallel.md) gathers over both kinds of group:
// the tensor-parallel ranks of a cache shard (`stride = 1`) and the cache
// shards of a tensor-parallel index (`stride = T`).
//
// Facts: lib/Dialect/TG/IR/WorldOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGWORLDOPS_TD
#define LOOM_DIALECT_TG_IR_TGWORLDOPS_TD

def TG_WorldRankOp : TG_InferOp<"world_rank", !listconcat([TG_Structured, TG_ReadsWorld], TG_Facts)> {
  let summary = "this rank's index in a world of `ranks` processes";
  let description = [{
    The index (`0 .. ranks - 1`) of the process running the program in its
    group of `ranks` ranks spaced `stride` apart (the file's header), as a
    rank-0 i64 tensor. A program holding it runs on a world of exactly
    `world` processes (0: `ranks * stride`; the runtime refuses another
    size), a multiple of `ranks * stride`. The interpreter runs one rank:
    it evaluates the op only for a world of 1 (0).

    ```mlir
    %r = tg.world_rank {ranks = 4 : i64} : () -> tensor<i64>
    %shard = tg.world_rank {ranks = 2 : i64, stride = 2 : i64} : () -> tensor<i64>
    ```
  }];
  let arguments = (ins I64Attr:$ranks,
                   DefaultValuedAttr<I64Attr, "1">:$stride,
                   DefaultValuedAttr<I64Attr, "0">:$world);
  let extraClassDeclaration = [{
    /// The world's size: `world`, or `ranks * stride` where it is 0.
    int64_t getWorldSize() { return getWorld() ? getWorld() : getRanks() * getStride(); }
  }];
  let results = (outs 0DTensorOf<[I64]>:$rank);
}

def TG_AllGatherOp : TG_InferOp<"all_gather", !listconcat([TG_Structured, TG_ReadsWorld], TG_Facts)> {
  let summary = "the operand of every rank of a group, stacked by index";
  let description = [{
    `output[i] = input` of the group's rank `i`, for every `i < ranks`, the
    group being the `ranks` ranks spaced `stride` apart that hold this one
    (the file's header): the result has shape `[ranks] + input.shape` and
    is the same on every rank of the group. Every rank of the world (of
    `world` ranks; 0: `ranks * stride`) runs it, in the same order as its
    other collectives (the ranks run one program). The interpreter runs one
    rank: it evaluates the op only for a world of 1 (the operand with a
    leading 1).

    With `root = i` (0 <= i < ranks; default -1: every rank's block) only
    the group's rank i sends its block, a broadcast: `output[i]` is rank
    i's input on every rank, every other block is zeros, and the other
    ranks' operands are not read (nor sent). A pipeline stage's hand-over
    is one (`--tg-pipeline-stages`).

    ```mlir
    %all = tg.all_gather %x {ranks = 2 : i64} : (tensor<1x32x1x64xf32>) -> tensor<2x1x32x1x64xf32>
    %tp = tg.all_gather %y {ranks = 2 : i64, world = 4 : i64} : (tensor<1x64xf32>) -> tensor<2x1x64xf32>
    %from1 = tg.all_gather %z {ranks = 3 : i64, root = 1 : i64} : (tensor<64xf32>) -> tensor<3x64xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$input, I64Attr:$ranks,
                   DefaultValuedAttr<I64Attr, "1">:$stride,
                   DefaultValuedAttr<I64Attr, "0">:$world,
                   DefaultValuedAttr<I64Attr, "-1">:$root);
  let extraClassDeclaration = [{
    /// The world's size: `world`, or `ranks * stride` where it is 0.
    int64_t getWorldSize() { return getWorld() ? getWorld() : getRanks() * getStride(); }
  }];
  let results = (outs TG_Tensor:$output);
}

def TG_ShardAttentionOp : TG_InferOp<"shard_attention", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "tg.attention over one rank's shard of a cache sharded by position, with the log-sum-exp";
  let description = [{
    The caches of a sequence are sharded round-robin by position over
    `shards` ranks: key `j` of `k` and `v` (`[B, Hkv, Skv, D]`) is the
    sequence's position `j * shards + s`, `s = clamp(shard, 0, shards - 1)`.
    `length` (`[B]` or rank 0) is the sequence's live length `L` in
    positions of the whole sequence (at least 0), and `q` (`[B, Hq, Sq, D]`)
    its queries, under tg.attention's rules: a query sees the positions
    `g = L` (or, with `causal`, `clamp(L - Sq + i + 1, 0, L)` for query
    `i`), of which this shard holds the keys `j < clamp(ceil((g - s) /
    shards), 0, Skv)`. `output` is tg.attention's over those keys, and `lse`
    (`[B, Hq, Sq]`) the log of the sum of `exp(score)` over them (`-inf`
    where the shard holds none, the output then 0). `L` is clamped to
    `[0, shards * Skv]`, and `Sq` may exceed `Skv` (the queries are
    positions of the whole sequence). With `shards = 1` the output is
    tg.attention's.

    The attention over all the shards is the merge of every shard's pair:
    `sum_s exp(lse_s - m) output_s / sum_s exp(lse_s - m)`, `m = max_s
    lse_s` (Flash-Decoding's; `--tg-cache-parallel` builds it after a
    tg.all_gather). On the CPU an f32 one runs as libloomrt's
    `loomrt.attention` step; on a GPU (and in f64) it is generated code,
    tg.attention's form over the shard's positions with the log-sum-exp.

    ```mlir
    %o, %lse = tg.shard_attention %q, %k, %v, %len, %rank {scale = 0.125 : f64, causal = true, shards = 2 : i64}
        : (tensor<1x32x1x64xf32>, tensor<1x4x1025x64xf32>, tensor<1x4x1025x64xf32>, tensor<1xi64>, tensor<i64>)
        -> (tensor<1x32x1x64xf32>, tensor<1x32x1xf32>)
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[F32, F64]>:$q,
                   StaticShapeTensorOf<[F32, F64]>:$k,
                   StaticShapeTensorOf<[F32, F64]>:$v,
                   StaticShapeTensorOf<[I64]>:$length,
                   0DTensorOf<[I64]>:$shard,
                   F64Attr:$scale,
                   DefaultValuedAttr<BoolAttr, "false">:$causal,
                   I64Attr:$shards);
  let results = (outs StaticShapeTensorOf<[F32, F64]>:$output,
                      StaticShapeTensorOf<[F32, F64]>:$lse);
}

#endif // LOOM_DIALECT_TG_IR_TGWORLDOPS_TD
