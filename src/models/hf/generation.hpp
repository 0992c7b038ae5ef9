// The pieces of HFLM.generate_until both hf backends (decoder-only, hf_lm.cpp, and seq2seq,
// seq2seq_lm.cpp) use; defined in hf_lm.cpp. Internal to src/models/hf.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/models/gen_kwargs.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/tokenizer/tokenizer.hpp"
#include "models/hf/transformer.hpp"

namespace lmeval::hf {

// HFLM's default max_gen_toks (generation length when gen_kwargs give none).
constexpr int64_t kHfDefaultMaxGenToks = 256;

// Collator(group_by="gen_kwargs"): groups in order of first appearance, keyed by the gen_kwargs
// with sorted keys.
std::vector<std::vector<size_t>> group_by_gen_kwargs(const std::vector<GenerationRequest>& reqs);
// _model_generate's arguments: the normalised gen_kwargs plus top_p / top_k passed through.
SamplingOptions sampling_options(const gen_kwargs::HfGenKwargs& g, const Json& kw,
                                 const std::vector<Token>& eos_ids, Token pad_id,
                                 const std::optional<int64_t>& seed);
// stop_sequences_criteria: a row stops once the decoded tail of its generation contains a stop
// string.
StopFn stop_criteria(const Tokenizer& tok, const std::vector<std::string>& until);
// HFLM.generate_until's text of one generation (think_end_token, then the stop strings).
std::string generation_text(const Tokenizer& tok, std::vector<Token> toks,
                            const std::optional<std::string>& think_end_token,
                            const std::vector<std::string>& until);

// A folder named by pretrained= or delta=: a local folder as is, anything else a Hub repo id,
// fetched into (or found in) the Hugging Face cache. `subfolder` is inside either.
std::filesystem::path model_folder(const std::string& name, const std::string& revision,
                                   const std::string& subfolder, const std::string& key);

}  // namespace lmeval::hf
