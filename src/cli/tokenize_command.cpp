// `lm-eval tokenize`: encode lines (or a whole file) with a Hugging Face tokenizer, or decode ids.
#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include "cli/commands.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/tokenizer/tokenizer.hpp"

namespace lmeval::cli {

namespace {

struct TokenizeOptions {
  std::string tokenizer;
  std::string input = "-";
  bool add_special_tokens = false;
  bool decode = false;
  bool skip_special_tokens = false;
  bool json = false;
  bool jsonl = false;
  bool whole = false;
  unsigned threads = 1;
  bool time = false;
};

std::string dump(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::vector<TokenId> parse_ids(const std::string& line, size_t line_no, bool json_array,
                               const std::string& source) {
  std::vector<TokenId> ids;
  SourceLocation where{source == "-" ? "<input>" : source, static_cast<int>(line_no), 0, {}};
  // The tokenizers library takes ids as u32: a negative or larger one raises OverflowError; one
  // past the vocabulary decodes to nothing. Ids past int32 are past every vocabulary, so they are
  // left out rather than wrapped round onto a real token.
  auto add = [&](long long v) {
    if (v < 0 || v > 4294967295LL)
      throw UserError("token id " + std::to_string(v) + " is out of range", where,
                      "token ids from 0 to 4294967295");
    if (v <= std::numeric_limits<TokenId>::max()) ids.push_back(static_cast<TokenId>(v));
  };
  if (json_array || (!line.empty() && line.find('[') != std::string::npos)) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const std::exception&) {
      throw UserError("expected a JSON array of token ids", where);
    }
    if (!j.is_array()) throw UserError("expected a JSON array of token ids", where);
    for (const auto& v : j) {
      if (!v.is_number_integer()) throw UserError("token ids must be integers", where);
      if (v.is_number_unsigned() && v.get<uint64_t>() > 4294967295ULL)
        throw UserError("token id " + v.dump() + " is out of range", where,
                        "token ids from 0 to 4294967295");
      add(v.get<long long>());
    }
    return ids;
  }
  std::istringstream in(line);
  std::string word;
  while (in >> word) {
    try {
      size_t used = 0;
      long long v = std::stoll(word, &used);
      if (used != word.size()) throw std::invalid_argument(word);
      add(v);
    } catch (const UserError&) {
      throw;
    } catch (const std::exception&) {
      throw UserError("not a token id: '" + word + "'", where);
    }
  }
  return ids;
}

int run_tokenize(const TokenizeOptions& o) {
  auto t0 = std::chrono::steady_clock::now();
  auto tok = load_tokenizer(o.tokenizer);
  double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ifstream file;
  std::istream* in = &std::cin;
  if (o.input != "-") {
    std::error_code ec;
    if (std::filesystem::is_directory(o.input, ec))
      throw UserError("input is a folder", SourceLocation{o.input, 0, 0, {}},
                      "a text file, or - for standard input");
    file.open(o.input, std::ios::binary);
    if (!file) throw UserError("cannot read " + o.input, SourceLocation{o.input, 0, 0, {}});
    in = &file;
  }
  std::vector<std::string> lines;
  if (o.whole) {
    std::ostringstream ss;
    ss << in->rdbuf();
    lines.push_back(ss.str());
  } else {
    std::string line;
    while (std::getline(*in, line)) lines.push_back(line);
  }
  if (in->bad())
    throw RuntimeError("cannot read " + (o.input == "-" ? std::string("standard input") : o.input) +
                       ": " + std::strerror(errno));
  std::ostream& out = std::cout;
  if (o.decode) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (o.jsonl && lines[i].empty()) continue;
      std::string text =
          tok->decode(parse_ids(lines[i], i + 1, o.jsonl, o.input), o.skip_special_tokens);
      if (o.jsonl || o.json)
        out << dump(text) << '\n';
      else
        out << text << '\n';
    }
    return 0;
  }
  std::vector<std::string> texts;
  texts.reserve(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!o.jsonl) {
      texts.push_back(std::move(lines[i]));
      continue;
    }
    if (lines[i].empty()) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(lines[i]);
    } catch (const std::exception&) {
      throw UserError("expected one JSON string per line",
                      SourceLocation{o.input, static_cast<int>(i + 1), 0, {}});
    }
    if (!j.is_string()) {
      throw UserError("expected one JSON string per line",
                      SourceLocation{o.input, static_cast<int>(i + 1), 0, {}});
    }
    texts.push_back(j.get<std::string>());
  }
  auto t1 = std::chrono::steady_clock::now();
  std::clock_t c1 = std::clock();
  auto all = encode_batch(*tok, texts, o.add_special_tokens, o.threads);
  if (o.time) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    double cpu = static_cast<double>(std::clock() - c1) / CLOCKS_PER_SEC;
    size_t bytes = 0, n_ids = 0;
    for (const auto& t : texts) bytes += t.size();
    for (const auto& ids : all) n_ids += ids.size();
    std::fprintf(stderr,
                 "load_s %.4f encode_s %.4f encode_cpu_s %.4f bytes %zu texts %zu ids %zu "
                 "MB/s %.3f\n",
                 load_s, s, cpu, bytes, texts.size(), n_ids, s > 0 ? bytes / 1e6 / s : 0.0);
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto& ids = all[i];
    if (o.jsonl) {
      out << dump(nlohmann::ordered_json(ids)) << '\n';
    } else if (o.json) {
      nlohmann::ordered_json j;
      j["text"] = texts[i];
      j["ids"] = ids;
      nlohmann::ordered_json toks = nlohmann::ordered_json::array();
      for (TokenId id : ids) toks.push_back(tok->id_to_token(id).value_or(""));
      j["tokens"] = toks;
      out << dump(j) << '\n';
    } else {
      for (size_t k = 0; k < ids.size(); ++k) out << (k ? " " : "") << ids[k];
      out << '\n';
    }
  }
  return 0;
}

}  // namespace

void add_tokenize_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<TokenizeOptions>();
  auto* cmd = app.add_subcommand(
      "tokenize",
      "Tokenize text with a Hugging Face tokenizer (one line per input line; ids by default)");
  cmd->add_option("--tokenizer", opts->tokenizer,
                  "tokenizer.json, tokenizer.model, or a model folder holding one")
      ->required();
  cmd->add_option("input", opts->input, "input file ('-' or absent: standard input)");
  cmd->add_flag("--add_special_tokens", opts->add_special_tokens,
                "add the tokenizer's special tokens (BOS, ...) as encode(add_special_tokens=True)");
  cmd->add_flag("--decode", opts->decode,
                "decode: each input line holds ids (space-separated or a JSON array)");
  cmd->add_flag("--skip_special_tokens", opts->skip_special_tokens,
                "with --decode: leave special tokens out");
  cmd->add_flag("--json", opts->json,
                "print one JSON object per line: text, ids and tokens (decode: JSON strings)");
  cmd->add_flag("--jsonl", opts->jsonl,
                "for scripts: each input line is a JSON string, each output line a JSON array of "
                "ids (with --decode: arrays in, JSON strings out)");
  cmd->add_flag("--whole", opts->whole, "tokenize the whole input as one text");
  cmd->add_option("--threads", opts->threads, "encoding threads (0: all cores)")
      ->capture_default_str();
  cmd->add_flag("--time", opts->time,
                "print load and encode times (encode only, excluding I/O) to standard error");
  cmd->callback([opts, &action] { action = [opts] { return run_tokenize(*opts); }; });
}

}  // namespace lmeval::cli
