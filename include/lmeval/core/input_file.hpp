// Reading a user's input file whole: only a regular file (a symlink is followed to one), never a
// device node, FIFO or socket that would block or never end (/dev/zero, a named pipe), and never
// more than a size limit, so no input can hang a run or fill memory (docs/security.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace lmeval {

// The default limit: far above any real config, task YAML, data file lm-eval reads whole,
// tokenizer or samples file (a 1 GiB JSONL is about ten million rows).
inline constexpr uint64_t kMaxInputFileBytes = uint64_t{1} << 30;

// The whole content of `path`. UserError (exit 2) naming the file when it is missing, a folder,
// not a regular file (what it is instead), larger than `max_bytes`, or unreadable; `what` names
// the file's role in messages ("task YAML", "data file", "samples file") and `expected` what
// would have been right ("a YAML file").
std::string read_input_file(const std::filesystem::path& path, const std::string& what,
                            const std::string& expected, uint64_t max_bytes = kMaxInputFileBytes);

// The same checks without reading: throws as read_input_file does when `path` exists and is not
// a regular file (or a symlink to one). For files read by a parser that opens them itself.
void require_regular_input(const std::filesystem::path& path, const std::string& what,
                           const std::string& expected);

// "a FIFO", "a character device", ... for the file type of a stat's st_mode.
std::string describe_file_kind(unsigned mode);

}  // namespace lmeval
