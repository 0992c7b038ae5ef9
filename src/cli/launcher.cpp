// torchrun / Slurm launches: the launcher's variables pick this process's shard and GPU; rank 0
// waits for the other parts on the shared output path and merges them.
#include "cli/launcher.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

#include "cli/run_output.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/stop_signal.hpp"

namespace lmeval::cli {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

int env_int(const char* name, int min) {
  const std::string v = *env(name);
  size_t used = 0;
  int n = -1;
  try {
    n = std::stoi(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || n < min)
    throw UserError("environment variable " + std::string(name) + "='" + v +
                        "' is not an integer >= " + std::to_string(min),
                    {"", 0, 0, name}, "the value torchrun or Slurm sets");
  return n;
}

// One launcher's three variables; nullopt unless the world size is set.
std::optional<Launch> read(const char* rank, const char* world, const char* local,
                           std::string run_id) {
  if (!env(world)) return std::nullopt;
  Launch l;
  l.world = env_int(world, 1);
  if (l.world <= 1) return std::nullopt;
  if (!env(rank))
    throw UserError(std::string(world) + " is set but " + rank + " is not", {"", 0, 0, rank},
                    "both, as torchrun or srun set them");
  l.rank = env_int(rank, 0);
  if (l.rank >= l.world)
    throw UserError(std::string(rank) + "=" + std::to_string(l.rank) + " is not below " + world +
                        "=" + std::to_string(l.world),
                    {"", 0, 0, rank}, "0 <= rank < world size");
  l.local_rank = env(local) ? env_int(local, 0) : 0;
  l.source = std::string(rank) + "/" + world + "/" + local;
  // torchrun without a rendezvous id says "none": no id then.
  l.run_id = run_id == "none" ? "" : std::move(run_id);
  return l;
}

}  // namespace

std::optional<Launch> launch_from_env() {
  if (auto l = read("RANK", "WORLD_SIZE", "LOCAL_RANK", env("TORCHELASTIC_RUN_ID").value_or("")))
    return l;
  std::string slurm_id;
  if (auto job = env("SLURM_JOB_ID")) slurm_id = *job + "." + env("SLURM_STEP_ID").value_or("");
  return read("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", slurm_id);
}

void apply_launch(EvalConfig& cfg, const Launch& launch) {
  if (!cfg.output_path)
    throw UserError("a launch of " + std::to_string(launch.world) + " processes (" + launch.source +
                        ") writes one part per process: --output_path is needed",
                    {"", 0, 0, "--output_path"}, "a folder every process (and rank 0) can reach");
  cfg.shard_index = launch.rank + 1;
  cfg.shard_count = launch.world;
  // One GPU per process: a bare `cuda` (--device, or model_args device) means this one's.
  std::string device = cfg.device_given ? cfg.device : "";
  if (!cfg.device_given && cfg.model_args.is_object() && cfg.model_args.contains("device") &&
      cfg.model_args["device"].is_string())
    device = cfg.model_args["device"].get<std::string>();
  if (device == "cuda") {
    // When the launcher already narrowed the visible GPUs (srun --gpus-per-task: each task sees
    // its own as device 0), LOCAL_RANK counts past them: wrap to what this process can see.
    int index = launch.local_rank;
    if (auto visible = env("CUDA_VISIBLE_DEVICES")) {
      const int count = 1 + static_cast<int>(std::count(visible->begin(), visible->end(), ','));
      if (index >= count) index %= count;
    }
    cfg.device = "cuda:" + std::to_string(index);
    cfg.device_given = true;
  }
}

std::vector<fs::path> wait_for_parts(const EvalConfig& cfg, const Launch& launch) {
  double timeout_s = 3600;
  if (auto t = env("LMEVAL_LAUNCH_TIMEOUT")) timeout_s = env_int("LMEVAL_LAUNCH_TIMEOUT", 0);
  std::vector<fs::path> paths;
  for (int i = 1; i <= launch.world; ++i) paths.push_back(partial_path(cfg, i));
  // A part counts once it is there (parts are renamed into place whole) and, when the launcher
  // names its run, carries this run's id: a leftover of an earlier launch is not merged.
  std::map<int, fs::file_time_type> checked;
  std::vector<bool> ready(paths.size(), false);
  const auto start = std::chrono::steady_clock::now();
  auto wait = std::chrono::milliseconds(50);
  for (;;) {
    // The stop-signal handlers are installed by now: Ctrl-C or SIGTERM must end the wait too.
    throw_if_stopped();
    std::string missing;
    for (size_t i = 0; i < paths.size(); ++i) {
      if (ready[i]) continue;
      std::error_code ec;
      auto mtime = fs::last_write_time(paths[i], ec);
      if (!ec && (!checked.count(static_cast<int>(i)) || checked[static_cast<int>(i)] != mtime)) {
        checked[static_cast<int>(i)] = mtime;
        if (launch.run_id.empty()) {
          ready[i] = true;
        } else {
          std::ifstream in(paths[i], std::ios::binary);
          Json part = Json::parse(in, nullptr, false);
          ready[i] = part.is_object() && part.value("launch", "") == launch.run_id;
        }
      }
      if (!ready[i]) missing += (missing.empty() ? "" : ", ") + std::to_string(i + 1);
    }
    if (missing.empty()) return paths;
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited >= timeout_s) {
      std::string all_parts = paths[0].string();
      const auto at = all_parts.rfind("shard_1of");
      if (at != std::string::npos) all_parts.replace(at, 9, "shard_*of");
      throw RuntimeError(
          "rank 0 of " + std::to_string(launch.world) + " (" + launch.source + ") waited " +
          std::to_string(static_cast<long long>(waited)) + " s for part(s) " + missing + " in " +
          paths[0].parent_path().string() +
          (launch.run_id.empty() ? "" : " of run " + launch.run_id) +
          ": a process failed or is still running. Raise LMEVAL_LAUNCH_TIMEOUT (seconds), or "
          "merge them once written: lm-eval merge " +
          all_parts + " --output_path " + *cfg.output_path);
    }
    std::this_thread::sleep_for(wait);
    wait = std::min(wait * 2, std::chrono::milliseconds(1000));
  }
}

}  // namespace lmeval::cli
