"""`lm-eval download --task-library` against a local stand-in for PyPI (issue 33, point 3).

The wheel is made here by CPython's zipfile (stored and deflated members), served with PyPI's
JSON API layout by http.server on the loopback; no real network is used. Run by ctest with the
lm-eval binary as argv[1] (or $LMEVAL_BINARY).
"""

import hashlib
import http.server
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest
import zipfile

BINARY = os.path.abspath(os.environ.get("LMEVAL_BINARY") or (sys.argv.pop(1) if len(sys.argv) > 1 else "")) \
    if (os.environ.get("LMEVAL_BINARY") or len(sys.argv) > 1) else ""
WHEEL = "lm_eval-0.4.13-py3-none-any.whl"


def task_yaml(name, data_file, extra=""):
    return (
        f"task: {name}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n"
        f"    test: {data_file}\noutput_type: multiple_choice\ntest_split: test\n"
        'doc_to_text: "Q: {{q}}\\nA:"\ndoc_to_choice: choices\ndoc_to_target: label\n' + extra
    )


class FakePypi:
    """Serves /pypi/lm-eval/0.4.13/json and /files/<wheel>; `published` is the digest listed."""

    def __init__(self):
        self.wheel = b""
        self.published = ""
        self.requests = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.requests.append(self.path)
                if self.path == "/pypi/lm-eval/0.4.13/json":
                    base = f"http://127.0.0.1:{self.server.server_address[1]}"
                    body = json.dumps({"urls": [
                        {"packagetype": "sdist", "filename": "lm_eval-0.4.13.tar.gz",
                         "url": base + "/files/sdist", "digests": {"sha256": "0" * 64}},
                        {"packagetype": "bdist_wheel", "filename": WHEEL,
                         "url": base + "/files/" + WHEEL, "size": len(outer.wheel),
                         "digests": {"sha256": outer.published}},
                    ]}).encode()
                elif self.path == "/files/" + WHEEL:
                    body = outer.wheel
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def serve(self, wheel, published=None):
        self.wheel = wheel
        self.published = published or hashlib.sha256(wheel).hexdigest()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "the lm-eval binary was not given")
class TaskLibraryDownload(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pypi = FakePypi()

    @classmethod
    def tearDownClass(cls):
        cls.pypi.close()

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="lmeval_tasklib_")
        self.dir = self.tmp.name
        self.data = os.path.join(self.dir, "test.jsonl")
        with open(self.data, "w") as f:
            f.write('{"q": "1+1?", "choices": ["1", "2"], "label": 1}\n'
                    '{"q": "2+2?", "choices": ["4", "5"], "label": 0}\n')
        self.cache = os.path.join(self.dir, "cache")
        self.library = os.path.join(self.cache, "lm-eval/task-library/0.4.13/lm_eval/tasks")

    def tearDown(self):
        self.tmp.cleanup()

    def wheel(self, members):
        """A zip of {name: text}: YAMLs deflated, the rest stored, as pip's wheels mix them."""
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for name, text in members.items():
                method = zipfile.ZIP_DEFLATED if name.endswith(".yaml") else zipfile.ZIP_STORED
                z.writestr(name, text, compress_type=method)
        return buf.getvalue()

    def library_wheel(self):
        return self.wheel({
            "lm_eval/__init__.py": "",
            "lm_eval/evaluator.py": "# not a task file: must not be extracted\n",
            "lm_eval/tasks/xnli/xnli_en.yaml": task_yaml("xnli_en", self.data),
            "lm_eval/tasks/helpers/helper_task.yaml": task_yaml(
                "helper_task", self.data,
                "process_docs: !function utils.process_docs\n"),
            "lm_eval/tasks/helpers/utils.py":
                "import a_module_that_is_not_installed_anywhere\n"
                "def process_docs(ds):\n    return ds\n",
            "lm_eval-0.4.13.dist-info/RECORD": "",
        })

    def lm(self, *args):
        env = dict(os.environ, XDG_CACHE_HOME=self.cache, LMEVAL_PYPI_URL=self.pypi.url,
                   LMEVAL_NO_INDEX_CACHE="1", VIRTUAL_ENV=os.path.join(self.dir, "no-venv"))
        env.pop("LMEVAL_REFERENCE_TASKS", None)
        return subprocess.run([BINARY, *args], env=env, cwd=self.dir, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=120)

    def test_downloads_verifies_and_runs_its_tasks_by_name(self):
        r = self.lm("run", "--model", "dummy", "--tasks", "xnli_en")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("lm-eval download --task-library", r.stderr)
        self.pypi.serve(self.library_wheel())
        r = self.lm("download", "--task-library")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("3 files", r.stdout)
        self.assertIn(hashlib.sha256(self.pypi.wheel).hexdigest() + ", verified", r.stdout)
        with open(os.path.join(self.library, "xnli/xnli_en.yaml")) as f:
            self.assertEqual(f.read(), task_yaml("xnli_en", self.data))
        self.assertFalse(os.path.exists(os.path.join(self.library, "../evaluator.py")))
        r = self.lm("run", "--model", "dummy", "--tasks", "xnli_en")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("xnli_en", r.stdout)
        r = self.lm("ls", "tasks")
        self.assertIn("xnli_en", r.stdout)

    def test_a_task_with_python_helpers_says_it_needs_the_environment(self):
        self.pypi.serve(self.library_wheel())
        self.assertEqual(self.lm("download", "--task-library").returncode, 0)
        r = self.lm("run", "--model", "dummy", "--tasks", "helper_task")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("tasks with Python helpers need the reference's Python environment",
                      r.stderr)

    def test_a_wrong_hash_installs_nothing(self):
        self.pypi.serve(self.library_wheel(), published="ab" * 32)
        r = self.lm("download", "--task-library")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("differs from the published " + "ab" * 32, r.stderr)
        self.assertFalse(os.path.exists(self.library))

    def test_a_failed_download_keeps_the_earlier_library(self):
        self.pypi.serve(self.library_wheel())
        self.assertEqual(self.lm("download", "--task-library").returncode, 0)
        # A truncated wheel whose published digest is its own: the zip reader must catch it.
        whole = self.library_wheel()
        self.pypi.serve(whole[: len(whole) // 2])
        r = self.lm("download", "--task-library")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("not a readable zip archive", r.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.library, "xnli/xnli_en.yaml")))
        parent = os.path.dirname(os.path.dirname(os.path.dirname(self.library)))
        self.assertEqual(sorted(os.listdir(parent)), ["0.4.13"])

    def test_a_corrupt_member_is_caught_by_its_crc(self):
        wheel = bytearray(self.wheel({"lm_eval/tasks/a.py": "x = 1\n" * 20}))
        at = wheel.find(b"x = 1")
        wheel[at] ^= 0x01
        self.pypi.serve(bytes(wheel))
        r = self.lm("download", "--task-library")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("fails its CRC-32 check", r.stderr)

    def test_member_names_outside_the_folder_are_refused(self):
        for bad in ("lm_eval/tasks/../../escaped.yaml", "lm_eval/tasks//abs.yaml",
                    "lm_eval/tasks/a\\..\\..\\b.yaml"):
            with self.subTest(bad=bad):
                self.pypi.serve(self.wheel({"lm_eval/tasks/ok.yaml": "x", bad: "y"}))
                r = self.lm("download", "--task-library")
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("would be written outside the task library folder", r.stderr)
                self.assertFalse(os.path.exists(os.path.join(self.cache, "lm-eval/escaped.yaml")))
                self.assertFalse(os.path.exists(self.library))

    def test_not_a_zip(self):
        self.pypi.serve(b"<html>not a wheel</html>")
        r = self.lm("download", "--task-library")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("no end-of-central-directory record", r.stderr)

    def test_unreachable_index(self):
        env_url = self.pypi.url
        self.pypi.url = "http://127.0.0.1:9"
        try:
            r = self.lm("download", "--task-library")
        finally:
            self.pypi.url = env_url
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("cannot fetch http://127.0.0.1:9/pypi/lm-eval/0.4.13/json", r.stderr)


if __name__ == "__main__":
    unittest.main()
