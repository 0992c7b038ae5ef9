// The model of a run (see run_model.hpp).
#include "run_model.hpp"

#include "lmeval/core/error.hpp"
#include "lmeval/models/caching_lm.hpp"
#include "lmeval/models/reference_model_names.hpp"

namespace lmeval {

namespace {

ModelOptions model_options(const EvalConfig& cfg) {
  ModelOptions mo;
  // Only a batch size the user gave is passed on: unset, backends choose (hf packs by a token
  // budget), while results still record the reference's default of 1.
  if (cfg.batch_size.is_string()) mo.batch_size = cfg.batch_size.get<std::string>();
  mo.max_batch_size = cfg.max_batch_size;
  // Likewise the device: unset, hf uses CUDA when it can and the CPU otherwise (HFLM's default).
  if (cfg.device_given) mo.device = cfg.device;
  mo.seed = cfg.seed[2];
  return mo;
}

// model_args with the secrets EvalConfig took out of them put back (only the backend sees them).
Json model_args_with_secrets(const EvalConfig& cfg) {
  Json args = cfg.model_args;
  if (args.is_object())
    for (auto it = cfg.model_secrets.begin(); it != cfg.model_secrets.end(); ++it)
      args[it.key()] = it.value();
  return args;
}

std::unique_ptr<LM> bare_model(const EvalConfig& cfg) {
  check_model_name(cfg.model);
  const ModelInfoEntry* entry = ModelRegistry::instance().find(cfg.model);
  return entry->factory(model_args_with_secrets(cfg), model_options(cfg));
}

std::unique_ptr<LM> model_from_registry(const EvalConfig& cfg) {
  return with_response_cache(cfg, bare_model(cfg));
}

bool wants_chat(const EvalConfig& cfg) {
  return cfg.apply_chat_template.is_string() ||
         (cfg.apply_chat_template.is_boolean() && cfg.apply_chat_template.get<bool>());
}

}  // namespace

std::unique_ptr<LM> with_response_cache(const EvalConfig& cfg, std::unique_ptr<LM> model) {
  if (!cfg.use_cache) return model;
  return make_caching_lm(std::move(model), *cfg.use_cache,
                         cache_identity(cfg.model, cfg.model_args));
}

std::unique_ptr<LM> build_run_model(const EvalConfig& cfg) {
  check_model_args(cfg);
  return bare_model(cfg);
}

void check_model_args(const EvalConfig& cfg) {
  check_model_name(cfg.model);
  const ModelInfoEntry* entry = ModelRegistry::instance().find(cfg.model);
  if (entry->check) entry->check(model_args_with_secrets(cfg), model_options(cfg));
}

RunModel prepare_model(const EvalConfig& cfg, std::unique_ptr<LM> given) {
  RunModel rm;
  rm.model = given ? std::move(given) : model_from_registry(cfg);
  if (cfg.shard_count > 0) {
    auto recorder = std::make_unique<ShardRecorder>(std::move(rm.model),
                                                    ShardSpec{cfg.shard_index, cfg.shard_count});
    rm.shard = recorder.get();
    rm.model = std::move(recorder);
  }
  rm.chat = wants_chat(cfg);
  rm.prompt.system_instruction = cfg.system_instruction;
  rm.prompt.apply_chat_template = rm.chat;
  rm.prompt.fewshot_as_multiturn = cfg.fewshot_as_multiturn.value_or(false);
  LM* lm = rm.model.get();
  rm.prompt.chat = [lm](const std::vector<Message>& msgs, bool add_generation_prompt) {
    std::vector<ChatMessage> cm;
    for (const auto& m : msgs) cm.push_back({m.role, m.content});
    return lm->apply_chat_template(cm, add_generation_prompt);
  };
  return rm;
}

std::optional<std::string> run_chat_template(const EvalConfig& cfg, LM& lm) {
  if (!wants_chat(cfg)) return std::nullopt;
  return lm.chat_template(
      cfg.apply_chat_template.is_string() ? cfg.apply_chat_template.get<std::string>() : "");
}

}  // namespace lmeval
