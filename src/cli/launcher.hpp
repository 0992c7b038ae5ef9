// Runs started by the launchers users already have (torchrun, Slurm's srun): each process answers
// its shard of the requests (--shard machinery) and rank 0 merges once every part is written.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/config/eval_config.hpp"

namespace lmeval::cli {

struct Launch {
  int rank = 0;        // 0-based
  int world = 1;       // processes in all
  int local_rank = 0;  // on this machine: the GPU index
  std::string source;  // the variables read, for messages
  std::string
      run_id;  // one launch's id (TORCHELASTIC_RUN_ID, SLURM_JOB_ID.SLURM_STEP_ID); may be empty
};

// torchrun's RANK/WORLD_SIZE/LOCAL_RANK, else Slurm's SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID;
// nullopt when neither names more than one process. Malformed values are a UserError.
std::optional<Launch> launch_from_env();

// This process's part: --shard rank+1/world, and --device cuda becomes cuda:LOCAL_RANK (modulo
// the number of devices CUDA_VISIBLE_DEVICES lists, when it lists fewer).
void apply_launch(EvalConfig& cfg, const Launch& launch);

// Rank 0: waits until --output_path holds the part of every rank of this launch (polling; at most
// $LMEVAL_LAUNCH_TIMEOUT seconds, default 3600), then returns their paths in rank order.
// RuntimeError naming the missing parts when the time runs out.
std::vector<std::filesystem::path> wait_for_parts(const EvalConfig& cfg, const Launch& launch);

}  // namespace lmeval::cli
