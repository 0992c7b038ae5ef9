// `run` flags on CLI11 from the run flag table, and their merge into EvalConfig.
#include "cli/run_options.hpp"

#include <filesystem>

#include <cmath>
#include <limits>

#include "lmeval/config/arg_parsing.hpp"
#include "lmeval/config/yaml_loader.hpp"
#include "lmeval/core/error.hpp"

namespace lmeval::cli {

namespace {

// Number flags read as argparse's type=int / type=float read them (Python's int() and float():
// surrounding whitespace, underscores between digits, "inf"); the text handed on to CLI11's
// conversion is the plain number. A CLI11 validator's message becomes "--flag: message".
template <class T>
CLI::Validator python_int_flag() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        std::string digits = python_int(value);
        if (digits.empty()) return "invalid int value: '" + value + "' (expected an integer)";
        constexpr T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
        errno = 0;
        long long n = std::strtoll(digits.c_str(), nullptr, 10);
        // argparse's int() takes any size; lm-eval holds the flag in a machine integer. Past its
        // end the value is refused here with that end; the flag's own lower bound (e.g. 0 for
        // --num_fewshot) is checked with the run's other settings.
        bool negative = digits[0] == '-';
        if (errno == ERANGE || n < lo || n > hi)
          return "'" + value + "' is out of range (expected an integer " +
                 (negative ? "of at least " + std::to_string(lo)
                           : "of at most " + std::to_string(hi)) +
                 ")";
        value = digits;
        return "";
      },
      "INT");
}

CLI::Validator python_float_flag() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        double d;
        if (!python_float(value, d))
          return "invalid float value: '" + value + "' (expected a number)";
        if (std::isnan(d))
          value = "nan";
        else if (std::isinf(d))
          value = d > 0 ? "inf" : "-inf";
        else {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.17g", d);
          value = buf;
        }
        return "";
      },
      "NUMBER");
}

}  // namespace

static std::vector<std::string>& raw_args_storage() {
  static std::vector<std::string> a;
  return a;
}
const std::vector<std::string>& raw_args() { return raw_args_storage(); }
void set_raw_args(std::vector<std::string> args) { raw_args_storage() = std::move(args); }

void add_run_flags(CLI::App* cmd, RunFlags& f, bool for_validate) {
  for (const auto& o : run_options()) {
    if (o.flags.empty() || (for_validate && !o.for_validate)) continue;
    std::string names;
    for (const auto& n : o.flags) names += (names.empty() ? "" : ",") + n;
    CliValue& v = f.values[o.key];
    CLI::Option* opt = nullptr;
    switch (o.kind) {
      case OptionKind::Flag:
        opt = cmd->add_flag(names, f.switches[o.key], o.help);
        break;
      case OptionKind::Text:
        opt = cmd->add_option(names, v.text, o.help);
        break;
      case OptionKind::OptionalText:
        opt = cmd->add_option(names, v.text, o.help)->expected(0, 1);
        break;
      case OptionKind::Texts:
        opt = cmd->add_option(names, v.texts, o.help)->expected(1, -1);
        break;
      case OptionKind::CommaTexts:
        // Split on ',' by the entry's from_cli, not by CLI11, which drops empty items: the
        // reference looks "a,,b"'s empty name up and fails.
        opt = cmd->add_option(names, v.texts, o.help)->expected(1, -1)->allow_extra_args();
        break;
      case OptionKind::AnyTexts:
        opt = cmd->add_option(names, v.texts, o.help)->expected(0, -1);
        break;
      case OptionKind::Int:
        opt = cmd->add_option(names, v.integer, o.help)->transform(python_int_flag<int>());
        break;
      case OptionKind::Int64:
        opt = cmd->add_option(names, v.integer64, o.help)->transform(python_int_flag<int64_t>());
        break;
      case OptionKind::Number:
        opt = cmd->add_option(names, v.number, o.help)->transform(python_float_flag());
        break;
    }
    if (!o.choices.empty()) opt->check(CLI::IsMember(o.choices));
    f.opts[o.key] = opt;
  }
}

void collect_dict_occurrences(const std::vector<std::string>& args, RunFlags& f) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i], inline_value;
    bool has_inline = false;
    auto eq = flag.find('=');
    if (flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_inline = true;
    }
    std::string key;
    for (const auto& o : run_options()) {
      if (o.kind != OptionKind::Texts) continue;
      for (const auto& n : o.flags)
        if (n == flag) key = o.key;
    }
    if (key.empty()) continue;
    std::vector<std::string> values;
    if (has_inline) values.push_back(inline_value);
    size_t j = i + 1;
    for (; !has_inline && j < args.size(); ++j) {
      const std::string& v = args[j];
      if (v.size() > 1 && v[0] == '-' && !std::isdigit(static_cast<unsigned char>(v[1])) &&
          v[1] != '.')
        break;
      values.push_back(v);
    }
    f.dict_occurrences[key].push_back(values);
    if (!has_inline) i = j - 1;
  }
}

EvalConfig build_eval_config(const RunFlags& f, std::vector<UserError>* collect) {
  auto given = [&](const std::string& key) {
    auto it = f.opts.find(key);
    return it != f.opts.end() && it->second->count() > 0;
  };
  EvalConfig cfg;
  if (given("config")) {
    const std::string& path = f.values.at("config").text;
    if (!std::filesystem::exists(path))
      throw UserError("Config file not found: " + std::filesystem::absolute(path).string(),
                      {path, 0, 0, "--config"}, "an existing YAML file");
    // EvaluatorConfig.from_config checks is_file(): a folder is "not found" there.
    if (std::filesystem::is_directory(path))
      throw UserError(
          "Config file not found: " + std::filesystem::absolute(path).string() + " is a folder",
          {path, 0, 0, "--config"}, "a YAML file");
    YamlFile y = load_yaml(path);
    apply_config_yaml(y, cfg, collect);
  }
  auto apply = [&](bool refused) {
    for (const auto& o : run_options()) {
      if (o.refused != refused || !given(o.key)) continue;
      CliValue v = f.values.at(o.key);
      auto occ = f.dict_occurrences.find(o.key);
      if (occ != f.dict_occurrences.end()) v.occurrences = occ->second;
      o.from_cli(cfg, v);
      cfg.yaml_origin.erase(o.key);  // the flag's value, not the --config file's
    }
  };
  apply(/*refused=*/true);
  apply(/*refused=*/false);
  return cfg;
}

}  // namespace lmeval::cli
