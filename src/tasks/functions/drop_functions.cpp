// The reference's drop helpers (lm_eval/tasks/drop/utils.py): the distinct answers of a DROP row,
// AllenNLP's DROP answer normalisation, exact match and the bag-of-words F1 over the optimal
// one-to-one alignment of predicted and gold spans (scipy's linear_sum_assignment).
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/functions/classic.hpp"
#include "lmeval/tasks/functions/drop.hpp"
#include "tasks/functions/doc_util.hpp"

namespace lmeval::tasks {

namespace {

// Characters str.isdigit() accepts that are not decimal digits (int()/float() reject them): from
// CPython 3.11, [c for c in range(0x110000) if chr(c).isdigit() and not chr(c).isdecimal()].
bool is_decimal(char32_t c) {
  static constexpr char32_t kDigitOnly[][2] = {
      {0xB2, 0xB3},       {0xB9, 0xB9},       {0x1369, 0x1371},   {0x19DA, 0x19DA},
      {0x2070, 0x2070},   {0x2074, 0x2079},   {0x2080, 0x2089},   {0x2460, 0x2468},
      {0x2474, 0x247C},   {0x2488, 0x2490},   {0x24EA, 0x24EA},   {0x24F5, 0x24FD},
      {0x24FF, 0x24FF},   {0x2776, 0x277E},   {0x2780, 0x2788},   {0x278A, 0x2792},
      {0x10A40, 0x10A43}, {0x10E60, 0x10E68}, {0x11052, 0x1105A}, {0x1F100, 0x1F10A}};
  if (c < 0x80) return c >= U'0' && c <= U'9';
  if (!unicode::py_isdigit(c)) return false;
  for (const auto& r : kDigitOnly)
    if (c >= r[0] && c <= r[1]) return false;
  return true;
}

// The value of a decimal digit: Unicode's decimal digits come in whole runs 0..9, adjacent runs
// continuing one another.
int decimal_value(char32_t c) {
  char32_t start = c;
  while (start > 0 && is_decimal(start - 1)) --start;
  return static_cast<int>((c - start) % 10);
}

// digitpart: digit (["_"] digit)*; advances i past it; false when none.
bool digit_part(const std::string& s, size_t& i, std::string& out) {
  if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  out += s[i++];
  while (i < s.size()) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      out += s[i++];
    } else if (s[i] == '_' && i + 1 < s.size() &&
               std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      ++i;
    } else {
      break;
    }
  }
  return true;
}

constexpr std::string_view kPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

}  // namespace

std::optional<double> py_float(std::string_view text) {
  // As CPython: Unicode decimal digits become ASCII ones, then the float grammar.
  std::string s;
  for (char32_t c : unicode::decode(unicode::py_strip(text))) {
    if (c < 0x80)
      s += static_cast<char>(c);
    else if (is_decimal(c))
      s += static_cast<char>('0' + decimal_value(c));
    else
      return std::nullopt;
  }
  size_t i = 0;
  std::string clean;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) clean += s[i++];
  std::string rest = s.substr(i);
  for (auto& ch : rest) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (rest == "inf" || rest == "infinity")
    return clean == "-" ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
  if (rest == "nan") return std::numeric_limits<double>::quiet_NaN();
  bool digits = digit_part(s, i, clean);
  if (i < s.size() && s[i] == '.') {
    clean += s[i++];
    digits = digit_part(s, i, clean) || digits;
  }
  if (!digits) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    clean += s[i++];
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) clean += s[i++];
    if (!digit_part(s, i, clean)) return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  return std::strtod(clean.c_str(), nullptr);
}

std::vector<long> linear_sum_assignment(const std::vector<double>& cost, size_t rows, size_t cols) {
  // The Hungarian algorithm with potentials (shortest augmenting paths) on n <= m; a taller
  // matrix is solved transposed.
  const bool transposed = rows > cols;
  const size_t n = transposed ? cols : rows, m = transposed ? rows : cols;
  auto a = [&](size_t i, size_t j) { return transposed ? cost[j * cols + i] : cost[i * cols + j]; };
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> u(n + 1, 0), v(m + 1, 0);
  std::vector<size_t> p(m + 1, 0), way(m + 1, 0);
  for (size_t i = 1; i <= n; ++i) {
    p[0] = i;
    size_t j0 = 0;
    std::vector<double> minv(m + 1, inf);
    std::vector<bool> used(m + 1, false);
    do {
      used[j0] = true;
      size_t i0 = p[j0], j1 = 0;
      double delta = inf;
      for (size_t j = 1; j <= m; ++j) {
        if (used[j]) continue;
        double cur = a(i0 - 1, j - 1) - u[i0] - v[j];
        if (cur < minv[j]) minv[j] = cur, way[j] = j0;
        if (minv[j] < delta) delta = minv[j], j1 = j;
      }
      for (size_t j = 0; j <= m; ++j) {
        if (used[j]) {
          u[p[j]] += delta;
          v[j] -= delta;
        } else {
          minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (p[j0] != 0);
    do {
      size_t j1 = way[j0];
      p[j0] = p[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  std::vector<long> out(rows, -1);
  for (size_t j = 1; j <= m; ++j) {
    if (p[j] == 0) continue;
    if (transposed)
      out[j - 1] = static_cast<long>(p[j] - 1);
    else
      out[p[j] - 1] = static_cast<long>(j - 1);
  }
  return out;
}

std::string drop_normalize(std::string_view answer) {
  static const auto kArticles = PyRegex::compile(R"(\b(a|an|the)\b)");
  std::vector<std::string> tokens;
  size_t start = 0;
  // re.split(" |-", answer)
  for (size_t i = 0; i <= answer.size(); ++i) {
    if (i == answer.size() || answer[i] == ' ' || answer[i] == '-') {
      std::string t = unicode::py_lower(answer.substr(start, i - start));
      start = i + 1;
      if (!py_float(t)) {  // _remove_punc
        std::string kept;
        for (char c : t)
          if (kPunctuation.find(c) == std::string_view::npos) kept += c;
        t = std::move(kept);
      }
      if (auto f = py_float(t)) t = py::float_repr(*f);  // _fix_number
      t = kArticles->sub(" ", t);
      std::string joined;  // _white_space_fix
      for (const auto& w : unicode::py_split(t)) joined += (joined.empty() ? "" : " ") + w;
      if (!unicode::py_strip(joined).empty()) tokens.push_back(std::move(joined));
    }
  }
  std::string out;
  for (const auto& t : tokens) out += (out.empty() ? "" : " ") + t;
  return std::string(unicode::py_strip(out));
}

namespace {

using Bag = std::set<std::string>;

double compute_f1(const Bag& predicted, const Bag& gold) {
  size_t common = 0;
  for (const auto& w : gold) common += predicted.count(w);
  double precision =
      predicted.empty() ? 1.0 : static_cast<double>(common) / static_cast<double>(predicted.size());
  double recall =
      gold.empty() ? 1.0 : static_cast<double>(common) / static_cast<double>(gold.size());
  if (precision == 0.0 && recall == 0.0) return 0.0;
  return (2 * precision * recall) / (precision + recall);
}

bool match_numbers_if_present(const Bag& gold, const Bag& predicted) {
  bool gold_has = false;
  for (const auto& w : gold) {
    if (!py_float(w)) continue;
    gold_has = true;
    if (predicted.count(w)) return true;  // the word is a number on both sides
  }
  return !gold_has;
}

// numpy's round(x, 2): x * 100 rounded half to even, divided by 100.
double numpy_round2(double x) { return std::nearbyint(x * 100.0) / 100.0; }

std::vector<std::string> parse_answer(const Json& answer) {
  const Json& number = answer.at("number");
  if (!(number.is_string() && number.get<std::string>().empty())) return {py::str(number)};
  const Json& spans = answer.at("spans");
  if (!spans.empty()) return spans.get<std::vector<std::string>>();
  const Json& date = answer.at("date");
  std::string joined = date.at("day").get<std::string>() + " " +
                       date.at("month").get<std::string>() + " " +
                       date.at("year").get<std::string>();
  return {std::string(unicode::py_strip(joined))};
}

}  // namespace

std::vector<Json> drop_process_docs(std::vector<Json> docs) {
  for (auto& d : docs) {
    std::vector<Json> candidates = {d.at("answer")};
    const Json& validated = d.at("validated_answers");
    for (size_t i = 0; i < validated.at("number").size(); ++i) {
      Json c = Json::object();
      c["number"] = validated["number"][i];
      c["date"] = validated.at("date")[i];
      c["spans"] = validated.at("spans")[i];
      candidates.push_back(std::move(c));
    }
    std::vector<std::vector<std::string>> answers;
    for (const auto& c : candidates) {
      auto a = parse_answer(c);
      bool seen = false;
      for (const auto& b : answers) seen = seen || b == a;
      if (!seen) answers.push_back(std::move(a));
    }
    // dataset.map(_process): the row's columns stay, id and answers are added after them.
    d["id"] = d.at("query_id");
    d["passage"] = d.at("passage");
    d["question"] = d.at("question");
    d["answers"] = answers;
  }
  return docs;
}

std::pair<double, double> drop_get_metrics(const std::vector<std::string>& predicted,
                                           const std::vector<std::string>& gold) {
  auto to_bags = [](const std::vector<std::string>& spans, std::vector<std::string>& normalized,
                    std::vector<Bag>& bags) {
    for (const auto& s : spans) {
      normalized.push_back(drop_normalize(s));
      auto words = unicode::py_split(normalized.back());
      bags.emplace_back(words.begin(), words.end());
    }
  };
  std::vector<std::string> pn, gn;
  std::vector<Bag> pb, gb;
  to_bags(predicted, pn, pb);
  to_bags(gold, gn, gb);
  double em =
      std::set<std::string>(pn.begin(), pn.end()) == std::set<std::string>(gn.begin(), gn.end()) &&
              pn.size() == gn.size()
          ? 1.0
          : 0.0;
  // _align_bags: scores gold x predicted, the assignment maximising their sum.
  std::vector<double> scores(gb.size() * pb.size(), 0.0), negated(scores.size());
  for (size_t g = 0; g < gb.size(); ++g)
    for (size_t p = 0; p < pb.size(); ++p)
      if (match_numbers_if_present(gb[g], pb[p]))
        scores[g * pb.size() + p] = compute_f1(pb[p], gb[g]);
  for (size_t k = 0; k < scores.size(); ++k) negated[k] = -scores[k];
  std::vector<double> max_scores(std::max(gb.size(), pb.size()), 0.0);
  auto cols = linear_sum_assignment(negated, gb.size(), pb.size());
  for (size_t g = 0; g < cols.size(); ++g)
    if (cols[g] >= 0)
      max_scores[g] = std::max(max_scores[g], scores[g * pb.size() + static_cast<size_t>(cols[g])]);
  double f1 = numpy_sum(max_scores) / static_cast<double>(max_scores.size());
  return {em, numpy_round2(f1)};
}

Json drop_process_results(const Json& doc, const std::vector<std::string>& predictions) {
  // Python's max(0, x): the int 0 stays until a larger float replaces it.
  std::optional<double> max_em, max_f1;
  for (const auto& gold_json : doc.at("answers")) {
    auto gold = gold_json.get<std::vector<std::string>>();
    auto [em, f1] = drop_get_metrics(predictions, gold);
    if (gold.empty()) throw UserError("drop utils.process_results: an empty gold answer");
    if (unicode::py_strip(gold[0]).empty()) continue;
    if (em > max_em.value_or(0)) max_em = em;
    if (f1 > max_f1.value_or(0)) max_f1 = f1;
  }
  Json out = Json::object();
  out["em"] = max_em ? Json(*max_em) : Json(0);
  out["f1"] = max_f1 ? Json(*max_f1) : Json(0);
  return out;
}

}  // namespace lmeval::tasks

namespace lmeval {

void register_task_functions_drop(FunctionRegistry& r) {
  {
    TaskFunction fn;
    fn.process_docs = [](std::vector<Json> docs) {
      return tasks::drop_process_docs(std::move(docs));
    };
    r.add("drop", "utils.process_docs", std::move(fn));
  }
  {
    TaskFunction fn;
    fn.process_results = [](const Json& doc, const std::vector<Json>& results) {
      std::vector<std::string> preds;
      for (const auto& x : results) {
        if (!x.is_string()) throw UserError("drop process_results expects generated strings");
        preds.push_back(x.get<std::string>());
      }
      return tasks::drop_process_results(doc, preds);
    };
    r.add("drop", "utils.process_results", std::move(fn));
  }
}

}  // namespace lmeval
