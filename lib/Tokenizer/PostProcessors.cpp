//===- PostProcessors.cpp - A tokenizer.json's "post_processor" -----------===//
//
// Part of Loom. See Components.h. The special tokens put around a single
// sequence: TemplateProcessing's "single" template (Llama's beginning of
// sequence), BertProcessing's and RobertaProcessing's cls and sep;
// ByteLevel changes no id; Sequence of them. Pairs of sequences are not
// encoded: a prompt is one sequence.
//
//===----------------------------------------------------------------------===//

#include "Components.h"

using namespace llvm;
using namespace loom::tokenizer;

namespace {

/// Ids before and after the sequence.
class Around : public PostProcessor {
public:
  Around(std::vector<int64_t> before, std::vector<int64_t> after)
      : before(std::move(before)), after(std::move(after)) {}
  void apply(std::vector<int64_t> &ids) const override {
    ids.insert(ids.begin(), before.begin(), before.end());
    ids.insert(ids.end(), after.begin(), after.end());
  }

private:
  std::vector<int64_t> before, after;
};

/// A template's special token: the ids "special_tokens" gives it.
Error templateIds(const json::Object &special, StringRef name,
                  const Where &where, std::vector<int64_t> &out) {
  const json::Object *token = special.getObject(name);
  if (!token)
    return where.error("names '" + name +
                       "', which \"special_tokens\" does not define");
  const json::Array *ids = token->getArray("ids");
  if (!ids)
    return where.error("special token '" + name + "' has no \"ids\" list");
  for (const json::Value &id : *ids) {
    std::optional<int64_t> n = id.getAsInteger();
    if (!n)
      return where.error("special token '" + name + "' has an id that is "
                         "not an integer");
    out.push_back(*n);
  }
  return Error::success();
}

Expected<std::unique_ptr<PostProcessor>>
readTemplate(const json::Object &o, const Where &where) {
  const json::Array *single = o.getArray("single");
  const json::Object *special = o.getObject("special_tokens");
  if (!single)
    return where.key("single").error("is not a list");
  if (!special)
    return where.key("special_tokens").error("is not an object");
  std::vector<int64_t> before, after;
  bool sequenceSeen = false;
  for (size_t i = 0; i < single->size(); ++i) {
    Where at = where.key("single").index(i);
    const json::Object *piece = (*single)[i].getAsObject();
    if (piece && piece->getObject("Sequence")) {
      if (sequenceSeen)
        return at.error("is a second sequence in a single template");
      sequenceSeen = true;
      continue;
    }
    const json::Object *token = piece ? piece->getObject("SpecialToken")
                                      : nullptr;
    std::optional<StringRef> name = token ? token->getString("id")
                                          : std::nullopt;
    if (!name)
      return at.error("is neither {\"Sequence\": ...} nor "
                      "{\"SpecialToken\": {\"id\": ...}}");
    if (Error e = templateIds(*special, *name, at,
                              sequenceSeen ? after : before))
      return std::move(e);
  }
  if (!sequenceSeen)
    return where.key("single").error("has no {\"Sequence\": ...}");
  return std::make_unique<Around>(std::move(before), std::move(after));
}

/// BertProcessing's and RobertaProcessing's "cls" and "sep": [token, id].
Expected<std::unique_ptr<PostProcessor>>
readClsSep(const json::Object &o, const Where &where) {
  int64_t ids[2];
  const char *keys[2] = {"cls", "sep"};
  for (int k = 0; k < 2; ++k) {
    const json::Array *pair = o.getArray(keys[k]);
    std::optional<int64_t> id =
        pair && pair->size() == 2 ? (*pair)[1].getAsInteger() : std::nullopt;
    if (!id)
      return where.key(keys[k]).error("is not [token, id]");
    ids[k] = *id;
  }
  return std::make_unique<Around>(std::vector<int64_t>{ids[0]},
                                  std::vector<int64_t>{ids[1]});
}

Expected<std::unique_ptr<PostProcessor>>
readOfType(StringRef type, const json::Object &o, const Where &where) {
  if (type == "ByteLevel")
    return nullptr; // offsets only: no id changes
  if (type == "TemplateProcessing")
    return readTemplate(o, where);
  if (type == "BertProcessing" || type == "RobertaProcessing")
    return readClsSep(o, where);
  return where.error("post-processor '" + type +
                     "' is not supported (Loom applies TemplateProcessing, "
                     "BertProcessing, RobertaProcessing, ByteLevel and "
                     "Sequence)");
}

} // namespace

Expected<std::vector<std::unique_ptr<PostProcessor>>>
loom::tokenizer::readPostProcessors(const json::Value *value,
                                    const Where &where) {
  return readStages<PostProcessor>(value, where, "processors", readOfType);
}
