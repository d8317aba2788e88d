#!/usr/bin/env node
//===- ort-decode.js - ONNX Runtime's decode and prefill -------------------===//
//
// Part of Loom. The ONNX Runtime peer of loom-bench-decode, on an export in
// the past/present form (scripts/export-decoder.py: inputs input_ids,
// position_ids, past_key_values.N.key/value [B, Hkv, past, D]; outputs
// logits, present.N.key/value = concat(past, new)); its usual loop, one run
// per token, the presents of a run the pasts of the next. At live length c:
//
//   decode  one token at position c - 1 over a past of c - 1 positions
//           (zeros: the contents do not change the work), --warmup untimed
//           runs, then the median of --steps
//   prefill (--prefill-length L) L tokens on an empty past: one untimed run,
//           then the median of --prefill-repeat
//   check   (--prompt-ids 1,2,3 --logits-out FILE) the logits of a prefill of
//           that prompt, as a safetensors file with one tensor `logits`
//
//   node ort-decode.js --ort DIR/node_modules/onnxruntime-node --model m.onnx
//        [--threads 2] [--context C] [--steps 20] [--warmup 3]
//        [--prefill-length L] [--prefill-repeat 3]
//        [--prompt-ids LIST --logits-out FILE]
//
// One JSON object on stdout: {"ort_version", "threads", "session_ms",
// "decode_ms", "decode_min_ms", "steps", "prefill_ms", "peak_rss_kb",
// "baseline_rss_kb"} (null for what was not asked). The safetensors,
// statistics and session helpers are bench/cpu/ort-run.js's.
//
//===----------------------------------------------------------------------===//
'use strict';

const path = require('path');
const {fail, parseOptions, writeSafetensors, median, peakResidentKb, loadOrt, createSession} =
    require(path.join(__dirname, '..', 'cpu', 'ort-run.js'));

function parseArgs(argv) {
  const args = parseOptions(argv, {
    defaults: {threads: 2, context: 0, steps: 20, warmup: 3,
               'prefill-length': 0, 'prefill-repeat': 3},
    numeric: {threads: 1, context: 0, steps: 1, warmup: 0, 'prefill-length': 0,
              'prefill-repeat': 1},
    text: ['ort', 'model', 'prompt-ids', 'logits-out'],
    required: ['ort', 'model'],
  });
  if (args['prompt-ids'] && !args['logits-out'])
    fail('--prompt-ids needs --logits-out');
  return args;
}

/// The cache's shape [Hkv, D] from the session's first past input
/// (`past_key_values.0.key`), whose metadata gives its dimensions.
function cacheShape(session) {
  const pasts = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  if (pasts.length === 0)
    fail('the model has no past_key_values.N.key/value inputs');
  const meta = session.inputMetadata && session.inputMetadata.find
      ? session.inputMetadata.find((m) => m.name === pasts[0]) : null;
  const shape = meta && meta.shape;
  if (!shape || typeof shape[1] !== 'number' || typeof shape[3] !== 'number')
    fail(`cannot read the shape of ${pasts[0]} [B, Hkv, past, D]`);
  return {pasts, heads: shape[1], dim: shape[3]};
}

/// The feeds of one run: `ids` at positions past..past + ids.length - 1 over
/// a zero past of `past` positions.
function feeds(ort, cache, ids, past) {
  const n = ids.length;
  const f = {
    input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, n]),
    position_ids: new ort.Tensor(
        'int64', BigInt64Array.from({length: n}, (_, i) => BigInt(past + i)), [1, n]),
  };
  const size = cache.heads * past * cache.dim;
  for (const name of cache.pasts)
    f[name] = new ort.Tensor('float32', new Float32Array(size),
                             [1, cache.heads, past, cache.dim]);
  return f;
}

async function timed(session, input, warmup, repeat) {
  const run = async () => {
    try {
      return await session.run(input);
    } catch (e) {
      fail(`ONNX Runtime failed to run: ${e.message}`);
    }
  };
  for (let i = 0; i < warmup; ++i)
    await run();
  const times = [];
  for (let i = 0; i < repeat; ++i) {
    const t0 = process.hrtime.bigint();
    await run();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return times.sort((a, b) => a - b);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const baselineRssKb = Math.round(process.memoryUsage().rss / 1024);
  const {ort, version} = loadOrt(args.ort);
  const start = process.hrtime.bigint();
  const session = await createSession(ort, args.model, args.threads, {});
  const sessionMs = Number(process.hrtime.bigint() - start) / 1e6;
  const cache = cacheShape(session);
  const round = (x) => Math.round(x * 1e4) / 1e4;
  const report = {ort_version: version, threads: args.threads,
                  session_ms: round(sessionMs), decode_ms: null,
                  decode_min_ms: null, steps: 0, prefill_ms: null};
  if (args['prompt-ids']) {
    const ids = args['prompt-ids'].split(',').map(Number);
    const out = await session.run(feeds(ort, cache, ids, 0));
    const t = out.logits;
    writeSafetensors(args['logits-out'],
                     {logits: {dtype: 'F32', shape: t.dims.map(Number), data: t.data}});
  }
  if (args.context > 0) {
    const times = await timed(session, feeds(ort, cache, [0], args.context - 1),
                              args.warmup, args.steps);
    report.decode_ms = round(median(times));
    report.decode_min_ms = round(times[0]);
    report.steps = args.steps;
  }
  if (args['prefill-length'] > 0) {
    const ids = new Array(args['prefill-length']).fill(0);
    const times = await timed(session, feeds(ort, cache, ids, 0), 1,
                              args['prefill-repeat']);
    report.prefill_ms = round(median(times));
  }
  report.peak_rss_kb = peakResidentKb();
  report.baseline_rss_kb = baselineRssKb;
  process.stdout.write(JSON.stringify(report) + '\n');
}

main();
