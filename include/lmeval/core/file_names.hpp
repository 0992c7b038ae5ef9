// Names that become one component of a file name (a task's samples file): the same name every
// time, never a path.
#pragma once

#include <string>
#include <string_view>

namespace lmeval {

// `name` unchanged when it is already a safe component (the names of every shipped task); else
// '/', '\\', '%' and control characters percent-encoded (%2F ...), so that "../x" and "a/b/c"
// stay in one folder and two names never meet, and a name over 150 bytes cut at a character
// boundary with "-" and the first 16 hex digits of its SHA-256 after it (file systems take 255).
std::string safe_file_component(std::string_view name);

}  // namespace lmeval
