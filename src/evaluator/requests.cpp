// Stage 2, the requests (see requests.hpp).
#include "requests.hpp"

#include "global_random_replay.hpp"
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
    SeedPass pass{seed, {}, nullptr};
    for (size_t ti = 0; ti < plan.tasks.size(); ++ti) {
      const TaskPlan& tp = plan.tasks[ti];
      const Task& task = *tp.task;
      FewshotSampler sampler(task, seed);
      TaskRequests tr;
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
