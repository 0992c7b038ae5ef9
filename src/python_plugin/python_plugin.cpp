// liblmeval_python.so: an embedded CPython (Debian's libpython3 through pybind11) that runs the
// reference's Python task helpers and the hf backend's models through transformers. lm-eval opens
// it with dlopen only when a task names a `!function` with no C++ port of its exact source
// (src/tasks/functions/python_functions.cpp) or an hf model needs transformers
// (src/models/hf/python_model.cpp), through core/embedded_python.cpp.
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "lmeval/core/python_plugin_api.hpp"
#include "transformers_model_py.hpp"  // kTransformersModelPy: transformers_model.py, generated

namespace py = pybind11;

namespace {

using lmeval::Json;
using lmeval::PythonCall;

// Python-side helpers: importing by path as lm_eval/tasks/_yaml_loader.py does, the Dataset the
// reference's load gives process_docs, and the one line naming a failure's last frame.
constexpr const char* kHelpers = R"PY(
import importlib.util, inspect, json, os, sys, traceback
from pathlib import Path

# A helper that calls os._exit would end lm-eval on the spot (exit 0, no results, no message):
# in lm-eval's own process it raises instead, so the helper's error names its task, file and
# function. Forked children (multiprocessing) still exit.
_lmeval_pid = os.getpid()
_real_exit = os._exit

def _guarded_exit(status=0, *args, **kwargs):
    if os.getpid() != _lmeval_pid:
        _real_exit(status, *args, **kwargs)
    raise RuntimeError(f"os._exit({status!r}) was called inside lm-eval, which it would end "
                       "without results")

os._exit = _guarded_exit

# lm-eval's stop handlers (SIGINT, SIGTERM, SIGHUP) stay in lm-eval's own process: a helper that
# ignored or took them made the run unstoppable. The helper's handler is remembered (and returned
# by the next call), not installed. Forked children set theirs.
import signal as _signal
_real_signal = _signal.signal
_kept_handlers = {}

def _guarded_signal(signalnum, handler):
    if os.getpid() == _lmeval_pid and signalnum in (_signal.SIGINT, _signal.SIGTERM,
                                                    _signal.SIGHUP):
        previous = _kept_handlers.get(signalnum, _signal.getsignal(signalnum))
        _kept_handlers[signalnum] = handler
        return previous
    return _real_signal(signalnum, handler)

_signal.signal = _guarded_signal

def load_function(module_file, qualified):
    # _yaml_loader._import_func_in_yml / _load_module_with_cache: the module next to the YAML,
    # named after its place under lm_eval/tasks/ (so its relative imports resolve) or its path.
    fn_name = qualified.rpartition(".")[2]
    path = Path(module_file).resolve()
    if not path.exists():
        mod_path = qualified.rpartition(".")[0]
        module = __import__(mod_path, fromlist=[fn_name])
        return getattr(module, fn_name)
    s = str(path)
    i = s.find("/lm_eval/tasks/")
    if i != -1:
        name = "lm_eval.tasks." + s[i + len("/lm_eval/tasks/"):].replace(".py", "").replace("/", ".")
    else:
        name = str(path.with_suffix(""))
    module = sys.modules.get(name)
    mtime = path.stat().st_mtime_ns
    if module is None or getattr(module, "__mtime__", None) != mtime:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"Cannot load module from {path}")
        module = importlib.util.module_from_spec(spec)
        module.__mtime__ = mtime
        spec.loader.exec_module(module)
        sys.modules[name] = module
    if not hasattr(module, fn_name):
        raise AttributeError(f"Module '{path}' has no function '{fn_name}'")
    return getattr(module, fn_name)

def source_of(fn):
    # TaskConfig.serialize_function
    try:
        return inspect.getsource(fn)
    except (TypeError, OSError):
        return str(fn)

_takes_none = {}

def call_doc(fn, doc):
    # fewshot_config.samples (doc None) is called with no argument, as
    # ConfigurableTask.fewshot_docs calls it. A doc hook that takes none gets none (`def
    # doc_to_text(): ...`, which ConfigurableTask accepts). Whether fn takes none is decided at its
    # first call (inspect.signature costs about 10 us): keyed by id(fn), the entry holding fn so
    # that id is never another object's (the plugin keeps its functions for the process's life).
    entry = _takes_none.get(id(fn))
    if entry is None:
        try:
            takes_none = len(inspect.signature(fn).parameters) == 0
        except (TypeError, ValueError):
            takes_none = False
        entry = _takes_none[id(fn)] = (fn, takes_none)
    return fn() if entry[1] or doc is None else fn(doc)

def generator_states(fn):
    # The states of the generators process_docs may draw from: the global `random`, numpy's
    # global generator once imported, and the random.Random / numpy generators held in the
    # globals of fn's module (gpqa n_shot's `rng = random.Random(42)`), fn unwrapped from partials.
    import random
    np = sys.modules.get("numpy")
    def state(g):
        if isinstance(g, random.Random):
            return g.getstate()
        if np is not None and isinstance(g, np.random.RandomState):
            kind, key, pos, has_gauss, gauss = g.get_state()
            return kind, key.tobytes(), pos, has_gauss, gauss
        if np is not None and isinstance(g, np.random.Generator):
            return repr(g.bit_generator.state)
        return None
    out = [random.getstate()]
    if np is not None:
        out.append(state(np.random.mtrand._rand))
    while hasattr(fn, "func"):
        fn = fn.func
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    for name, value in sorted(vars(module).items()) if module is not None else []:
        st = state(value)
        if st is not None:
            out.append((name, st))
    return out

def process_docs(fn, rows):
    # [rows, drew]: drew says whether fn advanced a generator (the reference re-runs
    # process_docs at every read of a task's documents, which then differ).
    import datasets
    dataset = datasets.Dataset.from_list(rows)
    before = generator_states(fn)
    out = fn(dataset)
    drew = generator_states(fn) != before
    if isinstance(out, datasets.Dataset):
        return [out.to_list(), drew]
    return [list(out), drew]

def get_random_state():
    import random
    return list(random.getstate()[1])

def set_random_state(words):
    import random
    version, _, gauss_next = random.getstate()
    random.setstate((version, tuple(words), gauss_next))

def call_metric(fn, gold, result, kwargs, multiple_target, name):
    # ConfigurableTask.__init__ keeps `metric.__call__`; process_results' generate_until branch
    # calls it with references/predictions keywords and, on TypeError, with [gold, result].
    call = fn.__call__
    if multiple_target:
        if not isinstance(gold, list):
            gold = [gold]
        if name == "exact_match":
            scores = call(references=gold, predictions=[result for _ in range(len(gold))],
                          **kwargs)[name]
            return 1.0 if scores > 0.0 else 0.0
        scores = []
        for gold_option in gold:
            try:
                score = call(references=[gold_option], predictions=[result], **kwargs)
            except TypeError:
                score = call([gold_option, result])
            if isinstance(score, dict):
                score = score[name]
            scores.append(score)
        return 1.0 if any(scores) else 0.0
    try:
        return call(references=[gold], predictions=[result], **kwargs)
    except TypeError:
        return call([gold, result])

def _non_serializable(o):
    # lm_eval.utils.handle_non_serializable, the `default` of the reference's samples dump.
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(o, np.bool_):
            return bool(o)
        if isinstance(o, np.integer):
            return int(o)
        if isinstance(o, np.floating):
            return float(o)
    if isinstance(o, set):
        return list(o)
    return str(o)

def as_written(value):
    # What the reference's samples file holds for a value: json.dumps with
    # handle_non_serializable (EvaluationTracker.save_results_samples), read back.
    return json.loads(json.dumps(value, default=_non_serializable, ensure_ascii=False))

def custom_dataset(fn, metadata, dataset_kwargs):
    # ConfigurableTask.download: the task's metadata and dataset_kwargs as keyword arguments; the
    # returned DatasetDict (or mapping of splits) as lists of rows.
    out = fn(**(metadata or {}), **(dataset_kwargs or {}))
    splits = {}
    for split in out:
        rows = out[split]
        splits[str(split)] = rows.to_list() if hasattr(rows, "to_list") else list(rows)
    return splits

class EvaluateMetric:
    # lm_eval.api.registry.get_metric's HF evaluate branch: evaluate.load(name).compute, loaded
    # when first scored (validate imports only the package).
    def __init__(self, name):
        import evaluate  # noqa: F401  (the reference needs it for this metric too)
        self.__name__ = name
        self._compute = None

    def __call__(self, *args, **kwargs):
        if self._compute is None:
            import evaluate
            self._compute = evaluate.load(self.__name__).compute
        return self._compute(*args, **kwargs)

def is_unavailable(exc):
    # A dataset loader that failed because the data cannot be reached from here (offline, no
    # network, not in the cache): an OSError (ConnectionError, FileNotFoundError, ...) in the
    # exception or its causes.
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError):
            return True
        exc = exc.__cause__ or exc.__context__
    return False

def name_of(fn):
    return getattr(fn, "__name__", type(fn).__name__)

def use_environment(executable, prefix, exec_prefix, path, stdlib):
    # The environment's sys.path minus its standard library (this interpreter keeps its own),
    # site-packages folders added as site adds them (their .pth files run).
    import os, site
    std = {os.path.normpath(p) for p in stdlib}
    std |= {os.path.join(p, "lib-dynload") for p in std}
    for p in path:
        if not p:
            continue
        n = os.path.normpath(p)
        if n in std or (n.endswith(".zip") and os.path.basename(n).startswith("python")):
            continue
        if n in sys.path:
            continue
        if os.path.basename(n) in ("site-packages", "dist-packages"):
            site.addsitedir(n)
        else:
            sys.path.append(n)
    sys.executable = executable
    sys.prefix, sys.exec_prefix = prefix, exec_prefix

def seed(random_seed, numpy_seed):
    import random
    if random_seed is not None:
        random.seed(random_seed)
    if numpy_seed is not None:
        try:
            import numpy as np
        except ImportError:
            return
        np.random.seed(numpy_seed)

import contextlib

@contextlib.contextmanager
def local_datasets(data_dir):
    # lm-eval reads a Hub id from --data_dir's <org>/<name>/<config>/<split>.jsonl when that folder
    # holds the dataset, else from the Hub (evaluator.cpp, LocalThenHub): a Python-class task's
    # own datasets.load_dataset calls are served the same way while it is built.
    if not data_dir:
        yield
        return
    import json, os
    import datasets
    original = datasets.load_dataset

    def rows_of(fn):
        with open(fn, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    def split_of(cdir, split):
        rows = rows_of(os.path.join(cdir, split + ".jsonl"))
        if not rows:
            return datasets.Dataset.from_dict({}, split=datasets.Split(split))
        return datasets.Dataset.from_list(rows, split=datasets.Split(split))

    def load(path=None, name=None, *args, **kwargs):
        path = kwargs.pop("path", path)
        name = kwargs.pop("name", name)
        base = os.path.join(data_dir, *path.split("/")) if isinstance(path, str) else ""
        if not base or not os.path.isdir(base) or kwargs.get("data_files") is not None:
            return original(path, name, *args, **kwargs)
        cdir = os.path.join(base, name or "default")
        if not os.path.isdir(cdir) and not name:
            subs = sorted(d for d in os.listdir(base) if os.path.isdir(os.path.join(base, d)))
            if len(subs) == 1:
                cdir = os.path.join(base, subs[0])
        if not os.path.isdir(cdir):
            raise FileNotFoundError(f"config {name or 'default'!r} of dataset {path!r} is not in {base}")
        split = kwargs.get("split")
        if split is not None:
            return split_of(cdir, split)
        names = sorted(f[:-6] for f in os.listdir(cdir) if f.endswith(".jsonl"))
        return datasets.DatasetDict({s: split_of(cdir, s) for s in names})

    import datasets.load as dl
    datasets.load_dataset = dl.load_dataset = load
    try:
        yield
    finally:
        datasets.load_dataset = dl.load_dataset = original

class ClassTask:
    # A Python-class task (`class: !function module.Class` in its YAML): the reference's
    # TaskFactory._build_task (PY_TASK route), simple_evaluate's per-task settings, and evaluate()'s
    # calls of the task (build_all_requests, apply_filters, process_results per document and
    # filter, _compute_task_aggregations), each as the reference makes them.
    def __init__(self, yaml_path, task_name, overrides, metadata, data_dir):
        from copy import deepcopy
        try:
            from lm_eval.tasks._factory import _ctor_accepts_config
            from lm_eval.tasks._yaml_loader import load_yaml
        except ImportError as e:
            raise ImportError(
                "a Python-class task runs the reference's Task classes, and `lm_eval` does not "
                "import in the active environment (" + str(e) + "): pip install lm-eval") from e
        cfg = deepcopy(load_yaml(Path(yaml_path), resolve_func=True))
        if overrides:
            cfg = {**cfg, **overrides}
        cfg["metadata"] = metadata
        for key in ("tag", "group", "task_list"):
            cfg.pop(key, None)
        cls = cfg["class"]
        with local_datasets(data_dir):
            obj = cls(config=cfg) if _ctor_accepts_config(cls) else cls()
        if hasattr(obj, "config") and hasattr(obj.config, "task"):
            obj.config.task = task_name
        self.task = obj
        self.name = task_name
        self.limit = None
        self.samples = None
        self.passes = {}

    def configure(self, num_fewshot, gen_kwargs, predict_only, fewshot_seed):
        # simple_evaluate's loop over the loaded tasks.
        task = self.task
        if task.get_config("output_type") == "generate_until" and gen_kwargs is not None:
            task.set_config(key="generation_kwargs", value=gen_kwargs, update=True)
        if predict_only:
            task.override_metric(metric_name="bypass")
        if num_fewshot is not None:
            if task.get_config("num_fewshot") != 0:
                task.set_config(key="num_fewshot", value=num_fewshot)
        elif task.get_config("num_fewshot") is None:
            task.set_config(key="num_fewshot", value=0)
        task.set_fewshot_seed(seed=fewshot_seed)
        return task.get_config("num_fewshot")

    def build(self, limit, samples, system_instruction, fewshot_seed, apply_chat_template=False,
              fewshot_as_multiturn=False, chat_template=None, tokenizer_name="", pass_index=0):
        # evaluate(): get_sample_size, then build_all_requests on rank 0 of 1 with the chat
        # settings and `chat_template=lm.apply_chat_template` when the run applies one. The class
        # keeps one set of Instances: each --fewshot_seeds pass's are kept for its scoring.
        from lm_eval.evaluator_utils import get_sample_size
        task = self.task
        if fewshot_seed is not None:
            task.set_fewshot_seed(seed=fewshot_seed)
        self.limit = get_sample_size(task, limit)
        self.samples = samples
        task.build_all_requests(limit=self.limit, samples=samples, rank=0, world_size=1,
                                cache_requests=False, rewrite_requests_cache=False,
                                system_instruction=system_instruction,
                                apply_chat_template=apply_chat_template,
                                fewshot_as_multiturn=fewshot_as_multiturn,
                                chat_template=chat_template if apply_chat_template else None,
                                tokenizer_name=tokenizer_name if apply_chat_template else "")
        self.passes[pass_index] = task._instances
        return [[i.request_type, i.doc_id, i.idx, list(i.arguments), i.repeats]
                for i in task.instances]

    def score(self, resps, log_samples, bootstrap_iters, pass_index=0):
        import json
        from collections import defaultdict
        from lm_eval.evaluator_utils import _compute_task_aggregations
        from lm_eval.utils import handle_non_serializable, hash_string, sanitize_list
        task = self.task
        task._instances = self.passes[pass_index]
        instances = task.instances
        if len(resps) != len(instances):
            raise ValueError(f"{len(resps)} responses for {len(instances)} requests")
        for inst, r in zip(instances, resps):
            inst.resps = list(r)
        task.apply_filters()
        by_doc = defaultdict(list)
        for inst in task.instances:
            by_doc[inst.doc_id].append(inst)
        for v in by_doc.values():
            v.sort(key=lambda x: x.idx)
        raw = defaultdict(list)
        samples = []
        indices = self.samples
        for filter_key in task.instances[0].filtered_resps:
            for doc_id, doc in task.doc_iterator(rank=0, limit=self.limit, world_size=1,
                                                 samples=indices):
                doc_id_true = indices[doc_id] if indices else doc_id
                requests = by_doc[doc_id]
                metrics = task.process_results(
                    doc, [req.filtered_resps[filter_key] for req in requests])
                if log_samples:
                    target = task.doc_to_target(doc)
                    example = {
                        "doc_id": doc_id_true, "doc": doc, "target": target,
                        "arguments": [req.args for req in requests],
                        "resps": [req.resps for req in requests],
                        "filtered_resps": [req.filtered_resps[filter_key] for req in requests],
                        "filter": filter_key, "metrics": list(metrics.keys()),
                        "doc_hash": hash_string(json.dumps(requests[0].doc, indent=2,
                                                           default=handle_non_serializable,
                                                           ensure_ascii=False)),
                        "prompt_hash": hash_string(requests[0].arguments[0]),
                        "target_hash": hash_string(str(target)),
                    }
                    example.update(metrics)
                    # EvaluationTracker.save_results_samples
                    example["arguments"] = {
                        f"gen_args_{i}": {f"arg_{j}": a for j, a in enumerate(arg)}
                        for i, arg in enumerate(example["arguments"])}
                    example["resps"] = sanitize_list(example["resps"])
                    example["filtered_resps"] = sanitize_list(example["filtered_resps"])
                    example["target"] = str(example["target"])
                    samples.append(json.dumps(example, default=handle_non_serializable,
                                              ensure_ascii=False))
                for metric, value in metrics.items():
                    raw[(metric, filter_key)].append(value)
        agg, sample_len = _compute_task_aggregations(task, raw, bootstrap_iters)
        config = dict(task.dump_config())
        out = {
            "results": {"name": self.name, "alias": config.get("task_alias", self.name),
                        "sample_len": sample_len, **agg},
            "config": config,
            "version": task.VERSION,
            "num_fewshot": config.get("num_fewshot", 0),
            "higher_is_better": task.higher_is_better(),
            "n_samples": {"original": len(task.eval_docs), "effective": sample_len},
        }
        # the results file's json.dumps(default=handle_non_serializable)
        out = json.loads(json.dumps(out, default=handle_non_serializable, ensure_ascii=False))
        out["samples"] = [json.loads(s) for s in samples]
        return out

def describe(exc, tb):
    frames = traceback.extract_tb(exc.__traceback__ or tb)
    what = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    if not frames:
        return what, ""
    f = frames[-1]
    where = f"{f.filename}, line {f.lineno}, in {f.name}"
    if f.line:
        where += ": " + f.line.strip()
    return what, where
)PY";

std::mutex g_start_mu;
bool g_started = false;
py::object* g_helpers = nullptr;  // never destroyed: the interpreter is never finalized

py::object to_python(const Json& v, bool pairs_as_tuples = false) {
  switch (v.type()) {
    case Json::value_t::null:
      return py::none();
    case Json::value_t::boolean:
      return py::bool_(v.get<bool>());
    case Json::value_t::number_integer:
      return py::int_(v.get<long long>());
    case Json::value_t::number_unsigned:
      return py::int_(v.get<unsigned long long>());
    case Json::value_t::number_float:
      return py::float_(v.get<double>());
    case Json::value_t::string:
      return py::str(v.get_ref<const std::string&>());
    case Json::value_t::array: {
      // The reference's loglikelihood results are (logprob, is_greedy) tuples.
      if (pairs_as_tuples && v.size() == 2 && v[0].is_number() && v[1].is_boolean())
        return py::make_tuple(v[0].get<double>(), v[1].get<bool>());
      py::list out(v.size());
      for (size_t i = 0; i < v.size(); ++i) out[i] = to_python(v[i], pairs_as_tuples);
      return out;
    }
    case Json::value_t::object: {
      py::dict out;
      for (const auto& [k, x] : v.items()) out[py::str(k)] = to_python(x, pairs_as_tuples);
      return out;
    }
    default:
      return py::none();
  }
}

Json to_json(py::handle o) {
  if (o.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(o)) return o.cast<bool>();
  if (py::isinstance<py::int_>(o)) {
    try {
      return o.cast<long long>();
    } catch (const py::cast_error&) {
      PyErr_Clear();
      try {
        return o.cast<unsigned long long>();
      } catch (const py::cast_error&) {
        PyErr_Clear();
        return py::float_(py::reinterpret_borrow<py::object>(o)).cast<double>();
      }
    }
  }
  if (py::isinstance<py::float_>(o)) return o.cast<double>();
  if (py::isinstance<py::str>(o)) return o.cast<std::string>();
  if (py::isinstance<py::dict>(o)) {
    Json out = Json::object();
    for (auto [k, x] : o.cast<py::dict>())
      out[py::isinstance<py::str>(k) ? k.cast<std::string>() : py::str(k).cast<std::string>()] =
          to_json(x);
    return out;
  }
  if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
    Json out = Json::array();
    for (auto x : o) out.push_back(to_json(x));
    return out;
  }
  if (py::isinstance<py::bytes>(o)) return o.cast<std::string>();
  // numpy scalars and arrays: their Python values.
  if (py::hasattr(o, "tolist")) return to_json(o.attr("tolist")());
  if (py::hasattr(o, "item")) return to_json(o.attr("item")());
  if (py::isinstance<py::iterable>(o) && !py::hasattr(o, "keys")) {
    Json out = Json::array();
    for (auto x : o) out.push_back(to_json(x));
    return out;
  }
  return py::str(o).cast<std::string>();
}

// "TypeError: msg (last frame: file, line N, in fn: code)".
std::string describe(py::error_already_set& e) {
  try {
    py::tuple d = g_helpers->attr("describe")(e.value(), e.trace());
    std::string what = d[0].cast<std::string>(), where = d[1].cast<std::string>();
    return where.empty() ? what : what + " (last frame: " + where + ")";
  } catch (...) {
    return e.what();
  }
}

void flush_streams() {
  if (!g_started || !Py_IsInitialized()) return;
  PyGILState_STATE s = PyGILState_Ensure();
  PyRun_SimpleString(
      "import sys\nfor s in (sys.stdout, sys.stderr):\n  try: s.flush()\n  except Exception: "
      "pass\n");
  PyGILState_Release(s);
}

bool start(const lmeval::PythonEnvironment* env, std::string* error) {
  std::lock_guard<std::mutex> lock(g_start_mu);
  if (g_started) return true;
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  // lm-eval keeps its own signal handling (Ctrl-C) and argv; the interpreter keeps its own
  // standard library, and site runs later on the environment's folders (use_environment).
  config.install_signal_handlers = 0;
  config.parse_argv = 0;
  config.site_import = 0;
  // Its own standard library: without `home` the path search would start from a python3 on PATH
  // (another installation's standard library).
  PyStatus home = PyConfig_SetBytesString(&config, &config.home, LMEVAL_PYTHON_HOME);
  if (PyStatus_Exception(home)) {
    PyConfig_Clear(&config);
    *error = home.err_msg ? home.err_msg : "PyConfig_SetBytesString failed";
    return false;
  }
  PyStatus st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st)) {
    *error = std::string("the interpreter did not start: ") +
             (st.err_msg ? st.err_msg : "Py_InitializeFromConfig failed");
    return false;
  }
  try {
    py::module_ m = py::module_::import("types").attr("ModuleType")("_lmeval_helpers");
    py::exec(kHelpers, m.attr("__dict__"));
    g_helpers = new py::object(m);
    g_helpers->attr("use_environment")(env->executable, env->prefix, env->exec_prefix, env->path,
                                       env->stdlib);
    try {
      py::module_::import("datasets").attr("disable_progress_bars")();
    } catch (py::error_already_set&) {
      // datasets is needed only by process_docs, which says so when it is missing.
    }
  } catch (py::error_already_set& e) {
    *error = "the interpreter's set-up failed: " + std::string(e.what());
    return false;
  }
  g_started = true;
  std::atexit(flush_streams);
  // Every call takes the GIL itself (py::gil_scoped_acquire), from whichever thread.
  PyEval_SaveThread();
  return true;
}

bool seed(long long random_seed, long long numpy_seed, std::string* error) {
  py::gil_scoped_acquire gil;
  try {
    g_helpers->attr("seed")(random_seed >= 0 ? py::object(py::int_(random_seed)) : py::none(),
                            numpy_seed >= 0 ? py::object(py::int_(numpy_seed)) : py::none());
    return true;
  } catch (py::error_already_set& e) {
    *error = describe(e);
    return false;
  }
}

void* function(const char* module_path, const char* qualified, std::string* display,
               std::string* repr, std::string* name, std::string* error) {
  py::gil_scoped_acquire gil;
  try {
    py::object fn = g_helpers->attr("load_function")(module_path, qualified);
    if (display) *display = g_helpers->attr("source_of")(fn).cast<std::string>();
    if (repr) *repr = py::repr(fn).cast<std::string>();
    if (name) *name = g_helpers->attr("name_of")(fn).cast<std::string>();
    return new py::object(std::move(fn));  // kept for the process's life
  } catch (py::error_already_set& e) {
    *error = describe(e);
    return nullptr;
  }
}

void* evaluate_metric(const char* name, std::string* error) {
  py::gil_scoped_acquire gil;
  try {
    return new py::object(g_helpers->attr("EvaluateMetric")(name));  // kept for the process's life
  } catch (py::error_already_set& e) {
    *error = describe(e);
    return nullptr;
  }
}

void* instantiate(void* handle, const Json* kwargs, std::string* error) {
  py::gil_scoped_acquire gil;
  const py::object& cls = *static_cast<py::object*>(handle);
  try {
    py::dict kw = to_python(*kwargs);
    return new py::object(cls(**kw));  // kept for the process's life
  } catch (py::error_already_set& e) {
    *error = describe(e);
    return nullptr;
  }
}

bool call(void* handle, PythonCall kind, const Json* args, std::size_t nargs, Json* out,
          std::string* error) {
  py::gil_scoped_acquire gil;
  const py::object& fn = *static_cast<py::object*>(handle);
  try {
    py::object r;
    switch (kind) {
      case PythonCall::doc: {
        // The reference hands every hook of a document the same dict, so a helper that changes
        // it in place (webqs's _remove_prefixes sorts doc["answers"]) changes what later hooks
        // see and what evaluate() logs and hashes: the dict comes back when it changed.
        py::object doc = to_python(args[0]);
        py::object result = g_helpers->attr("call_doc")(fn, doc);
        Json after = to_json(doc);
        *out = Json::array({to_json(result), after == args[0] ? Json() : std::move(after)});
        return true;
      }
      case PythonCall::process_docs:
        r = g_helpers->attr("process_docs")(fn, to_python(args[0]));
        break;
      case PythonCall::process_results: {
        // The scores, and beside them the form the reference's samples file writes them in
        // (a numpy array or any other object as its str()), null when it is the same.
        r = fn(to_python(args[0]), to_python(args[1], /*pairs_as_tuples=*/true));
        Json scores = to_json(r);
        Json written = to_json(g_helpers->attr("as_written")(r));
        *out = Json::array({scores, written == scores ? Json() : std::move(written)});
        return true;
      }
      case PythonCall::aggregation:
        r = fn(to_python(args[0], true));
        break;
      case PythonCall::filter:
        r = fn(to_python(args[0], true), to_python(args[1]));
        break;
      case PythonCall::filter_apply:
        r = fn.attr("apply")(to_python(args[0], true), to_python(args[1]));
        break;
      case PythonCall::metric:
        if (nargs != 5) throw std::invalid_argument("metric takes 5 arguments");
        r = g_helpers->attr("call_metric")(fn, to_python(args[0]), to_python(args[1]),
                                           to_python(args[2]), to_python(args[3]),
                                           to_python(args[4]));
        break;
      case PythonCall::custom_dataset:
        if (nargs != 2) throw std::invalid_argument("custom_dataset takes 2 arguments");
        r = g_helpers->attr("custom_dataset")(fn, to_python(args[0]), to_python(args[1]));
        break;
    }
    *out = to_json(r);
    return true;
  } catch (py::error_already_set& e) {
    *error = describe(e);
    if (kind == PythonCall::custom_dataset) {
      try {
        if (g_helpers->attr("is_unavailable")(e.value()).cast<bool>())
          *error = lmeval::kPythonDataUnavailable + *error;
      } catch (py::error_already_set&) {
      }
    }
    return false;
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
}

void* class_task(const Json* spec, std::string* error) {
  py::gil_scoped_acquire gil;
  try {
    const Json& s = *spec;
    py::object task = g_helpers->attr("ClassTask")(
        s.value("yaml", ""), s.value("task", ""), to_python(s.value("overrides", Json::object())),
        to_python(s.value("metadata", Json::object())), s.value("data_dir", ""));
    return new py::object(std::move(task));  // kept for the process's life
  } catch (py::error_already_set& e) {
    *error = describe(e);
    try {
      if (g_helpers->attr("is_unavailable")(e.value()).cast<bool>())
        *error = lmeval::kPythonDataUnavailable + *error;
    } catch (py::error_already_set&) {
    }
    return nullptr;
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
}

// The `chat_template` callable a Python-class task's build gets: the reference passes
// lm.apply_chat_template(chat_history, add_generation_prompt=True); this one renders through the
// caller's `render` (lm-eval's own chat template rendering for the run's model).
py::object chat_callable(lmeval::PythonChatRender render, void* ctx) {
  return py::cpp_function(
      [render, ctx](py::handle chat_history, bool add_generation_prompt) {
        Json messages = to_json(chat_history);
        std::string out, error;
        if (!render(ctx, &messages, add_generation_prompt, &out, &error))
          throw std::runtime_error(error);
        return py::str(out);
      },
      py::arg("chat_history"), py::arg("add_generation_prompt") = true);
}

bool class_task_call(void* handle, const char* method, const Json* kwargs,
                     lmeval::PythonChatRender render, void* render_ctx, Json* out,
                     std::string* error) {
  py::gil_scoped_acquire gil;
  const py::object& task = *static_cast<py::object*>(handle);
  try {
    // Responses of loglikelihood requests are (logprob, is_greedy) tuples, as the reference's.
    py::dict kw = to_python(*kwargs, /*pairs_as_tuples=*/std::string(method) == "score");
    if (render) kw["chat_template"] = chat_callable(render, render_ctx);
    *out = to_json(task.attr(method)(**kw));
    return true;
  } catch (py::error_already_set& e) {
    *error = describe(e);
    return false;
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
}

bool get_random_state(std::uint32_t* state625, std::string* error) {
  py::gil_scoped_acquire gil;
  try {
    py::list words = g_helpers->attr("get_random_state")();
    if (words.size() != 625) throw std::runtime_error("random.getstate() has no 625 words");
    for (std::size_t i = 0; i < 625; ++i) state625[i] = words[i].cast<std::uint32_t>();
    return true;
  } catch (py::error_already_set& e) {
    *error = describe(e);
  } catch (const std::exception& e) {
    *error = e.what();
  }
  return false;
}

bool set_random_state(const std::uint32_t* state625, std::string* error) {
  py::gil_scoped_acquire gil;
  try {
    py::list words(625);
    for (std::size_t i = 0; i < 625; ++i) words[i] = py::int_(state625[i]);
    g_helpers->attr("set_random_state")(words);
    return true;
  } catch (py::error_already_set& e) {
    *error = describe(e);
  } catch (const std::exception& e) {
    *error = e.what();
  }
  return false;
}

// transformers_model.py as a module of its own, executed on the first model.
py::object& transformers_module() {
  static py::object* module = [] {
    py::module_ m = py::module_::import("types").attr("ModuleType")("_lmeval_transformers_model");
    py::exec(kTransformersModelPy, m.attr("__dict__"));
    return new py::object(m);  // never destroyed, as g_helpers
  }();
  return *module;
}

void* transformers_model(const Json* spec, Json* info, std::string* error) {
  py::gil_scoped_acquire gil;
  try {
    py::tuple built = transformers_module().attr("build")(to_python(*spec));
    *info = to_json(built[1]);
    return new py::object(built[0]);  // kept for the process's life
  } catch (py::error_already_set& e) {
    *error = describe(e);
    try {
      if (e.matches(transformers_module().attr("MissingPackages")))
        *error = lmeval::kPythonMissingPackages + py::str(e.value()).cast<std::string>();
    } catch (py::error_already_set&) {
    }
    return nullptr;
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
}

bool transformers_call(void* handle, const char* method, const Json* kwargs,
                       lmeval::PythonStopTest stop, void* stop_ctx, Json* out, std::string* error) {
  py::gil_scoped_acquire gil;
  const py::object& model = *static_cast<py::object*>(handle);
  try {
    py::dict kw = to_python(*kwargs);
    if (stop)
      kw["stop"] = py::cpp_function([stop, stop_ctx](std::size_t row, const py::list& tokens) {
        std::vector<std::int32_t> ids;
        ids.reserve(tokens.size());
        for (auto t : tokens) ids.push_back(t.cast<std::int32_t>());
        return stop(stop_ctx, row, ids.data(), ids.size());
      });
    *out = to_json(model.attr(method)(**kw));
    return true;
  } catch (py::error_already_set& e) {
    *error = describe(e);
    return false;
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const lmeval::PythonPluginApi*
lmeval_python_plugin_api() {
  static const std::string abi =
      std::string(LMEVAL_VERSION_STRING) + "/" + std::to_string(lmeval::kPythonPluginAbi);
  static const lmeval::PythonPluginApi api = {
      abi.c_str(),
      PY_MAJOR_VERSION * 100 + PY_MINOR_VERSION,
      start,
      seed,
      function,
      evaluate_metric,
      instantiate,
      call,
      get_random_state,
      set_random_state,
      class_task,
      class_task_call,
      transformers_model,
      transformers_call,
  };
  return &api;
}
