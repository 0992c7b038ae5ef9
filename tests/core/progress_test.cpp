// The progress line against tqdm's own format_meter (goldens from scripts/gen_progress_goldens.py)
// where the bar fits, the narrower forms at 40 and 80 columns, and the log schedule with an
// injected clock (nothing sleeps, nothing is timed).
#include "lmeval/core/progress.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

using lmeval::format_progress_bar;
using lmeval::format_progress_log;
using lmeval::Progress;
using lmeval::ProgressLogSchedule;
using lmeval::ProgressMode;
using lmeval::ProgressState;

namespace {

size_t columns_of(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// 450 of 1000 after 12.3 s, 9988 tokens (812 tok/s), as the hf backend reports.
ProgressState halfway(int64_t tokens = 9988) {
  return {"Running loglikelihood requests", "loglikelihood", 450, 1000, 12.3, tokens};
}

nlohmann::json goldens() {
  return nlohmann::json::parse(lmeval::testing::read_file(lmeval::testing::source_dir() /
                                                          "tests/core/goldens/progress_tqdm.json"));
}

}  // namespace

TEST(Core_Progress, WideTerminalDrawsTqdmsLine) {
  const auto g = goldens();
  ASSERT_GE(g["bars"].size(), 10u);
  for (const auto& c : g["bars"]) {
    ProgressState s{g["label"], "loglikelihood", c["done"], c["total"], c["elapsed"], c["tokens"]};
    EXPECT_EQ(format_progress_bar(s, c["columns"], c["unicode"]), c["line"].get<std::string>())
        << c.dump();
  }
}

TEST(Core_Progress, FormatIntervalAsTqdm) {
  const auto g = goldens();  // kept: a range-for over a temporary's items() would dangle
  for (const auto& [t, want] : g["intervals"].items())
    EXPECT_EQ(lmeval::format_interval(std::stod(t)), want.get<std::string>()) << t;
}

TEST(Core_Progress, Width200KeepsEveryField) {
  std::string line = format_progress_bar(halfway(), 200);
  EXPECT_EQ(columns_of(line), 199u) << line;
  EXPECT_EQ(line.rfind("Running loglikelihood requests:  45%|", 0), 0u) << line;
  EXPECT_NE(line.find("| 450/1000 [00:12<00:15, 36.59it/s, 812 tok/s]"), std::string::npos) << line;
}

// Too narrow for a bar of 10 cells: the bar goes, then the long label.
TEST(Core_Progress, Width80DropsTheBarThenTheLongLabel) {
  EXPECT_EQ(format_progress_bar(halfway(), 80),
            "loglikelihood:  45% 450/1000 [00:12<00:15, 36.59it/s, 812 tok/s]");
  EXPECT_EQ(format_progress_bar(halfway(-1), 80),
            "Running loglikelihood requests:  45% 450/1000 [00:12<00:15, 36.59it/s]");
}

TEST(Core_Progress, Width40KeepsCountsAndEta) {
  EXPECT_EQ(format_progress_bar(halfway(), 40), "loglikelihood:  45% 450/1000 ETA 00:15");
  EXPECT_EQ(format_progress_bar(halfway(), 33), "logl...:  45% 450/1000 ETA 00:15");
  EXPECT_EQ(format_progress_bar(halfway(), 30), "45% 450/1000 ETA 00:15");
  EXPECT_EQ(format_progress_bar(halfway(), 20), "450/1000 ETA 00:15");
  EXPECT_EQ(format_progress_bar(halfway(), 12), "450/1000");
}

TEST(Core_Progress, NeverWiderThanTheTerminal) {
  for (const ProgressState& s :
       {halfway(), halfway(-1),
        ProgressState{"Running generate_until requests", "generate_until", 0, 123456789, 0, -1},
        ProgressState{"x", "", 123456789, 123456789, 1e6, 1LL << 40},
        ProgressState{"", "", 7, 9, 0.01, -1}})
    for (int w = 1; w <= 250; ++w) {
      std::string line = format_progress_bar(s, w);
      EXPECT_LE(columns_of(line), static_cast<size_t>(w > 1 ? w - 1 : 0)) << w << ": " << line;
      EXPECT_EQ(line.find('\n'), std::string::npos);
      if (w >= 25) {
        EXPECT_NE(line.find(std::to_string(s.done) + "/"), std::string::npos) << line;
      }
    }
}

TEST(Core_Progress, LogLine) {
  EXPECT_EQ(format_progress_log(halfway()),
            "Running loglikelihood requests: 450/1000 (45%), 36.59it/s, 812 tok/s, elapsed 00:12, "
            "ETA 00:15");
  EXPECT_EQ(format_progress_log({"Running generate_until requests", "", 0, 40, 0, -1}),
            "Running generate_until requests: 0/40 (0%), ?it/s, elapsed 00:00, ETA ?");
}

TEST(Core_Progress, LogScheduleEveryTenPercentEveryIntervalAndAtTheEnd) {
  ProgressLogSchedule s(30, 10);
  EXPECT_TRUE(s.due(0, 1000, 0));  // the first report: the run has begun
  EXPECT_FALSE(s.due(50, 1000, 1));
  EXPECT_TRUE(s.due(100, 1000, 2));  // 10%
  EXPECT_FALSE(s.due(150, 1000, 3));
  EXPECT_FALSE(s.due(160, 1000, 31.9));
  EXPECT_TRUE(s.due(170, 1000, 32));  // 30 s after the last line
  EXPECT_FALSE(s.due(180, 1000, 40));
  EXPECT_TRUE(s.due(350, 1000, 41));  // 10% to 30% in one batch: one line
  EXPECT_FALSE(s.due(360, 1000, 42));
  EXPECT_TRUE(s.due(1000, 1000, 43));    // the end
  EXPECT_FALSE(s.due(1000, 1000, 100));  // once
  ProgressLogSchedule empty;
  EXPECT_FALSE(empty.due(0, 0, 0));
}

TEST(Core_Progress, LogModeWritesScheduledLines) {
  double now = 0;
  std::string out;
  Progress p(
      "Running loglikelihood requests", "loglikelihood", ProgressMode::Log, [&] { return now; },
      [&](const std::string& t) { out += t; }, [] { return 80; });
  for (size_t done = 0; done <= 20; ++done) {
    now = static_cast<double>(done) * 5;  // 5 s a request: a line every 10% (2 requests)
    p.update(done, 20);
  }
  p.finish();
  size_t lines = 0;
  for (char c : out) lines += c == '\n';
  EXPECT_EQ(lines, 11u) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
  EXPECT_NE(out.find("Running loglikelihood requests: 0/20 (0%), ?it/s, elapsed 00:00, ETA ?\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(": 20/20 (100%), 5.00s/it, elapsed 01:40, ETA 00:00\n"), std::string::npos)
      << out;
}

TEST(Core_Progress, BarModeRedrawsInPlaceAtTheTerminalsWidth) {
  double now = 0;
  int width = 200;
  std::vector<std::string> writes;
  Progress p(
      "Running loglikelihood requests", "loglikelihood", ProgressMode::Bar, [&] { return now; },
      [&](const std::string& t) { writes.push_back(t); }, [&] { return width; });
  p.update(0, 100);
  now = 0.1;
  p.update(1, 100);  // within 0.2 s of the last redraw: skipped
  EXPECT_EQ(writes.size(), 1u);
  now = 0.3;
  width = 40;  // the terminal was resized
  p.update(2, 100);
  ASSERT_EQ(writes.size(), 2u);
  now = 0.31;
  p.update(100, 100);  // the last one is always drawn
  ASSERT_EQ(writes.size(), 3u);
  for (const auto& w : writes) {
    EXPECT_EQ(w.rfind('\r', 0), 0u) << w;
    EXPECT_EQ(w.substr(w.size() - 3), "\x1b[K") << w;
    EXPECT_EQ(w.find('\n'), std::string::npos) << w;
  }
  EXPECT_EQ(columns_of(writes[0]) - 4, 199u) << writes[0];  // \r and \x1b[K are not drawn
  EXPECT_LE(columns_of(writes[1]) - 4, 39u) << writes[1];
  EXPECT_NE(writes[2].find("100/100"), std::string::npos) << writes[2];
  p.finish();
  ASSERT_EQ(writes.size(), 4u);
  EXPECT_EQ(writes[3], "\n");
  p.finish();
  EXPECT_EQ(writes.size(), 4u);
}

TEST(Core_Progress, OffModeWritesNothing) {
  std::string out;
  Progress p(
      "a", "", ProgressMode::Off, [] { return 0.0; }, [&](const std::string& t) { out += t; },
      [] { return 80; });
  p.update(0, 3);
  p.update(3, 3);
  p.finish();
  EXPECT_EQ(out, "");
}

TEST(Core_Progress, ModeAndColumnsFromTheEnvironment) {
  const char* saved = std::getenv("LMEVAL_PROGRESS");
  std::string keep = saved ? saved : "";
  unsetenv("LMEVAL_PROGRESS");
  EXPECT_EQ(lmeval::progress_mode(true), ProgressMode::Bar);
  EXPECT_EQ(lmeval::progress_mode(false), ProgressMode::Log);
  setenv("LMEVAL_PROGRESS", "0", 1);
  EXPECT_EQ(lmeval::progress_mode(true), ProgressMode::Off);
  setenv("LMEVAL_PROGRESS", "1", 1);
  EXPECT_EQ(lmeval::progress_mode(false), ProgressMode::Bar);
  setenv("LMEVAL_PROGRESS", "log", 1);
  EXPECT_EQ(lmeval::progress_mode(true), ProgressMode::Log);
  if (saved)
    setenv("LMEVAL_PROGRESS", keep.c_str(), 1);
  else
    unsetenv("LMEVAL_PROGRESS");

  // Not a terminal: $COLUMNS, else 80.
  int fd = open("/dev/null", O_WRONLY);
  ASSERT_GE(fd, 0);
  const char* cols = std::getenv("COLUMNS");
  std::string keep_cols = cols ? cols : "";
  setenv("COLUMNS", "123", 1);
  EXPECT_EQ(lmeval::terminal_columns(fd), 123);
  setenv("COLUMNS", "wide", 1);
  EXPECT_EQ(lmeval::terminal_columns(fd), 80);
  unsetenv("COLUMNS");
  EXPECT_EQ(lmeval::terminal_columns(fd), 80);
  if (cols) setenv("COLUMNS", keep_cols.c_str(), 1);
  close(fd);
}
