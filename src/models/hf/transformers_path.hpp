// Whether an hf model runs natively or through transformers in the embedded Python, and why.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "lmeval/models/hf/hf_args.hpp"

namespace lmeval::hf {

// Why the model in `dir` (its config.json) with these model_args needs transformers itself: an
// architecture lm-eval lacks, the folder's own code under trust_remote_code=True, a quantisation
// method, or a from_pretrained setting only transformers applies. nullopt: it runs natively.
std::optional<std::string> transformers_path_reason(const HfArgs& args,
                                                    const std::filesystem::path& dir);

}  // namespace lmeval::hf
