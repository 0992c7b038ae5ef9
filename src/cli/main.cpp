// lm-eval entry point: legacy argv rewrite, subcommand dispatch, errors mapped to exit codes.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/run_options.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/log.hpp"
#include "lmeval/core/secrets.hpp"
#include "lmeval/core/stop_signal.hpp"

namespace {

bool is_subcommand(const char* s) {
  for (const char* name : {"run", "ls", "validate", "tokenize", "compare", "analyze", "report",
                           "download", "merge", "power", "yaml-dump"}) {
    if (std::strcmp(s, name) == 0) return true;
  }
  return false;
}

// Every message leaves through here: credentials in it (values of api_key=..., header JSON,
// $OPENAI_API_KEY, and the secret values given anywhere on the command line) are masked.
std::vector<std::string>& argv_secrets() {
  static std::vector<std::string> values;
  return values;
}

int report(const char* prefix, const std::string& what, int code) {
  std::string text = lmeval::redact(what, argv_secrets());
  std::fprintf(stderr, "lm-eval: %s%s\n", prefix, text.c_str());
  return code;
}

// Output written to standard output (tables, listings, tokens) is lost when stdout cannot be
// written (a full disk, /dev/full): a command that otherwise succeeded then exits 1 saying so.
int check_stdout(int code) {
  std::cout.flush();
  errno = 0;
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || std::cout.bad();
  if (!failed || code != 0) return code;
  const int err = errno;
  return report("runtime error: ",
                std::string("cannot write standard output: ") +
                    (err != 0 ? std::strerror(err) : "a write failed (a full disk?)"),
                1);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lmeval;
  // A write over the file size limit (ulimit -f) then fails with EFBIG and is reported with the
  // file's name, instead of killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  log::init();
  // The reference's __main__ runs setup_logging() first: $LMEVAL_LOG_LEVEL, else INFO.
  log::apply_level();
  // The reference's legacy form (HarnessCLI.parse_args): `lm-eval --model m --tasks t` means
  // `lm-eval run ...` when more than one argument follows and the first is not a subcommand.
  std::vector<std::string> args(argv, argv + argc);
  for (const auto& a : args)
    for (auto& v : secret_values_in(a)) argv_secrets().push_back(v);
  // Arguments end up in JSON files and messages, which hold UTF-8 only.
  for (size_t i = 1; i < args.size(); ++i) {
    if (auto bad = first_invalid_utf8(args[i]))
      return report("error: ",
                    "argument " + std::to_string(i) + " has byte offset " + std::to_string(*bad) +
                        " that is not valid UTF-8 (expected UTF-8 text)",
                    2);
  }
  if (args.size() > 2 && !is_subcommand(args[1].c_str()) && args[1] != "--help" &&
      args[1] != "-h" && args[1] != "--version") {
    args.insert(args.begin() + 1, "run");
  }

  cli::set_raw_args(args);
  if (args.size() == 2 && args[1] == "run")
    args.emplace_back("--help");  // reference: bare `run` prints help
  CLI::App app{"lm-eval: evaluate language models on standard benchmarks", "lm-eval"};
  app.set_version_flag("--version", std::string(LMEVAL_VERSION));
  app.require_subcommand(0, 1);
  app.fallthrough(false);
  cli::Action action;
  cli::add_run_command(app, action);
  cli::add_ls_command(app, action);
  cli::add_validate_command(app, action);
  cli::add_tokenize_command(app, action);
  cli::add_download_command(app, action);
  cli::add_merge_command(app, action);
  cli::add_compare_command(app, action);
  cli::add_analyze_command(app, action);
  cli::add_report_command(app, action);
  cli::add_power_command(app, action);
  cli::add_yaml_dump_command(app, action);

  try {
    std::vector<std::string> rev(args.rbegin(), args.rend() - 1);
    app.parse(rev);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return report("error: ", std::string(e.what()) + "\nRun with --help for usage.", 2);
  } catch (const UserError& e) {
    return report("error: ", e.what(), 2);
  }
  if (!action) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  }
  try {
    return check_stdout(action());
  } catch (const Interrupted& e) {
    std::fprintf(stderr, "lm-eval: %s\n", e.what());
    return e.exit_code();
  } catch (const UserError& e) {
    return report("error: ", e.what(), 2);
  } catch (const RuntimeError& e) {
    return report("runtime error: ", e.what(), 1);
  } catch (const std::exception& e) {
    return report("internal error: ", e.what(), 1);
  }
}
