// Request de-duplication across few-shot seeds and the model calls.
#include "dispatch.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <unordered_map>

#include "lmeval/core/progress.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/core/stop_signal.hpp"

namespace lmeval {

namespace {

// A request as the model sees it, and every instance (of any pass) that takes its responses.
struct Slot {
  const Instance* first = nullptr;
  int64_t seed = 0;
  std::vector<Instance*> takers;
};

std::vector<Slot> slots_of_type(const std::vector<RequestPass>& passes, const std::string& type) {
  std::vector<Slot> slots;
  std::unordered_map<std::string, std::vector<size_t>> by_key;  // request -> its slots, in order
  for (const auto& pass : passes) {
    std::unordered_map<std::string, size_t> seen;  // occurrences in this pass
    for (Instance* in : pass.instances) {
      if (in->request_type != type) continue;
      std::string key = std::to_string(in->repeats) + '\x1f' + in->arguments.dump();
      size_t nth = seen[key]++;
      auto& mine = by_key[key];
      if (nth == mine.size()) {
        mine.push_back(slots.size());
        slots.push_back({in, pass.fewshot_seed, {}});
      }
      slots[mine[nth]].takers.push_back(in);
    }
  }
  return slots;
}

}  // namespace

Json dispatch_requests(LM& lm, const std::vector<RequestPass>& passes, std::ostream* record) {
  std::vector<std::string> order;
  for (const auto& pass : passes)
    for (const Instance* in : pass.instances)
      if (std::find(order.begin(), order.end(), in->request_type) == order.end())
        order.push_back(in->request_type);
  bool several = passes.size() > 1;
  size_t seq = 0;
  Json perf = Json::object();
  for (const auto& type : order) {
    std::vector<Slot> slots = slots_of_type(passes, type);
    if (record) {
      for (const auto& s : slots)
        for (int k = 0; k < s.first->repeats; ++k) {
          const Instance* in = s.first;
          Json r = Json::object();
          r["seq"] = seq++;
          r["task"] = in->task_name;
          r["doc_id"] = in->doc_id;
          r["idx"] = in->idx;
          r["request_type"] = in->request_type;
          r["repeats"] = in->repeats;
          r["metadata"] = Json::array({in->task_name, in->doc_id, in->repeats});
          r["arguments"] = in->arguments;
          if (several) r["fewshot_seed"] = s.seed;
          *record << py::json_dumps(r) << "\n";
        }
    }
    throw_if_stopped();
    // tqdm's desc in the reference's backends ("Running loglikelihood requests").
    Progress progress("Running " + type + " requests", type);
    // Backends report after every batch: the place to notice a stop signal (core/stop_signal.hpp).
    // The exception unwinds through the backend; CachingLM has stored every finished chunk.
    lm.set_progress([&progress](size_t done, size_t total, int64_t tokens) {
      progress.update(done, total, tokens);
      if (stop_signal()) {
        progress.finish();
        throw_if_stopped();
      }
    });
    auto t0 = std::chrono::steady_clock::now();
    // Drawn before the first batch: a slow first batch must not look like a hang.
    size_t count = 0;
    for (const auto& s : slots) count += static_cast<size_t>(s.first->repeats);
    progress.update(0, count);
    // Responses of slot i are res[offset[i]] .. res[offset[i] + repeats - 1].
    auto hand_out = [&slots](auto&& response_at) {
      size_t j = 0;
      for (auto& s : slots)
        for (int k = 0; k < s.first->repeats; ++k, ++j)
          for (Instance* in : s.takers) in->resps.push_back(response_at(j));
    };
    if (type == "loglikelihood") {
      std::vector<LoglikelihoodRequest> reqs;
      for (const auto& s : slots)
        for (int k = 0; k < s.first->repeats; ++k)
          reqs.push_back(
              {s.first->arguments[0].get<std::string>(), s.first->arguments[1].get<std::string>()});
      auto res = lm.loglikelihood(reqs);
      hand_out([&res](size_t j) { return Json::array({res[j].loglikelihood, res[j].is_greedy}); });
    } else if (type == "loglikelihood_rolling") {
      std::vector<std::string> reqs;
      for (const auto& s : slots)
        for (int k = 0; k < s.first->repeats; ++k)
          reqs.push_back(s.first->arguments[0].get<std::string>());
      auto res = lm.loglikelihood_rolling(reqs);
      hand_out([&res](size_t j) { return Json(res[j]); });
    } else {
      std::vector<GenerationRequest> reqs;
      for (const auto& s : slots)
        for (int k = 0; k < s.first->repeats; ++k)
          reqs.push_back({s.first->arguments[0].get<std::string>(), s.first->arguments[1]});
      auto res = lm.generate_until(reqs);
      hand_out([&res](size_t j) { return Json(res[j]); });
    }
    progress.finish();
    perf[type] = {
        {"requests", slots.size()},
        {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
    if (several) {
      size_t asked = 0;
      for (const auto& s : slots) asked += s.takers.size();
      perf[type]["requests_before_dedup"] = asked;
    }
  }
  lm.set_progress(nullptr);
  return perf;
}

Json dispatch(LM& lm, std::vector<SeedPass>& passes) {
  std::unique_ptr<std::ofstream> record;
  if (const char* rec = std::getenv("LMEVAL_RECORD_REQUESTS"); rec && *rec)
    record = std::make_unique<std::ofstream>(rec);
  std::vector<RequestPass> requests;
  for (auto& pass : passes) {
    RequestPass rp{pass.seed, {}};
    for (auto& t : pass.tasks)
      for (auto& in : t.instances) rp.instances.push_back(&in);
    requests.push_back(std::move(rp));
  }
  return dispatch_requests(lm, requests, record.get());
}

}  // namespace lmeval
