// The task-input pipeline fuzzed by input_pipeline_fuzz and replayed by tests/fuzz (see the
// header).
#include "input_pipeline.hpp"

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lmeval/config/yaml_loader.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/data/local_data_source.hpp"
#include "lmeval/template/template.hpp"

namespace lmeval::fuzz {

namespace {

std::vector<std::string_view> split_parts(std::string_view in) {
  std::vector<std::string_view> parts;
  while (parts.size() < 2) {
    size_t p = in.find("\n%%\n");
    if (p == std::string_view::npos) break;
    parts.push_back(in.substr(0, p));
    in.remove_prefix(p + 4);
  }
  parts.push_back(in);
  return parts;
}

void collect_templates(const Json& v, std::vector<std::string>& out) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s.find("{{") != std::string::npos || s.find("{%") != std::string::npos) out.push_back(s);
  } else if (v.is_array() || v.is_object()) {
    for (const auto& e : v) collect_templates(e, out);
  }
}

// The samples writer's json.dumps and nlohmann's dump as the results writer calls it.
void print(const Json& v) {
  (void)py::json_dumps(v, py::JsonDumpOptions{});
  (void)v.dump(2, ' ', false, Json::error_handler_t::strict);
}

template <class Fn>
void user_errors_allowed(Fn fn) {
  try {
    fn();
  } catch (const UserError&) {
  }
}

}  // namespace

void run_input_pipeline(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto parts = split_parts(in);
  std::vector<std::string> templates;
  user_errors_allowed([&] {
    YamlFile y = parse_yaml(parts[0], "fuzz.yaml");
    print(y.value);
    collect_templates(y.value, templates);
  });
  if (parts.size() > 1)
    user_errors_allowed([&] {
      require_utf8(parts[1], "fuzz template");  // templates reach the engine from checked YAML
      templates.emplace_back(parts[1]);
    });
  std::vector<Doc> rows;
  if (parts.size() > 2) {
    user_errors_allowed([&] {
      require_utf8(parts[2], "fuzz.jsonl");
      rows = parse_jsonl(parts[2], "fuzz.jsonl");
    });
  }
  if (rows.empty()) rows.push_back(Json::object());
  for (const auto& r : rows) user_errors_allowed([&] { print(r); });
  for (const auto& t : templates) {
    user_errors_allowed([&] {
      tmpl::Template compiled = tmpl::Template::parse(t, tmpl::task_options(), "fuzz template");
      for (const auto& r : rows) {
        user_errors_allowed([&] {
          // A render of UTF-8 inputs must stay UTF-8, or the samples writer would fail on it.
          if (first_invalid_utf8(compiled.render(r)))
            throw std::logic_error("template render produced invalid UTF-8 from UTF-8 inputs");
        });
      }
    });
  }
}

}  // namespace lmeval::fuzz
