#include "lmeval/models/special_tokens.hpp"

namespace lmeval {

Json chat_template_special_tokens(const Tokenizer& tokenizer) {
  Json v = Json::object();
  auto put = [&](const char* name, const SpecialToken& t) {
    if (!t.text.empty()) v[name] = t.text;
  };
  put("bos_token", tokenizer.bos_token());
  put("eos_token", tokenizer.eos_token());
  put("unk_token", tokenizer.unk_token());
  put("pad_token", tokenizer.pad_token());
  return v;
}

void copy_special_token(const SpecialToken& token, std::optional<std::string>& text,
                        std::optional<int64_t>& id) {
  if (!token.text.empty()) text = token.text;
  if (token.id) id = *token.id;
}

}  // namespace lmeval
