#include "tasks/functions/iberian_bench_docs.hpp"

#include "lmeval/core/error.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/functions/classic.hpp"
#include "tasks/functions/doc_util.hpp"
#include "tasks/functions/py_text.hpp"

namespace lmeval::tasks::iberian {

namespace {

std::string detokenized(const Json& doc, const char* key) {
  return std::string(unicode::py_strip(general_detokenize(str_field(doc, key))));
}

// s.endswith(tuple of one-character ASCII suffixes): the last byte decides (a multi-byte UTF-8
// character never ends in an ASCII byte).
bool ends_with_any(const std::string& s, std::string_view chars) {
  return !s.empty() && chars.find(s.back()) != std::string_view::npos;
}

// `doc[key] not in [None, ""]`.
bool present(const Json& doc, const char* key) {
  auto it = doc.find(key);
  if (it == doc.end()) throw UserError(std::string("document field '") + key + "' is missing");
  return !it->is_null() && !(it->is_string() && it->get_ref<const std::string&>().empty());
}

}  // namespace

void nli_pair(Json& doc, const char* first, const char* second) {
  std::string a = detokenized(doc, first);
  std::string b = detokenized(doc, second);
  if (ends_with_any(a, ".,!?")) a.pop_back();
  b = pytext::lower_first(b, "lowercase_first_letter");
  if (b.empty() || b.back() != '.') b += ".";
  doc[first] = std::move(a);
  doc[second] = std::move(b);
}

std::vector<Json> paraphrase_docs(std::vector<Json> docs, const char* first, const char* second) {
  std::vector<Json> out;
  for (auto& doc : docs)
    if (present(doc, first) && present(doc, second)) out.push_back(std::move(doc));
  for (auto& doc : out) {
    std::string a = detokenized(doc, first);
    std::string b = detokenized(doc, second);
    if (ends_with_any(a, ".,;")) a.pop_back();
    doc[first] = std::move(a);
    doc[second] = pytext::lower_first(b, "lowercase_first_letter");
  }
  return out;
}

void lower_first_letters(Json& doc, const std::vector<const char*>& fields) {
  for (const char* f : fields)
    doc[f] = pytext::lower_first(str_field(doc, f), "lowercase_first_letter");
}

std::string collapse_spaces(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s)
    if (c != ' ' || out.empty() || out.back() != ' ') out.push_back(c);
  return out;
}

TaskFunction paraphrases(const char* first, const char* second) {
  TaskFunction fn;
  fn.process_docs = [first, second](std::vector<Json> docs) {
    return paraphrase_docs(std::move(docs), first, second);
  };
  return fn;
}

void collapse_text_and_summary(Json& doc) {
  doc["text"] = collapse_spaces(str_field(doc, "text"));
  doc["summary"] = collapse_spaces(str_field(doc, "summary"));
}

TaskFunction map_each(std::function<void(Json&)> f) {
  TaskFunction fn;
  fn.process_docs = [f = std::move(f)](std::vector<Json> docs) {
    for (auto& d : docs) f(d);
    return docs;
  };
  return fn;
}

}  // namespace lmeval::tasks::iberian
