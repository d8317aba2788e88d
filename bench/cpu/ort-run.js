#!/usr/bin/env node
//===- ort-run.js - Time an ONNX model on ONNX Runtime (CPU) ----------------===//
//
// Part of Loom. The ONNX Runtime peer of loom-bench-cpu: loads a model with
// onnxruntime-node (CPU execution provider, N intra-op threads, one inter-op
// thread, all graph optimisations), feeds it the tensors of a safetensors file
// (the very inputs Loom runs on), does warm-up runs and then timed runs, writes
// the outputs of the last run to a safetensors file and prints one JSON object
// on stdout:
//
//   {"ort_version": "1.30.0", "threads": 2, "warmup": 3, "repeat": 10,
//    "session_ms": 812.4, "median_ms": 31.2, "min_ms": 30.9, "p90_ms": 33.0,
//    "mean_ms": 31.5, "times_ms": [...], "peak_rss_kb": 181234,
//    "baseline_rss_kb": 45012, "outputs": [{"name": "y", "dtype": "F32",
//    "shape": [1, 1000]}]}
//
//   node ort-run.js --ort DIR/node_modules/onnxruntime-node --model m.onnx
//        --inputs in.safetensors [--outputs out.safetensors] [--threads 2]
//        [--warmup 3] [--repeat 10] [--profile nodes.json]
//
// With --profile FILE, the session profiles every run (ONNX Runtime's
// enableProfiling) and FILE gets, per node of the optimised graph, its
// operator and how long its kernel took: {"runs": N, "nodes": [{"name":
// "/l0/MatMul", "op": "MatMul", "count": 13, "median_ms": 0.41, "min_ms":
// 0.39, "total_ms": 5.5}, ...]} (warm-up runs included in count and total;
// the trace itself is deleted).
//
// Errors (a missing file, an input the file lacks, a dtype ONNX Runtime
// rejects) are one line on stderr and exit status 1.
//
// Required as a module (bench/decode/ort-decode.js), it runs nothing and
// exports its helpers: safetensors, statistics, peak memory, the session.
//
//===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const path = require('path');

function fail(message) {
  process.stderr.write(`${path.basename(process.argv[1] || 'ort-run', '.js')}: error: ${message}\n`);
  process.exit(1);
}

/// Options `--name VALUE` or `--name=VALUE`: `numeric` maps a name to its
/// least value (an integer), `text` lists the others, `defaults` gives
/// initial values and `required` the names that must be given.
function parseOptions(argv, {defaults, numeric, text, required}) {
  const args = {...defaults};
  for (let i = 0; i < argv.length; ++i) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i]);
    if (!m)
      fail(`unexpected argument '${argv[i]}'`);
    const key = m[1];
    const value = m[2] !== undefined ? m[2] : argv[++i];
    if (value === undefined)
      fail(`--${key} needs a value`);
    if (key in numeric) {
      const n = Number(value);
      if (!Number.isInteger(n) || n < numeric[key])
        fail(`--${key} expects a ${numeric[key] > 0 ? 'positive' :
                                                    'non-negative'} integer, got '${value}'`);
      args[key] = n;
    } else if (text.includes(key)) {
      args[key] = value;
    } else {
      fail(`unknown option --${key}`);
    }
  }
  for (const key of required)
    if (!args[key])
      fail(`--${key} is required`);
  return args;
}

function parseArgs(argv) {
  return parseOptions(argv, {
    defaults: {threads: 2, warmup: 3, repeat: 10, outputs: ''},
    numeric: {threads: 1, warmup: 0, repeat: 1},
    text: ['ort', 'model', 'inputs', 'outputs', 'profile'],
    required: ['ort', 'model', 'inputs'],
  });
}

//===----------------------------------------------------------------------===//
// safetensors: [u64 LE header size N][N bytes of JSON][data]
//===----------------------------------------------------------------------===//

// safetensors dtype -> [ONNX Runtime tensor type, typed array, element size].
const DTYPES = {
  F64: ['float64', Float64Array, 8],
  F32: ['float32', Float32Array, 4],
  F16: ['float16', Uint16Array, 2],
  I64: ['int64', BigInt64Array, 8],
  I32: ['int32', Int32Array, 4],
  I16: ['int16', Int16Array, 2],
  I8: ['int8', Int8Array, 1],
  U8: ['uint8', Uint8Array, 1],
  BOOL: ['bool', Uint8Array, 1],
};
const ORT_TO_DTYPE = Object.fromEntries(
    Object.entries(DTYPES).map(([dtype, [ortType]]) => [ortType, dtype]));

/// Reads a safetensors file into {name: {dtype, shape, data}} where data is a
/// typed array holding its own copy of the bytes (aligned for its type).
function readSafetensors(file) {
  let bytes;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    fail(`cannot read ${file}: ${e.message}`);
  }
  if (bytes.length < 8)
    fail(`${file}: too short for a safetensors header`);
  const headerSize = bytes.readBigUInt64LE(0);
  if (headerSize > BigInt(bytes.length - 8))
    fail(`${file}: header size ${headerSize} runs past the end of the file`);
  const dataStart = 8 + Number(headerSize);
  let header;
  try {
    header = JSON.parse(bytes.toString('utf8', 8, dataStart));
  } catch (e) {
    fail(`${file}: the header is not JSON: ${e.message}`);
  }
  const tensors = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__')
      continue;
    const spec = DTYPES[info.dtype];
    if (!spec)
      fail(`${file}: tensor '${name}' has dtype ${info.dtype}, which ort-run does not read`);
    const [begin, end] = info.data_offsets;
    const count = info.shape.reduce((a, b) => a * b, 1);
    if (end - begin !== count * spec[2] || dataStart + end > bytes.length)
      fail(`${file}: tensor '${name}' has a bad size or offsets`);
    const copy = new Uint8Array(end - begin);
    copy.set(bytes.subarray(dataStart + begin, dataStart + end));
    tensors[name] = {
      dtype: info.dtype,
      shape: info.shape,
      data: new spec[1](copy.buffer, 0, count),
    };
  }
  return tensors;
}

/// Writes {name: {dtype, shape, data}} as a safetensors file: tensors in name
/// order, the header padded with spaces to a multiple of 8 bytes.
function writeSafetensors(file, tensors) {
  const header = {};
  const chunks = [];
  let offset = 0;
  for (const name of Object.keys(tensors).sort()) {
    const t = tensors[name];
    const bytes = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    header[name] = {dtype: t.dtype, shape: t.shape,
                    data_offsets: [offset, offset + bytes.length]};
    chunks.push(bytes);
    offset += bytes.length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const size = Buffer.alloc(8);
  size.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  const tmp = `${file}.tmp${process.pid}`;
  fs.writeFileSync(tmp, Buffer.concat([size, Buffer.from(json), ...chunks]));
  fs.renameSync(tmp, file);
}

//===----------------------------------------------------------------------===//
// The session
//===----------------------------------------------------------------------===//

/// onnxruntime-node from its package directory, and its version.
function loadOrt(dir) {
  let ort;
  try {
    ort = require(path.resolve(dir));
  } catch (e) {
    fail(`cannot load onnxruntime-node from ${dir} (run scripts/setup-bench.sh): ${e.message}`);
  }
  return {ort, version: require(path.join(path.resolve(dir), 'package.json')).version};
}

/// A CPU session of `model` on `threads` intra-op threads (one inter-op
/// thread, sequential, every graph optimisation), with `extra` options.
async function createSession(ort, model, threads, extra) {
  try {
    return await ort.InferenceSession.create(model, {
      executionProviders: ['cpu'],
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      ...extra,
    });
  } catch (e) {
    fail(`ONNX Runtime cannot load ${model}: ${e.message}`);
  }
}

//===----------------------------------------------------------------------===//
// Timing
//===----------------------------------------------------------------------===//

/// Per node of ONNX Runtime's trace (its "Node" events, one per kernel run),
/// the operator and the times of its runs, written as --profile describes.
function writeNodeProfile(traceFile, out, runs) {
  let events;
  try {
    events = JSON.parse(fs.readFileSync(traceFile, 'utf8'));
  } catch (e) {
    fail(`cannot read ONNX Runtime's profile ${traceFile}: ${e.message}`);
  }
  const nodes = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time'))
      continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    if (!nodes.has(name))
      nodes.set(name, {op: (e.args && e.args.op_name) || '', times: []});
    nodes.get(name).times.push(e.dur / 1e3);
  }
  const round = (x) => Math.round(x * 1e6) / 1e6;
  const list = [];
  for (const [name, {op, times}] of nodes) {
    const sorted = [...times].sort((a, b) => a - b);
    list.push({name, op, count: times.length, median_ms: round(median(sorted)),
               min_ms: round(sorted[0]),
               total_ms: round(times.reduce((a, b) => a + b, 0))});
  }
  fs.writeFileSync(out, JSON.stringify({runs, nodes: list}) + '\n');
  fs.unlinkSync(traceFile);
}

function median(sorted) {
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function percentile(sorted, p) {
  // Nearest rank.
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

// This process's peak resident memory (VmHWM): resourceUsage().maxRSS
// includes the high-water mark of the process that spawned node.
function peakResidentKb() {
  try {
    const m = /VmHWM:\s*(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]);
  } catch (e) {}
  return process.resourceUsage().maxRSS;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const baselineRssKb = Math.round(process.memoryUsage().rss / 1024);
  const {ort, version} = loadOrt(args.ort);
  if (!fs.existsSync(args.model))
    fail(`no model ${args.model}`);

  const inputs = readSafetensors(args.inputs);
  const start = process.hrtime.bigint();
  const session = await createSession(ort, args.model, args.threads,
                                      args.profile ? {enableProfiling: true,
                                                      profileFilePrefix: `${args.profile}.trace`} : {});
  const sessionMs = Number(process.hrtime.bigint() - start) / 1e6;

  const feeds = {};
  for (const name of session.inputNames) {
    const t = inputs[name];
    if (!t)
      fail(`${args.inputs} has no tensor '${name}' (an input of ${args.model})`);
    feeds[name] = new ort.Tensor(DTYPES[t.dtype][0], t.data, t.shape);
  }

  let results;
  const run = async () => {
    try {
      return await session.run(feeds);
    } catch (e) {
      fail(`ONNX Runtime failed to run ${args.model}: ${e.message}`);
    }
  };
  for (let i = 0; i < args.warmup; ++i)
    results = await run();
  const times = [];
  for (let i = 0; i < args.repeat; ++i) {
    const t0 = process.hrtime.bigint();
    results = await run();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }

  const outputs = {};
  const described = [];
  for (const name of session.outputNames) {
    const t = results[name];
    const dtype = ORT_TO_DTYPE[t.type];
    if (!dtype)
      fail(`output '${name}' has type ${t.type}, which safetensors cannot hold here`);
    outputs[name] = {dtype, shape: t.dims.map(Number), data: t.data};
    described.push({name, dtype, shape: t.dims.map(Number)});
  }
  if (args.outputs)
    writeSafetensors(args.outputs, outputs);
  if (args.profile) {
    // endProfiling writes the trace and returns its file name (relative to
    // the working directory when the prefix is).
    const trace = session.endProfiling();
    const dir = path.dirname(args.profile);
    const prefix = path.basename(`${args.profile}.trace`);
    const file = typeof trace === 'string' && trace ? trace :
        fs.readdirSync(dir).filter((f) => f.startsWith(prefix))
            .map((f) => path.join(dir, f)).sort().pop();
    if (!file)
      fail(`ONNX Runtime wrote no profile beside ${args.profile}`);
    writeNodeProfile(file, args.profile, args.warmup + args.repeat);
  }

  const sorted = [...times].sort((a, b) => a - b);
  const round = (x) => Math.round(x * 1e4) / 1e4;
  process.stdout.write(JSON.stringify({
    ort_version: version,
    model: args.model,
    threads: args.threads,
    warmup: args.warmup,
    repeat: args.repeat,
    session_ms: round(sessionMs),
    median_ms: round(median(sorted)),
    min_ms: round(sorted[0]),
    p90_ms: round(percentile(sorted, 90)),
    mean_ms: round(times.reduce((a, b) => a + b, 0) / times.length),
    times_ms: times.map(round),
    peak_rss_kb: peakResidentKb(),
    baseline_rss_kb: baselineRssKb,
    outputs: described,
  }) + '\n');
}

// Run as a script it times a model; required (bench/decode/ort-decode.js),
// it lends its helpers.
if (require.main === module)
  main();
else
  module.exports = {fail, parseOptions, readSafetensors, writeSafetensors, median, percentile,
                    peakResidentKb, loadOrt, createSession, DTYPES};
