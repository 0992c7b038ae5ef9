// Hand-written checks of the template engine's basics (the goldens test covers breadth).
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "lmeval/core/error.hpp"
#include "lmeval/template/template.hpp"
#include "support/test_support.hpp"

namespace lmeval::tmpl {
namespace {

std::string R(const std::string& src, const Json& vars) {
  return Template::parse(src, task_options(), "test").render(vars);
}

TEST(TemplateSmoke, SimpleTaskTemplates) {
  Json doc = {{"question", "Why?"},
              {"choices", {{"text", {"a", "b's"}}, {"label", {"A", "B"}}}},
              {"answerKey", "B"}};
  EXPECT_EQ(R("Question: {{question}}\nAnswer:", doc), "Question: Why?\nAnswer:");
  EXPECT_EQ(R("{{choices.label.index(answerKey)}}", doc), "1");
  EXPECT_EQ(R("{{choices.text}}", doc), "['a', \"b's\"]");
}

TEST(TemplateSmoke, StrictUndefinedNamesVariable) {
  try {
    R("Q: {{ missing }}", Json::object());
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'missing' is undefined"), std::string::npos) << e.what();
    EXPECT_EQ(e.where().file, "test");
  }
}

// An inline if without else gives jinja2's plain Undefined even under StrictUndefined
// (asdiv_cot_llama: `{{body if body is defined}}`). Expected values: jinja2 3.1 in the reference's
// environment (Environment(undefined=StrictUndefined, keep_trailing_newline=True)).
TEST(TemplateSmoke, InlineIfWithoutElseIsLenientUndefined) {
  Json doc = {{"question", "Q"}};
  EXPECT_EQ(R("[{{body if body is defined}}] {{question}}", doc), "[] Q");
  EXPECT_EQ(R("[{{x if False}}]", doc), "[]");
  EXPECT_EQ(R("[{{(x if x is defined)|length}}]", doc), "[0]");
  EXPECT_EQ(R("[{% for c in (x if False) %}{{c}}{% endfor %}]", doc), "[]");
  EXPECT_EQ(R("[{{'y' if (x if False) else 'n'}}]", doc), "[n]");
  EXPECT_THROW(R("{{body}}", doc), TemplateError);  // a plain missing name stays strict
}

TEST(TemplateSmoke, SyntaxErrorHasLocation) {
  try {
    Template::parse("line1\n{% if x %}", task_options(), "origin-x");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().file, "origin-x");
    EXPECT_EQ(e.where().line, 2);
  }
}

TEST(TemplateSmoke, LiteralEval) {
  EXPECT_EQ(literal_eval("['a', \"b's\", 'c\\n']"), Json::parse(R"(["a","b's","c\n"])"));
  EXPECT_EQ(literal_eval("(1, -2.5, None, True)"), Json::parse("[1,-2.5,null,true]"));
  EXPECT_EQ(literal_eval("{'k': [1]}"), Json::parse(R"({"k":[1]})"));
  EXPECT_THROW(literal_eval("foo"), UserError);
}

}  // namespace
}  // namespace lmeval::tmpl

namespace lmeval::tmpl {
std::vector<Json> load_template_goldens();  // goldens_test.cpp
namespace {

// Renders, accepting any TemplateError: bad input must never crash.
void render_or_error(const std::string& src, const Options& o, const Json& vars) {
  try {
    Template::parse(src, o, "fuzz").render(vars);
  } catch (const TemplateError&) {
  }
}

TEST(TemplateRobustness, PathologicalInputsGiveErrors) {
  Json vars = Json::object();
  std::string deep(5000, '(');
  EXPECT_THROW(Template::parse("{{ " + deep + " }}", task_options(), "x"), TemplateError);
  std::string negs(5000, '-');
  EXPECT_THROW(Template::parse("{{ " + negs + "1 }}", task_options(), "x"), TemplateError);
  std::string ifs;
  for (int i = 0; i < 2000; ++i) ifs += "{% if true %}";
  EXPECT_THROW(Template::parse(ifs, task_options(), "x"), TemplateError);
  EXPECT_THROW(
      render("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", vars, task_options(), "x"),
      TemplateError);
  EXPECT_THROW(render("{{ 2 ** 4000 }}", vars, task_options(), "x"), TemplateError);
  EXPECT_THROW(render("{{ 'x' * 10000000000 }}", vars, task_options(), "x"), TemplateError);
  EXPECT_THROW(render("{{ range(10000000) | length }}", vars, task_options(), "x"), TemplateError);
  EXPECT_THROW(literal_eval(std::string(300, '[') + std::string(300, ']')), UserError);
  EXPECT_EQ(render("{{ 2 ** 62 }}", vars, task_options(), "x"), "4611686018427387904");
}

TEST(TemplateRobustness, EveryPrefixOfRealTemplatesIsHandled) {
  int n = 0;
  std::set<std::string> seen;
  for (const Json& c : load_template_goldens()) {
    if (c["kind"] != "render") continue;
    std::string src = c["template"].get<std::string>();
    if (!seen.insert(src).second) continue;
    Options o = c["env"] == "chat" ? chat_options() : task_options();
    for (size_t len = 0; len <= src.size(); len += (src.size() > 400 ? 7 : 1)) {
      render_or_error(src.substr(0, len), o, c["vars"]);
      ++n;
    }
    // byte flips of a few structural characters
    for (size_t i = 0; i < src.size(); i += 13) {
      std::string m = src;
      m[i] = "{}%#-+()[]'\"|."[i % 14];
      render_or_error(m, o, c["vars"]);
      ++n;
    }
  }
  EXPECT_GT(n, 1000);
}

}  // namespace
}  // namespace lmeval::tmpl
