#!/usr/bin/env python3
"""Writes tests/data/fixtures_parquet_bad/string_not_utf8.parquet: a string (UTF8) column whose second
value holds the bytes ff fe, which no UTF-8 reader accepts. pyarrow's writer does not check the
bytes of a column built from raw buffers; its reader does (checked below: to_pylist raises
UnicodeDecodeError, as datasets would), so the file is the bad input the C++ reader must refuse.

Usage: <venv with pyarrow>/bin/python scripts/gen_non_utf8_parquet.py [out_file]
"""
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "tests", "data", "fixtures_parquet_bad", "string_not_utf8.parquet")


def main():
    data = b"ok" + b"\xff\xfe" + b"Q"
    offsets = pa.array([0, 2, 4, 5], type=pa.int32()).buffers()[1]
    q = pa.Array.from_buffers(pa.string(), 3, [None, offsets, pa.py_buffer(data)])
    table = pa.table({"q": q, "choices": pa.array([["1", "2"]] * 3), "label": pa.array([0, 1, 0])})
    pq.write_table(table, OUT, compression="none")
    try:
        pq.read_table(OUT).to_pylist()
    except UnicodeDecodeError as e:
        print(f"wrote {OUT}; pyarrow refuses it: {e}")
        return
    raise SystemExit("pyarrow read the file without error: it is not the bad input intended")


if __name__ == "__main__":
    main()
