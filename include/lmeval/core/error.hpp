// Error types: UserError (bad input, exit 2) and RuntimeError (everything else, exit 1).
#pragma once

#include <stdexcept>
#include <string>

namespace lmeval {

// Where a problem was found: a file with line/column, and/or a field (JSON path, YAML key).
struct SourceLocation {
  std::string file;   // empty when the input is not a file
  int line = 0;       // 1-based; 0 = unknown
  int column = 0;     // 1-based; 0 = unknown
  std::string field;  // e.g. "doc_to_text", "$.model.vocab", "row 17 field 'label'"

  bool empty() const { return file.empty() && line == 0 && field.empty(); }
  // "file:line:col: field" in the parts that are known.
  std::string to_string() const;
};

// Bad input from the user: flags, configs, task YAMLs, data files. Exit code 2.
class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message, SourceLocation where = {},
                     std::string expected = {});
  const SourceLocation& where() const { return where_; }
  const std::string& expected() const { return expected_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string expected_;
  std::string message_;
};

// Bad input that is a fact about this machine rather than about the configuration: a dataset,
// a split of it or a file of it that is neither in the data folders nor in the Hub cache (with
// the Hub not to be asked). Exit code 2 as any UserError; `validate` reports it as a note, not
// as a problem of the task being validated.
class DataUnavailable : public UserError {
 public:
  using UserError::UserError;
};

// A failure while running (I/O, model, internal). Exit code 1.
class RuntimeError : public std::runtime_error {
 public:
  explicit RuntimeError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace lmeval
