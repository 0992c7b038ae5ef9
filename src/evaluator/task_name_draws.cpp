// Replays the reference's task_name reads on the global random (see the header).
#include "task_name_draws.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "lmeval/core/py_random.hpp"

namespace lmeval {

TaskNameDraws task_name_draws(const TaskSelection& selection) {
  TaskNameDraws d;
  d.after_task.assign(selection.tasks.size(), 0);
  std::map<std::string, size_t> pos;
  for (size_t i = 0; i < selection.tasks.size(); ++i) pos.emplace(selection.tasks[i].name(), i);
  std::set<std::string> group_names, grouped;
  for (const auto& g : selection.groups) group_names.insert(g.name);
  for (const auto& g : selection.groups) {
    grouped.insert(g.leaves.begin(), g.leaves.end());
    // A group is complete once its last leaf is built; nested groups complete before their
    // parent at the same leaf, and Group.add of each only reads its direct task members, so the
    // order among them does not change the count at that point.
    size_t last = 0;
    bool any = false;
    for (const auto& leaf : g.leaves)
      if (auto it = pos.find(leaf); it != pos.end()) last = std::max(last, it->second), any = true;
    if (!any) continue;
    size_t direct = 0;
    for (const auto& c : g.children) direct += !group_names.count(c) && pos.count(c);
    d.after_task[last] += 2 * direct;
  }
  for (const auto& t : selection.tasks) d.after_all += grouped.count(t.name()) ? 2 : 3;
  return d;
}

void draw_task_name_reads(PyRandom& rng, size_t reads) {
  for (size_t i = 0; i < reads * 8; ++i) rng.random();
}

}  // namespace lmeval
