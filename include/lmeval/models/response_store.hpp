// The sqlite file behind --use_cache: answers keyed by request hash, safe to share between
// processes (WAL journal, busy timeout) and to kill at any moment (one transaction per batch).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace lmeval {

class ResponseStore {
 public:
  // Opens or creates `file`. A file that is not an lm-eval response cache (not sqlite, another
  // schema, damaged pages) is a RuntimeError naming the file.
  explicit ResponseStore(std::filesystem::path file);
  ~ResponseStore();
  ResponseStore(const ResponseStore&) = delete;
  ResponseStore& operator=(const ResponseStore&) = delete;

  // The stored value of `key`; a row whose checksum does not match is a RuntimeError.
  std::optional<std::string> get(const std::string& key);
  // Stores all pairs in one transaction: after return they survive a SIGKILL.
  void put(const std::vector<std::pair<std::string, std::string>>& rows);

  const std::filesystem::path& file() const { return file_; }

  // How many answers `file` holds (opened read-only); nullopt when it is missing or no cache.
  static std::optional<size_t> count(const std::filesystem::path& file);

 private:
  [[noreturn]] void fail(const std::string& what, bool sqlite_detail = true) const;
  std::string unwritable_reason() const;
  void exec(const char* sql);
  void note_error();  // keeps the failing call's codes for fail()

  std::filesystem::path file_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* get_ = nullptr;
  sqlite3_stmt* put_ = nullptr;
  int last_code_ = 0, last_errno_ = 0;
};

}  // namespace lmeval
