"""Writes a GPT-2-style tokenizer.json of 287 tokens: the 256 tokens of
GPT-2's byte-level alphabet, 30 merges of frequent English pairs, and
<|endoftext|> last, an added special token. A small tokenizer of the kind
real decoders ship, for a small model's vocabulary.

usage: byte-tokenizer.py OUT.json
"""
import json
import sys

out = sys.argv[1]


def byte_alphabet():
    printable = (list(range(ord("!"), ord("~") + 1))
                 + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100)))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


alphabet = byte_alphabet()
vocab = {c: i for i, c in enumerate(alphabet)}
space = alphabet[ord(" ")]
pairs = [(space, "t"), ("h", "e"), (space + "t", "he"), ("i", "n"),
         (space, "a"), ("e", "r"), ("o", "n"), (space, "o"), ("r", "e"),
         ("a", "t"), (space, "s"), ("e", "n"), (space, "w"), ("o", "r"),
         ("i", "t"), (space, "i"), ("i", "s"), ("e", "s"), ("a", "n"),
         (space, "c"), ("e", "d"), ("in", "g"), (space + "o", "n"),
         (space, "u"), ("p", "on"), (space + "u", "pon"), (space + "t", "i"),
         ("m", "e"), (space + "ti", "me"), (space + "a", "n")]
merges = []
for a, b in pairs:
    merges.append(a + " " + b)
    vocab.setdefault(a + b, len(vocab))
end = len(vocab)
tokenizer = {
    "version": "1.0",
    "added_tokens": [{"id": end, "content": "<|endoftext|>",
                      "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": False, "special": True}],
    "normalizer": None,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                      "trim_offsets": True, "use_regex": True},
    "post_processor": {"type": "ByteLevel", "add_prefix_space": True,
                       "trim_offsets": False, "use_regex": True},
    "decoder": {"type": "ByteLevel", "add_prefix_space": True,
                "trim_offsets": True, "use_regex": True},
    "model": {"type": "BPE", "dropout": None, "unk_token": None,
              "continuing_subword_prefix": "", "end_of_word_suffix": "",
              "fuse_unk": False, "byte_fallback": False,
              "vocab": vocab, "merges": merges},
}
with open(out, "w", encoding="utf-8") as f:
    json.dump(tokenizer, f, ensure_ascii=False)
