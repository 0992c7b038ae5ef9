// The model of a run: built from the registry (or the caller's), wrapped by the response cache
// and the shard recorder, and the prompt options that depend on it (chat template).
#pragma once

#include <memory>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/models/shard.hpp"
#include "lmeval/prompt/prompt_builder.hpp"

namespace lmeval {

struct RunModel {
  std::unique_ptr<LM> model;
  ShardRecorder* shard = nullptr;  // set with --shard: the run stops after dispatch
  bool chat = false;               // --apply_chat_template
  PromptOptions prompt;
};

// `given` (tests, `merge`'s replay) is used as it is; otherwise cfg.model from the registry,
// behind --use_cache's CachingLM.
RunModel prepare_model(const EvalConfig& cfg, std::unique_ptr<LM> given);

// cfg.model from the registry, model_args checked first, without --use_cache's wrapper: the model
// several runs share (evaluate_on).
std::unique_ptr<LM> build_run_model(const EvalConfig& cfg);

// `model` behind cfg's --use_cache wrapper (keyed by cfg's model and model_args), or as it is.
std::unique_ptr<LM> with_response_cache(const EvalConfig& cfg, std::unique_ptr<LM> model);

// cfg.model's model_args read as its factory reads them (the backend's check), so that a bad
// value is exit 2 before any task or dataset is loaded; the reference builds its LM first too.
void check_model_args(const EvalConfig& cfg);

// The chat template the results record (nullopt without --apply_chat_template).
std::optional<std::string> run_chat_template(const EvalConfig& cfg, LM& lm);

}  // namespace lmeval
