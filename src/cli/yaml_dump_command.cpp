// `lm-eval yaml-dump FILE...` (hidden): each YAML file as lm-eval reads it, one JSON line per file,
// for scripts/compare_yaml_library.py to check against PyYAML over the reference's task library.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "lmeval/config/yaml_loader.hpp"
#include "lmeval/core/error.hpp"

namespace lmeval::cli {

namespace {

// Function references become {"!function": name}; NaN and infinities (which JSON lacks) become
// {"!float": "nan" | "inf" | "-inf"}.
Json dumpable(const Json& v) {
  if (is_function_ref(v)) return Json{{"!function", function_ref_name(v)}};
  if (v.is_object()) {
    Json out = Json::object();
    for (auto it = v.begin(); it != v.end(); ++it) out[it.key()] = dumpable(it.value());
    return out;
  }
  if (v.is_array()) {
    Json out = Json::array();
    for (const auto& x : v) out.push_back(dumpable(x));
    return out;
  }
  if (v.is_number_float() && !std::isfinite(v.get<double>())) {
    double d = v.get<double>();
    return Json{{"!float", std::isnan(d) ? "nan" : d > 0 ? "inf" : "-inf"}};
  }
  return v;
}

}  // namespace

void add_yaml_dump_command(CLI::App& app, Action& action) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto* cmd =
      app.add_subcommand("yaml-dump", "print YAML files as lm-eval reads them (JSON lines)");
  cmd->group("");  // hidden: a tool for the fidelity scripts
  cmd->add_option("files", *files, "YAML files")->required();
  cmd->callback([files, &action] {
    action = [files] {
      int rc = 0;
      for (const auto& f : *files) {
        Json line = Json::object();
        line["file"] = f;
        try {
          line["value"] = dumpable(load_yaml(f).value);
        } catch (const UserError& e) {
          line["error"] = e.where().to_string() + ": " + e.what();
          rc = 2;
        }
        std::cout << line.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
      }
      return rc;
    };
  });
}

}  // namespace lmeval::cli
