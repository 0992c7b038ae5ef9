// The model_args both engine backends share (engine_args.hpp).
#include "models/api/engine_args.hpp"

#include <algorithm>

#include "lmeval/core/error.hpp"
#include "lmeval/core/secrets.hpp"
#include "lmeval/models/model_args.hpp"

namespace lmeval::api {

namespace ma = model_args;

const ModelArgInfo& engine_arg_info(const std::string& key) {
  using T = ModelArgType;
  static const std::vector<ModelArgInfo> infos = {
      {"max_gen_toks", T::Int, "`256`", "1 or more",
       "Tokens to generate when gen_kwargs do not say"},
      {"prefix_token_id", T::Int, "BOS, else EOS", "", "Token scored before an empty context"},
      {"think_end_token", T::Text, "", "",
       "Generations keep only what follows its last occurrence"},
      {"num_concurrent", T::Int, "`256`", "1 to 65536",
       "Requests in flight per server; lm-eval's own"},
      {"server_timeout", T::Number, "`1800`", "seconds",
       "How long to wait for a server; lm-eval's own"},
  };
  for (const auto& i : infos)
    if (i.key == key) return i;
  throw RuntimeError("engine_arg_info: no row for " + key);
}

void parse_engine_args(const Json& model_args, EngineArgs& a) {
  if (!model_args.is_object()) return;
  auto given = [&](const char* k) { return model_args.contains(k) && !ma::is_none(model_args[k]); };
  if (given("max_gen_toks"))
    a.max_gen_toks = ma::as_int_in_range(model_args["max_gen_toks"], "max_gen_toks", 1, INT32_MAX);
  if (given("prefix_token_id"))
    a.prefix_token_id = ma::as_int(model_args["prefix_token_id"], "prefix_token_id");
  if (given("think_end_token")) a.think_end_token = ma::as_string(model_args["think_end_token"]);
  if (given("num_concurrent"))
    a.num_concurrent =
        ma::as_int_in_range(model_args["num_concurrent"], "num_concurrent", 1, 65536);
  if (given("server_timeout")) {
    a.server_timeout_s = ma::as_double(model_args["server_timeout"], "server_timeout");
    if (!(a.server_timeout_s > 0))
      throw UserError("model_args server_timeout must be more than 0 seconds",
                      {"", 0, 0, "--model_args server_timeout"}, "seconds, more than 0");
  }
}

void append_server_option(std::vector<std::string>& out, const std::string& key, const Json& v,
                          FalseFlag false_flag) {
  if (v.is_null() || ma::is_none(v)) return;
  std::string flag = "--";
  for (char c : key) flag += c == '_' ? '-' : c;
  if (v.is_boolean() || (v.is_string() && (v == "True" || v == "False"))) {
    const bool on = v.is_boolean() ? v.get<bool>() : v == "True";
    if (on)
      out.push_back(flag);
    else if (false_flag == FalseFlag::kNoPrefix)
      out.push_back("--no-" + flag.substr(2));
    return;
  }
  out.push_back(flag);
  out.push_back(v.is_string() ? v.get<std::string>() : v.dump());
}

void pass_other_args(const Json& model_args, const std::vector<std::string>& taken,
                     FalseFlag false_flag, EngineArgs& a) {
  if (!model_args.is_object()) return;
  for (auto it = model_args.begin(); it != model_args.end(); ++it) {
    if (std::find(taken.begin(), taken.end(), it.key()) != taken.end()) continue;
    if (is_secret_key(it.key()) && !ma::is_none(it.value())) {
      a.secrets.push_back(it.value().is_string() ? it.value().get<std::string>()
                                                 : it.value().dump());
      if (it.key() == "api_key") a.api_key = a.secrets.back();
    }
    append_server_option(a.server_options, it.key(), it.value(), false_flag);
  }
}

ServerCommand engine_server_command(std::string what, const std::string& python,
                                    const std::string& module, const std::string& model_flag,
                                    const EngineArgs& a, int port) {
  ServerCommand c;
  c.what = std::move(what);
  c.argv = {python,   "-m",        module,   model_flag,          a.pretrained,
            "--host", "127.0.0.1", "--port", std::to_string(port)};
  c.argv.insert(c.argv.end(), a.server_options.begin(), a.server_options.end());
  c.secrets = a.secrets;
  c.ready_path = "/v1/models";
  c.ready_timeout_s = a.server_timeout_s;
  return c;
}

}  // namespace lmeval::api
