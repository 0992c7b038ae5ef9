// What HFLM.__init__ resolves for both hf backends (hf_lm_setup.hpp).
#include "models/hf/hf_lm_setup.hpp"

#include "lmeval/core/error.hpp"
#include "models/hf/checkpoint.hpp"

namespace lmeval::hf {

namespace fs = std::filesystem;

LoadOptions hf_load_options(const HfArgs& args) {
  LoadOptions lo;
  lo.dtype = args.dtype;
  lo.softmax_dtype = args.softmax_dtype;
  lo.threads = args.threads;
  lo.device = args.device.empty() ? "cuda" : args.device;  // HFLM: cuda when available, else cpu
  return lo;
}

fs::path hf_tokenizer_folder(const HfArgs& args, const fs::path& model_dir) {
  if (args.tokenizer.empty()) return model_dir;
  return args.subfolder.empty() ? fs::path(args.tokenizer)
                                : fs::path(args.tokenizer) / args.subfolder;
}

int64_t hf_max_length(const HfArgs& args, std::optional<int64_t> config_max_positions,
                      std::optional<int64_t> class_default, const Tokenizer& tokenizer) {
  if (args.max_length) return *args.max_length;
  if (config_max_positions) return *config_max_positions;
  if (class_default) return *class_default;
  if (auto m = tokenizer.model_max_length(); m && *m < 1000000000000000000LL) return *m;
  return 2048;
}

HfTokenIds hf_token_ids(const HfArgs& args, const Tokenizer& tokenizer, const fs::path& model_dir,
                        std::optional<int64_t> config_eos) {
  HfTokenIds ids;
  ids.eot = tokenizer.eos_token().id;
  if (tokenizer.pad_token().id)
    ids.pad = tokenizer.pad_token().id;
  else if (tokenizer.unk_token().id)
    ids.pad = tokenizer.unk_token().id;
  else
    ids.pad = ids.eot;
  if (args.prefix_token_id)
    ids.prefix = static_cast<Token>(*args.prefix_token_id);
  else if (tokenizer.bos_token().id)
    ids.prefix = *tokenizer.bos_token().id;
  else if (ids.eot)
    ids.prefix = *ids.eot;
  else
    throw UserError("the tokenizer has neither BOS nor EOS; pass prefix_token_id",
                    {"", 0, 0, "--model_args prefix_token_id"}, "a token id");
  ids.prefix_text = tokenizer.decode(std::vector<Token>{ids.prefix}, false);
  for (int64_t e : load_generation_eos(model_dir)) ids.eos.push_back(static_cast<Token>(e));
  if (ids.eos.empty() && config_eos) ids.eos.push_back(static_cast<Token>(*config_eos));
  return ids;
}

Json hf_model_info(int64_t num_parameters, const std::string& dtype_name,
                   const std::string& revision) {
  Json j = Json::object();
  j["model_num_parameters"] = num_parameters;
  j["model_dtype"] = dtype_name;
  j["model_revision"] = revision;
  j["model_sha"] = "";
  return j;
}

}  // namespace lmeval::hf
