#!/usr/bin/python3
#===- torch-decode.py - PyTorch eager's decode and prefill ----------------===#
#
# Part of Loom. The PyTorch 1.13 peer of loom-bench-decode: the zoo's decoder
# as torch.nn (scripts/export-decoder.py, the very module exported to ONNX)
# on the zoo's weights, eager, no_grad, its cache grown by concatenation (as
# HuggingFace's is), torch.set_num_threads(--threads). At live length c:
#
#   decode  one token at position c - 1 over a past of c - 1 positions
#           (zeros: the cache's contents do not change the work), --warmup
#           untimed steps, then the median of --steps
#   prefill (--prefill-length L) c = L tokens on an empty past: one untimed
#           run, then the median of --prefill-repeat
#   check   (--prompt-ids 1,2,3 --logits-out FILE) the logits of a prefill of
#           that prompt, as a safetensors file with one tensor `logits`
#
# One JSON object on stdout: {"torch_version", "threads", "decode_ms",
# "decode_min_ms", "steps", "prefill_ms", "load_s", "peak_rss_kb",
# "baseline_rss_kb"} (null for what was not asked). Errors: one line on
# stderr, exit status 1.
#
#===----------------------------------------------------------------------===#
import argparse
import importlib.util
import json
import os
import resource
import statistics
import struct
import sys
import time

import torch


def fail(message):
    sys.stderr.write(f'torch-decode: error: {message}\n')
    sys.exit(1)


def peak_rss_kb():
    try:
        with open('/proc/self/status') as f:
            for line in f:
                if line.startswith('VmHWM:'):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def import_export_script(path):
    spec = importlib.util.spec_from_file_location('export_decoder', path)
    if spec is None or not os.path.exists(path):
        fail(f'no export script {path}')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_logits(path, logits):
    data = logits.contiguous().numpy().astype('<f4').tobytes()
    header = json.dumps({'logits': {'dtype': 'F32', 'shape': list(logits.shape),
                                    'data_offsets': [0, len(data)]}})
    header += ' ' * ((8 - len(header) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(header)) + header.encode() + data)


def timed(fn, warmup, repeat):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return times


def run_tokens(model, ids, past_len):
    positions = torch.arange(past_len, past_len + ids.shape[1]).unsqueeze(0)
    return model(ids, positions, *model.empty_past(1, past_len))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--export-script', required=True)
    parser.add_argument('--weights', required=True)
    parser.add_argument('--arch', choices=['gpt2', 'llama'], required=True)
    parser.add_argument('--capacity', type=int, required=True)
    parser.add_argument('--threads', type=int, default=2)
    parser.add_argument('--context', type=int, default=0)
    parser.add_argument('--steps', type=int, default=20)
    parser.add_argument('--warmup', type=int, default=3)
    parser.add_argument('--prefill-length', type=int, default=0)
    parser.add_argument('--prefill-repeat', type=int, default=3)
    parser.add_argument('--prompt-ids', default='')
    parser.add_argument('--logits-out', default='')
    args = parser.parse_args()
    baseline = peak_rss_kb()
    torch.set_num_threads(args.threads)
    torch.set_grad_enabled(False)
    exporter = import_export_script(args.export_script)
    start = time.perf_counter()
    try:
        model = exporter.load(args.weights, args.arch, args.capacity)
    except (OSError, KeyError, ValueError) as e:
        fail(f'cannot load {args.weights}: {e}')
    load_s = time.perf_counter() - start
    report = {'torch_version': torch.__version__, 'threads': args.threads,
              'decode_ms': None, 'decode_min_ms': None, 'steps': 0,
              'prefill_ms': None, 'load_s': round(load_s, 3)}
    if args.prompt_ids:
        ids = torch.tensor([[int(t) for t in args.prompt_ids.split(',')]])
        write_logits(args.logits_out, run_tokens(model, ids, 0)[0])
    if args.context > 0:
        past = model.empty_past(1, args.context - 1)
        ids = torch.zeros((1, 1), dtype=torch.int64)
        pos = torch.tensor([[args.context - 1]])
        times = timed(lambda: model(ids, pos, *past), args.warmup, args.steps)
        del past
        report.update(decode_ms=round(statistics.median(times), 4),
                      decode_min_ms=round(min(times), 4), steps=args.steps)
    if args.prefill_length > 0:
        ids = torch.zeros((1, args.prefill_length), dtype=torch.int64)
        times = timed(lambda: run_tokens(model, ids, 0), 1, args.prefill_repeat)
        report['prefill_ms'] = round(statistics.median(times), 4)
    report.update(peak_rss_kb=peak_rss_kb(), baseline_rss_kb=baseline)
    print(json.dumps(report))


if __name__ == '__main__':
    main()
