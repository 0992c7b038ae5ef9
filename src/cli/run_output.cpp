// Files, summary line and tables of a finished run; a shard's partial file.
#include "cli/run_output.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <optional>

#include "cli/run_integrations.hpp"
#include "lmeval/core/atomic_file.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/log.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/output/output_writer.hpp"

namespace lmeval::cli {

namespace {

std::string py_dict_repr(const Json& d) { return py::repr(d.is_object() ? d : Json::object()); }

}  // namespace

int report_run(const EvalConfig& cfg, const EvalOutput& out) {
  for (const auto& w : out.write_out) log::info(w);
  if (cfg.show_config) std::cout << py::json_dumps(out.results, {.indent = 2}) << "\n";
  // A failed write still shows the scores (below) before it ends the run with exit 1.
  std::exception_ptr write_failure;
  std::optional<WrittenFiles> written;
  if (cfg.output_path) {
    std::vector<std::pair<std::string, std::vector<Json>>> samples;
    for (auto& s : out.samples) samples.emplace_back(s.task, s.lines);
    try {
      written = write_outputs(*cfg.output_path, out.results, samples);
      spdlog::info("results written to {}", written->results.string());
    } catch (const RuntimeError&) {
      // The reference logs "Could not save results" and exits 0; lm-eval does not hide a lost
      // file (docs/fidelity.md).
      write_failure = std::current_exception();
    }
  }
  log_to_integrations(cfg, out, written ? &*written : nullptr);
  Json model_args = cfg.model_args;
  std::string limit = cfg.limit ? py::float_repr(*cfg.limit) : "None";
  std::string nf = cfg.num_fewshot ? std::to_string(*cfg.num_fewshot) : "None";
  std::string bs =
      cfg.batch_size.is_string() ? cfg.batch_size.get<std::string>() : cfg.batch_size.dump();
  std::string line = cfg.model + " (" + py_dict_repr(model_args) + "), gen_kwargs: (" +
                     py_dict_repr(cfg.gen_kwargs) + "), limit: " + limit + ", num_fewshot: " + nf +
                     ", batch_size: " + bs;
  const Json& sizes = out.results["config"]["batch_sizes"];
  if (sizes.is_array() && !sizes.empty()) {
    std::string s;
    for (const auto& x : sizes) {
      if (!s.empty()) s += ',';
      s += x.dump();
    }
    line += " (" + s + ")";
  }
  std::cout << line << "\n";
  std::cout << make_table(out.results, "results", cfg.show_ci) << "\n";
  if (out.results.contains("groups"))
    std::cout << make_table(out.results, "groups", cfg.show_ci) << "\n";
  std::cout << normalized_scores_note(out.results);
  if (cfg.show_ci) std::cout << statistics_notes(out.results);
  if (out.results.contains("fewshot_seed_variance")) {
    std::string seeds;
    for (int64_t s : cfg.fewshot_seeds) {
      if (!seeds.empty()) seeds += ',';
      seeds += std::to_string(s);
    }
    // Say which score the tables above are: the first seed's, not the seed mean compare and report
    // use.
    std::cout
        << "The tables above are few-shot seed " << cfg.fewshot_seeds.front()
        << " only; `lm-eval compare` and `lm-eval report` use the mean over the seeds (below).\n";
    std::cout << "Across few-shot seeds " << seeds << " (std: sample standard deviation, ddof=1):\n"
              << make_seed_variance_table(out.results) << "\n";
  }
  std::cout.flush();
  if (write_failure) std::rethrow_exception(write_failure);
  return 0;
}

std::filesystem::path partial_path(const EvalConfig& cfg, int index) {
  namespace fs = std::filesystem;
  fs::path op(*cfg.output_path);
  std::string name =
      "shard_" + std::to_string(index) + "of" + std::to_string(cfg.shard_count) + ".json";
  return op.extension() == ".json" ? op.parent_path() / (op.stem().string() + "_" + name)
                                   : op / name;
}

std::filesystem::path write_partial(const EvalConfig& cfg, const Json& partial) {
  std::filesystem::path file = partial_path(cfg, cfg.shard_index);
  // Written whole then renamed: a killed shard never leaves half a part for merge to read.
  write_file_atomic(file, partial.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n");
  return file;
}

}  // namespace lmeval::cli
