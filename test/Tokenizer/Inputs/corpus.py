"""Writes the texts the tokenizer conformance test encodes, one JSON string
a line: hand-picked cases (contractions, numbers, whitespace runs, scripts
and emoji of several code-point lengths, special tokens inside text), then
random mixtures of them from a fixed seed.

usage: corpus.py OUT.jsonl
"""
import json
import random
import sys

texts = [
    "Hello World, it's 12345 naïve café 日本語 🤖  spaces\n\nnew",
    "", " ", "  leading and trailing  ",
    "I'm here, you're there; we'll see. They've done it! He'd go.",
    "THE'S 'S 's", "tabs\tand\r\nCRLF\n\n\n",
    "numbers 3.14159 1,000,000 and 2024-01-01",
    "<|endoftext|>special<|endoftext|> in text", "<s>bos</s> and <unk>",
    "Ünïcödé — “quotes” ‘single’ … ellipsis",
    "Ελληνικά Русский עברית العربية हिन्दी",
    "emoji 👩‍👩‍👧‍👦 🏳️‍🌈 👍🏽",
    "code: def f(x):\n    return x**2  # square",
    "a" * 40, "    indented\n        more",
    "\u00a0nbsp\u2003em space\u3000ideographic", "mixed123abc456",
    "'''triple''' \"\"\"", "https://example.com/path?q=1&r=2#frag",
    "¿Dónde está? ¡Aquí!",
]
pieces = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
               " .,;:'\"!?-_()[]{}<>/\\|@#$%^&*+=~`\n\t")
          + list("éüßçñøåæœ日本語中文한국어ąłżźęß€£¥😀🤖👍🏽\u00a0\u2003")
          + ["<s>", "</s>", "<|endoftext|>", "<|begin_of_text|>", "'s", "'ll",
             " "] * 3)
rng = random.Random(7)
for _ in range(300):
    texts.append("".join(rng.choice(pieces)
                         for _ in range(rng.randint(1, 60))))
with open(sys.argv[1], "w", encoding="utf-8") as f:
    for t in texts:
        f.write(json.dumps(t, ensure_ascii=False) + "\n")
