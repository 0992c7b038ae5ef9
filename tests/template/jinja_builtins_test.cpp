// jinja2's built-in filters and tests against jinja2's own tables and renderings
// (scripts/gen_jinja_builtin_goldens.py).
#include <gtest/gtest.h>

#include <set>

#include "lmeval/core/error.hpp"
#include "lmeval/template/template.hpp"
#include "support/test_support.hpp"

namespace lmeval::tmpl {

namespace {
Json goldens() {
  return Json::parse(
      testing::read_file(testing::source_dir() / "tests/template/goldens/jinja_builtins.json"));
}
std::string render_or_error(const std::string& t, const Json& vars) {
  try {
    return Template::parse(t, task_options(), "t").render(vars);
  } catch (const TemplateError& e) {
    return std::string("error: ") + e.what();
  } catch (const UserError& e) {
    return std::string("error: ") + e.what();
  }
}
}  // namespace

// Every name in jinja2.filters.FILTERS / jinja2.tests.TESTS is known to the engine and none is
// refused as unsupported, so that this test fails when jinja2 gains a filter.
TEST(Template_JinjaBuiltins, EveryFilterAndTestOfJinja2) {
  const Json g = goldens();
  const std::set<std::string> missing = {};
  std::set<std::string> failing;
  for (const auto& f : g["filters"]) {
    std::string name = f.get<std::string>();
    std::string arg = name == "batch" || name == "slice" || name == "attr" ? "(1)"
                      : name == "map"                                      ? "('upper')"
                      : name == "groupby"                                  ? "(0)"
                                                                           : "";
    std::string out = render_or_error("{{ x | " + name + arg + " }}", Json{{"x", "a"}});
    EXPECT_EQ(out.find("No filter named"), std::string::npos) << name << ": " << out;
    if (out.find("is not supported") != std::string::npos) failing.insert(name);
  }
  EXPECT_EQ(failing, missing);
  for (const auto& t : g["tests"]) {
    std::string name = t.get<std::string>();
    bool op = !name.empty() && !std::isalpha(static_cast<unsigned char>(name[0]));
    std::string tpl =
        op ? "{{ 1 is " + std::string("eq") + " 1 }}" : "{% if x is " + name + " %}y{% endif %}";
    if (name == "divisibleby" || name == "eq" || name == "equalto" || name == "ne" ||
        name == "lt" || name == "le" || name == "gt" || name == "ge" || name == "greaterthan" ||
        name == "lessthan" || name == "in" || name == "sameas")
      tpl = "{% if 1 is " + name + " 1 %}y{% endif %}";
    std::string out = render_or_error(tpl, Json{{"x", 1}});
    EXPECT_EQ(out.find("No test named"), std::string::npos) << name << ": " << out;
  }
}

TEST(Template_JinjaBuiltins, RenderingsAsJinja2) {
  const Json g = goldens();
  ASSERT_GE(g["cases"].size(), 400u);
  for (const auto& c : g["cases"]) {
    SCOPED_TRACE(c["template"].get<std::string>());
    std::string out = render_or_error(c["template"].get<std::string>(), c["vars"]);
    if (c.contains("expected"))
      EXPECT_EQ(out, c["expected"].get<std::string>());
    else
      EXPECT_EQ(out.rfind("error: ", 0), 0u) << out;
  }
}

}  // namespace lmeval::tmpl
