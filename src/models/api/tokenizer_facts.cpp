// tokenizer_facts (tokenizer_facts.hpp).
#include "models/api/tokenizer_facts.hpp"

#include "lmeval/models/special_tokens.hpp"

namespace lmeval::api {

TokenizerInfo tokenizer_facts(const Tokenizer& tokenizer, int64_t max_length) {
  TokenizerInfo t;
  copy_special_token(tokenizer.bos_token(), t.bos_token, t.bos_token_id);
  copy_special_token(tokenizer.eos_token(), t.eos_token, t.eos_token_id);
  const SpecialToken& pad = tokenizer.pad_token().id   ? tokenizer.pad_token()
                            : tokenizer.unk_token().id ? tokenizer.unk_token()
                                                       : tokenizer.eos_token();
  copy_special_token(pad, t.pad_token, t.pad_token_id);
  if (tokenizer.eos_token().id) t.eot_token_id = *tokenizer.eos_token().id;
  t.max_length = max_length;
  return t;
}

}  // namespace lmeval::api
