// Doc functions of the classic tasks (hellaswag, winogrande, wsc, logiqa, truthfulqa, wikitext),
// reproducing the reference's lm_eval/tasks/<family>/*.py behaviour.
#include <cmath>
#include <string>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/functions/classic.hpp"
#include "tasks/functions/doc_util.hpp"
#include "tasks/functions/rouge_score.hpp"

namespace lmeval::tasks {

namespace {

// Python str.split() with no argument: runs of whitespace separate, no empty items.
std::vector<std::u32string> py_split_ws(const std::u32string& s) {
  std::vector<std::u32string> out;
  std::u32string cur;
  bool in = false;
  for (char32_t c : s) {
    if (unicode::py_isspace(c)) {
      if (in) out.push_back(cur), cur.clear(), in = false;
    } else {
      cur.push_back(c);
      in = true;
    }
  }
  if (in) out.push_back(cur);
  return out;
}

double ll_of(const Json& r) {
  if (r.is_array() && !r.empty()) return r[0].get<double>();
  return r.get<double>();
}

}  // namespace

size_t py_len(std::string_view s) { return unicode::length(s); }

std::string py_capitalize(std::string_view s) {
  std::u32string u = unicode::decode(s);
  if (u.empty()) return std::string();
  std::string first = unicode::py_upper(unicode::encode(u.substr(0, 1)));
  return first + unicode::py_lower(unicode::encode(u.substr(1)));
}

std::string hellaswag_preprocess(std::string_view text) {
  std::string t(unicode::py_strip(text));
  t = replace_all(std::move(t), " [title]", ". ");
  t = pyre::sub("\\[.*?\\]", "", t);
  return replace_all(std::move(t), "  ", " ");
}

Json hellaswag_process_doc(const Json& doc) {
  std::string ctx = str_field(doc, "ctx_a") + " " + py_capitalize(str_field(doc, "ctx_b"));
  Json out = doc;
  out["query"] = hellaswag_preprocess(str_field(doc, "activity_label") + ": " + ctx);
  Json choices = Json::array();
  for (const auto& e : doc.at("endings"))
    choices.push_back(hellaswag_preprocess(e.get<std::string>()));
  out["choices"] = std::move(choices);
  const Json& label = doc.at("label");
  if (label.is_number_integer()) {
    out["gold"] = label.get<int64_t>();
  } else {
    // int(doc["label"]): a label that is not an integer literal is bad data, not a crash.
    std::string l =
        label.is_string() ? std::string(unicode::py_strip(label.get<std::string>())) : "";
    if (l.empty() || l.find_first_not_of("+-0123456789") != std::string::npos)
      throw UserError("hellaswag: label " + label.dump() + " is not an integer");
    out["gold"] = std::stoll(l);
  }
  return out;
}

Json winogrande_doc_to_text(const Json& doc) {
  const std::string& a = str_field(doc, "answer");
  if (a == "1") return 0;
  if (a == "2") return 1;
  throw UserError("winogrande: answer must be \"1\" or \"2\", got \"" + a + "\"");
}

Json winogrande_doc_to_target(const Json& doc) {
  const std::string& s = str_field(doc, "sentence");
  size_t idx = s.find('_');
  if (idx == std::string::npos) throw UserError("winogrande: sentence has no '_'");
  return std::string(unicode::py_strip(std::string_view(s).substr(idx + 1)));
}

Json winogrande_doc_to_choice(const Json& doc) {
  const std::string& s = str_field(doc, "sentence");
  size_t idx = s.find('_');
  if (idx == std::string::npos) throw UserError("winogrande: sentence has no '_'");
  return Json::array(
      {s.substr(0, idx) + str_field(doc, "option1"), s.substr(0, idx) + str_field(doc, "option2")});
}

std::string general_detokenize(std::string_view in) {
  std::string s(in);
  s = replace_all(std::move(s), " n't", "n't");
  s = replace_all(std::move(s), " )", ")");
  s = replace_all(std::move(s), "( ", "(");
  s = replace_all(std::move(s), "\" ", "\"");
  s = replace_all(std::move(s), " \"", "\"");
  return pyre::sub(" (['.,])", "\\1", s);
}

std::string wsc_doc_to_text(const Json& doc) {
  std::u32string raw = unicode::decode(str_field(doc, "text"));
  const std::string& span2 = str_field(doc, "span2_text");
  int64_t span2_index = doc.at("span2_index").get<int64_t>();
  auto words = py_split_ws(raw);
  // Python slicing clamps: words[:k] for k beyond the end (or negative) as lists do.
  int64_t n = static_cast<int64_t>(words.size());
  int64_t k = span2_index < 0 ? std::max<int64_t>(0, n + span2_index) : std::min(span2_index, n);
  std::u32string pre;
  for (int64_t i = 0; i < k; ++i) {
    if (i) pre.push_back(U' ');
    pre += words[static_cast<size_t>(i)];
  }
  size_t start = pre.size() + unicode::length(span2) + 1;
  std::u32string post = start < raw.size() ? raw.substr(start) : std::u32string();
  std::string passage =
      general_detokenize(unicode::encode(pre) + " *" + span2 + "*" + unicode::encode(post));
  return "Passage: " + passage + "\nQuestion: In the passage above, does the pronoun \"*" + span2 +
         "*\" refer to \"*" + str_field(doc, "span1_text") + "*\"?\nAnswer:";
}

std::string logiqa_doc_to_text(const Json& doc) {
  static const char* letters[] = {"A", "B", "C", "D"};
  std::string p = "Passage: " + str_field(doc, "context") + "\n";
  p += "Question: " + str_field(doc, "question") + "\nChoices:\n";
  const Json& options = doc.at("options");
  for (size_t i = 0; i < 4 && i < options.size(); ++i)
    p += std::string(letters[i]) + ". " + options[i].get<std::string>() + "\n";
  return p + "Answer:";
}

int logiqa_doc_to_target(const Json& doc) {
  std::string l(unicode::py_strip(str_field(doc, "label")));
  static const char* letters[] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; ++i)
    if (l == letters[i]) return i;
  throw UserError("logiqa: label '" + l + "' is not one of a, b, c, d");
}

// numpy's pairwise summation (loops_utils.h: 8 accumulators up to 128 elements, halves above).
static double pairwise_sum(const double* a, size_t n) {
  if (n < 8) {
    double res = 0.;
    for (size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + static_cast<size_t>(j)];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

double numpy_sum(const std::vector<double>& a) {
  // np.sum of a contiguous float64 array: pairwise summation over all elements (checked
  // against numpy 2.4 on random arrays of 2..30 elements).
  return pairwise_sum(a.data(), a.size());
}

double truthfulqa_mc2(const Json& doc, const std::vector<Json>& results) {
  std::vector<double> probs;
  for (const auto& r : results) probs.push_back(std::exp(ll_of(r)));
  double total = numpy_sum(probs);
  const Json& labels = doc.at("mc2_targets").at("labels");
  std::vector<double> true_mass;
  for (size_t i = 0; i < probs.size() && i < labels.size(); ++i)
    if (labels[i].get<int64_t>() == 1) true_mass.push_back(probs[i] / total);
  return numpy_sum(true_mass);
}

std::vector<size_t> truthfulqa_mc2_true_answers(const Json& doc) {
  const Json& labels = doc.at("mc2_targets").at("labels");
  std::vector<size_t> out;
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i].get<int64_t>() == 1) out.push_back(i);
  return out;
}

Json truthfulqa_gen_process_doc(const Json& doc) {
  auto format = [](const Json& answers) {
    Json out = Json::array();
    for (const auto& a : answers) {
      std::string s(unicode::py_strip(a.get<std::string>()));
      if (s.empty()) continue;
      out.push_back(s.back() != '.' ? s + "." : s);
    }
    return out;
  };
  Json out = doc;
  out["question"] = std::string(unicode::py_strip(str_field(doc, "question")));
  Json correct = format(doc.at("correct_answers"));
  bool has = false;
  for (const auto& c : correct) has = has || c == "I have no comment.";
  if (!has) correct.push_back("I have no comment.");
  out["correct_answers"] = std::move(correct);
  out["incorrect_answers"] = format(doc.at("incorrect_answers"));
  return out;
}

std::string wikitext_detokenizer(std::string_view page) {
  std::string s(page);
  s = replace_all(std::move(s), "s '", "s'");
  s = pyre::sub(R"(/' [0-9]/)", R"(/'[0-9]/)", s);
  s = replace_all(std::move(s), " @-@ ", "-");
  s = replace_all(std::move(s), " @,@ ", ",");
  s = replace_all(std::move(s), " @.@ ", ".");
  s = replace_all(std::move(s), " : ", ": ");
  s = replace_all(std::move(s), " ; ", "; ");
  s = replace_all(std::move(s), " . ", ". ");
  s = replace_all(std::move(s), " ! ", "! ");
  s = replace_all(std::move(s), " ? ", "? ");
  s = replace_all(std::move(s), " , ", ", ");
  s = pyre::sub(R"(\(\s*([^\)]*?)\s*\))", R"((\1))", s);
  s = pyre::sub(R"(\[\s*([^\]]*?)\s*\])", R"([\1])", s);
  s = pyre::sub(R"({\s*([^}]*?)\s*})", R"({\1})", s);
  s = pyre::sub(R"("\s*([^"]*?)\s*")", R"("\1")", s);
  s = pyre::sub(R"('\s*([^']*?)\s*')", R"('\1')", s);
  s = replace_all(std::move(s), "= = = =", "====");
  s = replace_all(std::move(s), "= = =", "===");
  s = replace_all(std::move(s), "= =", "==");
  s = replace_all(std::move(s), " \xC2\xB0 ", "\xC2\xB0");
  s = replace_all(std::move(s), " \n", "\n");
  s = replace_all(std::move(s), "\n ", "\n");
  s = replace_all(std::move(s), " N ", " 1 ");
  return replace_all(std::move(s), " 's", "'s");
}

size_t wikitext_word_count(std::string_view page) { return pyre::split("\\s+", page).size(); }

}  // namespace lmeval::tasks

namespace lmeval {

namespace {

TaskFunction map_docs(std::function<Json(const Json&)> f) {
  TaskFunction fn;
  fn.process_docs = [f = std::move(f)](std::vector<Json> docs) {
    for (auto& d : docs) d = f(d);
    return docs;
  };
  return fn;
}

TaskFunction doc_fn(std::function<Json(const Json&)> f) {
  TaskFunction fn;
  fn.doc_fn = std::move(f);
  return fn;
}

}  // namespace

void register_task_functions_truthfulqa_gen(FunctionRegistry& r);

void register_task_functions_classic(FunctionRegistry& r) {
  register_task_functions_truthfulqa_gen(r);
  r.add("hellaswag", "utils.process_docs", map_docs(tasks::hellaswag_process_doc));

  r.add("winogrande", "preprocess_winogrande.doc_to_text", doc_fn(tasks::winogrande_doc_to_text));
  r.add("winogrande", "preprocess_winogrande.doc_to_target",
        doc_fn(tasks::winogrande_doc_to_target));
  r.add("winogrande", "preprocess_winogrande.doc_to_choice",
        doc_fn(tasks::winogrande_doc_to_choice));

  r.add("wsc", "preprocess_wsc.default_doc_to_text",
        doc_fn([](const Json& d) -> Json { return tasks::wsc_doc_to_text(d); }));

  r.add("logiqa", "utils_logiqa.doc_to_text",
        doc_fn([](const Json& d) -> Json { return tasks::logiqa_doc_to_text(d); }));
  r.add("logiqa", "utils_logiqa.doc_to_target",
        doc_fn([](const Json& d) -> Json { return tasks::logiqa_doc_to_target(d); }));

  {
    TaskFunction fn;
    fn.process_results = [](const Json& doc, const std::vector<Json>& results) {
      Json out = Json::object();
      out["acc"] = tasks::truthfulqa_mc2(doc, results);
      return out;
    };
    fn.gold_choices = tasks::truthfulqa_mc2_true_answers;
    r.add("truthfulqa", "utils.process_results_mc2", std::move(fn));
  }
  r.add("truthfulqa", "utils.process_docs_gen", map_docs(tasks::truthfulqa_gen_process_doc));

  r.add("wikitext", "preprocess_wikitext.wikitext_detokenizer", doc_fn([](const Json& d) -> Json {
          return tasks::wikitext_detokenizer(d.at("page").get<std::string>());
        }));
  {
    TaskFunction fn;
    fn.process_results = [](const Json& doc, const std::vector<Json>& results) {
      if (results.size() != 1)
        throw UserError("wikitext process_results expects one loglikelihood per document");
      const Json& r0 = results[0];
      double ll = r0.is_array() ? r0.at(0).get<double>() : r0.get<double>();
      const std::string& page = doc.at("page").get_ref<const std::string&>();
      auto words = static_cast<int64_t>(tasks::wikitext_word_count(page));
      auto bytes = static_cast<int64_t>(page.size());
      Json out = Json::object();
      out["word_perplexity"] = Json::array({ll, words});
      out["byte_perplexity"] = Json::array({ll, bytes});
      out["bits_per_byte"] = Json::array({ll, bytes});
      return out;
    };
    r.add("wikitext", "preprocess_wikitext.process_results", std::move(fn));
  }
}

}  // namespace lmeval

// ---------------------------------------------------------------------------------------------
// truthfulqa_gen: sacrebleu sentence BLEU (tokenize="intl", smooth "exp") and rouge-score
// ROUGE-1/2/Lsum F-measures, as utils.process_results_gen computes them.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <map>

namespace lmeval::tasks {

namespace {

// Global substitution with a PCRE2 pattern (UTF + UCP), `regex.sub` semantics for patterns that
// cannot match empty.
std::string pcre_sub_all(const char* pattern, const char* repl, const std::string& s) {
  int err = 0;
  PCRE2_SIZE off = 0;
  pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                                 PCRE2_UTF | PCRE2_UCP, &err, &off, nullptr);
  if (!re) throw RuntimeError(std::string("bad internal pattern ") + pattern);
  std::string out(s.size() * 3 + 64, '\0');
  PCRE2_SIZE out_len = out.size();
  int rc = pcre2_substitute(re, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0,
                            PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_OVERFLOW_LENGTH, nullptr,
                            nullptr, reinterpret_cast<PCRE2_SPTR>(repl), PCRE2_ZERO_TERMINATED,
                            reinterpret_cast<PCRE2_UCHAR*>(out.data()), &out_len);
  if (rc == PCRE2_ERROR_NOMEMORY) {
    out.assign(out_len, '\0');
    rc = pcre2_substitute(re, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0,
                          PCRE2_SUBSTITUTE_GLOBAL, nullptr, nullptr,
                          reinterpret_cast<PCRE2_SPTR>(repl), PCRE2_ZERO_TERMINATED,
                          reinterpret_cast<PCRE2_UCHAR*>(out.data()), &out_len);
  }
  pcre2_code_free(re);
  if (rc < 0) throw UserError("invalid UTF-8 in text given to BLEU tokenization");
  out.resize(out_len);
  return out;
}

// sacrebleu TokenizerV14International after _preprocess_segment's rstrip.
std::vector<std::string> bleu_tokens(std::string_view line) {
  std::string s(unicode::py_rstrip(line));
  s = pcre_sub_all("(\\P{N})(\\p{P})", "$1 $2 ", s);
  s = pcre_sub_all("(\\p{P})(\\P{N})", " $1 $2", s);
  s = pcre_sub_all("(\\p{S})", " $1 ", s);
  return unicode::py_split(s);
}

std::map<std::vector<std::string>, int> ngrams(const std::vector<std::string>& t, size_t lo,
                                               size_t hi) {
  std::map<std::vector<std::string>, int> out;
  for (size_t n = lo; n <= hi; ++n)
    for (size_t i = 0; i + n <= t.size(); ++i)
      ++out[std::vector<std::string>(t.begin() + static_cast<long>(i),
                                     t.begin() + static_cast<long>(i + n))];
  return out;
}

double my_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

}  // namespace

double sacrebleu_sentence_bleu(std::string_view hypothesis, std::string_view reference) {
  auto hyp = bleu_tokens(hypothesis), ref = bleu_tokens(reference);
  auto hn = ngrams(hyp, 1, 4), rn = ngrams(ref, 1, 4);
  long correct[4] = {0, 0, 0, 0}, total[4] = {0, 0, 0, 0};
  for (const auto& [g, c] : hn) {
    size_t k = g.size() - 1;
    total[k] += c;
    auto it = rn.find(g);
    if (it != rn.end()) correct[k] += std::min(c, it->second);
  }
  double sys_len = static_cast<double>(hyp.size()), ref_len = static_cast<double>(ref.size());
  double bp = 1.0;
  if (sys_len < ref_len) bp = sys_len > 0 ? std::exp(1 - ref_len / sys_len) : 0.0;
  if (!correct[0] && !correct[1] && !correct[2] && !correct[3]) return 0.0;
  double precisions[4] = {0, 0, 0, 0};
  double smooth = 1.0;
  for (int n = 0; n < 4; ++n) {
    if (total[n] == 0) break;
    if (correct[n] == 0) {
      smooth *= 2;
      precisions[n] = 100. / (smooth * static_cast<double>(total[n]));
    } else {
      precisions[n] = 100. * static_cast<double>(correct[n]) / static_cast<double>(total[n]);
    }
  }
  double sum = 0;
  for (double p : precisions) sum += my_log(p);
  return bp * std::exp(sum / 4);
}

Json rouge_scores(const std::string& target, const std::string& prediction) {
  auto prep = [](std::string s) { return replace_all(std::move(s), " . ", ".\n"); };
  std::string t = prep(target), p = prep(prediction);
  auto tt = rouge::tokenize(t), pt = rouge::tokenize(p);
  Json out = Json::object();
  out["rouge1"] = rouge::rouge_n(tt, pt, 1).fmeasure * 100;
  out["rouge2"] = rouge::rouge_n(tt, pt, 2).fmeasure * 100;
  out["rougeLsum"] = rouge::rouge_lsum(t, p).fmeasure * 100;
  return out;
}

Json truthfulqa_gen_process_results(const Json& doc, const std::string& completion) {
  std::vector<std::string> true_refs, false_refs;
  for (const auto& r : doc.at("correct_answers")) true_refs.push_back(r.get<std::string>());
  for (const auto& r : doc.at("incorrect_answers")) false_refs.push_back(r.get<std::string>());
  if (true_refs.empty() || false_refs.empty())
    throw UserError("truthfulqa_gen: a document needs correct and incorrect answers");
  auto best = [](const std::vector<double>& v, size_t from, size_t to) {
    double m = v[from];
    for (size_t i = from + 1; i < to; ++i) m = std::max(m, v[i]);
    return m;
  };
  std::vector<std::string> all = true_refs;
  all.insert(all.end(), false_refs.begin(), false_refs.end());
  size_t nt = true_refs.size(), na = all.size();
  std::vector<double> bleu, r1, r2, rl;
  for (const auto& ref : all) {
    bleu.push_back(sacrebleu_sentence_bleu(completion, ref));
    Json r = rouge_scores(ref, completion);
    r1.push_back(r["rouge1"].get<double>());
    r2.push_back(r["rouge2"].get<double>());
    rl.push_back(r["rougeLsum"].get<double>());
  }
  Json out = Json::object();
  auto put = [&](const char* name, const std::vector<double>& v) {
    double c = best(v, 0, nt), i = best(v, nt, na);
    out[std::string(name) + "_max"] = c;
    out[std::string(name) + "_acc"] = c > i ? 1 : 0;
    out[std::string(name) + "_diff"] = c - i;
  };
  put("bleu", bleu);
  put("rouge1", r1);
  put("rouge2", r2);
  put("rougeL", rl);
  return out;
}

}  // namespace lmeval::tasks

namespace lmeval {

void register_task_functions_truthfulqa_gen(FunctionRegistry& r) {
  TaskFunction fn;
  fn.process_results = [](const Json& doc, const std::vector<Json>& results) {
    if (results.empty() || !results[0].is_string())
      throw UserError("truthfulqa_gen process_results expects one generated string");
    return tasks::truthfulqa_gen_process_results(doc, results[0].get<std::string>());
  };
  r.add("truthfulqa", "utils.process_results_gen", std::move(fn));
}

}  // namespace lmeval
