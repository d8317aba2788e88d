// The reference side of test/Tokenizer/conformance.test: HuggingFace's
// JavaScript port of `tokenizers` encodes each line of a corpus (a JSON
// string) and decodes the ids back, printing what `loom-tokenize --jsonl`
// prints. Decoding keeps special tokens and does not apply transformers'
// clean_up_tokenization_spaces (which is not part of `tokenizers`).
//
// usage: node reference.mjs NODE_MODULES TOKENIZER.json CORPUS.jsonl [--no-special-tokens]
import fs from "fs";
import path from "path";
import { pathToFileURL } from "url";

const [modules, tokenizerPath, corpus, flag] = process.argv.slice(2);
const entry = path.join(modules, "@huggingface", "tokenizers", "dist",
                        "tokenizers.mjs");
const { Tokenizer } = await import(pathToFileURL(entry).href);
const tokenizer = new Tokenizer(
    JSON.parse(fs.readFileSync(tokenizerPath, "utf8")), {});
const special = flag !== "--no-special-tokens";
for (const line of fs.readFileSync(corpus, "utf8").split("\n")) {
  if (!line.trim())
    continue;
  const ids = tokenizer.encode(JSON.parse(line),
                               { add_special_tokens: special }).ids;
  const text = ids.length ? tokenizer.decode(ids, {
    skip_special_tokens: false,
    clean_up_tokenization_spaces: false,
  }) : "";
  console.log(JSON.stringify({ ids, text }));
}
