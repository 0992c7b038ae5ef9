// What HFLM.__init__ resolves the same way for its causal and its seq2seq backend (reference:
// lm_eval/models/huggingface.py): the load options, the tokenizer's folder, max_length, the
// special token ids, and the model's part of the results' config.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/models/hf/hf_args.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/tokenizer/tokenizer.hpp"
#include "models/hf/transformer.hpp"

namespace lmeval::hf {

// The model_args HFLM hands on to from_pretrained; the device is cuda when none is given (HFLM
// takes cuda when available, else cpu: the loaders fall back).
LoadOptions hf_load_options(const HfArgs& args);

// HFLM._create_tokenizer: tokenizer= (with pretrained's subfolder inside it too), else the model's
// folder.
std::filesystem::path hf_tokenizer_folder(const HfArgs& args,
                                          const std::filesystem::path& model_dir);

// HFLM.max_length (resolve_max_length, spec §6.3): max_length=, else the config's n_positions /
// max_position_embeddings / n_ctx, else the default of transformers' config class for the
// architecture (`class_default`), else the tokenizer's model_max_length when it is not the
// "very large integer" tokenizers put there for none, else 2048.
int64_t hf_max_length(const HfArgs& args, std::optional<int64_t> config_max_positions,
                      std::optional<int64_t> class_default, const Tokenizer& tokenizer);

// The token ids HFLM reads from its tokenizer and the model's folder.
struct HfTokenIds {
  std::optional<Token> eot;  // the tokenizer's EOS
  std::optional<Token> pad;  // configure_pad_token: pad, else unk, else eos
  Token prefix = 0;          // prefix_token_id: prefix_token_id=, else BOS, else EOS
  std::string prefix_text;   // the prefix token decoded (tok_encode's has-a-prefix test)
  std::vector<Token> eos;    // generation_config.json's eos_token_id(s), else config.json's
};

// `config_eos`: config.json's eos_token_id. A tokenizer with neither BOS nor EOS and no
// prefix_token_id= is a UserError.
HfTokenIds hf_token_ids(const HfArgs& args, const Tokenizer& tokenizer,
                        const std::filesystem::path& model_dir, std::optional<int64_t> config_eos);

// HFLM.get_model_info's keys that every backend reports (the Hub's model_sha is "": lm-eval asks
// the Hub nothing for it).
Json hf_model_info(int64_t num_parameters, const std::string& dtype_name,
                   const std::string& revision);

}  // namespace lmeval::hf
