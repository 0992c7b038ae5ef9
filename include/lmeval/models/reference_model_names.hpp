// The reference's model names that lm-eval does not run, why, and what to use instead; the check
// that refuses them (and unknown names) before a run loads any data.
#pragma once

#include <string>
#include <vector>

namespace lmeval {

struct RefusedModelName {
  std::string name;     // as the reference registers it (lm_eval/models/__init__.py)
  std::string what;     // what the reference's backend is
  std::string instead;  // what to run with lm-eval instead
};

// Every name of the reference's registry that lm-eval's registry lacks, sorted by name.
const std::vector<RefusedModelName>& refused_model_names();
const RefusedModelName* find_refused_model(const std::string& name);

// Throws UserError (exit 2, naming --model) for a name the registry lacks: the reference's names
// say that lm-eval does not run them and what to use instead; others list the names it runs.
// Called before any task or dataset is loaded.
void check_model_name(const std::string& name);

// The message check_model_name would throw, or "" when the registry has the name (validate
// collects it as a problem rather than throwing).
std::string model_name_problem(const std::string& name, std::string* expected);

}  // namespace lmeval
