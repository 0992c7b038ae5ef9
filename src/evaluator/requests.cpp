// Stage 2, the requests (see requests.hpp).
#include "requests.hpp"

#include "global_random_replay.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"

namespace lmeval {

namespace {

// --write_out: the first document's prompt, target and request, as the reference prints them.
std::string write_out_text(const Task& task, const Instance& in) {
  return "Task: " + task.name() + "; document " + std::to_string(in.doc_id) +
         "; context prompt (starting on next line):\n" + py::str(in.arguments[0]) +
         "\n(end of prompt on previous line)\ntarget string or answer choice index (starting on "
         "next line):\n" +
         py::str(task.doc_to_target(task.eval_docs()[in.doc_pos])) +
         "\n(end of target on previous line)\nRequest: " + py::json_dumps(in.arguments);
}

// A Python-class task's requests: the class's build_all_requests (its documents, few-shot
// contexts and construct_requests), as evaluate() calls it on rank 0 of 1, with the run's chat
// settings and, for `chat_template`, the model's chat template rendering (prompt.chat). Each
// --fewshot_seeds pass builds anew with its seed; the class keeps each pass's Instances.
std::vector<Instance> class_task_requests(const Task& task, size_t ti, const EvalConfig& cfg,
                                          const PromptOptions& prompt, const SeedPass& pass) {
  Json samples;
  if (cfg.samples.is_object() && cfg.samples.contains(task.name()))
    samples = cfg.samples[task.name()];
  // tokenizer_name goes only into build_all_requests' requests-cache key, and lm-eval never asks
  // a class task to cache its requests (cache_requests=False), so it has no effect to match.
  Json kwargs = {
      {"limit", cfg.limit ? Json(*cfg.limit) : Json()},
      {"samples", samples},
      {"system_instruction", prompt.system_instruction ? Json(*prompt.system_instruction) : Json()},
      {"fewshot_seed", cfg.fewshot_seeds.empty() ? Json() : Json(pass.seed)},
      {"apply_chat_template", prompt.apply_chat_template},
      {"fewshot_as_multiturn", prompt.fewshot_as_multiturn},
      {"pass_index", pass.index}};
  PythonClassTask::Chat chat = [&prompt](const Json& messages, bool add_generation_prompt) {
    std::vector<Message> msgs;
    for (const auto& m : messages) {
      const Json role = m.is_object() ? m.value("role", Json()) : Json();
      const Json content = m.is_object() ? m.value("content", Json()) : Json();
      msgs.push_back({role.is_string() ? role.get<std::string>() : py::str(role),
                      content.is_string() ? content.get<std::string>() : py::str(content), ""});
    }
    return prompt.chat(msgs, add_generation_prompt);
  };
  const bool with_chat = prompt.apply_chat_template && prompt.chat;
  Json built = task.python_class()->call("build", kwargs, with_chat ? &chat : nullptr);
  std::vector<Instance> out;
  for (const auto& r : built) {
    const bool ok = r.is_array() && r.size() == 5 && r[0].is_string() && r[1].is_number_integer() &&
                    r[2].is_number_integer() && r[3].is_array() && r[4].is_number_integer();
    if (!ok)
      throw UserError("task " + task.name() + ": its build_all_requests made an Instance with " +
                          r.dump() + " as [request_type, doc_id, idx, arguments, repeats]",
                      task.config().python_class.is_null()
                          ? task.config().where(TaskField::task)
                          : SourceLocation{task.config().source.path.string(), 0, 0, "class"},
                      "Instances with a doc_id (construct_requests passing on its **kwargs, "
                      "which hold the metadata)");
    Instance in;
    in.request_type = r[0].get<std::string>();
    in.task_index = ti;
    in.task_name = task.name();
    in.doc_id = r[1].get<int64_t>();
    in.doc_pos = static_cast<size_t>(in.doc_id);
    in.idx = r[2].get<int>();
    in.arguments = r[3];
    in.repeats = r[4].get<int>();
    out.push_back(std::move(in));
  }
  if (out.empty())
    throw UserError("task.build_requests() did not find any docs! (task " + task.name() + ")",
                    {"", 0, 0, "--limit"}, "at least one document");
  return out;
}

}  // namespace

std::vector<SeedPass> build_seed_passes(const RunPlan& plan, const EvalConfig& cfg,
                                        const PromptOptions& prompt,
                                        std::vector<std::string>& write_out) {
  std::vector<int64_t> seeds = cfg.fewshot_seeds;
  if (seeds.empty()) seeds.push_back(cfg.seed[3].value_or(1234));
  SeedPassRandom random;
  std::vector<SeedPass> passes;
  for (int64_t seed : seeds) {
    random.begin_building();
    SeedPass pass{seed, {}, nullptr, passes.size()};
    for (size_t ti = 0; ti < plan.tasks.size(); ++ti) {
      const TaskPlan& tp = plan.tasks[ti];
      const Task& task = *tp.task;
      TaskRequests tr;
      if (task.python_class()) {
        tr.instances = class_task_requests(task, ti, cfg, prompt, pass);
        pass.tasks.push_back(std::move(tr));
        continue;
      }
      FewshotSampler sampler(task, seed);
      tr.instances = build_requests(task, ti, tp.doc_positions, tp.doc_ids, sampler, prompt,
                                    tp.unconditional_requests);
      if (cfg.write_out && passes.empty())
        for (const auto& in : tr.instances) {
          if (in.doc_id >= 1) continue;
          write_out.push_back(write_out_text(task, in));
          break;
        }
      pass.tasks.push_back(std::move(tr));
    }
    pass.random_after_building = SeedPassRandom::state_after_building();
    passes.push_back(std::move(pass));
  }
  return passes;
}

}  // namespace lmeval
