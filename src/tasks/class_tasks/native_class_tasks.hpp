// The native ports of the reference's Python task classes (tasks/class_task.hpp chooses them).
#pragma once

#include <memory>

#include "lmeval/data/data_source.hpp"
#include "lmeval/tasks/task.hpp"
#include "lmeval/tasks/task_config.hpp"

namespace lmeval::class_tasks {

// squadv2/task.py SQuAD2 (squadv2_task.cpp).
std::shared_ptr<PythonClassTask> make_squadv2(const TaskConfig& cfg, DataSource& data);

}  // namespace lmeval::class_tasks
