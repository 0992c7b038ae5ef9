// Compares the engine with Python Jinja2 / transformers / ast.literal_eval byte for byte over the
// goldens made by scripts/gen_template_goldens.py.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "lmeval/core/error.hpp"
#include "lmeval/template/template.hpp"
#include "support/test_support.hpp"

namespace lmeval::tmpl {
namespace {}  // namespace

// Cases of tests/template/goldens/template_goldens.jsonl with "tid"/"vid" resolved to
// "template"/"vars".
std::vector<Json> load_template_goldens() {
  // LMEVAL_TEMPLATE_GOLDENS points at a larger local file (e.g. made with --docs 100000).
  const char* env = std::getenv("LMEVAL_TEMPLATE_GOLDENS");
  std::filesystem::path path =
      env && *env ? std::filesystem::path(env)
                  : testing::source_dir() / "tests/template/goldens/template_goldens.jsonl";
  std::vector<Json> out;
  std::map<int, std::string> texts;
  std::map<int, Json> vars;
  std::string line;
  // template_name_goldens.jsonl (scripts/gen_template_name_goldens.py): non-ASCII names.
  std::ifstream in(path),
      names(testing::source_dir() / "tests/template/goldens/template_name_goldens.jsonl");
  while (std::getline(in, line) || std::getline(names, line)) {
    if (line.empty()) continue;
    Json c = Json::parse(line);
    if (c["kind"] == "template") {
      texts[c["tid"].get<int>()] = c["text"].get<std::string>();
      continue;
    }
    if (c["kind"] == "vars") {
      vars[c["vid"].get<int>()] = std::move(c["vars"]);
      continue;
    }
    if (c.contains("tid")) c["template"] = texts.at(c["tid"].get<int>());
    if (c.contains("vid")) c["vars"] = vars.at(c["vid"].get<int>());
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

TEST(TemplateGoldens, AllCasesIdentical) {
  auto cases = load_template_goldens();
  ASSERT_GT(cases.size(), 1000u) << "goldens missing: run scripts/gen_template_goldens.py";
  std::map<std::string, std::pair<int, int>> by_group;  // group -> (identical, total)
  int identical = 0, known = 0, failures_shown = 0;
  for (const auto& c : cases) {
    std::string id = c["id"].get<std::string>();
    std::string group = id.substr(0, id.find(':', id.find(':') + 1));
    bool expect_error = c.contains("error");
    std::string got, err, kind;
    int err_line = 0;
    bool threw = false;
    try {
      if (c["kind"] == "literal_eval") {
        Json v = literal_eval(c["text"].get<std::string>());
        got = v.dump();
      } else if (c["kind"] == "apply_chat") {
        ChatRequest r;
        r.messages = c["vars"]["messages"];
        r.add_generation_prompt = c["add_generation_prompt"].get<bool>();
        r.continue_final_message = c["continue_final_message"].get<bool>();
        r.special_tokens = c["vars"]["special_tokens"];
        r.kwargs = c["kwargs"];
        got = apply_chat_template(
            Template::parse(c["template"].get<std::string>(), chat_options(), id), r);
      } else {
        Options o = c["env"] == "chat" ? chat_options() : task_options();
        got = Template::parse(c["template"].get<std::string>(), o, id).render(c["vars"]);
      }
    } catch (const TemplateError& e) {
      threw = true;
      err = e.what();
      static const char* const kKinds[] = {"syntax", "undefined", "raised", "python"};
      kind = kKinds[static_cast<int>(e.kind())];
      err_line = e.where().line;
    } catch (const UserError& e) {
      threw = true;
      err = e.what();
    }
    bool ok;
    std::string want;
    if (expect_error) {
      ok = threw;
      if (c.contains("error_kind")) ok = ok && kind == c["error_kind"].get<std::string>();
      if (c.contains("error_line")) ok = ok && err_line == c["error_line"].get<int>();
      want = "<error " + c.value("error_kind", std::string()) + " line " +
             std::to_string(c.value("error_line", 0)) + " " + c["error"].get<std::string>() + ">";
    } else if (c["kind"] == "literal_eval") {
      want = c["expected"].dump();
      ok = !threw && got == want;
    } else {
      want = c["expected"].get<std::string>();
      ok = !threw && got == want;
    }
    auto& g = by_group[group];
    ++g.second;
    if (ok) {
      ++identical;
      ++g.first;
    } else if (c.value("known_divergence", false)) {
      ++known;  // a documented Python-object effect (see scripts/gen_template_goldens.py)
    } else if (failures_shown++ < 40) {
      ADD_FAILURE() << id << "\n  template/text: "
                    << (c.contains("template") ? c["template"] : c["text"]).dump()
                    << "\n  want: " << Json(want).dump() << "\n  got:  "
                    << (threw ? "<error " + kind + " line " + std::to_string(err_line) + " " + err +
                                    ">"
                              : Json(got).dump());
    }
  }
  for (const auto& [g, n] : by_group)
    std::printf("  %-28s %5d/%5d identical\n", g.c_str(), n.first, n.second);
  std::printf(
      "template goldens: %d/%zu identical (%d differ in documented Python-object "
      "effects)\n",
      identical, cases.size(), known);
  EXPECT_EQ(identical + known, static_cast<int>(cases.size()));
}

}  // namespace
}  // namespace lmeval::tmpl
