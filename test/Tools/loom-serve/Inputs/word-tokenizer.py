"""Writes a Llama-style (SentencePiece BPE) tokenizer.json of exactly SIZE
tokens: <unk>, <s>, </s>, "▁" and the 94 printable ASCII characters, then
the merges that spell a list of common English words ("▁the", "▁upon",
"ing", ...) until SIZE; Llama's normalizer ("▁" before the text, spaces to
"▁"), its <s> template and its decoder (which drops the first token's
leading space). Every id is printable text, so that a model with random
weights of that vocabulary writes readable text, and stop strings can be
taken from it.

usage: word-tokenizer.py SIZE OUT.json
"""
import json
import sys

size, out = int(sys.argv[1]), sys.argv[2]
space = "\u2581"
tokens = ["<unk>", "<s>", "</s>", space] + [chr(c) for c in range(33, 127)]
vocab = {t: i for i, t in enumerate(tokens)}
merges = []
words = ("the of and to in is was that it for on with as at by from time "
         "upon once end there were had his her they this but not all one "
         "said what when will which out up so them then she he we you day "
         "night king old long ago far away land lived little girl boy "
         "story ing ed er es ly into over under before after never always "
         "house tree river water fire stone light dark green small great "
         "people world year make know think come look went saw found asked "
         "answered morning evening forest mountain village castle dragon "
         "").split()
for word in words:
    pieces = ([space + word[0]] if len(word) > 2 else [word[0]]) + list(word[1:])
    token = pieces[0]
    if token not in vocab and len(vocab) < size:
        merges.append(space + " " + word[0])
        vocab[token] = len(vocab)
    for c in pieces[1:]:
        if len(vocab) >= size:
            break
        joined = token + c
        if joined not in vocab:
            merges.append(token + " " + c)
            vocab[joined] = len(vocab)
        token = joined
if len(vocab) != size:
    sys.exit("the word list spells %d tokens, not %d" % (len(vocab), size))
special = [{"id": i, "content": t, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": False, "special": True}
           for i, t in enumerate(["<unk>", "<s>", "</s>"])]
tokenizer = {
    "version": "1.0",
    "added_tokens": special,
    "normalizer": {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": space},
        {"type": "Replace", "pattern": {"String": " "}, "content": space}]},
    "pre_tokenizer": None,
    "post_processor": {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                   {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                 {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "<s>", "type_id": 1}},
                 {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [1],
                                   "tokens": ["<s>"]}}},
    "decoder": {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": space}, "content": " "},
        {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
    "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
              "continuing_subword_prefix": None, "end_of_word_suffix": None,
              "fuse_unk": True, "byte_fallback": False, "vocab": vocab,
              "merges": merges},
}
with open(out, "w", encoding="utf-8") as f:
    json.dump(tokenizer, f, ensure_ascii=False)
