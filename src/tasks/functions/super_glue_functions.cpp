// Ports of the reference's super_glue helpers (lm_eval/tasks/super_glue/*: copa/utils.py,
// cb/aggregate.py, cb/t5_utils.py, record/util.py, record/t5_utils.py, multirc/t5_utils.py,
// wsc/t5_utils.py), registered by the module files' sha256 (scripts/gen_function_sources.py).
// The scikit-learn scores they call (f1_score, fbeta_score) are reproduced from their confusion
// counts: F = 2tp / (true + predicted), 0.0 where both are 0 (zero_division "warn").
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/functions/classic.hpp"
#include "tasks/functions/doc_util.hpp"
#include "tasks/functions/py_text.hpp"
#include "tasks/functions/squad_metrics.hpp"

namespace lmeval::tasks::super_glue {

namespace {

const Json& field(const Json& doc, const char* key, const char* where) {
  auto it = doc.find(key);
  if (it == doc.end()) throw UserError(std::string(where) + ": document has no '" + key + "'");
  return *it;
}

const std::string& as_str(const Json& v, const char* where) {
  if (!v.is_string()) throw UserError(std::string(where) + ": expected a string, got " + v.dump());
  return v.get_ref<const std::string&>();
}

double num(const Json& v) {
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  throw UserError("expected a number, got " + v.dump());
}

// Python max(list): the first of the largest values (later equal ones do not replace it).
Json py_max(const std::vector<Json>& v, const char* where) {
  if (v.empty()) throw UserError(std::string(where) + ": max() arg is an empty sequence");
  Json best = v[0];
  for (size_t i = 1; i < v.size(); ++i)
    if (num(v[i]) > num(best)) best = v[i];
  return best;
}

// F1 of one class from its counts (sklearn's _precision_recall_fscore_support with beta 1).
double f_from_counts(int64_t tp, int64_t true_sum, int64_t pred_sum) {
  int64_t denom = true_sum + pred_sum;
  return denom == 0 ? 0.0 : static_cast<double>(2 * tp) / static_cast<double>(denom);
}

// Binary F1 of the positive class `pos` (sklearn f1_score's average="binary").
double binary_f1(const std::vector<double>& y_true, const std::vector<double>& y_pred, double pos) {
  int64_t tp = 0, t = 0, p = 0;
  for (size_t i = 0; i < y_true.size(); ++i) {
    bool a = y_true[i] == pos, b = y_pred[i] == pos;
    t += a;
    p += b;
    tp += a && b;
  }
  return f_from_counts(tp, t, p);
}

std::vector<Json> unpack(const Json& item, size_t n, const char* where) {
  if (!item.is_array() || item.size() != n)
    throw UserError(std::string(where) + ": expected items of " + std::to_string(n) +
                    " values, got " + item.dump());
  return std::vector<Json>(item.begin(), item.end());
}

// ------------------------------------------------------------------------------------- copa

std::string copa_convert_choice(const Json& doc, const char* key) {
  return pytext::lower_first(as_str(field(doc, key, "copa"), "copa"), "copa convert_choice");
}

Json copa_doc_to_text(const Json& doc) {
  const std::string& q = as_str(field(doc, "question", "copa"), "copa");
  const char* connector = q == "cause" ? "because" : q == "effect" ? "therefore" : nullptr;
  if (!connector) throw UserError("copa doc_to_text: question must be cause or effect, got " + q);
  std::string premise(unicode::py_strip(as_str(field(doc, "premise", "copa"), "copa")));
  return pytext::drop_last(premise) + " " + connector;
}

Json copa_doc_to_target(const Json& doc) {
  const Json& label = field(doc, "label", "copa");
  // doc["label"] == 0: any other label (the test split's -1 included) takes choice2.
  bool first = (label.is_number() || label.is_boolean()) && num(label) == 0.0;
  return " " + copa_convert_choice(doc, first ? "choice1" : "choice2");
}

Json copa_doc_to_choice(const Json& doc) {
  return Json::array(
      {" " + copa_convert_choice(doc, "choice1"), " " + copa_convert_choice(doc, "choice2")});
}

// --------------------------------------------------------------------------------------- cb

// aggregate.cb_multi_fi: the mean of the one-vs-rest F1 of classes 0, 1 and 2 over the f1
// metric's (gold, pred) items (the reference names them the other way round; F1 is symmetric).
double cb_multi_fi(const std::vector<Json>& items) {
  if (items.empty()) throw UserError("cb_multi_fi: not enough values to unpack (no items)");
  std::vector<double> a, b;
  for (const auto& it : items) {
    auto v = unpack(it, 2, "cb_multi_fi");
    a.push_back(num(v[0]));
    b.push_back(num(v[1]));
  }
  double f11 = binary_f1(b, a, 0), f12 = binary_f1(b, a, 1), f13 = binary_f1(b, a, 2);
  return (f11 + f12 + f13) / 3.0;  // np.mean of three values: summed in order
}

const std::vector<std::string>& cb_labels() {
  static const std::vector<std::string> k = {"entailment", "contradiction", "neutral"};
  return k;
}

int64_t index_in(const std::vector<std::string>& labels, const Json& v) {
  if (!v.is_string()) return -1;
  auto it = std::find(labels.begin(), labels.end(), v.get_ref<const std::string&>());
  return it == labels.end() ? -1 : static_cast<int64_t>(it - labels.begin());
}

// t5_utils.mean_3class_f1: (index of the prediction among the labels, else 0; the gold's).
Json cb_mean_3class_f1(const Json& gold, const Json& result) {
  int64_t p = index_in(cb_labels(), result);
  int64_t r = index_in(cb_labels(), gold);
  if (r < 0) throw UserError("cb mean_3class_f1: " + gold.dump() + " is not in list");
  return Json::array({p < 0 ? 0 : p, r});
}

// t5_utils.agg_mean_3class_f1: fbeta_score(references, predictions, beta=1, labels=range(3),
// average="macro"): a label absent from both counts as 0.0.
double cb_agg_mean_3class_f1(const std::vector<Json>& items) {
  if (items.empty()) throw UserError("agg_mean_3class_f1: not enough values to unpack");
  std::vector<double> pred, ref;
  for (const auto& it : items) {
    auto v = unpack(it, 2, "agg_mean_3class_f1");
    pred.push_back(num(v[0]));
    ref.push_back(num(v[1]));
  }
  double f[3];
  for (int c = 0; c < 3; ++c) f[c] = binary_f1(ref, pred, c);
  return (f[0] + f[1] + f[2]) / 3.0;
}

// ----------------------------------------------------------------------------------- multirc

const std::vector<std::string>& bool_labels() {
  static const std::vector<std::string> k = {"False", "True"};
  return k;
}

// The prediction of multirc's passthrough metrics: the label's index, else `not bool(reference)`
// (a Python bool, kept as such: the samples show it).
Json multirc_prediction(const Json& result, int64_t reference) {
  int64_t p = index_in(bool_labels(), result);
  return p >= 0 ? Json(p) : Json(reference == 0);
}

int64_t multirc_reference(const std::string& label, const Json& gold) {
  int64_t r = index_in(bool_labels(), Json(label));
  if (r < 0)
    throw UserError("multirc t5_utils: '" + label + "' (from " + gold.dump() + ") is not in list");
  return r;
}

// t5_utils.f1: (prediction, reference) with the label after the last "_" of the gold choice.
Json multirc_f1(const Json& gold, const Json& result) {
  auto parts = pytext::split_sep(as_str(gold, "multirc f1"), "_");
  int64_t r = multirc_reference(parts.back(), gold);
  return Json::array({multirc_prediction(result, r), r});
}

// t5_utils.em: (group, prediction, reference); the gold choice is "<question id>_<label>".
Json multirc_em(const Json& gold, const Json& result) {
  auto parts = pytext::split_sep(as_str(gold, "multirc em"), "_");
  if (parts.size() != 2)
    throw UserError("multirc em: cannot unpack " + gold.dump() + " into group and label");
  int64_t r = multirc_reference(parts[1], gold);
  return Json::array({parts[0], multirc_prediction(result, r), r});
}

// t5_utils.agg_f1: f1_score(references, predictions) (binary, positive label 1 == True).
double multirc_agg_f1(const std::vector<Json>& items) {
  if (items.empty()) throw UserError("multirc agg_f1: not enough values to unpack");
  std::vector<double> pred, ref;
  for (const auto& it : items) {
    auto v = unpack(it, 2, "multirc agg_f1");
    pred.push_back(num(v[0]));
    ref.push_back(num(v[1]));
  }
  return binary_f1(ref, pred, 1);
}

// t5_utils.agg_em: per question (first-seen order) 1.0 when every answer's prediction equals its
// reference; the mean over questions.
double multirc_agg_em(const std::vector<Json>& items) {
  std::vector<std::string> order;
  std::map<std::string, bool> same;
  for (const auto& it : items) {
    auto v = unpack(it, 3, "multirc agg_em");
    std::string g = v[0].is_string() ? v[0].get<std::string>() : v[0].dump();
    auto [pos, fresh] = same.emplace(g, true);
    if (fresh) order.push_back(g);
    pos->second = pos->second && num(v[1]) == num(v[2]);
  }
  if (order.empty()) return std::numeric_limits<double>::quiet_NaN();  // np.mean([])
  std::vector<double> scores;
  for (const auto& g : order) scores.push_back(same[g] ? 1.0 : 0.0);
  return numpy_sum(scores) / static_cast<double>(scores.size());
}

// ------------------------------------------------------------------------------------ record

std::vector<std::string> str_list(const Json& v, const char* where) {
  if (!v.is_array()) throw UserError(std::string(where) + ": expected a list, got " + v.dump());
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(as_str(x, where));
  return out;
}

// util.doc_to_text: the passage before its first "\n@highlight\n", then each highlight as a
// bullet ending in ".".
Json record_doc_to_text(const Json& doc) {
  std::string passage(unicode::py_strip(as_str(field(doc, "passage", "record"), "record")));
  auto parts = pytext::split_sep(passage, "\n@highlight\n");
  std::string text = parts[0] + "\n\n";
  for (size_t i = 1; i < parts.size(); ++i) text += "  - " + parts[i] + ".\n";
  return text;
}

std::string record_format_answer(const Json& doc, const std::string& entity) {
  return replace_all("  - " + as_str(field(doc, "query", "record"), "record"), "@placeholder",
                     entity);
}

Json record_doc_to_target(const Json& doc) {
  auto answers = str_list(field(doc, "answers", "record"), "record answers");
  if (answers.empty())
    throw UserError("record doc_to_target: list index out of range (no answers)");
  return record_format_answer(doc, answers[0]);
}

Json record_doc_to_choice(const Json& doc) {
  Json out = Json::array();
  for (const auto& e : str_list(field(doc, "entities", "record"), "record entities"))
    out.push_back(record_format_answer(doc, e));
  return out;
}

Json sorted_unique(const Json& v, const char* where) {
  auto items = str_list(v, where);
  std::sort(items.begin(), items.end());  // code point order = UTF-8 byte order
  items.erase(std::unique(items.begin(), items.end()), items.end());
  return Json(items);
}

// util.process_docs (Dataset.map): entities and answers deduplicated and sorted, in place.
Json record_process_doc(const Json& doc) {
  Json out = doc;
  out["passage"] = field(doc, "passage", "record");
  out["query"] = field(doc, "query", "record");
  out["entities"] = sorted_unique(field(doc, "entities", "record"), "record entities");
  out["answers"] = sorted_unique(field(doc, "answers", "record"), "record answers");
  return out;
}

// util.process_results: the most likely entity (np.argmax: the first maximum, a NaN first of
// all) scored against each answer, the best F1 and exact match (metric_max_over_ground_truths
// calls compute_f1(prediction, answer)).
Json record_process_results(const Json& doc, const std::vector<Json>& results) {
  if (results.empty())
    throw UserError("record process_results: attempt to get argmax of an empty sequence");
  size_t best = 0;
  double best_v = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const Json& r = results[i];
    double v = num(r.is_array() ? r.at(0) : r);
    if (std::isnan(v)) {
      best = i;
      break;
    }
    if (i == 0 || v > best_v) best = i, best_v = v;
  }
  auto entities = str_list(field(doc, "entities", "record"), "record entities");
  if (best >= entities.size())
    throw UserError("record process_results: index " + std::to_string(best) +
                    " is out of bounds for the entities");
  const std::string& prediction = entities[best];
  std::vector<Json> f1, em;
  for (const auto& gt : str_list(field(doc, "answers", "record"), "record answers")) {
    f1.push_back(squad::compute_f1(prediction, gt));
    em.push_back(squad::compute_exact(prediction, gt));
  }
  Json out = Json::object();
  out["f1"] = py_max(f1, "record process_results");
  out["em"] = py_max(em, "record process_results");
  return out;
}

// t5_utils.doc_to_text.
Json record_t5_doc_to_text(const Json& doc) {
  std::string passage = as_str(field(doc, "passage", "record"), "record");
  passage = pyre::sub("(\\.|\\?|\\!|\\\"|\\')\\n@highlight\\n", "\\1 ", passage);
  passage = pyre::sub("\\n@highlight\\n", ". ", passage);
  auto entities = str_list(field(doc, "entities", "record"), "record entities");
  return "record query: " + as_str(field(doc, "query", "record"), "record") +
         " entities: " + pytext::join(entities, ", ", 0, entities.size()) + " passage: " + passage;
}

// t5_utils.process_docs: one document per answer, `answers` holding that answer alone (a
// document without answers gives none).
std::vector<Json> record_t5_process_docs(const std::vector<Json>& docs) {
  std::vector<Json> out;
  for (const auto& doc : docs) {
    const Json& answers = field(doc, "answers", "record");
    if (!answers.is_array()) throw UserError("record t5 process_docs: answers is not a list");
    for (const auto& a : answers) {
      Json row = doc;
      row["answers"] = a;
      out.push_back(std::move(row));
    }
  }
  return out;
}

// The (group, normalised prediction, normalised reference) of a t5 record item: the reference
// is "<passage>+<query>_<answer>" (reference.split("_") must give two parts).
struct SquadItem {
  std::string group, prediction, reference;
};

SquadItem squad_item(const Json& item, const char* where) {
  auto v = unpack(item, 2, where);
  auto parts = pytext::split_sep(as_str(v[1], where), "_");
  if (parts.size() != 2)
    throw UserError(std::string(where) + ": cannot unpack " + v[1].dump() +
                    " into group and answer (it must hold exactly one '_')");
  return {parts[0], squad::normalize_answer(as_str(v[0], where)),
          squad::normalize_answer(parts[1])};
}

// t5_utils.squad_em_agg: every prediction of a group against the group's references.
double record_squad_em_agg(const std::vector<Json>& items) {
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> groups;
  for (const auto& it : items) {
    SquadItem s = squad_item(it, "squad_em_agg");
    auto [pos, fresh] = groups.try_emplace(s.group);
    if (fresh) order.push_back(s.group);
    pos->second.first.push_back(s.prediction);
    pos->second.second.push_back(s.reference);
  }
  std::vector<double> em;
  for (const auto& g : order) {
    const auto& [preds, targets] = groups[g];
    for (const auto& p : preds)
      em.push_back(std::find(targets.begin(), targets.end(), p) != targets.end() ? 1.0 : 0.0);
  }
  if (em.empty()) return std::numeric_limits<double>::quiet_NaN();
  return numpy_sum(em) / static_cast<double>(em.size());
}

// t5_utils.squad_f1_agg's _f1_score(prediction, target): token F1, int 0 without overlap.
double t5_f1_score(const std::string& prediction, const std::string& target) {
  auto p = unicode::py_split(prediction), t = unicode::py_split(target);
  int64_t same = squad::common_count(p, t);
  if (same == 0) return 0;
  double precision = 1.0 * static_cast<double>(same) / static_cast<double>(p.size());
  double recall = 1.0 * static_cast<double>(same) / static_cast<double>(t.size());
  return (2 * precision * recall) / (precision + recall);
}

// t5_utils.squad_f1_agg: the first prediction of each group against the group's references.
double record_squad_f1_agg(const std::vector<Json>& items) {
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::string, std::vector<std::string>>> groups;
  for (const auto& it : items) {
    SquadItem s = squad_item(it, "squad_f1_agg");
    auto [pos, fresh] = groups.try_emplace(s.group);
    if (fresh) {
      order.push_back(s.group);
      pos->second.first = s.prediction;
    }
    pos->second.second.push_back(s.reference);
  }
  std::vector<double> f1;
  for (const auto& g : order) {
    const auto& [p, targets] = groups[g];
    double best = t5_f1_score(p, targets[0]);
    for (size_t i = 1; i < targets.size(); ++i) best = std::max(best, t5_f1_score(p, targets[i]));
    f1.push_back(best);
  }
  if (f1.empty()) return std::numeric_limits<double>::quiet_NaN();
  return numpy_sum(f1) / static_cast<double>(f1.size());
}

// --------------------------------------------------------------------------------------- wsc

// t5_utils._wsc_inputs: the text with the pronoun at span2_index (words split on " ") as "X",
// and the two texts the reference special-cases.
std::string wsc_inputs(const Json& doc) {
  const std::string& text = as_str(field(doc, "text", "wsc"), "wsc");
  auto words = pytext::split_sep(text, " ");
  const Json& idx = field(doc, "span2_index", "wsc");
  if (!idx.is_number_integer()) throw UserError("wsc t5: span2_index is not an integer");
  int64_t i = idx.get<int64_t>();
  if (!(i > 0) || !(i < static_cast<int64_t>(words.size())))
    throw UserError("wsc t5 _wsc_inputs: AssertionError (span2_index " + std::to_string(i) +
                    " is not inside the text's " + std::to_string(words.size()) + " words)");
  if (text ==
      "The boy continued to whip the pony , and eventually the pony threw him over. John laughed "
      "out quite loud. \"Good for him,\" he said. ")
    return "The boy continued to whip the pony , and eventually the pony threw him over. John "
           "laughed out quite loud. \"Good for X ,\" he said.";
  if (text ==
      "When they had eventually calmed down a bit , and had gotten home, Mr. Farley put the magic "
      "pebble in an iron safe . Some day they might want to use it , but really for now, what more "
      "could they wish for?")
    return "When they had eventually calmed down a bit , and had gotten home, Mr. Farley put the "
           "magic pebble in an iron safe . Some day they might want to use X , but really for "
           "now, what more could they wish for?";
  auto k = static_cast<size_t>(i);
  if (words[k] != as_str(field(doc, "span2_text", "wsc"), "wsc"))
    throw UserError("wsc t5 _wsc_inputs: AssertionError (word " + std::to_string(k) + " '" +
                    words[k] + "' is not span2_text)");
  return pytext::join(words, " ", 0, k) + " X " + pytext::join(words, " ", k + 1, words.size());
}

Json wsc_t5_doc_to_text(const Json& doc) {
  // re.sub(r" X ", " *" + span2_text + "* ", ...): the replacement is a template (backslashes).
  std::string repl = " *" + as_str(field(doc, "span2_text", "wsc"), "wsc") + "* ";
  return "wsc: " + pyre::sub(" X ", repl, wsc_inputs(doc));
}

// t5_utils.clean: strip, lower, words (split on " ") that are not determiners.
std::string wsc_clean(std::string_view s) {
  static const std::set<std::string> determiners = {
      "a",    "an",   "few", "her",   "his",   "each", "every", "many",  "much",  "my",  "our",
      "some", "that", "the", "their", "these", "this", "those", "which", "whose", "your"};
  std::string low = unicode::py_lower(unicode::py_strip(s));
  std::vector<std::string> kept;
  for (auto& w : pytext::split_sep(low, " "))
    if (!determiners.count(w)) kept.push_back(std::move(w));
  return pytext::join(kept, " ", 0, kept.size());
}

Json wsc_t5_process_results(const Json& doc, const std::vector<Json>& results) {
  if (results.empty() || !results[0].is_string())
    throw UserError("wsc t5 process_results expects one generated string");
  std::string prediction = wsc_clean(results[0].get<std::string>());
  std::string reference = wsc_clean(as_str(field(doc, "span1_text", "wsc"), "wsc"));
  bool predicted;
  if ((prediction.find('\'') != std::string::npos) != (reference.find('\'') != std::string::npos)) {
    predicted = false;
  } else {
    auto pw = pytext::split_sep(prediction, " "), rw = pytext::split_sep(reference, " ");
    std::set<std::string> ps(pw.begin(), pw.end()), rs(rw.begin(), rw.end());
    predicted = std::includes(rs.begin(), rs.end(), ps.begin(), ps.end()) ||
                std::includes(ps.begin(), ps.end(), rs.begin(), rs.end());
  }
  // predicted_referent == docs["label"]: a bool against the label's value (-1 never equal).
  const Json& label = field(doc, "label", "wsc");
  bool equal = (label.is_number() || label.is_boolean()) && num(label) == (predicted ? 1.0 : 0.0);
  Json out = Json::object();
  out["accuracy"] = equal ? 1.0 : 0.0;
  return out;
}

}  // namespace

}  // namespace lmeval::tasks::super_glue

namespace lmeval {

namespace {

TaskFunction sg_doc_fn(std::function<Json(const Json&)> f) {
  TaskFunction fn;
  fn.doc_fn = std::move(f);
  return fn;
}

TaskFunction sg_aggregation(std::function<double(const std::vector<Json>&)> f) {
  TaskFunction fn;
  fn.aggregation = std::move(f);
  return fn;
}

// A passthrough `metric: !function` called as the reference's generate_until branch calls it
// (references=[gold], predictions=[result]); with multiple targets, 1.0 when any gold's value is
// truthy.
TaskFunction sg_metric(const char* name, const std::function<Json(const Json&, const Json&)>& f) {
  TaskFunction fn;
  fn.name = name;
  fn.metric = [f](const Json& gold, const Json& result, const Json&, bool multiple_target) {
    if (!multiple_target) return f(gold, result);
    Json golds = gold.is_array() ? gold : Json::array({gold});
    bool any = false;
    for (const auto& g : golds) any = tasks::pytext::truthy(f(g, result)) || any;
    return Json(any ? 1.0 : 0.0);
  };
  return fn;
}

}  // namespace

void register_task_functions_super_glue(FunctionRegistry& r) {
  namespace sg = tasks::super_glue;
  r.add("super_glue_copa", "utils.doc_to_text", sg_doc_fn(sg::copa_doc_to_text));
  r.add("super_glue_copa", "utils.doc_to_target", sg_doc_fn(sg::copa_doc_to_target));
  r.add("super_glue_copa", "utils.doc_to_choice", sg_doc_fn(sg::copa_doc_to_choice));

  r.add("super_glue_cb", "aggregate.cb_multi_fi", sg_aggregation(sg::cb_multi_fi));
  r.add("super_glue_cb_t5", "t5_utils.mean_3class_f1",
        sg_metric("mean_3class_f1", sg::cb_mean_3class_f1));
  r.add("super_glue_cb_t5", "t5_utils.agg_mean_3class_f1",
        sg_aggregation(sg::cb_agg_mean_3class_f1));

  r.add("super_glue_multirc_t5", "t5_utils.f1", sg_metric("f1", sg::multirc_f1));
  r.add("super_glue_multirc_t5", "t5_utils.em", sg_metric("em", sg::multirc_em));
  r.add("super_glue_multirc_t5", "t5_utils.agg_f1", sg_aggregation(sg::multirc_agg_f1));
  r.add("super_glue_multirc_t5", "t5_utils.agg_em", sg_aggregation(sg::multirc_agg_em));

  r.add("super_glue_record", "util.doc_to_text", sg_doc_fn(sg::record_doc_to_text));
  r.add("super_glue_record", "util.doc_to_target", sg_doc_fn(sg::record_doc_to_target));
  r.add("super_glue_record", "util.doc_to_choice", sg_doc_fn(sg::record_doc_to_choice));
  {
    TaskFunction fn;
    fn.process_docs = [](std::vector<Json> docs) {
      for (auto& d : docs) d = sg::record_process_doc(d);
      return docs;
    };
    r.add("super_glue_record", "util.process_docs", std::move(fn));
  }
  {
    TaskFunction fn;
    fn.process_results = sg::record_process_results;
    r.add("super_glue_record", "util.process_results", std::move(fn));
  }

  r.add("super_glue_record_t5", "t5_utils.doc_to_text", sg_doc_fn(sg::record_t5_doc_to_text));
  {
    TaskFunction fn;
    fn.process_docs = sg::record_t5_process_docs;
    r.add("super_glue_record_t5", "t5_utils.process_docs", std::move(fn));
  }
  auto passthrough = [](const Json& gold, const Json& result) {
    return Json::array({result, gold});
  };
  r.add("super_glue_record_t5", "t5_utils.em", sg_metric("em", passthrough));
  r.add("super_glue_record_t5", "t5_utils.f1", sg_metric("f1", passthrough));
  r.add("super_glue_record_t5", "t5_utils.squad_em_agg", sg_aggregation(sg::record_squad_em_agg));
  r.add("super_glue_record_t5", "t5_utils.squad_f1_agg", sg_aggregation(sg::record_squad_f1_agg));

  r.add("super_glue_wsc_t5", "t5_utils.doc_to_text", sg_doc_fn(sg::wsc_t5_doc_to_text));
  {
    TaskFunction fn;
    fn.process_results = sg::wsc_t5_process_results;
    r.add("super_glue_wsc_t5", "t5_utils.process_results", std::move(fn));
  }
}

}  // namespace lmeval
