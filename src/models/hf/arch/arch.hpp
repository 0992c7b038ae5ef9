// An architecture of the hf backend: how config.json maps to the shared blocks' description
// (ArchConfig) and where the checkpoint keeps each weight. One file per architecture
// (arch/<model_type>.cpp) defines its ArchSpec; arch/registry.cpp lists them.
// docs/architecture.md shows how to add one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/hf/arch/arch_config.hpp"
#include "models/hf/arch/config_reader.hpp"

namespace lmeval::hf {

class WeightLoader;  // arch/weight_loader.hpp (libtorch)

struct ArchSpec {
  const char* architecture;  // config.json's architectures[0], e.g. "LlamaForCausalLM"
  const char* model_type;    // the model_type transformers' Auto classes build it from
  // The config class's max_position_embeddings (n_positions) default: the max_length of a
  // config.json that does not say (transformers 5: e.g. LlamaConfig().max_position_embeddings);
  // 0 when the config class has none (BLOOM, MPT).
  int64_t default_max_positions;
  // Fills the family's part of the description; the common fields (vocabulary, dtype, special
  // ids) are read before, and the rotary dimension is checked after.
  void (*parse)(const ConfigReader& c, ArchConfig& a);
  // Takes every weight of the checkpoint into the model's tensors.
  void (*load)(WeightLoader& w);
};

// The registered architecture of that name, or nullptr.
const ArchSpec* find_arch(const std::string& architecture);
const std::vector<const ArchSpec*>& arch_registry();

}  // namespace lmeval::hf
