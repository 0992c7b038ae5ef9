// Port of the reference's NorQuAD helper (lm_eval/tasks/noreval/norquad/utils.py), registered by
// the module file's sha256 (scripts/gen_function_sources.py): process_docs splits the context into
// its title line and passage, p0..p4 are the five Norwegian prompts, process_results the SQuAD
// F1/EM against answers.text[0] (transformers' squad_metrics).
#include <string>
#include <vector>

#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "tasks/functions/doc_util.hpp"
#include "tasks/functions/py_text.hpp"
#include "tasks/functions/squad_answer_scores.hpp"

namespace lmeval {

namespace {

// process_docs (Dataset.map of _helper): title = the stripped context's first line, stripped;
// passage = its other lines joined, stripped; question with whitespace runs made single spaces.
// New keys come after the row's own, as Dataset.map adds columns.
std::vector<Json> norquad_process_docs(std::vector<Json> docs) {
  for (auto& doc : docs) {
    std::string context(unicode::py_strip(tasks::str_field(doc, "context")));
    auto lines = tasks::pytext::split_sep(context, "\n");
    std::string title(unicode::py_strip(lines[0]));
    std::string passage(unicode::py_strip(tasks::pytext::join(lines, "\n", 1, lines.size())));
    auto words = unicode::py_split(tasks::str_field(doc, "question"));
    std::string question = tasks::pytext::join(words, " ", 0, words.size());
    doc["title"] = std::move(title);
    doc["passage"] = std::move(passage);
    doc["question"] = std::move(question);
  }
  return docs;
}

struct Prompt {
  const char* name;
  const char* text_sep;  // after "Tekst:" (p4 has no space)
  const char* before_question;
  const char* after_question;
};

// The reference's p0..p4 f-strings: "Tittel: {title}\n\nTekst:<sep>{passage}\n\n<before>{question}
// <after>\n\nSvar:".
constexpr Prompt kPrompts[] = {
    {"utils.p0", " ", "Spørsmål: ", ""},
    {"utils.p1", " ", "Gitt teksten over, hva er svaret på følgende spørsmål? \"", "\""},
    {"utils.p2", " ", "Svar på følgende: ", ""},
    {"utils.p3", " ", "Hvordan kan man svare på spørsmålet \"", "\", gitt teksten over?"},
    {"utils.p4", "", "Gitt teksten over, besvar følgende spørsmål: \"", "\""},
};

Json norquad_prompt(const Json& doc, const Prompt& p) {
  const std::string& title = tasks::str_field(doc, "title");
  const std::string& passage = tasks::str_field(doc, "passage");
  const std::string& question = tasks::str_field(doc, "question");
  return "Tittel: " + title + "\n\nTekst:" + p.text_sep + passage + "\n\n" + p.before_question +
         question + p.after_question + "\n\nSvar:";
}

}  // namespace

void register_task_functions_norquad(FunctionRegistry& r) {
  {
    TaskFunction fn;
    fn.process_docs = norquad_process_docs;
    r.add("norquad", "utils.process_docs", std::move(fn));
  }
  for (const auto& p : kPrompts) {
    TaskFunction fn;
    fn.doc_fn = [&p](const Json& doc) { return norquad_prompt(doc, p); };
    r.add("norquad", p.name, std::move(fn));
  }
  r.add("norquad", "utils.process_results",
        tasks::squad::answers_text_process_results("norquad process_results"));
}

}  // namespace lmeval
