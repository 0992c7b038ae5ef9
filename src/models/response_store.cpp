// ResponseStore: one sqlite table of (key, value, checksum) plus a format marker.
#include "lmeval/models/response_store.hpp"

#include <sqlite3.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "lmeval/core/error.hpp"
#include "lmeval/core/sha256.hpp"

namespace lmeval {

namespace {

constexpr const char* kFormat = "lm-eval response cache 1";

// A row's checksum: pages can be intact while a value was altered, and a number read back
// wrong would be a silently wrong score.
std::string checksum(const std::string& key, const std::string& value) {
  return sha256_hex(key + '\x1f' + value).substr(0, 16);
}

std::string column_text(sqlite3_stmt* st, int i) {
  const unsigned char* p = sqlite3_column_text(st, i);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<size_t>(sqlite3_column_bytes(st, i)))
           : std::string();
}

}  // namespace

ResponseStore::ResponseStore(std::filesystem::path file) : file_(std::move(file)) {
  std::error_code ec;
  if (std::filesystem::is_directory(file_, ec))
    throw RuntimeError("response cache " + file_.string() + " is a folder" +
                       " (expected a file written by lm-eval --use_cache, or no file there: give "
                       "--use_cache a path prefix whose _rank<N>.db is not a folder)");
  int rc =
      sqlite3_open_v2(file_.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) fail("cannot open");
  // Another process may hold the write lock for one batch; wait rather than fail.
  sqlite3_busy_timeout(db_, 60000);
  // Switching a new file to WAL takes an exclusive lock, and when two processes open the same
  // new file at once SQLite answers one of them SQLITE_BUSY at once, without the busy handler
  // (it would deadlock): retry for as long as the busy timeout.
  for (int waited_ms = 0;; waited_ms += 20) {
    int prc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    if (prc == SQLITE_OK) break;
    if ((prc != SQLITE_BUSY && prc != SQLITE_LOCKED) || waited_ms >= 60000)
      fail("PRAGMA journal_mode=WAL failed");
    usleep(20 * 1000);
  }
  // WAL with synchronous=NORMAL loses nothing committed when the process is killed (only on
  // power loss), and costs no fsync per batch.
  exec("PRAGMA synchronous=NORMAL");
  {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, "PRAGMA quick_check", -1, &st, nullptr) != SQLITE_OK)
      fail("cannot check");
    std::string verdict;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
      verdict += (verdict.empty() ? "" : "; ") + column_text(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) fail("integrity check failed");
    if (verdict != "ok") fail("damaged database (" + verdict.substr(0, 200) + ")");
  }
  exec("BEGIN IMMEDIATE");
  std::set<std::string> tables;
  {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db_, "SELECT name FROM sqlite_master WHERE type='table'", -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) tables.insert(column_text(st, 0));
    sqlite3_finalize(st);
  }
  if (!tables.empty()) {
    std::string format;
    if (tables == std::set<std::string>{"lmeval_meta", "responses"}) {
      sqlite3_stmt* st = nullptr;
      sqlite3_prepare_v2(db_, "SELECT value FROM lmeval_meta WHERE name='format'", -1, &st,
                         nullptr);
      if (sqlite3_step(st) == SQLITE_ROW) format = column_text(st, 0);
      sqlite3_finalize(st);
    }
    if (format != kFormat) {
      exec("ROLLBACK");
      std::string names;
      for (const auto& t : tables) names += (names.empty() ? "" : ", ") + t;
      fail(tables.count("unnamed")
               ? "a Python lm-eval (SqliteDict) cache, which lm-eval cannot read"
               : "a sqlite database with other tables (" + names + ")",
           false);
    }
  } else {
    exec("CREATE TABLE lmeval_meta(name TEXT PRIMARY KEY, value TEXT NOT NULL)");
    exec(
        "CREATE TABLE responses(key TEXT PRIMARY KEY, value TEXT NOT NULL, checksum TEXT NOT "
        "NULL)");
    exec((std::string("INSERT INTO lmeval_meta VALUES('format', '") + kFormat + "')").c_str());
  }
  exec("COMMIT");
  if (sqlite3_prepare_v2(db_, "SELECT value, checksum FROM responses WHERE key=?1", -1, &get_,
                         nullptr) != SQLITE_OK ||
      sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO responses VALUES(?1, ?2, ?3)", -1, &put_,
                         nullptr) != SQLITE_OK)
    fail("cannot prepare statements");
}

ResponseStore::~ResponseStore() {
  sqlite3_finalize(get_);
  sqlite3_finalize(put_);
  sqlite3_close(db_);
}

// Why the cache's location cannot be written, or empty when it can: the file itself, or its folder
// (sqlite creates the -wal and -shm files beside it, and the file on first use).
std::string ResponseStore::unwritable_reason() const {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(file_, ec) && ::access(file_.c_str(), W_OK) != 0)
    return file_.string() + ": " + std::strerror(errno);
  fs::path dir = file_.has_parent_path() ? file_.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) return dir.string() + " is not a folder";
  if (::access(dir.c_str(), W_OK) != 0) return dir.string() + ": " + std::strerror(errno);
  return "";
}

void ResponseStore::fail(const std::string& what, bool sqlite_detail) const {
  std::string detail =
      db_ && sqlite_detail ? std::string(": ") + sqlite3_errmsg(db_) : std::string();
  // A full disk (or quota, or file size limit) is not a damaged cache either.
  if (db_) {
    // As the failing call left them (a ROLLBACK since may have reset sqlite's).
    const int code = last_code_ ? last_code_ : sqlite3_extended_errcode(db_);
    const int sys = last_errno_ ? last_errno_ : sqlite3_system_errno(db_);
    if ((code & 0xff) == SQLITE_FULL || sys == ENOSPC || sys == EDQUOT || sys == EFBIG)
      throw RuntimeError("response cache " + file_.string() + ": " + what + detail +
                         "; the disk holding it is full (" + std::strerror(sys ? sys : ENOSPC) +
                         "): free space there or give --use_cache a path on another disk (the "
                         "answers stored so far are kept; deleting the cache would not help)");
  }
  // A read-only location is not a damaged cache: deleting the file would not help.
  if (std::string why = unwritable_reason(); !why.empty())
    throw RuntimeError(
        "response cache " + file_.string() + ": " + what + detail +
        "; its location is read-only (" + why +
        ") (expected a writable file and folder for --use_cache: sqlite keeps its -wal and " +
        "-shm files beside the cache)");
  throw RuntimeError("response cache " + file_.string() + ": " + what + detail +
                     " (expected a file written by lm-eval --use_cache; delete it to start over)");
}

void ResponseStore::note_error() {
  const int e = errno;  // before any other call: sqlite does not keep it for every write error
  last_code_ = sqlite3_extended_errcode(db_);
  last_errno_ = sqlite3_system_errno(db_);
  // A failed write past a file size limit (EFBIG) or into a full disk or quota, as the write
  // left it: sqlite reports SQLITE_IOERR_WRITE with no system errno for some of them.
  if (!last_errno_ && (last_code_ & 0xff) == SQLITE_IOERR &&
      (e == ENOSPC || e == EDQUOT || e == EFBIG))
    last_errno_ = e;
}

void ResponseStore::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    note_error();
    std::string msg = err ? err : "";
    sqlite3_free(err);
    if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    fail(std::string(sql).substr(0, 40) + " failed");
  }
}

std::optional<std::string> ResponseStore::get(const std::string& key) {
  sqlite3_reset(get_);
  sqlite3_bind_text(get_, 1, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
  int rc = sqlite3_step(get_);
  if (rc == SQLITE_DONE) return std::nullopt;
  if (rc != SQLITE_ROW) fail("cannot read key " + key);
  std::string value = column_text(get_, 0);
  if (column_text(get_, 1) != checksum(key, value))
    fail("row " + key + " does not match its checksum", false);
  sqlite3_reset(get_);
  return value;
}

void ResponseStore::put(const std::vector<std::pair<std::string, std::string>>& rows) {
  if (rows.empty()) return;
  exec("BEGIN IMMEDIATE");
  for (const auto& [key, value] : rows) {
    std::string sum = checksum(key, value);
    sqlite3_reset(put_);
    sqlite3_bind_text(put_, 1, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
    sqlite3_bind_text(put_, 2, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    sqlite3_bind_text(put_, 3, sum.data(), static_cast<int>(sum.size()), SQLITE_TRANSIENT);
    if (sqlite3_step(put_) != SQLITE_DONE) {
      note_error();
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      fail("cannot write key " + key);
    }
  }
  exec("COMMIT");
}

std::optional<size_t> ResponseStore::count(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  sqlite3* db = nullptr;
  std::optional<size_t> n;
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM responses", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      n = static_cast<size_t>(sqlite3_column_int64(st, 0));
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return n;
}

}  // namespace lmeval
