// Doc functions of the reference's gpqa family: lm_eval/tasks/gpqa/n_shot/utils.py,
// zeroshot/utils.py and the cot_n_shot, cot_zeroshot and generative utils.py (one file). Each
// shuffles the four answers of a question; only the generator differs.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lmeval/core/py_random.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/functions/gpqa.hpp"
#include "lmeval/tasks/task_context.hpp"
#include "tasks/functions/doc_util.hpp"

namespace lmeval::tasks {

namespace {

// preprocess(text): None -> " ", else stripped, " [title]" -> ". ", "  " -> " " (one pass each;
// unlike the leaderboard's copy, no bracketed text is removed).
std::string preprocess(const Json& text) {
  if (text.is_null()) return " ";
  if (!text.is_string()) throw UserError("gpqa: an answer field is not a string");
  std::string t(unicode::py_strip(text.get_ref<const std::string&>()));
  t = replace_all(std::move(t), " [title]", ". ");
  return replace_all(std::move(t), "  ", " ");
}

const Json& field(const Json& doc, const char* key) {
  auto it = doc.find(key);
  if (it == doc.end()) throw UserError(std::string("gpqa: a document has no field '") + key + "'");
  return *it;
}

struct ModuleRng {
  std::mutex mu;
  std::unique_ptr<PyRandom> rng = std::make_unique<PyRandom>(42);
};

ModuleRng& n_shot_rng() {
  static ModuleRng m;
  return m;
}

}  // namespace

Json gpqa_family_process_doc(const Json& doc, PyRandom& rng, bool with_choices_list) {
  std::vector<std::string> choices = {
      preprocess(field(doc, "Incorrect Answer 1")), preprocess(field(doc, "Incorrect Answer 2")),
      preprocess(field(doc, "Incorrect Answer 3")), preprocess(field(doc, "Correct Answer"))};
  rng.shuffle(choices);
  // choices.index(...): the first equal answer when an incorrect one reads the same.
  const std::string correct = preprocess(field(doc, "Correct Answer"));
  size_t idx = 0;
  while (choices[idx] != correct) ++idx;
  // Dataset.map: the returned keys overwrite the row's in place, new ones come last.
  Json out = doc;
  out["choice1"] = choices[0];
  out["choice2"] = choices[1];
  out["choice3"] = choices[2];
  out["choice4"] = choices[3];
  if (with_choices_list) out["choices"] = choices;
  out["answer"] = std::string("(") + static_cast<char>('A' + idx) + ")";
  return out;
}

void gpqa_n_shot_reset_module_rng() {
  auto& m = n_shot_rng();
  std::lock_guard<std::mutex> lock(m.mu);
  m.rng = std::make_unique<PyRandom>(42);
}

}  // namespace lmeval::tasks

namespace lmeval {

namespace {

// Every call draws, so the task re-runs it at each access to its documents, as the reference's
// eval_docs property re-runs process_docs (Task::reaccess_eval_docs).
TaskFunction shuffling_process_docs(bool with_choices_list, bool module_rng) {
  TaskFunction fn;
  fn.process_docs = [with_choices_list, module_rng](std::vector<Json> docs) {
    if (module_rng) {
      auto& m = tasks::n_shot_rng();
      std::lock_guard<std::mutex> lock(m.mu);
      for (auto& d : docs) d = tasks::gpqa_family_process_doc(d, *m.rng, with_choices_list);
    } else {
      PyRandom& rng = global_random();
      for (auto& d : docs) d = tasks::gpqa_family_process_doc(d, rng, with_choices_list);
    }
    return docs;
  };
  fn.draws_global_random = true;
  return fn;
}

}  // namespace

void register_task_functions_gpqa(FunctionRegistry& r) {
  // n_shot: the module's own generator, `rng = random.Random(42)`.
  r.add("gpqa_n_shot", "utils.process_docs", shuffling_process_docs(false, true));
  // zeroshot: the global `random`.
  r.add("gpqa_zeroshot", "utils.process_docs", shuffling_process_docs(false, false));
  // cot_n_shot, cot_zeroshot, generative: the global `random`, plus the `choices` list.
  r.add("gpqa_cot", "utils.process_docs", shuffling_process_docs(true, false));
}

}  // namespace lmeval
