// Prompt assembly: ContextSampler/FirstNSampler, fewshot_context, construct_requests.
#include "lmeval/prompt/prompt_builder.hpp"

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/core/unicode.hpp"

#include <spdlog/spdlog.h>

namespace lmeval {

bool ends_with_space(const std::string& s) {
  if (s.empty()) return false;
  auto u = unicode::decode(s);
  return unicode::py_isspace(u.back());
}

bool starts_with_space(const std::string& s) {
  if (s.empty()) return false;
  char32_t first = 0;
  bool done = false;
  unicode::for_each_codepoint(s, [&](char32_t c, std::string_view) {
    if (!done) first = c;
    done = true;
  });
  return unicode::py_isspace(first);
}

std::string maybe_delimit(const std::string& prefix, const std::string& suffix,
                          const std::string& delim) {
  if (prefix.empty()) return suffix;
  if (suffix.empty()) return prefix;
  if (ends_with_space(prefix) || starts_with_space(suffix)) return prefix + suffix;
  return prefix + delim + suffix;
}

bool requires_delimiter(const std::string& prefix, const std::string& suffix) {
  if (prefix.empty()) return false;
  return !(ends_with_space(prefix) || starts_with_space(suffix));
}

FewshotSampler::FewshotSampler(const Task& task, int64_t seed) : task_(task), rng_(seed) {
  const FewshotConfig& fc = task.fewshot_config();
  kind_ = fc.sampler.is_string() ? fc.sampler.get<std::string>() : "default";
  if (kind_ != "default" && kind_ != "first_n")
    throw UserError("Attempted to use contextsampler '" + kind_ +
                        "', but no sampling strategy for this name found! Supported model names: "
                        "default, first_n",
                    task.config().where(TaskField::fewshot_config), "sampler: default or first_n");
  const auto& docs = task.fewshot_docs();
  // ConfigurableTask builds its sampler as sampler_cls(fewshot_docs, rnd=None): the config's
  // fewshot_indices never reach ContextSampler, so the whole few-shot split is the pool.
  if (fc.fewshot_indices.is_array() && !fc.fewshot_indices.empty())
    spdlog::warn(
        "task {}: fewshot_config.fewshot_indices is ignored, as the reference ignores it (its "
        "sampler never receives the indices); few-shot examples are drawn from the whole "
        "few-shot split. Use a fewshot_split or a filtered dataset to restrict them.",
        task.name());
  for (const auto& d : task.fewshot_docs()) pool_.push_back(&d);
}

std::vector<const Doc*> FewshotSampler::sample(size_t n, const Doc* eval_doc) {
  if (n == 0) return {};
  if (!task_.fewshot_available() || pool_.empty())
    throw UserError(
        "task " + task_.name() + " asks for " + std::to_string(n) +
            " few-shot examples but its few-shot source (" +
            (task_.fewshot_source().empty() ? std::string("none") : task_.fewshot_source()) +
            ") has no documents here",
        task_.config().where(TaskField::num_fewshot),
        "--num_fewshot 0, or the few-shot split present in the data");
  if (kind_ == "first_n") {
    std::vector<const Doc*> out;
    for (const Doc* d : pool_) {
      if (eval_doc && *d == *eval_doc) continue;
      out.push_back(d);
      if (out.size() == n) break;
    }
    if (out.size() < n)
      throw UserError("Error: number of fewshot samples requested exceeds the " +
                          std::to_string(out.size()) + " that are available.",
                      task_.config().where(TaskField::num_fewshot), "at most that many shots");
    return out;
  }
  bool exclude = eval_doc && !(eval_doc->is_object() && eval_doc->empty());
  size_t k = exclude ? n + 1 : n;
  if (k > pool_.size())
    throw UserError("task " + task_.name() + ": Sample larger than population (" +
                        std::to_string(k) + " from " + std::to_string(pool_.size()) +
                        " few-shot documents)",
                    task_.config().where(TaskField::num_fewshot), "fewer shots");
  auto drawn = rng_.sample(pool_, k);
  if (!exclude) return drawn;
  std::vector<const Doc*> out;
  for (const Doc* d : drawn)
    if (!(*d == *eval_doc)) out.push_back(d);
  if (out.size() > n) out.resize(n);
  if (out.size() != n)
    throw UserError("Error: number of fewshot samples returned (" + std::to_string(out.size()) +
                        ") not equal to number requested (" + std::to_string(n) + ").",
                    task_.config().where(TaskField::num_fewshot),
                    "a few-shot pool with distinct documents");
  return out;
}

namespace {

std::string as_text(const Json& v) { return v.is_string() ? v.get<std::string>() : py::str(v); }

bool truthy(const Json& v) {
  if (v.is_null()) return false;
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  if (v.is_array() || v.is_object()) return !v.empty();
  if (v.is_boolean()) return v.get<bool>();
  return true;
}

// build_qa_turn of ConfigurableTask.
std::vector<Message> build_qa_turn(const Task& task, const std::string& q,
                                   const std::optional<std::vector<std::string>>& c, const Json& a,
                                   const std::optional<std::string>& gen_prefix,
                                   const std::string& tgt_delim, const std::string& few_delim) {
  bool has_answer = !a.is_null() && !(a.is_string() && a.get_ref<const std::string&>().empty());
  std::string gp = gen_prefix.value_or("");
  std::string user_delim;
  if (has_answer && gp.empty())
    user_delim = tgt_delim;
  else if (!gp.empty() && requires_delimiter(q, gp))
    user_delim = tgt_delim;
  std::vector<Message> msgs = {{"user", q, user_delim}};
  if (has_answer) {
    std::string answer;
    if (c && !c->empty() && (a.is_number_integer() || a.is_boolean())) {
      int64_t i = a.is_boolean() ? (a.get<bool>() ? 1 : 0) : a.get<int64_t>();
      if (i < 0) i += static_cast<int64_t>(c->size());
      if (i < 0 || i >= static_cast<int64_t>(c->size()))
        throw UserError("task " + task.name() + ": few-shot target index " + std::to_string(i) +
                            " is out of range for " + std::to_string(c->size()) + " choices",
                        task.config().where(TaskField::doc_to_target), "a valid choice index");
      answer = (*c)[static_cast<size_t>(i)];
    } else {
      // build_qa_turn takes a[0] of a list and asserts the answer is a str: a number (or a list
      // of them) as a generation task's few-shot target stops the reference ("Answer is not a
      // string!"), and an empty list fails on a[0]. Neither is turned into text here.
      const Json* text = &a;
      if (a.is_array()) {
        if (a.empty())
          throw UserError("task " + task.name() +
                              ": a few-shot example's target is an empty list (the reference "
                              "fails taking its first element, IndexError in build_qa_turn)",
                          task.config().where(TaskField::doc_to_target),
                          "a non-empty list of strings");
        text = &a[0];
      }
      if (!text->is_string())
        throw UserError("task " + task.name() + ": a few-shot example's target is " + py::repr(a) +
                            ", not a string, and there are no choices to index (the reference "
                            "stops: AssertionError 'Answer is not a string!' in build_qa_turn)",
                        task.config().where(TaskField::doc_to_target),
                        "doc_to_target giving text for few-shot examples (e.g. \"{{label}}\"), "
                        "or doc_to_choice for an index");
      answer = text->get<std::string>();
    }
    answer = maybe_delimit(gp, answer, " ");
    msgs.push_back({"assistant", answer, few_delim});
  } else if (!gp.empty()) {
    msgs.push_back({"assistant", gp, ""});
  }
  return msgs;
}

std::string plain(const std::vector<Message>& msgs) {
  std::string out;
  for (const auto& m : msgs) out += m.content + m.delimiter;
  return out;
}

// multiturn_to_singleturn of lm_eval/api/utils.py.
std::vector<Message> to_single_turn(std::vector<Message> msgs) {
  std::optional<Message> system;
  if (!msgs.empty() && msgs[0].role == "system") {
    system = msgs[0];
    msgs.erase(msgs.begin());
  }
  std::vector<Message> res;
  if (!msgs.empty() && msgs.back().role == "assistant") {
    Message last = msgs.back();
    msgs.pop_back();
    if (!msgs.empty()) msgs.back().delimiter = "";
    res.push_back({"user", plain(msgs), ""});
    res.push_back({last.role, last.content, ""});
  } else {
    if (!msgs.empty()) msgs.back().delimiter = "";
    res.push_back({"user", plain(msgs), ""});
  }
  if (system) res.insert(res.begin(), *system);
  return res;
}

std::string finish(const std::vector<Message>& msgs, const PromptOptions& opts,
                   const std::optional<std::string>& gen_prefix) {
  if (opts.apply_chat_template && opts.chat) {
    bool add_generation_prompt = !gen_prefix || gen_prefix->empty();
    return opts.chat(opts.fewshot_as_multiturn ? msgs : to_single_turn(msgs),
                     add_generation_prompt);
  }
  return plain(msgs);
}

}  // namespace

std::vector<std::string> fewshot_context(const Task& task, const Doc& doc, int num_fewshot,
                                         FewshotSampler& sampler, const PromptOptions& opts) {
  const TaskConfig& cfg = task.config();
  const FewshotConfig& fc = task.fewshot_config();
  std::vector<Message> messages;
  auto gen_prefix = task.resolve_field(doc, cfg.get(TaskField::gen_prefix), "gen_prefix");
  std::string description =
      task.resolve_field(doc, cfg.get(TaskField::description), "description").value_or("");
  std::string few_delim_task = cfg.fewshot_delimiter();
  std::string system_prompt =
      maybe_delimit(opts.system_instruction.value_or(""), description, few_delim_task);
  if (!system_prompt.empty()) messages.push_back({"system", system_prompt, ""});

  if (num_fewshot > 0) {
    bool exclude = fc.split == cfg.get(TaskField::test_split);
    auto shots = sampler.sample(static_cast<size_t>(num_fewshot), exclude ? &doc : nullptr);
    const Json* fs_text = fc.doc_to_text.is_null() ? nullptr : &fc.doc_to_text;
    const Json* fs_target = fc.doc_to_target.is_null() ? nullptr : &fc.doc_to_target;
    bool fs_has_choice = truthy(fc.doc_to_choice);
    std::string fs_tgt_delim = as_text(fc.target_delimiter);
    std::string fs_few_delim = as_text(fc.fewshot_delimiter);
    for (const Doc* fs : shots) {
      Json q = task.doc_to_text(*fs, fs_text);
      std::optional<std::vector<std::string>> c;
      if (fs_has_choice) c = task.doc_to_choice(*fs, &fc.doc_to_choice);
      Json a = task.doc_to_target(*fs, fs_target);
      auto gp = task.resolve_field(*fs, fc.gen_prefix, "gen_prefix");
      if (task.multiple_input()) {
        int64_t i = q.get<int64_t>();
        if (!c || i < 0 || i >= static_cast<int64_t>(c->size()))
          throw UserError("task " + task.name() + ": few-shot doc_to_text index out of range",
                          cfg.where(TaskField::doc_to_text), "an index into doc_to_choice");
        q = (*c)[static_cast<size_t>(i)];
        c.reset();
      }
      if (!q.is_string())
        throw UserError("task " + task.name() + ": Context is not a string! : " + py::repr(q),
                        cfg.where(TaskField::doc_to_text), "doc_to_text to give a string");
      auto turn = build_qa_turn(task, q.get<std::string>(), c, a, gp, fs_tgt_delim, fs_few_delim);
      messages.insert(messages.end(), turn.begin(), turn.end());
    }
  }

  Json q = task.doc_to_text(doc);
  std::optional<std::vector<std::string>> c;
  if (truthy(cfg.get(TaskField::doc_to_choice))) c = task.doc_to_choice(doc);
  task.doc_to_target(doc);  // evaluated by the reference too: a broken target fails here
  std::string tgt_delim = cfg.target_delimiter();
  if (task.multiple_input()) {
    if (!c)
      throw UserError("multiple inputs require choices to be a list",
                      cfg.where(TaskField::doc_to_choice), "a list");
    std::vector<std::string> out;
    for (const auto& ctx : *c) {
      auto msgs = messages;
      auto turn = build_qa_turn(task, ctx, std::nullopt, Json(), gen_prefix, "", "\n\n");
      msgs.insert(msgs.end(), turn.begin(), turn.end());
      out.push_back(finish(msgs, opts, gen_prefix));
    }
    return out;
  }
  if (!q.is_string())
    throw UserError("task " + task.name() + ": Context is not a string! : " + py::repr(q),
                    cfg.where(TaskField::doc_to_text), "doc_to_text to give a string");
  auto turn = build_qa_turn(task, q.get<std::string>(), c, Json(), gen_prefix, tgt_delim, "");
  messages.insert(messages.end(), turn.begin(), turn.end());
  return {finish(messages, opts, gen_prefix)};
}

std::vector<Instance> build_requests(const Task& task, size_t task_index,
                                     const std::vector<size_t>& doc_positions,
                                     const std::vector<int64_t>& doc_ids, FewshotSampler& sampler,
                                     const PromptOptions& opts, bool mutual_info) {
  const TaskConfig& cfg = task.config();
  std::string ot = cfg.output_type();
  int repeats = cfg.repeats();
  std::vector<Instance> out;
  for (size_t k = 0; k < doc_positions.size(); ++k) {
    const Doc& doc = task.eval_docs()[doc_positions[k]];
    std::vector<std::string> ctxs;
    try {
      ctxs = fewshot_context(task, doc, task.num_fewshot(), sampler, opts);
      // Bad data in a document (a doc function's or template's UserError) names task and doc.
    } catch (const UserError& e) {
      if (e.message().rfind("task ", 0) == 0) throw;
      throw UserError(
          "task " + task.name() + ", doc_id " + std::to_string(doc_ids[k]) + ": " + e.message(),
          e.where(), e.expected());
    }
    auto make = [&](const std::string& type, int idx, Json args) {
      Instance in;
      in.request_type = type;
      in.task_index = task_index;
      in.task_name = task.name();
      in.doc_pos = doc_positions[k];
      in.doc_id = doc_ids[k];
      in.idx = idx;
      in.repeats = repeats;
      in.arguments = std::move(args);
      out.push_back(std::move(in));
    };
    if (ot == "loglikelihood") {
      make("loglikelihood", 0, Json::array({ctxs[0], as_text(task.doc_to_target(doc))}));
    } else if (ot == "loglikelihood_rolling") {
      make("loglikelihood_rolling", 0, Json::array({as_text(task.doc_to_target(doc))}));
    } else if (ot == "multiple_choice") {
      auto choices = task.doc_to_choice(doc);
      if (!choices)
        throw UserError("multiple_choice task " + task.name() + " has no doc_to_choice",
                        cfg.where(TaskField::output_type), "doc_to_choice");
      // No choices, no log-likelihoods: the reference's process_results fails on np.argmax([]).
      if (choices->empty())
        throw UserError("task " + task.name() + ", doc_id " + std::to_string(doc_ids[k]) +
                            ": doc_to_choice gave no choices",
                        cfg.where(TaskField::doc_to_choice), "at least one choice per document");
      std::string delim = cfg.target_delimiter();
      if (opts.apply_chat_template) {
        std::string gp = cfg.str(TaskField::gen_prefix);
        delim = (!gp.empty() && !ends_with_space(gp)) ? delim : "";
      }
      int i = 0;
      if (task.multiple_input()) {
        std::string cont = as_text(task.doc_to_target(doc));
        for (const auto& ctx : ctxs) make("loglikelihood", i++, Json::array({ctx, delim + cont}));
      } else {
        for (const auto& ch : *choices)
          make("loglikelihood", i++, Json::array({ctxs[0], delim + ch}));
      }
      if (mutual_info)
        for (const auto& ch : *choices) make("loglikelihood", i++, Json::array({"", delim + ch}));
    } else {
      make("generate_until", 0, Json::array({ctxs[0], cfg.get(TaskField::generation_kwargs)}));
    }
  }
  return out;
}

}  // namespace lmeval
