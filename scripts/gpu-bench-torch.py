#!/usr/bin/env python3
"""The PyTorch side of the GPU timing table (scripts/gpu-check.sh run).

Builds, on the GPU machine, the models Loom's timed artifacts compile
(loom-zoo resnet50, bert-base, gpt2-small; docs/benchmarks/gpu.md) from
torchvision, transformers and torch.nn with random weights (latency does not
depend on their values), and times each in PyTorch eager and under
torch.compile (default mode): CUDA events around each call on device-resident
inputs, the median of --repeat runs after a warm-up, in f32 with TF32 off; a
configuration named NAME-bf16 is NAME run under
torch.autocast(dtype=torch.bfloat16), beside loom-compile --precision=bf16.

  gpu-bench-torch.py --out=FILE.json [--repeat=N] [--ready=FILE --go=FILE]
                     [--only=NAME,...] [--deadline=SECONDS]

With --ready/--go it builds and warms every configuration first (torch.compile
compiles during the warm-up), touches READY, and waits for GO before timing,
so that its timing does not overlap another program's. It writes FILE after
each configuration, so a run cut short keeps what it measured.
"""

import argparse
import json
import math
import os
import sys
import time


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--ready")
    p.add_argument("--go")
    p.add_argument("--only", default="")
    p.add_argument("--deadline", type=float, default=420.0)
    return p.parse_args()


def gpt2_decode_model(torch, layers=12, hidden=768, heads=12, vocab=50257,
                      context=1025):
    """One GPT-2-small decode step over a cache of fixed capacity updated in
    place (the new token's keys and values written at its position), as
    loom-zoo gpt2-small's decode entry computes it."""
    nn = torch.nn
    F = torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(hidden)
            self.qkv = nn.Linear(hidden, 3 * hidden)
            self.proj = nn.Linear(hidden, hidden)
            self.ln2 = nn.LayerNorm(hidden)
            self.fc = nn.Linear(hidden, 4 * hidden)
            self.out = nn.Linear(4 * hidden, hidden)

        def forward(self, x, key, value, pos):
            b = x.shape[0]
            q, k, v = self.qkv(self.ln1(x)).split(hidden, dim=-1)
            shape = (b, 1, heads, hidden // heads)
            q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
            key.index_copy_(2, pos, k)
            value.index_copy_(2, pos, v)
            a = F.scaled_dot_product_attention(q, key, value,
                                               attn_mask=self.mask)
            x = x + self.proj(a.transpose(1, 2).reshape(b, 1, hidden))
            return x + self.out(F.gelu(self.fc(self.ln2(x)),
                                       approximate="tanh"))

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, hidden)
            self.wpe = nn.Embedding(context, hidden)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln = nn.LayerNorm(hidden)

        def forward(self, ids, pos, cache):
            x = self.wte(ids) + self.wpe(pos)[None]
            for i, blk in enumerate(self.blocks):
                x = blk(x, cache[2 * i], cache[2 * i + 1], pos)
            return self.ln(x)[:, -1] @ self.wte.weight.t()

    model = Decoder()
    return model, layers, heads, hidden // heads, context


def build(torch, name, batch):
    """(module, args) on the GPU for one configuration."""
    dev = "cuda"
    if name == "resnet50":
        import torchvision
        m = torchvision.models.resnet50(weights=None).eval().to(dev)
        return m, (torch.randn(batch, 3, 224, 224, device=dev),)
    if name == "bert-base":
        import transformers
        cfg = transformers.BertConfig()
        bert = transformers.BertModel(cfg, add_pooling_layer=True)

        class Bert(torch.nn.Module):
            """input_ids and token_type_ids, no mask: Loom's inputs."""

            def __init__(self):
                super().__init__()
                self.bert = bert

            def forward(self, ids, types):
                out = self.bert(input_ids=ids, token_type_ids=types)
                return out.last_hidden_state, out.pooler_output

        m = Bert().eval().to(dev)
        ids = torch.randint(0, cfg.vocab_size, (batch, 128), device=dev)
        types = torch.zeros(batch, 128, dtype=torch.long, device=dev)
        return m, (ids, types)
    if name == "gpt2-decode":
        m, layers, heads, dh, context = gpt2_decode_model(torch)
        m = m.eval().to(dev)
        past = context - 1
        mask = torch.zeros(1, 1, 1, context, device=dev)
        for blk in m.blocks:
            blk.mask = mask
        cache = [torch.randn(batch, heads, context, dh, device=dev)
                 for _ in range(2 * layers)]
        ids = torch.randint(0, 50257, (batch, 1), device=dev)
        pos = torch.tensor([past], device=dev)
        return m, (ids, pos, cache)
    raise SystemExit("gpu-bench-torch.py: unknown model " + name)


def is_narrow(name):
    """Whether a configuration runs under bf16 autocast (NAME-bf16)."""
    return name.endswith("-bf16")


def model_of(name):
    """The model a configuration builds: NAME of NAME-bf16."""
    return name[:-len("-bf16")] if is_narrow(name) else name


def precision(torch, name):
    """The context a configuration's calls run in: bf16 autocast or none."""
    import contextlib
    if is_narrow(name):
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def time_calls(torch, fn, args, warmup, repeat, context):
    with torch.inference_mode(), context:
        for _ in range(warmup):
            fn(*args)
        torch.cuda.synchronize()
        times = []
        for _ in range(repeat):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn(*args)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2], times[0]


CONFIGS = [("resnet50", 1), ("resnet50", 32), ("bert-base", 1),
           ("bert-base", 32), ("gpt2-decode", 1), ("resnet50-bf16", 1),
           ("resnet50-bf16", 32), ("bert-base-bf16", 1), ("bert-base-bf16", 32)]


def main():
    a = parse()
    began = time.time()
    results = {"configs": [], "errors": []}

    def save():
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)

    try:
        import torch
    except ImportError:
        results["errors"].append("SKIP: no torch")
        save()
        return 0
    if not torch.cuda.is_available():
        results["errors"].append("SKIP: torch has no CUDA device")
        save()
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    results["torch"] = torch.__version__
    results["device"] = torch.cuda.get_device_name(0)
    only = set(filter(None, a.only.split(",")))
    prepared = []
    for name, batch in CONFIGS:
        if only and name not in only:
            continue
        if time.time() - began > a.deadline:
            results["errors"].append("deadline passed before %s b%d" % (name, batch))
            break
        try:
            torch.manual_seed(0)
            model, args = build(torch, model_of(name), batch)
            compiled = torch.compile(model)
            t0 = time.time()
            with torch.inference_mode(), precision(torch, name):
                model(*args)
                compiled(*args)
                compiled(*args)
            torch.cuda.synchronize()
            prepared.append((name, batch, model, compiled, args, time.time() - t0))
            print("torch: %s b%d built and compiled in %.1f s" % (name, batch, time.time() - t0), flush=True)
        except Exception as e:  # noqa: BLE001 - report any failure, go on
            results["errors"].append("%s b%d: %s: %s" % (name, batch, type(e).__name__, e))
            print("torch: %s b%d failed: %s" % (name, batch, e), flush=True)
    save()
    if a.ready:
        open(a.ready, "w").close()
    if a.go:
        while not os.path.exists(a.go):
            if time.time() - began > a.deadline + 120:
                results["errors"].append("no go signal")
                save()
                return 1
            time.sleep(0.2)
    for name, batch, model, compiled, args, compile_s in prepared:
        row = {"model": name, "batch": batch, "compile_s": round(compile_s, 1)}
        for mode, fn in (("eager", model), ("compile", compiled)):
            try:
                med, best = time_calls(torch, fn, args, a.warmup, a.repeat,
                                       precision(torch, name))
                row[mode + "_ms"] = round(med, 4)
                row[mode + "_best_ms"] = round(best, 4)
            except Exception as e:  # noqa: BLE001
                results["errors"].append("%s b%d %s: %s" % (name, batch, mode, e))
        results["configs"].append(row)
        save()
        print("torch: %s b%d eager %s ms, compile %s ms" % (
            name, batch, row.get("eager_ms"), row.get("compile_ms")), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
