// `lm-eval ls tasks|groups|subtasks|tags|models|metrics|filters|functions`: sorted Markdown tables.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "lmeval/config/flag_checks.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/evaluator/evaluator.hpp"
#include "lmeval/filters/filter.hpp"
#include "lmeval/metrics/registry.hpp"
#include "lmeval/models/reference_model_names.hpp"
#include "lmeval/output/output_writer.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/task_index.hpp"

namespace lmeval::cli {

namespace {

struct LsFlags {
  std::string what;
  std::string include_path;
};

// The YAML path shown in `Config Location`: relative to its task root, prefixed with the root's
// folder name (the reference shows lm_eval/tasks/<...>).
std::string location(const TaskIndex& index, const std::filesystem::path& p) {
  if (p.empty()) return "---";
  // The index's paths were found by walking the roots, so they start with a root as written:
  // string work, where fs::relative would resolve every component of ~10,000 paths on disk.
  const std::string path = p.generic_string();
  for (const auto& root : index.roots()) {
    std::string prefix = root.generic_string();
    if (!prefix.empty() && prefix.back() != '/') prefix += '/';
    if (prefix.size() > 1 && path.size() > prefix.size() &&
        path.compare(0, prefix.size(), prefix) == 0)
      return (root.filename().string().empty() ? root.parent_path().filename() : root.filename())
                 .string() +
             "/" + path.substr(prefix.size());
  }
  for (const auto& root : index.roots()) {
    std::error_code ec;
    auto rel = std::filesystem::relative(p, root, ec);
    if (!ec && !rel.empty() && rel.native().rfind("..", 0) != 0)
      return (root.filename().string().empty() ? root.parent_path().filename() : root.filename())
                 .string() +
             "/" + rel.generic_string();
  }
  return p.string();
}

int ls_main(const LsFlags& f) {
  register_builtins();
  static const std::vector<std::string> kinds = {"tasks",  "groups",  "subtasks", "tags",
                                                 "models", "metrics", "filters",  "functions"};
  if (std::find(kinds.begin(), kinds.end(), f.what) == kinds.end())
    throw UserError("unknown listing '" + f.what + "'", {"", 0, 0, "ls"},
                    "one of tasks, groups, subtasks, tags, models, metrics, filters, functions");
  std::string out = "\n";
  if (f.what == "models") {
    // Every name lm-eval runs, then every other name of the reference's registry, refused.
    std::vector<std::vector<Json>> rows;
    for (const auto& n : ModelRegistry::instance().names()) {
      const auto* e = ModelRegistry::instance().find(n);
      std::string args;
      for (const auto& a : e->known_args) args += (args.empty() ? "" : ", ") + a;
      rows.push_back({n, e->status, e->name == n ? e->description : "alias of " + e->name, args});
    }
    for (const auto& r : refused_model_names())
      // A build without libtorch does not list hf at all: tests and scripts detect the backend
      // by its row (`|hf `); `--model hf` still says why it is absent.
      if (!ModelRegistry::instance().find(r.name) && r.name != "hf" && r.name != "hf-auto" &&
          r.name != "huggingface")
        rows.push_back(
            {r.name, "refused: lm-eval does not run it", r.what, "instead: " + r.instead});
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return a[0].template get<std::string>() < b[0].template get<std::string>();
    });
    out += markdown_table({"Model", "Status", "Description", "model_args"}, rows) + "\n\n";
  } else if (f.what == "metrics") {
    std::vector<std::vector<Json>> rows;
    auto reg = metrics::all();
    std::sort(reg.begin(), reg.end(),
              [](const metrics::Metric* a, const metrics::Metric* b) { return a->name < b->name; });
    for (const auto* m : reg)
      rows.push_back(
          {m->name, m->aggregation, m->higher_is_better ? "true" : "false", m->output_types});
    out += markdown_table({"Metric", "Aggregation", "Higher is better", "Output types"}, rows) +
           "\n\n";
  } else if (f.what == "functions") {
    // The `!function` targets built in: a YAML in folder F may name F's functions and the
    // folder-less ones.
    register_builtin_task_functions();
    std::vector<std::vector<Json>> rows;
    for (const auto& key : FunctionRegistry::instance().names()) {
      auto colon = key.find(':');
      const auto* fn =
          FunctionRegistry::instance().find(key.substr(0, colon), key.substr(colon + 1));
      std::string kind = !fn                   ? ""
                         : fn->process_docs    ? "process_docs"
                         : fn->process_results ? "process_results"
                         : fn->aggregation     ? "aggregation"
                                               : "doc_to_* / gen_prefix";
      rows.push_back({colon == 0 ? "(any)" : key.substr(0, colon), key.substr(colon + 1), kind});
    }
    out += markdown_table({"Task folder", "Function", "Kind"}, rows) + "\n\n";
  } else if (f.what == "filters") {
    std::vector<std::vector<Json>> rows;
    for (const auto& n : FilterRegistry::instance().names()) rows.push_back({n});
    out += markdown_table({"Filter"}, rows) + "\n\n";
  } else {
    EvalConfig cfg;
    if (!f.include_path.empty()) cfg.include_path = f.include_path;
    TaskIndex index = task_index_for(cfg, {}, /*always_reference=*/true);
    bool groups = f.what == "tasks" || f.what == "groups";
    bool tags = f.what == "tasks" || f.what == "tags";
    bool subtasks = f.what == "tasks" || f.what == "subtasks";
    if (groups) {
      std::vector<std::vector<Json>> rows;
      for (const auto& n : index.names_of(IndexKind::Group))
        rows.push_back({n, location(index, index.find(n)->yaml)});
      out += markdown_table({"Group", "Config Location"}, rows) + "\n\n";
    }
    if (tags) {
      std::vector<std::vector<Json>> rows;
      for (const auto& n : index.names_of(IndexKind::Tag)) rows.push_back({n});
      out += markdown_table({"Tag"}, rows) + "\n\n";
    }
    if (subtasks) {
      std::vector<std::vector<Json>> rows;
      for (const auto& n : index.names_of(IndexKind::Task)) {
        const auto* e = index.find(n);
        rows.push_back({n, location(index, e->yaml), e->output_type});
      }
      out += markdown_table({"Task", "Config Location", "Output Type"}, rows) + "\n\n";
    }
    // The reference skips files it cannot read without a word (a debug log); the user's own
    // folder's are named on stderr so that a broken file is not just absent from the list.
    if (!f.include_path.empty()) {
      std::error_code ec;
      std::vector<std::string> roots;
      for (const auto& r : include_path_list(f.include_path))
        roots.push_back(std::filesystem::weakly_canonical(r, ec).string());
      for (const auto& [path, msg] : index.skipped()) {
        std::string p = std::filesystem::weakly_canonical(path, ec).string();
        if (std::any_of(roots.begin(), roots.end(),
                        [&](const std::string& root) { return p.rfind(root, 0) == 0; }))
          std::cerr << "note: not listed: " << msg << "\n";
      }
    }
  }
  std::cout << out << "\n";
  return 0;
}

}  // namespace

void add_ls_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "ls", "List tasks, groups, subtasks, tags, models, metrics, filters or functions");
  auto f = std::make_shared<LsFlags>();
  cmd->add_option("what", f->what,
                  "tasks | groups | subtasks | tags | models | metrics | filters | functions");
  cmd->add_option("--include_path", f->include_path,
                  "Extra folder(s) of task YAMLs, separated by ':'");
  cmd->callback([&action, f, cmd] {
    if (f->what.empty()) {
      action = [cmd] {
        std::cout << cmd->help();
        return 0;
      };
    } else {
      action = [f] { return ls_main(*f); };
    }
  });
}

}  // namespace lmeval::cli
