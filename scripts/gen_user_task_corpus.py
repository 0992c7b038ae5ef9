#!/usr/bin/env python3
"""Writes tests/fixtures/user_tasks/<case>/: user-style task folders (own YAMLs, local CSV/TSV/
JSON/JSONL/text/parquet data, groups, filters, metrics, few-shot settings) that
scripts/compare_user_tasks.py runs through the reference and lm-eval. Each folder holds its
YAMLs, its data and case.json ({"tasks": [...], "num_fewshot": N or null}); the data are small
and made up. Usage: <venv with pyarrow>/bin/python scripts/gen_user_task_corpus.py
"""
import json
import os
import shutil

import pyarrow as pa
import pyarrow.parquet as pq

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "user_tasks")

MC = """output_type: multiple_choice
doc_to_text: "{doc_to_text}"
doc_to_choice: {choice}
doc_to_target: {target}
metric_list:
  - metric: acc
  - metric: acc_norm
"""
GEN = """output_type: generate_until
doc_to_text: "{doc_to_text}"
doc_to_target: "{target}"
generation_kwargs:
  until: ["\\n\\n"]
metric_list:
  - metric: exact_match
"""


def task(name, builder, files, body, split="test", extra=""):
    df = "\n".join(f"    {k}: {v}" for k, v in files.items())
    return (f"task: {name}\ndataset_path: {builder}\ndataset_kwargs:\n  data_files:\n{df}\n{extra}"
            f"test_split: {split}\n{body}")


CSV_MC = "q,a,b,label,hint\nSky colour?,blue,red,0,\nGrass colour?,pink,green,1,look down\nSnow colour?,white,black,0,\n"
CASES = {}


def case(name, files, tasks, num_fewshot=None):
    CASES[name] = (files, tasks, num_fewshot)


case("csv_empty_cells_mc", {"t.yaml": task("u_csv_mc", "csv", {"test": "data.csv"},
     MC.format(doc_to_text="Q: {{q}} Hint: {{hint}}", choice="['{{a}}', '{{b}}']", target="label")),
     "data.csv": CSV_MC}, ["u_csv_mc"])
case("csv_none_in_prompt_gen", {"t.yaml": task("u_csv_gen", "csv", {"test": "data.csv"},
     GEN.format(doc_to_text="Q: {{q}} ({{hint}})\\nA:", target="{{a}}")), "data.csv": CSV_MC},
     ["u_csv_gen"])
case("csv_space_int_target", {"t.yaml": task("u_csv_space", "csv", {"test": "d.csv"},
     MC.format(doc_to_text="{{q}}", choice="['no', 'yes']", target="y")),
     "d.csv": "q,y\nIs water wet?, 1\nIs fire cold?, 0\nIs ice cold?, 1\n"}, ["u_csv_space"])
case("csv_float_column", {"t.yaml": task("u_csv_float", "csv", {"test": "d.csv"},
     GEN.format(doc_to_text="{{q}} = {{n}}?", target="{{n}}")),
     "d.csv": "q,n\none plus one,2\nhalf,0.5\nnothing,\n"}, ["u_csv_float"])
case("csv_bool_column", {"t.yaml": task("u_csv_bool", "csv", {"test": "d.csv"},
     MC.format(doc_to_text="{{q}} {{flag}}", choice="['False', 'True']", target="'{{ 1 if flag else 0 }}'")),
     "d.csv": "q,flag\nA,True\nB,false\nC,TRUE\n"}, ["u_csv_bool"])
case("csv_quoted_fields", {"t.yaml": task("u_csv_quote", "csv", {"test": "d.csv"},
     GEN.format(doc_to_text="{{q}}", target="{{a}}")),
     "d.csv": 'q,a\n"Say ""hi"", then stop","hi, there"\n"multi\nline",x\n'}, ["u_csv_quote"])
case("tsv_folder", {"t.yaml": "task: u_tsv\ndataset_path: ./data\ntest_split: test\n" +
     MC.format(doc_to_text="{{q}}", choice="['{{a}}', '{{b}}']", target="label"),
     "data/test.tsv": CSV_MC.replace(",", "\t")}, ["u_tsv"])
case("csv_two_files", {"t.yaml": task("u_csv_two", "csv", {"test": "[p1.csv, p2.csv]"},
     MC.format(doc_to_text="{{q}}", choice="['{{a}}', '{{b}}']", target="label")),
     "p1.csv": CSV_MC, "p2.csv": CSV_MC.replace("Sky", "Sea")}, ["u_csv_two"])
case("jsonl_missing_keys", {"t.yaml": task("u_jsonl_missing", "json", {"test": "d.jsonl"},
     GEN.format(doc_to_text="{{q}} Context: {{ctx}}", target="{{a}}")),
     "d.jsonl": '{"q": "2+2?", "a": "4", "ctx": "math"}\n{"q": "Capital of France?", "a": "Paris"}\n'},
     ["u_jsonl_missing"])
case("jsonl_int_float", {"t.yaml": task("u_jsonl_num", "json", {"test": "d.jsonl"},
     GEN.format(doc_to_text="Value {{v}} and {{meta}}", target="{{v}}")),
     "d.jsonl": '{"v": 2, "meta": {"x": 1, "y": "a"}}\n{"v": 2.5, "meta": {"y": "b", "x": 3}}\n'},
     ["u_jsonl_num"])
case("jsonl_mixed_types", {"t.yaml": task("u_jsonl_mixed", "json", {"test": "d.jsonl"},
     GEN.format(doc_to_text="{{v}} / {{o}}", target="x")),
     "d.jsonl": '{"v": 1, "o": {"a": 1}}\n{"v": "one", "o": {"b": [1, 2]}}\n'}, ["u_jsonl_mixed"])
case("json_field", {"t.yaml": task("u_json_field", "json", {"test": "d.json"},
     MC.format(doc_to_text="{{q}}", choice="choices", target="label"), extra="  field: rows\n"),
     "d.json": json.dumps({"version": 1, "rows": [{"q": "1+1", "choices": ["1", "2"], "label": 1},
                                                   {"q": "2+2", "choices": ["4", "5"], "label": 0}]})},
     ["u_json_field"])
case("json_array_file", {"t.yaml": task("u_json_array", "json", {"test": "d.json"},
     MC.format(doc_to_text="{{q}} {{extra}}", choice="choices", target="label")),
     "d.json": json.dumps([{"q": "a?", "choices": ["x", "y"], "label": 0},
                           {"q": "b?", "choices": ["x", "y"], "label": 1, "extra": 3.0}])},
     ["u_json_array"])
case("jsonl_glob", {"t.yaml": task("u_glob", "json", {"test": "data/part-*.jsonl"},
     MC.format(doc_to_text="{{q}}", choice="choices", target="label")),
     **{f"data/part-{i}.jsonl": json.dumps({"q": f"q{i}", "choices": ["a", "b"], "label": i % 2}) + "\n"
        for i in (1, 2, 10)}}, ["u_glob"])
case("text_builder", {"t.yaml": "task: u_text\ndataset_path: text\ndataset_kwargs:\n  data_files:\n"
     "    test: lines.txt\ntest_split: test\noutput_type: loglikelihood_rolling\n"
     "doc_to_text: \"{{text}}\"\ndoc_to_target: \"{{text}}\"\nmetric_list:\n  - metric: word_perplexity\n"
     "  - metric: byte_perplexity\n  - metric: bits_per_byte\n",
     "lines.txt": "The quick brown fox.\n\nJumps over the lazy dog.\r\nEnd"}, ["u_text"])
case("yaml_bool_keys", {"t.yaml": task("u_yaml_keys", "json", {"test": "d.jsonl"},
     "output_type: multiple_choice\ndoc_to_text: \"{{q}}\"\ndoc_to_choice:\n  no: \"No\"\n  yes: \"Yes\"\n"
     "doc_to_target: label\nmetric_list:\n  - metric: acc\n"),
     "d.jsonl": '{"q": "Is it?", "label": 1}\n{"q": "Is it not?", "label": 0}\n'}, ["u_yaml_keys"])
case("jinja_truncate", {"t.yaml": task("u_truncate", "json", {"test": "d.jsonl"},
     GEN.format(doc_to_text="{{ passage|truncate(20) }} | {{ passage|striptags|upper|truncate(12, true) }}",
                target="{{a}}")),
     "d.jsonl": '{"passage": "<b>A long</b> passage that goes on and on", "a": "x"}\n'
                '{"passage": "short", "a": "y"}\n'}, ["u_truncate"])
case("jinja_int_key_dict", {"t.yaml": task("u_int_keys", "json", {"test": "d.jsonl"},
     GEN.format(doc_to_text="{{ {0: 'zero', 1: 'one'}[label] }} {{ {1: 'a', True: 'b'} }}", target="{{label}}")),
     "d.jsonl": '{"label": 0}\n{"label": 1}\n'}, ["u_int_keys"])
two_a = "\n".join(json.dumps({"q": f"a{i}", "choices": ["x", "y", "z"], "label": i % 3}) for i in range(7)) + "\n"
two_b = "\n".join(json.dumps({"q": f"b{i}", "choices": ["x", "y"], "label": i % 2}) for i in range(3)) + "\n"
case("group_unweighted", {
    "a.yaml": task("u_grp_a", "json", {"test": "a.jsonl"}, MC.format(doc_to_text="{{q}}", choice="choices", target="label")),
    "b.yaml": task("u_grp_b", "json", {"test": "b.jsonl"}, MC.format(doc_to_text="{{q}}", choice="choices", target="label")),
    "g.yaml": "group: u_grp\ntask:\n  - u_grp_a\n  - u_grp_b\naggregate_metric_list:\n  - metric: acc\n"
              "    weight_by_size: false\n  - metric: acc_norm\n    weight_by_size: true\nmetadata:\n  version: 1.0\n",
    "a.jsonl": two_a, "b.jsonl": two_b}, ["u_grp"])
case("group_mixed_shots", {
    "a.yaml": task("u_ms_a", "json", {"test": "a.jsonl", "train": "a.jsonl"},
                   MC.format(doc_to_text="{{q}}", choice="choices", target="label"), extra="num_fewshot: 1\n")
              .replace("test_split: test\n", "test_split: test\nfewshot_split: train\n"),
    "b.yaml": task("u_ms_b", "json", {"test": "b.jsonl", "train": "b.jsonl"},
                   MC.format(doc_to_text="{{q}}", choice="choices", target="label"), extra="num_fewshot: 0\n")
              .replace("test_split: test\n", "test_split: test\nfewshot_split: train\n"),
    "c.yaml": task("u_ms_c", "json", {"test": "b.jsonl", "train": "b.jsonl"},
                   MC.format(doc_to_text="{{q}}?", choice="choices", target="label"), extra="num_fewshot: 1\n")
              .replace("test_split: test\n", "test_split: test\nfewshot_split: train\n"),
    "g1.yaml": "group: u_ms_inner\ntask:\n  - u_ms_a\n  - u_ms_b\naggregate_metric_list:\n  - metric: acc\n",
    "g2.yaml": "group: u_ms_outer\ntask:\n  - u_ms_inner\n  - u_ms_c\naggregate_metric_list:\n  - metric: acc\n",
    "a.jsonl": two_a, "b.jsonl": two_b}, ["u_ms_outer"])
case("fewshot_indices_ignored", {"t.yaml": task("u_fs_idx", "json", {"test": "a.jsonl", "train": "a.jsonl"},
     MC.format(doc_to_text="{{q}}", choice="choices", target="label"),
     extra="fewshot_config:\n  sampler: default\n  fewshot_indices: [0, 1]\n")
     .replace("test_split: test\n", "test_split: test\nfewshot_split: train\n"), "a.jsonl": two_a},
     ["u_fs_idx"], 2)
case("regex_filter_gen", {"t.yaml": task("u_regex", "json", {"test": "d.jsonl"},
     "output_type: generate_until\ndoc_to_text: \"Q: {{q}}\\nA:\"\ndoc_to_target: \"{{a}}\"\n"
     "generation_kwargs:\n  until: [\"\\n\\n\"]\nfilter_list:\n  - name: num\n    filter:\n"
     "      - function: regex\n        regex_pattern: \"The answer is (\\\\d+)\"\n      - function: take_first\n"
     "metric_list:\n  - metric: exact_match\n    ignore_case: true\n"),
     "d.jsonl": "".join(json.dumps({"q": f"q{i}", "a": str(i)}) + "\n" for i in range(6))}, ["u_regex"])
case("gen_kwargs_until_list", {"t.yaml": task("u_until", "json", {"test": "d.jsonl"},
     "output_type: generate_until\ndoc_to_text: \"{{q}}\"\ndoc_to_target: \"{{a}}\"\n"
     "generation_kwargs:\n  until: [\".\", \"####\"]\n  do_sample: false\nmetric_list:\n  - metric: exact_match\n"),
     "d.jsonl": '{"q": "x", "a": " The answer is 1"}\n{"q": "y", "a": "z"}\n'}, ["u_until"])
case("parquet_bytes", {"t.yaml": task("u_parquet", "parquet", {"test": "d.parquet"},
     GEN.format(doc_to_text="{{q}} {{blob}}", target="{{q}}")), "d.parquet": None}, ["u_parquet"])

case("csv_na_strings", {"t.yaml": task("u_csv_na", "csv", {"test": "d.csv"},
     GEN.format(doc_to_text="[{{a}}] [{{b}}]", target="x")),
     "d.csv": "a,b\nNA,null\nNone, NA\nn/a,#N/A\nnan,ok\n"}, ["u_csv_na"])
case("csv_header_dups", {"t.yaml": task("u_csv_dups", "csv", {"test": "d.csv"},
     GEN.format(doc_to_text="{{ a }}", target="x")),
     "d.csv": "a,a,\n1,2,3\n4,5,\n"}, ["u_csv_dups"])
case("csv_leading_space_text", {"t.yaml": task("u_csv_space_text", "csv", {"test": "d.csv"},
     MC.format(doc_to_text="Q:{{q}}", choice="['{{a}}', '{{b}}']", target="0")),
     "d.csv": "q,a,b\n x, y, z\n\tt,u,v\n"}, ["u_csv_space_text"])
case("csv_sep_kwarg", {"t.yaml": task("u_csv_sep", "csv", {"test": "d.csv"},
     MC.format(doc_to_text="{{q}}", choice="['{{a}}', '{{b}}']", target="label"), extra="  sep: \";\"\n"),
     "d.csv": CSV_MC.replace(",", ";")}, ["u_csv_sep"])
case("csv_na_values_kwarg", {"t.yaml": task("u_csv_nav", "csv", {"test": "d.csv"},
     GEN.format(doc_to_text="{{q}} {{v}}", target="x"), extra="  na_values: [\"-\"]\n  keep_default_na: false\n"),
     "d.csv": "q,v\na,-\nb,NA\nc,\n"}, ["u_csv_nav"])
case("jsonl_nested_lists", {"t.yaml": task("u_jsonl_lists", "json", {"test": "d.jsonl"},
     GEN.format(doc_to_text="{{m}} {{m[0][0]}}", target="x")),
     "d.jsonl": '{"m": [[1], [2.5, 3]]}\n{"m": [[4]]}\n'}, ["u_jsonl_lists"])
case("jsonl_two_files_missing", {"t.yaml": task("u_jsonl_two", "json", {"test": "[a.jsonl, b.jsonl]"},
     GEN.format(doc_to_text="{{q}} {{extra}}", target="x")),
     "a.jsonl": '{"q": "a", "extra": 1}\n', "b.jsonl": '{"q": "b"}\n'}, ["u_jsonl_two"])
case("json_list_of_strings", {"t.yaml": task("u_json_strings", "json", {"test": "d.json"},
     GEN.format(doc_to_text="{{text}}", target="x")), "d.json": '["alpha", "beta"]'}, ["u_json_strings"])
case("jsonl_null_column", {"t.yaml": task("u_jsonl_null", "json", {"test": "d.jsonl"},
     GEN.format(doc_to_text="{{q}}:{{n}}", target="x")),
     "d.jsonl": '{"q": "a", "n": null}\n{"q": "b", "n": null}\n'}, ["u_jsonl_null"])
case("data_in_subfolder", {"t.yaml": task("u_subdir", "json", {"test": "data/sub/d.jsonl"},
     MC.format(doc_to_text="{{q}}", choice="choices", target="label")),
     "data/sub/d.jsonl": two_b}, ["u_subdir"])
case("tag_two_tasks", {
    "a.yaml": task("u_tag_a", "json", {"test": "a.jsonl"}, MC.format(doc_to_text="{{q}}", choice="choices", target="label"), extra="tag: u_tag\n"),
    "b.yaml": task("u_tag_b", "json", {"test": "b.jsonl"}, MC.format(doc_to_text="{{q}}", choice="choices", target="label"), extra="tag: u_tag\n"),
    "a.jsonl": two_a, "b.jsonl": two_b}, ["u_tag"])
case("utils_process_docs", {"t.yaml": task("u_utils", "json", {"test": "d.jsonl"},
     MC.format(doc_to_text="{{query}}", choice="choices", target="gold"), extra="process_docs: !function utils.process_docs\n"),
     "utils.py": "def process_docs(dataset):\n    def _p(doc):\n        return {'query': 'Q: ' + doc['q'].strip(), 'choices': doc['choices'], 'gold': int(doc['label'])}\n    return dataset.map(_p)\n",
     "d.jsonl": two_a}, ["u_utils"])
_TF_ROWS = [
    {"passage": "A well-known long-term approach -- tested", "query": "a b/c?d=é", "ident": "7",
     "link": "see www.example.org, or (http://x.io/p?q=1).", "a": "x",
     "items": [{"k": "b", "v": 1}, {"k": "a", "v": 2}, {"k": "B", "v": 3}]},
    {"passage": "short", "query": "", "ident": "q<1>", "link": "me@example.com", "a": "y",
     "items": [{"k": "c", "v": 4}]},
]
case("jinja_text_filters", {"t.yaml": task("u_text_filters", "json", {"test": "d.jsonl"},
     GEN.format(doc_to_text="{{ passage|wordwrap(12) }}|{{ query|urlencode }}|"
                "{{ {'id': ident, 'class': 'q a'}|xmlattr }}|{{ link|urlize(20) }}|"
                "{% for g in items|groupby('k') %}{{ g.grouper }}={{ g.list|map(attribute='v')|join(',') }};"
                "{% endfor %}|{{ [(ident, 'x')] }} {{ {'t': (1, ident)} }}\\nA:", target="{{a}}")),
     "d.jsonl": "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _TF_ROWS)},
     ["u_text_filters"])
case("jinja_random_filter", {"t.yaml": task("u_random", "json", {"test": "d.jsonl"},
     MC.format(doc_to_text="{{q}} (hint: {{ hints|random }})", choice="choices", target="label")),
     "d.jsonl": "".join(json.dumps({"q": f"q{i}", "hints": ["h1", "h2", "h3", "h4"][: 2 + i % 3],
                                    "choices": ["x", "y", "z"], "label": i % 3}) + "\n"
                        for i in range(6))}, ["u_random"])
case("random_in_target_and_choices", {"t.yaml": task("u_random_tc", "json", {"test": "d.jsonl"},
     MC.format(doc_to_text="{{q}}", choice="!function utils.choices", target="\"{{ [0, 1]|random }}\"")),
     "t2.yaml": task("u_random_gen", "json", {"test": "d.jsonl"},
     GEN.format(doc_to_text="{{q}} ({{ hints|random }})", target="{{ hints|random }}")),
     "utils.py": "import random\n\n\ndef choices(doc):\n    c = list(doc['choices'])\n"
                 "    random.shuffle(c)\n    return c\n",
     "d.jsonl": "".join(json.dumps({"q": f"q{i}", "hints": ["h1", "h2", "h3", "h4"][: 2 + i % 3],
                                    "choices": ["x", "y", "z"], "label": i % 3}) + "\n"
                        for i in range(6))}, ["u_random_tc", "u_random_gen"], 1)
case("numpy_process_results", {"t.yaml": task("u_numpy", "json", {"test": "d.jsonl"},
     "output_type: generate_until\ndoc_to_text: \"{{q}}\"\ndoc_to_target: \"{{label}}\"\n"
     "generation_kwargs:\n  until: [\"\\n\\n\"]\nprocess_results: !function utils.process_results\n"
     "metric_list:\n  - metric: f32\n    aggregation: mean\n    higher_is_better: true\n"
     "  - metric: i64\n    aggregation: mean\n    higher_is_better: false\n"
     "  - metric: b\n    aggregation: mean\n    higher_is_better: true\n"),
     "utils.py": "import numpy as np\n\n\ndef process_results(doc, results):\n"
                 "    pred = results[0]\n"
                 "    return {'f32': np.float32(len(pred) % 3) / np.float32(3), 'i64': np.int64(len(pred)),\n"
                 "            'b': np.bool_(pred.strip() == str(doc['label']))}\n",
     "d.jsonl": two_a}, ["u_numpy"])
case("numpy_array_results", {"t.yaml": task("u_np_array", "json", {"test": "d.jsonl"},
     "output_type: generate_until\ndoc_to_text: \"{{q}}\"\ndoc_to_target: \"{{label}}\"\n"
     "generation_kwargs:\n  until: [\"\\n\\n\"]\nprocess_results: !function utils.process_results\n"
     "metric_list:\n  - metric: arr\n    aggregation: !function utils.first_mean\n    higher_is_better: true\n"
     "  - metric: tags\n    aggregation: !function utils.count\n    higher_is_better: true\n"
     "  - metric: raw\n    aggregation: !function utils.count\n    higher_is_better: true\n"),
     "utils.py": "import numpy as np\n\n\ndef process_results(doc, results):\n"
                 "    pred = results[0]\n"
                 "    return {'arr': np.array([len(pred) / 7.0, doc['label']]), 'tags': {doc['q']},\n"
                 "            'raw': pred.strip().encode()}\n\n\n"
                 "def first_mean(items):\n    return float(np.mean([a[0] for a in items]))\n\n\n"
                 "def count(items):\n    return len(items)\n",
     "d.jsonl": two_a}, ["u_np_array"])
case("utils_doc_to_text", {"t.yaml": task("u_utils_fn", "json", {"test": "d.jsonl"},
     "output_type: multiple_choice\ndoc_to_text: !function utils.doc_to_text\ndoc_to_choice: choices\ndoc_to_target: label\n"
     "metric_list:\n  - metric: acc\n"),
     "utils.py": "def doc_to_text(doc):\n    return f\"Question: {doc['q'].upper()}\\nAnswer:\"\n",
     "d.jsonl": two_a}, ["u_utils_fn"])
case("loglikelihood_acc", {"t.yaml": task("u_ll", "json", {"test": "d.jsonl"},
     "output_type: loglikelihood\ndoc_to_text: \"{{q}}\"\ndoc_to_target: \" {{a}}\"\nmetric_list:\n"
     "  - metric: perplexity\n  - metric: acc\n"),
     "d.jsonl": '{"q": "1+1=", "a": "2"}\n{"q": "sky is", "a": "blue"}\n'}, ["u_ll"])
case("first_n_fewshot_delims", {"t.yaml": task("u_first_n", "json", {"test": "a.jsonl", "train": "b.jsonl"},
     MC.format(doc_to_text="{{q}}", choice="choices", target="label"),
     extra="fewshot_config:\n  sampler: first_n\nfewshot_delimiter: \"\\n###\\n\"\ntarget_delimiter: \" => \"\ndescription: \"Answer {{q}}.\\n\"\n")
     .replace("test_split: test\n", "test_split: test\nfewshot_split: train\n"),
     "a.jsonl": two_a, "b.jsonl": two_b}, ["u_first_n"], 2)
case("brier_score_metric", {"t.yaml": task("u_brier", "json", {"test": "d.jsonl"},
     "output_type: multiple_choice\ndoc_to_text: \"{{q}}\"\ndoc_to_choice: choices\ndoc_to_target: label\n"
     "metric_list:\n  - metric: brier_score\n  - metric: acc\n"), "d.jsonl": two_a}, ["u_brier"])
case("tojson_prompt", {"t.yaml": task("u_tojson", "json", {"test": "d.jsonl"},
     GEN.format(doc_to_text="{{ meta|tojson }} {{ meta|dictsort }}", target="x")),
     "d.jsonl": '{"meta": {"b": 1, "a": "<x>"}}\n'}, ["u_tojson"])


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    for name, (files, tasks, nf) in CASES.items():
        d = os.path.join(OUT, name)
        for fn, text in files.items():
            p = os.path.join(d, fn)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            if text is None:
                pq.write_table(pa.table({"q": ["a", "b"], "blob": pa.array([b"x\x00y", b"'q'"], pa.binary())}), p)
            else:
                with open(p, "w", encoding="utf-8", newline="") as f:
                    f.write(text)
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump({"tasks": tasks, "num_fewshot": nf}, f)
    print(len(CASES), "folders")


if __name__ == "__main__":
    main()
