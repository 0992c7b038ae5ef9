// Results/samples files under --output_path (EvaluationTracker's naming).
#include "lmeval/output/output_writer.hpp"

#include <chrono>
#include <ctime>
#include <fstream>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"

namespace lmeval {

namespace fs = std::filesystem;

std::string date_id_now() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H-%M-%S", &tm);
  std::string s = buf;
  if (micros) {
    char m[16];
    std::snprintf(m, sizeof m, ".%06lld", static_cast<long long>(micros));
    s += m;
  }
  return s;
}

void write_text_file(const fs::path& p, const std::string& content) {
  std::ofstream out(p, std::ios::binary);
  if (!out) throw RuntimeError("cannot write " + p.string());
  out << content;
  if (!out) throw RuntimeError("write failed: " + p.string());
}

static void write_file(const fs::path& p, const std::string& content) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  write_text_file(p, content);
}

WrittenFiles write_outputs(const std::string& output_path, const Json& results,
                           const std::vector<std::pair<std::string, std::vector<Json>>>& samples) {
  WrittenFiles w;
  std::string date = date_id_now();
  fs::path op(output_path);
  fs::path dir;
  if (op.extension() == ".json") {
    dir = op.parent_path();
    w.results = dir / (op.stem().string() + "_" + date + ".json");
  } else {
    dir = op / results.value("model_name_sanitized", "model");
    w.results = dir / ("results_" + date + ".json");
  }
  write_file(w.results, py::json_dumps(results, {.indent = 2}));
  for (const auto& [task, lines] : samples) {
    fs::path p = dir / ("samples_" + task + "_" + date + ".jsonl");
    std::string content;
    for (const auto& l : lines) content += py::json_dumps(l) + "\n";
    write_file(p, content);
    w.samples.push_back(p);
  }
  return w;
}

}  // namespace lmeval
