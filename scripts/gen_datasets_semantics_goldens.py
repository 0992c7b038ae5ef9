#!/usr/bin/env python3
"""Goldens for local data files read as `datasets` reads them (csv via pandas, json via pyarrow).

Each case writes its data files under tests/data/fixtures_datasets/<case>/, runs
datasets.load_dataset(builder, data_files=..., **kwargs) from inside that folder (relative
data_files resolve against the working folder, as in the reference), and writes
<case>/expected.json: the split's rows as Python's repr() of each row (how `{{ row }}`, str() and
the reference's prompts see them) and the features, or the error datasets raised.
The C++ test (tests/data/datasets_semantics_test.cpp) must give the same reprs, or a UserError
where datasets raised.
Usage: <venv with datasets 5.2, pandas, pyarrow>/bin/python scripts/gen_datasets_semantics_goldens.py
"""
import json
import logging
import os
import shutil
import tempfile

import datasets
import pyarrow as pa
import pyarrow.parquet as pq

datasets.disable_progress_bars()
logging.disable(logging.WARNING)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data",
                   "fixtures_datasets")


def parquet_bytes():
    t = pa.table({"id": [1, 2], "blob": pa.array([b"ab\x00'\"\n", None], type=pa.binary()),
                  "s": ["x", "y"]})
    path = os.path.join(tempfile.mkdtemp(), "f.parquet")
    pq.write_table(t, path)
    data = open(path, "rb").read()
    shutil.rmtree(os.path.dirname(path))
    return data


CSV = "csv"
JSON = "json"
CASES = {
    # CSV: pandas.read_csv with CsvConfig's defaults.
    "csv_empty_cells": (CSV, {"a.csv": "q,a,n\nhello,,1\nworld,x,\n"}, {"data_files": "a.csv"}),
    "csv_space_int": (CSV, {"a.csv": "q,y\nfoo, 1\nbar, 2 \nbaz,+3\n"}, {"data_files": "a.csv"}),
    "csv_na_strings": (CSV, {"a.csv": "q,y\nfoo, NA\nbar,NA\nbaz, \nq1,N/A\nq2,null\nq3,None\n"
                             "q4,nan\nq5,#N/A\nq6,<NA>\nq7,NULL\nq8,n/a\nq9,-NaN\nq10,\"NA\"\n"},
                       {"data_files": "a.csv"}),
    "csv_quoting": (CSV, {"a.csv": 'q,y,z\n"a,b","say ""hi""",""\n"multi\nline",x"y,"a"b\n'},
                    {"data_files": "a.csv"}),
    "csv_bools": (CSV, {"a.csv": "b,c,d,e\nTrue,true,TRUE, True\nFalse,FALSE,,False\n"},
                  {"data_files": "a.csv"}),
    "csv_floats": (CSV, {"a.csv": "a,b,c,d\n1e3,inf,01,1.5e\n.5,-Infinity,x,2\n5.,nan,2,3\n"
                         " 2.5 ,+INF,3,4\n"}, {"data_files": "a.csv"}),
    "csv_header_blank_lines": (CSV, {"a.csv": "a,a,,b,a\n1,2,3,4,x\n\n   \n5,6\r\n7,8,9,10,y\r"},
                               {"data_files": "a.csv"}),
    "csv_leading_space_kept": (CSV, {"a.csv": "a,b\n x,1\n\ty,2\n"}, {"data_files": "a.csv"}),
    "csv_bom_crlf": (CSV, {"a.csv": "\ufeffq,a\r\nx,1\r\ny,2\r\n"}, {"data_files": "a.csv"}),
    "csv_tsv_by_builder": (CSV, {"a.tsv": "a\tb\n1\tx y\n"}, {"data_files": "a.tsv"}),
    "csv_tsv_sep": (CSV, {"a.tsv": "a\tb\n1\tx y\n2\t\n"}, {"data_files": "a.tsv", "sep": "\t"}),
    "csv_delimiter_wins": (CSV, {"a.csv": "a;b\n1;2\n"}, {"data_files": "a.csv", "sep": "\t",
                                                          "delimiter": ";"}),
    "csv_uint64": (CSV, {"a.csv": "a\n18446744073709551615\n1\n"}, {"data_files": "a.csv"}),
    "csv_int_overflow": (CSV, {"a.csv": "a\n99999999999999999999\n"}, {"data_files": "a.csv"}),
    "csv_too_many_fields": (CSV, {"a.csv": "a,b\n1,2\n3,4,5\n"}, {"data_files": "a.csv"}),
    "csv_short_rows": (CSV, {"a.csv": "a,b,c\n1\n2,3\n"}, {"data_files": "a.csv"}),
    "csv_unterminated_quote": (CSV, {"a.csv": 'a,b\n1,"x\n'}, {"data_files": "a.csv"}),
    "csv_two_files_same": (CSV, {"a.csv": "a,b\n1,x\n", "b.csv": "a,b\n2,y\n"},
                           {"data_files": ["a.csv", "b.csv"]}),
    "csv_two_files_int_float": (CSV, {"a.csv": "a\n1\n", "b.csv": "a\n2.5\n"},
                                {"data_files": ["a.csv", "b.csv"]}),
    "csv_two_files_order": (CSV, {"a.csv": "a,b\nx,1\n", "b.csv": "b,a\n2,y\n"},
                            {"data_files": ["a.csv", "b.csv"]}),
    "csv_chunks_differ": (CSV, {"a.csv": "a\n1\n2\n3.5\n"}, {"data_files": "a.csv", "chunksize": 2}),
    "csv_chunks_same": (CSV, {"a.csv": "a\n1\n2\n3\n"}, {"data_files": "a.csv", "chunksize": 2}),
    "csv_na_values": (CSV, {"a.csv": "a,b\n-,1\nNA,2\n"}, {"data_files": "a.csv", "na_values": ["-"]}),
    "csv_no_default_na": (CSV, {"a.csv": "a,b\n-,1\nNA,\n"},
                          {"data_files": "a.csv", "na_values": "-", "keep_default_na": False}),
    "csv_na_filter_off": (CSV, {"a.csv": "a,b\n,1\nNA,2\n"}, {"data_files": "a.csv", "na_filter": False}),
    "csv_skipinitialspace": (CSV, {"a.csv": 'a,b\nx, "y,z"\n'},
                             {"data_files": "a.csv", "skipinitialspace": True}),
    "csv_column_names": (CSV, {"a.csv": "1,x\n2,y\n"}, {"data_files": "a.csv", "column_names": ["n", "s"]}),
    "csv_all_na_column": (CSV, {"a.csv": "a,b\n1,\n2,\n"}, {"data_files": "a.csv"}),
    "csv_glob": (CSV, {"d/p-2.csv": "a\n2\n", "d/p-10.csv": "a\n10\n", "d/p-1.csv": "a\n1\n",
                       "d/.hidden.csv": "a\n99\n"}, {"data_files": "d/p-*.csv"}),
    # JSON / JSON lines: pyarrow's JSON reader, datasets' features from the first file.
    "json_missing_keys_promotion": (JSON, {"a.jsonl": '{"a":1,"b":{"x":1,"y":2}}\n'
                                           '{"a":2.5,"c":"z","b":{"y":3,"x":4}}\n{"b":null}\n'},
                                    {"data_files": "a.jsonl"}),
    "json_nested_keys_differ": (JSON, {"a.jsonl": '{"b":{"x":1,"y":2}}\n{"b":{"x":4}}\n{"b":null}\n'},
                                {"data_files": "a.jsonl"}),
    "json_nested_empty": (JSON, {"a.jsonl": '{"b":{}}\n{"b":{}}\n'}, {"data_files": "a.jsonl"}),
    "json_mixed_scalar": (JSON, {"a.jsonl": '{"a":1,"b":true}\n{"a":"x","b":1}\n'},
                          {"data_files": "a.jsonl"}),
    "json_mixed_nested": (JSON, {"a.jsonl": '{"a":{"x":1,"y":"s"}}\n{"a":{"x":"t","y":"u"}}\n'},
                          {"data_files": "a.jsonl"}),
    "json_lists": (JSON, {"a.jsonl": '{"b":[1,2]}\n{"b":[]}\n{"b":null}\n{"b":[1.5]}\n'
                          '{"b":[3]}\n'}, {"data_files": "a.jsonl"}),
    "json_list_mixed": (JSON, {"a.jsonl": '{"b":[1,"x"],"c":[{"x":1},{"x":2.5,"y":"s"}]}\n'},
                        {"data_files": "a.jsonl"}),
    "json_list_of_lists": (JSON, {"a.jsonl": '{"b":[[1],[2.5,3]]}\n'}, {"data_files": "a.jsonl"}),
    "json_struct_in_list": (JSON, {"a.jsonl": '{"b":[{"x":1,"y":"a"},{"y":"b","x":2.0}]}\n'},
                            {"data_files": "a.jsonl"}),
    "json_empty_first_row": (JSON, {"a.jsonl": '{}\n{"a":1}\n'}, {"data_files": "a.jsonl"}),
    "json_all_null": (JSON, {"a.jsonl": '{"a":null,"b":1}\n{"a":null,"b":2}\n'}, {"data_files": "a.jsonl"}),
    "json_two_files_missing": (JSON, {"a.jsonl": '{"a":1,"c":1}\n', "b.jsonl": '{"a":2}\n'},
                               {"data_files": ["a.jsonl", "b.jsonl"]}),
    "json_two_files_reorder": (JSON, {"a.jsonl": '{"a":1,"c":1}\n', "b.jsonl": '{"c":2, "a":3}\n'},
                               {"data_files": ["a.jsonl", "b.jsonl"]}),
    "json_two_files_float_first": (JSON, {"a.jsonl": '{"a":1.5}\n', "b.jsonl": '{"a":3}\n'},
                                   {"data_files": ["a.jsonl", "b.jsonl"]}),
    "json_two_files_int_then_float": (JSON, {"a.jsonl": '{"a":1}\n', "b.jsonl": '{"a":2.5}\n'},
                                      {"data_files": ["a.jsonl", "b.jsonl"]}),
    "json_two_files_int_then_integral": (JSON, {"a.jsonl": '{"a":1}\n', "b.jsonl": '{"a":2.0}\n'},
                                         {"data_files": ["a.jsonl", "b.jsonl"]}),
    "json_two_files_to_string": (JSON, {"a.jsonl": '{"a":"x"}\n', "b.jsonl": '{"a":3}\n{"a":true}\n'},
                                 {"data_files": ["a.jsonl", "b.jsonl"]}),
    "json_two_files_extra_column": (JSON, {"a.jsonl": '{"a":1}\n', "b.jsonl": '{"a":2,"c":[1]}\n'},
                                    {"data_files": ["a.jsonl", "b.jsonl"]}),
    "json_two_files_null_column": (JSON, {"a.jsonl": '{"a":null}\n', "b.jsonl": '{"a":3}\n'},
                                   {"data_files": ["a.jsonl", "b.jsonl"]}),
    "json_field": (JSON, {"a.json": '{"data":[{"a":1},{"b":2}], "v": 1}'},
                   {"data_files": "a.json", "field": "data"}),
    "json_array": (JSON, {"a.json": '[{"a":1},{"b":2.0},{"a":3,"b":4}]'}, {"data_files": "a.json"}),
    "json_array_of_values": (JSON, {"a.json": '["x", "y"]'}, {"data_files": "a.json"}),
    "json_glob_sorted": (JSON, {"d/part-2.jsonl": '{"a":2}\n', "d/part-10.jsonl": '{"a":10}\n',
                                "d/part-1.jsonl": '{"a":1}\n', "d/sub/part-3.jsonl": '{"a":3}\n'},
                         {"data_files": "d/part-*.jsonl"}),
    "json_glob_recursive": (JSON, {"d/part-2.jsonl": '{"a":2}\n', "d/sub/part-3.jsonl": '{"a":3}\n'},
                            {"data_files": "d/**/*.jsonl"}),
    "json_split_dict": (JSON, {"t.jsonl": '{"a":1}\n', "v.jsonl": '{"a":2}\n'},
                        {"data_files": {"train": "t.jsonl", "validation": ["v.jsonl", "t.jsonl"]}}),
    "json_glob_no_match": (JSON, {"a.jsonl": '{"a":1}\n'}, {"data_files": "d/*.jsonl"}),
    # text: one row per line, universal newlines.
    "text_lines": ("text", {"a.txt": "l1\n\nl3  \r\nl4\rl5"}, {"data_files": "a.txt"}),
    # parquet: BYTE_ARRAY without a string type is bytes.
    "parquet_binary": ("parquet", {"f.parquet": None}, {"data_files": "f.parquet"}),
}


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    for name, (builder, files, kwargs) in CASES.items():
        d = os.path.join(OUT, name)
        os.makedirs(d)
        for fn, text in files.items():
            p = os.path.join(d, fn)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(parquet_bytes() if text is None else text.encode("utf-8"))
        cache = tempfile.mkdtemp()
        cwd = os.getcwd()
        os.chdir(d)
        expected = {"builder": builder, "kwargs": kwargs}
        try:
            ds = datasets.load_dataset(builder, cache_dir=cache, **kwargs)
            expected["splits"] = {s: {"features": str(ds[s].features), "rows": [repr(r) for r in ds[s]]}
                                  for s in ds}
        except Exception as e:  # the reference fails on this folder: lm-eval must refuse it
            cause = e.__cause__ or e
            expected["error"] = f"{type(cause).__name__}: {str(cause)[:300]}"
        finally:
            os.chdir(cwd)
            shutil.rmtree(cache)
        with open(os.path.join(d, "expected.json"), "w") as f:
            json.dump(expected, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(name, "error" if "error" in expected else "ok")


if __name__ == "__main__":
    main()
