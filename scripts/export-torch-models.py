#!/usr/bin/python3
# ===- scripts/export-torch-models.py - loom-bench-cpu's PyTorch set ------===#
#
# Exports the architectures users bring from PyTorch to ONNX with PyTorch's
# own exporter (torch.onnx.export), for loom-bench-cpu's `torch-*` models
# (bench/cpu/Models.cpp lists the same names; docs/benchmarks/cpu.md describes
# the set). Run by /usr/bin/python3 (Debian's python3-torch 1.13 and
# python3-torchvision 0.14); scripts/setup-bench.sh calls it.
#
#   export-torch-models.py OUT_DIR [--only NAME,...] [--list]
#
# Writes OUT_DIR/<name>.onnx for every model. Weights are random (torch's
# generator seeded with 0 before each model is built; a weight matrix the
# model initialises to zeros is drawn from N(0, 0.02)); batch-norm statistics
# are calibrated by a few forward passes in train mode on random data, then
# the model is put in eval mode (the detector is initialised its own way:
# see detector()). Static shapes (no dynamic axes).
#
# Cached: a model is exported again only when its file is missing or its
# stamp (OUT_DIR/<name>.stamp: this script's sha256, torch's version and the
# model's recipe) differs. A model that PyTorch cannot export is reported and
# skipped (exit status 0; the benchmark then names the missing file).
#
# ===----------------------------------------------------------------------===#

import argparse
import hashlib
import os
import sys
import time

import torch
import torch.nn as nn

OPSET = 17
SEED = 0
CALIBRATION_PASSES = 3


# ---------------------------------------------------------------------------
# Models of torch.nn
# ---------------------------------------------------------------------------


class TextEncoder(nn.Module):
    """Token embedding + learned positions, nn.TransformerEncoder (erf GELU),
    final layer norm, a classification head on every position. batch_first
    False is torch.nn's default layout: the encoder sees [S, B, E]."""

    def __init__(self, vocab, d_model, heads, ffn, layers, seq, norm_first,
                 batch_first):
        super().__init__()
        self.batch_first = batch_first
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.randn(1, seq, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(
            d_model, heads, ffn, dropout=0.0, activation="gelu",
            batch_first=batch_first, norm_first=norm_first)
        self.encoder = nn.TransformerEncoder(
            layer, layers, enable_nested_tensor=False)
        # nn.TransformerEncoder deep-copies one layer: initialise each anew,
        # or every layer would share its weights (and the exporter one set of
        # initializers).
        for p in self.encoder.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, 16)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos
        if not self.batch_first:
            x = x.transpose(0, 1)
        y = self.head(self.norm(self.encoder(x)))
        return y if self.batch_first else y.transpose(0, 1)


class RecurrentTagger(nn.Module):
    """Embedding, a bidirectional 2-layer GRU or LSTM, a tag per token."""

    def __init__(self, cell, vocab, embed, hidden, tags):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        rnn = nn.GRU if cell == "gru" else nn.LSTM
        self.rnn = rnn(embed, hidden, num_layers=2, bidirectional=True,
                       batch_first=True)
        self.head = nn.Linear(2 * hidden, tags)

    def forward(self, tokens):
        out, _ = self.rnn(self.embed(tokens))
        return self.head(out)


class RecurrentLayer(nn.Module):
    """A bare torch.nn.LSTM, GRU or RNN: the exporter's own recurrent
    operator, its outputs (Y and the final states) returned as they are.
    With states, the initial hidden (and cell) states are inputs."""

    def __init__(self, cell, inputs, hidden, layers, bidirectional,
                 batch_first, nonlinearity):
        super().__init__()
        kwargs = dict(num_layers=layers, bidirectional=bidirectional,
                      batch_first=batch_first)
        if cell == "rnn":
            kwargs["nonlinearity"] = nonlinearity
        self.rnn = {"lstm": nn.LSTM, "gru": nn.GRU,
                    "rnn": nn.RNN}[cell](inputs, hidden, **kwargs)

    def forward(self, x, *states):
        if not states:
            return self.rnn(x)
        if len(states) == 2:
            return self.rnn(x, states)
        return self.rnn(x, states[0])


class Activations(nn.Module):
    """One product of equal shape per activation, and one without: each
    step's time in loom-bench-cpu --per-op is the product with that
    activation as its post-op (or not fused) against the product alone."""

    ACTIVATIONS = {
        "none": nn.Identity(), "relu": nn.ReLU(), "gelu_erf": nn.GELU(),
        "gelu_tanh": nn.GELU(approximate="tanh"), "sigmoid": nn.Sigmoid(),
        "tanh": nn.Tanh(), "silu": nn.SiLU(), "hardswish": nn.Hardswish(),
        "hardsigmoid": nn.Hardsigmoid(), "leaky_relu": nn.LeakyReLU(0.1),
        "relu6": nn.ReLU6(),
    }

    def __init__(self, d_in, d_out):
        super().__init__()
        self.linears = nn.ModuleList(
            nn.Linear(d_in, d_out) for _ in self.ACTIVATIONS)
        self.acts = nn.ModuleList(self.ACTIVATIONS.values())

    def forward(self, x):
        return [act(linear(x)) for linear, act in zip(self.linears, self.acts)]


class MainOutput(nn.Module):
    """torchvision's segmentation models return a dict: keep 'out'."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


class Detector(nn.Module):
    """A torchvision detector on one image of a batch of one, returning the
    boxes, scores and labels of its detections (their number depends on the
    data)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        d = self.model(list(x))[0]
        return d["boxes"], d["scores"], d["labels"]


# ---------------------------------------------------------------------------
# The set: name -> (recipe text, builder, example input)
# ---------------------------------------------------------------------------


def vision(name, shape, segmentation=False, **kwargs):
    def build():
        import torchvision
        if segmentation:
            fn = getattr(torchvision.models.segmentation, name)
            return MainOutput(fn(weights=None, weights_backbone=None,
                                 **kwargs))
        return getattr(torchvision.models, name)(weights=None, **kwargs)

    def example():
        return torch.randn(*shape)

    return (f"torchvision {name} {kwargs} {shape}", build, example)


def detector(name, size, **kwargs):
    def build():
        import torchvision
        fn = getattr(torchvision.models.detection, name)
        model = fn(weights=None, weights_backbone=None, **kwargs)
        # torchvision's initialisation (N(0, 0.03)) makes the activations
        # vanish and every class score 1/91, and calibrated batch norms leave
        # near-ties among the scores whose order then depends on the last
        # bit (so does the NMS after them): every convolution is drawn from
        # Kaiming's normal (fan-in) x0.8 instead, and the batch norms keep
        # their initial statistics, which spreads the scores.
        with torch.no_grad():
            for m in model.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_in")
                    m.weight.mul_(0.8)
        detector = Detector(model)
        detector.calibrate = False
        return detector

    def example():
        return torch.rand(1, 3, size, size)

    return (f"torchvision detection {name} {kwargs} 1x3x{size}x{size}", build,
            example)


def text_encoder(norm_first, batch, seq, batch_first=True, layers=6,
                 d_model=512, heads=8, ffn=2048, vocab=8000):
    def build():
        return TextEncoder(vocab, d_model, heads, ffn, layers, seq,
                           norm_first, batch_first)

    def example():
        return torch.randint(0, vocab, (batch, seq))

    recipe = (f"TextEncoder norm_first={norm_first} {batch}x{seq} "
              f"batch_first={batch_first} "
              f"layers={layers} d={d_model} heads={heads} ffn={ffn}")
    return (recipe, build, example)


def tagger(cell, batch, seq, vocab=8000, embed=128, hidden=256, tags=20):
    def build():
        return RecurrentTagger(cell, vocab, embed, hidden, tags)

    def example():
        return torch.randint(0, vocab, (batch, seq))

    return (f"RecurrentTagger {cell} {batch}x{seq} {embed} {hidden}", build,
            example)


def recurrent(cell, batch, seq, inputs, hidden, layers=1,
              bidirectional=False, batch_first=False, states=False,
              nonlinearity="tanh"):
    """A recurrent layer alone (RecurrentLayer); the input is [seq, batch,
    inputs] ([batch, seq, inputs] with batch_first); with states, h0 (and
    c0 for an LSTM) [layers * directions, batch, hidden] are inputs too."""
    def build():
        return RecurrentLayer(cell, inputs, hidden, layers, bidirectional,
                              batch_first, nonlinearity)

    def example():
        x = torch.randn(*((batch, seq) if batch_first else (seq, batch)),
                        inputs)
        if not states:
            return x
        shape = (layers * (2 if bidirectional else 1), batch, hidden)
        count = 2 if cell == "lstm" else 1
        return (x,) + tuple(torch.randn(*shape) for _ in range(count))

    kind = f"rnn {nonlinearity}" if cell == "rnn" else cell
    recipe = (f"{kind} batch={batch} seq={seq} inputs={inputs} "
              f"hidden={hidden} layers={layers} "
              f"bidirectional={bidirectional} batch_first={batch_first} "
              f"states={states}")
    return (recipe, build, example)


def activations(tokens, d_in, d_out):
    def build():
        return Activations(d_in, d_out)

    def example():
        return torch.randn(1, tokens, d_in)

    return (f"Activations {tokens}x{d_in}->{d_out} "
            f"{','.join(Activations.ACTIVATIONS)}", build, example)


MODELS = {
    # torchvision classification, 224x224 unless said.
    "torch-resnet18": vision("resnet18", (1, 3, 224, 224)),
    "torch-resnet18-b8": vision("resnet18", (8, 3, 224, 224)),
    "torch-mobilenet-v3s": vision("mobilenet_v3_small", (1, 3, 224, 224)),
    "torch-efficientnet-b0": vision("efficientnet_b0", (1, 3, 224, 224)),
    "torch-densenet121": vision("densenet121", (1, 3, 224, 224)),
    "torch-regnet-y400mf": vision("regnet_y_400mf", (1, 3, 224, 224)),
    "torch-shufflenet-v2": vision("shufflenet_v2_x1_0", (1, 3, 224, 224)),
    "torch-convnext-tiny": vision("convnext_tiny", (1, 3, 224, 224)),
    "torch-vit-b16": vision("vit_b_16", (1, 3, 224, 224)),
    "torch-swin-t": vision("swin_t", (1, 3, 224, 224)),
    # torchvision segmentation, 1x3x320x320.
    "torch-lraspp-mnv3": vision("lraspp_mobilenet_v3_large", (1, 3, 320, 320),
                                segmentation=True, num_classes=21),
    "torch-deeplabv3-mnv3": vision("deeplabv3_mobilenet_v3_large",
                                   (1, 3, 320, 320), segmentation=True,
                                   num_classes=21, aux_loss=False),
    # torchvision detection, post-processing included (outputs of
    # data-dependent length).
    "torch-ssdlite-mnv3": detector("ssdlite320_mobilenet_v3_large", 320),
    "torch-fasterrcnn-mnv3": detector("fasterrcnn_mobilenet_v3_large_320_fpn",
                                      320),
    "torch-retinanet-r50": detector("retinanet_resnet50_fpn", 320),
    "torch-fcos-r50": detector("fcos_resnet50_fpn", 320),
    # torch.nn transformer encoders (6 layers, d 512, 8 heads, erf GELU);
    # the post-norm one in torch.nn's default sequence-first layout.
    "torch-xfmr-pre-s128": text_encoder(True, 1, 128),
    "torch-xfmr-post-s128": text_encoder(False, 1, 128, batch_first=False),
    "torch-xfmr-pre-b4s256": text_encoder(True, 4, 256),
    # Recurrent taggers (bidirectional, 2 layers, hidden 256).
    "torch-gru-tagger": tagger("gru", 1, 64),
    "torch-lstm-tagger": tagger("lstm", 4, 32),
    # Recurrent layers alone: each kind, batch 1 and more, bidirectional,
    # several layers, batch_first, sequence lengths 1 to 512, hidden sizes
    # that are not multiples of 16, initial states given or not.
    "torch-rnn-lstm-b1s128": recurrent("lstm", 1, 128, 128, 200),
    "torch-rnn-lstm-b16s1": recurrent("lstm", 16, 1, 256, 512, states=True),
    "torch-rnn-lstm-b2s100-h768": recurrent("lstm", 2, 100, 64, 768),
    "torch-rnn-lstm-b4s24-bi3": recurrent("lstm", 4, 24, 40, 100, layers=3,
                                          bidirectional=True,
                                          batch_first=True, states=True),
    "torch-rnn-gru-b8s50-bi2": recurrent("gru", 8, 50, 64, 200, layers=2,
                                         bidirectional=True,
                                         batch_first=True, states=True),
    "torch-rnn-gru-b1s512": recurrent("gru", 1, 512, 32, 72),
    "torch-rnn-tanh-b4s512-bi": recurrent("rnn", 4, 512, 16, 100,
                                          bidirectional=True),
    "torch-rnn-relu-b3s33-l3": recurrent("rnn", 3, 33, 24, 48, layers=3,
                                         batch_first=True, states=True,
                                         nonlinearity="relu"),
    # Every activation after a product of ViT-B/16's MLP shape, and the
    # product alone (a microbenchmark for --per-op).
    "torch-activations": activations(197, 768, 3072),
}


def script_hash():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def has_batch_norm(model):
    return any(isinstance(m, nn.modules.batchnorm._BatchNorm)
               for m in model.modules())


def export(name, recipe, build, example, path):
    torch.manual_seed(SEED)
    model = build()
    # Matrices a model initialises to zero (ViT's classification head) would
    # make every output equal and the comparison with ONNX Runtime vacuous.
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1 and not p.any():
                nn.init.normal_(p, std=0.02)
    x = example()
    # A tuple: the input and further ones (a recurrent layer's states).
    args = x if isinstance(x, tuple) else (x,)
    with torch.no_grad():
        if has_batch_norm(model) and getattr(model, "calibrate", True):
            model.train()
            # Batches of two: a batch norm after a global pool (DeepLabV3's
            # ASPP) sees one value per channel in a batch of one.
            for _ in range(CALIBRATION_PASSES):
                model(torch.cat([example(), example()]))
    model.eval()
    # With gradients enabled: nn.TransformerEncoderLayer's fast path
    # (aten::_transformer_encoder_layer_fwd, which has no ONNX form) is taken
    # only without them.
    names = ["input"] + [f"state{i}" for i in range(len(args) - 1)]
    torch.onnx.export(model, args, path + ".partial", opset_version=OPSET,
                      input_names=names,
                      do_constant_folding=True)
    os.replace(path + ".partial", path)


def main():
    parser = argparse.ArgumentParser(description="Export loom-bench-cpu's PyTorch model set to ONNX")
    parser.add_argument("out_dir", nargs="?")
    parser.add_argument("--only", default="",
                        help="comma-separated names (default: all)")
    parser.add_argument("--list", action="store_true",
                        help="print the names and recipes, then exit")
    args = parser.parse_args()
    if args.list:
        for name, (recipe, _, _) in MODELS.items():
            print(f"{name}: {recipe}")
        return 0
    if not args.out_dir:
        parser.error("OUT_DIR is required")
    names = [n for n in args.only.split(",") if n] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s): {', '.join(unknown)}")
    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    version = script_hash() + " torch " + torch.__version__
    failed = 0
    for name in names:
        recipe, build, example = MODELS[name]
        path = os.path.join(args.out_dir, name + ".onnx")
        stamp_path = os.path.join(args.out_dir, name + ".stamp")
        stamp = f"{version}\n{recipe}\n"
        if os.path.exists(path) and os.path.exists(stamp_path):
            with open(stamp_path) as f:
                if f.read() == stamp:
                    continue
        start = time.time()
        try:
            export(name, recipe, build, example, path)
        except Exception as e:  # report the model and go on with the set
            failed += 1
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            print(f"export-torch-models: {name}: PyTorch cannot export it: "
                  f"{type(e).__name__}: {first}", file=sys.stderr)
            for p in (path, path + ".partial", stamp_path):
                if os.path.exists(p):
                    os.remove(p)
            continue
        with open(stamp_path, "w") as f:
            f.write(stamp)
        print(f"export-torch-models: {path} ({time.time() - start:.1f} s)")
    if failed:
        print(f"export-torch-models: {failed} model(s) not exported",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
