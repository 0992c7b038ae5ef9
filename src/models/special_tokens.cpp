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

TokenizerInfo hf_tokenizer_info(const Tokenizer& tokenizer, std::optional<int64_t> pad_id,
                                std::optional<int64_t> eot_id, int64_t max_length) {
  TokenizerInfo t;
  copy_special_token(tokenizer.bos_token(), t.bos_token, t.bos_token_id);
  copy_special_token(tokenizer.eos_token(), t.eos_token, t.eos_token_id);
  if (tokenizer.pad_token().id || !tokenizer.pad_token().text.empty()) {
    copy_special_token(tokenizer.pad_token(), t.pad_token, t.pad_token_id);
  } else if (pad_id) {
    t.pad_token_id = *pad_id;
    if (auto s = tokenizer.id_to_token(*pad_id)) t.pad_token = *s;
  }
  if (eot_id) t.eot_token_id = *eot_id;
  t.max_length = max_length;
  return t;
}

std::optional<std::string> named_chat_template(const Tokenizer& tokenizer,
                                               const std::string& name) {
  std::string t = tokenizer.chat_template(name);
  if (t.empty()) return std::nullopt;
  return t;
}

}  // namespace lmeval
