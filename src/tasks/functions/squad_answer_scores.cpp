#include "tasks/functions/squad_answer_scores.hpp"

#include "lmeval/core/error.hpp"
#include "lmeval/core/unicode.hpp"
#include "tasks/functions/squad_metrics.hpp"

namespace lmeval::tasks::squad {

Json f1_exact_match(const std::string& reference, const std::string& pred) {
  Json out = Json::object();
  out["f1"] = compute_f1(reference, pred);
  out["exact_match"] = compute_exact(reference, pred);
  return out;
}

namespace {

double as_double(const Json& v) { return v.get<double>(); }

// max(score(a, pred) for a in golds): a number's value is all the sum keeps, so ties need no
// care about which of an int and a float Python keeps.
template <class Score>
double max_over(const std::vector<std::string>& golds, size_t skip, const std::string& pred,
                Score score) {
  bool any = false;
  double best = 0.0;
  for (size_t i = 0; i < golds.size(); ++i) {
    if (i == skip) continue;
    double v = as_double(score(golds[i], pred));
    if (!any || v > best) best = v;
    any = true;
  }
  if (!any) throw UserError("compute_scores: max() arg is an empty sequence (no gold answers)");
  return best;
}

}  // namespace

Json leave_one_out_scores(const std::vector<std::string>& golds, const std::string& pred) {
  double em_sum = 0.0, f1_sum = 0.0;
  if (golds.size() > 1) {
    for (size_t i = 0; i < golds.size(); ++i) {
      em_sum += max_over(golds, i, pred, compute_exact);
      f1_sum += max_over(golds, i, pred, compute_f1);
    }
  } else {
    em_sum += max_over(golds, golds.size(), pred, compute_exact);
    f1_sum += max_over(golds, golds.size(), pred, compute_f1);
  }
  const double n = static_cast<double>(golds.empty() ? 1 : golds.size());
  Json out = Json::object();
  out["em"] = em_sum / n;
  out["f1"] = f1_sum / n;
  return out;
}

std::string first_line(const std::string& generation) {
  std::string s(unicode::py_strip(generation));
  return s.substr(0, s.find('\n'));
}

namespace {

// doc["answers"]["text"][0] (a KeyError or IndexError in the reference: a UserError here).
const std::string& first_answer_text(const Json& doc, const char* who) {
  auto a = doc.find("answers");
  if (a != doc.end() && a->is_object()) {
    auto t = a->find("text");
    if (t != a->end() && t->is_array() && !t->empty() && (*t)[0].is_string())
      return (*t)[0].get_ref<const std::string&>();
  }
  throw UserError(std::string(who) + ": the document has no answers.text[0] string");
}

}  // namespace

TaskFunction answers_text_process_results(const char* who) {
  TaskFunction fn;
  fn.process_results = [who](const Json& doc, const std::vector<Json>& results) {
    return f1_exact_match(first_answer_text(doc, who), generation(results, who));
  };
  return fn;
}

const std::string& generation(const std::vector<Json>& results, const char* who) {
  if (results.empty() || !results[0].is_string())
    throw UserError(std::string(who) + " expects a generated string as results[0]");
  return results[0].get_ref<const std::string&>();
}

}  // namespace lmeval::tasks::squad
