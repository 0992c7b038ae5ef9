// The model registry and LM defaults.
#include "lmeval/core/error.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/template/template.hpp"

namespace lmeval {

std::string LM::apply_chat_template(const std::vector<ChatMessage>& messages,
                                    bool add_generation_prompt) const {
  auto text = chat_template("");
  if (!text || text->empty())
    throw UserError("this model has no chat template", {"", 0, 0, "--apply_chat_template"},
                    "a model whose tokenizer defines chat_template");
  // The reference's HFLM.apply_chat_template: continue_final_message = not add_generation_prompt,
  // and one retry without system messages when the template raises a Jinja TemplateError.
  const std::string source = chat_template_source();
  auto tmpl_compiled = tmpl::Template::parse(
      *text, tmpl::chat_options(), source.empty() ? "chat template" : source + ": chat template");
  auto render = [&](const std::vector<ChatMessage>& ms) {
    tmpl::ChatRequest req;
    for (const auto& m : ms) req.messages.push_back({{"role", m.role}, {"content", m.content}});
    req.add_generation_prompt = add_generation_prompt;
    req.continue_final_message = !add_generation_prompt;
    req.special_tokens = chat_template_variables();
    return tmpl::apply_chat_template(tmpl_compiled, req);
  };
  try {
    return render(messages);
  } catch (const tmpl::TemplateError& e) {
    if (!e.is_jinja_template_error()) throw;
    std::vector<ChatMessage> no_system;
    for (const auto& m : messages)
      if (m.role != "system") no_system.push_back(m);
    if (no_system.size() == messages.size()) throw;
    return render(no_system);
  }
}

ModelRegistry& ModelRegistry::instance() {
  static ModelRegistry registry;
  return registry;
}

void ModelRegistry::add(ModelInfoEntry entry, const std::vector<std::string>& aliases) {
  entry.known_args.clear();
  for (const auto& a : entry.args) entry.known_args.push_back(a.key);
  auto shared = std::make_shared<ModelInfoEntry>(std::move(entry));
  entries_[shared->name] = shared;
  for (const auto& a : aliases) entries_[a] = shared;
}

const ModelInfoEntry* ModelRegistry::find(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : it->second.get();
}

std::vector<std::string> ModelRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : entries_) out.push_back(k);
  return out;
}

}  // namespace lmeval
