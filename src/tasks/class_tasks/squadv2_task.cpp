// The reference's squadv2 task (lm_eval/tasks/squadv2/task.py, class SQuAD2, a ConfigurableTask
// subclass) without Python: the three calls the evaluator makes of a class task object
// (configure, build, score: python_plugin.cpp's ClassTask gives the same JSON for the Python
// class), each step beside the reference method it reproduces.
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/core/sha256.hpp"
#include "tasks/class_tasks/native_class_tasks.hpp"
#include "tasks/functions/squad_v2_metric.hpp"

namespace lmeval::class_tasks {

namespace {

// SQuAD2.process_results' keys, in its order (also aggregation() and higher_is_better()).
constexpr const char* kMetrics[] = {"exact",       "f1",       "HasAns_exact", "HasAns_f1",
                                    "NoAns_exact", "NoAns_f1", "best_exact",   "best_f1"};
constexpr int kVersion = 3;  // SQuAD2.VERSION, its config's metadata.version
constexpr const char* kDataset = "lighteval/squad_v2";  // DATASET_PATH (DATASET_NAME None)

// sanitize_list: every leaf that is not a list becomes its str().
Json sanitized(const Json& v) {
  if (!v.is_array()) return py::str(v);
  Json a = Json::array();
  for (const auto& x : v) a.push_back(sanitized(x));
  return a;
}

class Squad2Task : public PythonClassTask {
 public:
  Squad2Task(const TaskConfig& cfg, DataSource& data)
      : name_(cfg.name()),
        cls_(function_ref_name(cfg.python_class)),
        yaml_(cfg.source.path.string()),
        where_{cfg.python_class.value("file", ""), cfg.python_class.value("line", 0), 0, "class"} {
    // ConfigurableTask.__init__ -> download(): datasets.load_dataset(DATASET_PATH); eval_docs is
    // validation_docs() (has_test_docs is False). Its few-shot pool, the train split, is not read:
    // the class cannot build a few-shot context (build below), so no run uses it.
    DatasetRef ref{kDataset, std::nullopt, Json::object(), cfg.source.path.parent_path()};
    std::optional<std::vector<Doc>> rows;
    const std::string what = "task " + name_ + " (class `" + cls_ +
                             "`) needs split 'validation' of "
                             "dataset " +
                             std::string(kDataset) + " (the documents it evaluates)";
    try {
      rows = data.load_split(ref, "validation");
    } catch (const DataUnavailable& e) {
      throw DataUnavailable(what + ": " + e.message(), e.where(), e.expected());
    } catch (const UserError& e) {
      throw UserError(what + ": " + e.message(), e.where(), e.expected());
    } catch (const RuntimeError& e) {
      throw RuntimeError(where_.to_string() + ": " + what + ", which is not in " + data.describe() +
                         ": " + e.what() +
                         ". Put it under --data_dir as <org>/<name>/<config>/<split>.jsonl.");
    }
    const std::string expected =
        "the dataset under --data_dir as <org>/<name>/<config>/<split>.jsonl";
    if (!rows)
      throw DataUnavailable(what + ", which is not in " + data.describe(), where_, expected);
    if (rows->empty())
      throw UserError(what + ", which is empty (the reference's constructor reads its document 0)",
                      where_, expected);
    docs_ = std::move(*rows);
    // "Test One Doc": the constructor renders document 0.
    doc_to_text(docs_[0], 0);
    doc_to_target(docs_[0], 0);
  }

  Json call(const std::string& method, const Json& kwargs, const Chat* chat) override {
    if (method == "configure") return configure(kwargs);
    if (method == "build") return build(kwargs, chat);
    if (method == "score") return score(kwargs);
    throw RuntimeError("class task " + name_ + ": no method " + method);
  }

 private:
  [[noreturn]] void raise(const std::string& method, const std::string& error) const {
    throw UserError("task " + name_ + " (class `" + cls_ + "`, " + yaml_ + "): its " + method +
                        " raised " + error,
                    where_, "a Task class that runs without raising");
  }

  const std::string& field(const Doc& doc, const char* key, size_t pos) const {
    if (!doc.is_object() || !doc.contains(key) || !doc[key].is_string())
      throw UserError("task " + name_ + ": document " + std::to_string(pos) + " of " + kDataset +
                          " has no string field '" + key + "' (SQuAD2 reads it)",
                      where_, "rows with title, context, question (strings) and answers.text");
    return doc[key].get_ref<const std::string&>();
  }

  // SQuAD2.doc_to_text.
  std::string doc_to_text(const Doc& doc, size_t pos) const {
    return "Title: " + field(doc, "title", pos) + "\n\nBackground: " + field(doc, "context", pos) +
           "\n\nQuestion: " + field(doc, "question", pos) + "\n\nAnswer:";
  }

  const Json& answer_texts(const Doc& doc, size_t pos) const {
    const bool ok = doc.is_object() && doc.contains("answers") && doc["answers"].is_object() &&
                    doc["answers"].contains("text") && doc["answers"]["text"].is_array();
    if (!ok)
      throw UserError("task " + name_ + ": document " + std::to_string(pos) + " of " + kDataset +
                          " has no answers.text list (SQuAD2.doc_to_target reads it)",
                      where_, "rows with answers: {text: [...], answer_start: [...]}");
    for (const auto& t : doc["answers"]["text"])
      if (!t.is_string())
        throw UserError("task " + name_ + ": document " + std::to_string(pos) + " of " + kDataset +
                            " has an answer that is not a string",
                        where_, "answers.text: a list of strings");
    return doc["answers"]["text"];
  }

  // SQuAD2.doc_to_target: " " + the first answer, else " unanswerable".
  std::string doc_to_target(const Doc& doc, size_t pos) const {
    const Json& texts = answer_texts(doc, pos);
    std::string out = " ";
    out += texts.empty() ? std::string_view("unanswerable")
                         : std::string_view(texts[0].get_ref<const std::string&>());
    return out;
  }

  // simple_evaluate's settings through the class's set_config / override_metric (python_plugin's
  // ClassTask.configure); the sampler's seed is moot (no few-shot context can be built).
  Json configure(const Json& kw) {
    const Json& gen = kw.value("gen_kwargs", Json());
    if (gen.is_object())  // output_type is generate_until: generation_kwargs.update(gen_kwargs)
      for (auto it = gen.begin(); it != gen.end(); ++it) generation_kwargs_[it.key()] = it.value();
    if (kw.value("predict_only", false)) predict_only_ = true;
    const Json& n = kw.value("num_fewshot", Json());
    if (!n.is_null()) {
      if (num_fewshot_ != Json(0)) num_fewshot_ = n;
    } else if (num_fewshot_.is_null()) {
      num_fewshot_ = 0;
    }
    return num_fewshot_;
  }

  // Task.doc_iterator: (doc_id, position) of the documents evaluated.
  std::vector<std::pair<int64_t, size_t>> doc_iterator() const {
    std::vector<std::pair<int64_t, size_t>> out;
    if (samples_.is_array() && !samples_.empty()) {
      std::set<int64_t> wanted;
      for (const auto& e : samples_) {
        if (!e.is_number_integer() || e.get<int64_t>() >= static_cast<int64_t>(docs_.size()))
          raise("build",
                "AssertionError: Elements of --samples should be in the interval [0,k-1] "
                "where k is the number of total examples. In this case, k=" +
                    std::to_string(docs_.size()) + ".");
        wanted.insert(e.get<int64_t>());
      }
      for (size_t i = 0; i < docs_.size(); ++i)
        if (wanted.count(static_cast<int64_t>(i)))
          out.emplace_back(static_cast<int64_t>(out.size()), i);
      return out;
    }
    // `int(limit) if limit else None`: a limit of 0 reads every document.
    size_t n = docs_.size();
    if (limit_ && *limit_ > 0) n = std::min(n, static_cast<size_t>(*limit_));
    for (size_t i = 0; i < n; ++i) out.emplace_back(static_cast<int64_t>(i), i);
    return out;
  }

  // evaluate(): get_sample_size, then build_all_requests (fewshot_context, construct_requests)
  // with the run's chat settings; each --fewshot_seeds pass keeps its own Instances.
  Json build(const Json& kw, const Chat* chat) {
    limit_.reset();
    if (const Json& l = kw.value("limit", Json()); l.is_number()) {
      const double v = l.get<double>();
      const double n = static_cast<double>(docs_.size());
      limit_ = static_cast<int64_t>(v < 1.0 ? std::ceil(n * v) : std::trunc(v));
    }
    samples_ = kw.value("samples", Json());
    const Json& si = kw.value("system_instruction", Json());
    // fewshot_context: maybe_delimit(system_instruction, description "") is the system message,
    // joined to the question with no delimiter (build_qa_turn: no answer, no gen_prefix); with a
    // chat template, [system, user] rendered with add_generation_prompt (no gen_prefix), which
    // multiturn_to_singleturn leaves as they are at zero shots.
    const std::string system = si.is_string() ? si.get<std::string>() : "";
    const bool with_chat = kw.value("apply_chat_template", false) && chat && *chat;
    const int64_t shots = num_fewshot_.is_number_integer() ? num_fewshot_.get<int64_t>() : 0;
    Json out = Json::array();
    size_t built = 0;
    for (const auto& [doc_id, pos] : doc_iterator()) {
      // ConfigurableTask.fewshot_context calls self.doc_to_text(fs_doc, fewshot_cfg.doc_to_text),
      // which SQuAD2's one-argument doc_to_text refuses: the reference cannot run it with shots.
      if (shots > 0)
        raise("build",
              "TypeError: SQuAD2.doc_to_text() takes 2 positional arguments but 3 were given "
              "(ConfigurableTask.fewshot_context passes a few-shot document's doc_to_text the "
              "fewshot_config's as well: the class runs only with --num_fewshot 0)");
      if (limit_ && built >= static_cast<size_t>(std::max<int64_t>(*limit_, 0))) break;
      std::string ctx;
      if (with_chat) {
        Json messages = Json::array();
        if (!system.empty()) messages.push_back({{"role", "system"}, {"content", system}});
        messages.push_back({{"role", "user"}, {"content", doc_to_text(docs_[pos], pos)}});
        ctx = (*chat)(messages, true);
      } else {
        ctx = system + doc_to_text(docs_[pos], pos);
      }
      // SQuAD2.construct_requests: both Instances with idx 0, repeats 1.
      out.push_back(Json::array({"generate_until", doc_id, 0,
                                 Json::array({ctx, Json{{"until", Json::array({"\n"})}}}), 1}));
      out.push_back(
          Json::array({"loglikelihood", doc_id, 0, Json::array({ctx, " unanswerable"}), 1}));
      ++built;
    }
    if (out.empty()) raise("build", "ValueError: task.build_requests() did not find any docs!");
    passes_[kw.value("pass_index", Json(0)).get<int64_t>()] = out;
    return out;
  }

  // apply_filters (the default take_first), process_results per document in doc_iterator order,
  // the sample records, and _compute_task_aggregations over SQuAD2.aggregation().
  Json score(const Json& kw) {
    const Json& resps = kw.at("resps");
    const Json& requests = passes_[kw.value("pass_index", Json(0)).get<int64_t>()];
    if (resps.size() != requests.size())
      raise("score", "ValueError: " + std::to_string(resps.size()) + " responses for " +
                         std::to_string(requests.size()) + " requests");
    const bool log_samples = kw.value("log_samples", false);
    // The Instances of each document, in idx order (both are idx 0: generate_until first).
    std::map<int64_t, std::vector<size_t>> by_doc;
    for (size_t i = 0; i < requests.size(); ++i) {
      if (!resps[i].is_array() || resps[i].empty())
        raise("score", "IndexError: list index out of range (no response for request " +
                           std::to_string(i) + ")");
      by_doc[requests[i][1].get<int64_t>()].push_back(i);
    }
    std::vector<tasks::squad::SquadV2Prediction> predictions;
    std::vector<tasks::squad::SquadV2Reference> references;
    Json samples = Json::array();
    for (const auto& [doc_id, pos] : doc_iterator()) {
      const Doc& doc = docs_[pos];
      const auto& ins = by_doc[doc_id];
      if (ins.size() != 2) raise("score", "ValueError: not enough values to unpack");
      // SQuAD2.process_results: the continuation, and exp of " unanswerable"'s loglikelihood.
      const Json& continuation = resps[ins[0]][0];
      const Json& ll = resps[ins[1]][0];
      if (!continuation.is_string() || !ll.is_array() || ll.empty() || !ll[0].is_number())
        raise("score",
              "TypeError: SQuAD2.process_results expects (continuation, (logprob, "
              "is_greedy))");
      const double no_answer = std::exp(ll[0].get<double>());
      const std::string& id = field(doc, "id", pos);
      Json prediction = {
          {"id", id}, {"prediction_text", continuation}, {"no_answer_probability", no_answer}};
      Json reference = {{"id", id}, {"answers", doc["answers"]}};
      predictions.push_back({id, continuation.get<std::string>(), no_answer});
      std::vector<std::string> texts;
      for (const auto& t : answer_texts(doc, pos)) texts.push_back(t.get<std::string>());
      references.push_back({id, std::move(texts)});
      if (log_samples) {
        const int64_t true_id = samples_.is_array() && !samples_.empty()
                                    ? samples_.at(static_cast<size_t>(doc_id)).get<int64_t>()
                                    : doc_id;
        const std::string target = doc_to_target(doc, pos);
        Json s = Json::object();
        s["doc_id"] = true_id;
        s["doc"] = doc;
        s["target"] = target;
        Json args = Json::object(), raw = Json::array(), filtered = Json::array();
        for (size_t i = 0; i < ins.size(); ++i) {
          const Json& a = requests[ins[i]][3];
          args["gen_args_" + std::to_string(i)] = {{"arg_0", a[0]}, {"arg_1", a[1]}};
          raw.push_back(sanitized(resps[ins[i]]));
          filtered.push_back(sanitized(resps[ins[i]][0]));
        }
        s["arguments"] = args;
        s["resps"] = raw;
        s["filtered_resps"] = filtered;
        s["filter"] = "none";
        s["metrics"] = Json::array();
        for (const char* m : kMetrics) s["metrics"].push_back(m);
        s["doc_hash"] = sha256_hex(py::json_dumps(doc, {.indent = 2}));
        s["prompt_hash"] = sha256_hex(requests[ins[0]][3][0].get<std::string>());
        s["target_hash"] = sha256_hex(target);
        for (const char* m : kMetrics) s[m] = Json::array({prediction, reference});
        samples.push_back(std::move(s));
      }
    }
    // aggregation(): _squad_agg(key) = evaluate's squad_v2 over every document, .get(key, 0).
    const Json scores = tasks::squad::squad_v2_compute(predictions, references);
    Json results = {{"name", name_}, {"alias", name_}, {"sample_len", predictions.size()}};
    Json higher = Json::object();
    for (const char* m : kMetrics) {
      results[std::string(m) + ",none"] = scores.contains(m) ? scores[m] : Json(0);
      // stderr_for_metric knows no stderr of a functools.partial.
      results[std::string(m) + "_stderr,none"] = "N/A";
      higher[m] = true;
    }
    Json out = {{"results", results},
                {"config", dump_config()},
                {"version", kVersion},
                {"num_fewshot", num_fewshot_.is_null() ? Json(0) : num_fewshot_},
                {"higher_is_better", higher},
                {"n_samples", {{"original", docs_.size()}, {"effective", predictions.size()}}}};
    out["samples"] = std::move(samples);
    return out;
  }

  // TaskConfig.to_dict of the class's config: TaskConfig(metadata={"version": 3}) with the task
  // name and the run's settings.
  Json dump_config() const {
    TaskConfig c;
    c.set(TaskField::task, name_);
    if (!num_fewshot_.is_null()) c.set(TaskField::num_fewshot, num_fewshot_);
    if (predict_only_) {  // override_metric("bypass")
      c.set(TaskField::metric_list, Json::array({Json{{"metric", "bypass"}}}));
      c.set(TaskField::process_results, "process_results");
    }
    c.set(TaskField::generation_kwargs, generation_kwargs_);
    c.set(TaskField::metadata, {{"version", kVersion}});
    return task_config_to_results(c);
  }

  std::string name_, cls_, yaml_;
  SourceLocation where_;
  std::vector<Doc> docs_;
  // TaskConfig.__post_init__'s default_gen_kwargs(fewshot_delimiter) for generate_until.
  Json generation_kwargs_ = {{"temperature", 0.0},
                             {"do_sample", false},
                             {"max_gen_toks", 256},
                             {"until", Json::array({"\n\n"})}};
  Json num_fewshot_;
  bool predict_only_ = false;
  std::optional<int64_t> limit_;
  Json samples_;
  std::map<int64_t, Json> passes_;  // pass_index -> its requests
};

}  // namespace

std::shared_ptr<PythonClassTask> make_squadv2(const TaskConfig& cfg, DataSource& data) {
  return std::make_shared<Squad2Task>(cfg, data);
}

}  // namespace lmeval::class_tasks
