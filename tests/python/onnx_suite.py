"""Runs the official onnx project's own Python tests twice, with `onnx` and with
`import onnx` resolving to `onnx_light.onnx`, and prints how many of the tests that pass
with onnx also pass with onnx_light, per file.

    python tests/python/onnx_suite.py [--src DIR] [--failures] [FILE ...]

The tests come from the source distribution of the installed onnx version on PyPI
(downloaded once into target/onnx-sdist/); nothing of them is kept in this repository.
FILE names a test file of onnx's tests/python (default: the in-scope set below).
"""

import argparse
import html
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The files covering what onnx_light.onnx offers.
IN_SCOPE = [
    "helper_test.py",
    "numpy_helper_test.py",
    "external_data_test.py",
    "checker_test.py",
    "printer_test.py",
    "parser_test.py",
    "basic_test.py",
    "serialization_test.py",
    "schema_test.py",
    "shape_inference_test.py",
    "data_propagation_test.py",
    "symbolic_shape_test.py",
    "function_inference_test.py",
    "compose_test.py",
    "utils_test.py",
    "inliner_test.py",
    "version_converter_test.py",
    "version_converter/automatic_upgrade_test.py",
    "version_converter/automatic_downgrade_test.py",
]

_PLUGIN = r"""
import json, sys
class _Collect:
    def __init__(self):
        self.results = {}
    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            if self.results.get(report.nodeid) in (None, "passed"):
                self.results[report.nodeid] = report.outcome
out, redirect, args = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
if redirect:
    import onnx_redirect  # noqa: F401
import pytest
c = _Collect()
pytest.main(["-q", "-p", "no:cacheprovider", "--continue-on-collection-errors", *args], plugins=[c])
json.dump(c.results, open(out, "w"))
"""


def fetch_sources(dest):
    import onnx  # the reference version whose tests are run

    version = onnx.__version__
    root = os.path.join(dest, f"onnx-{version}")
    if os.path.isdir(os.path.join(root, "tests", "python")):
        return root
    os.makedirs(dest, exist_ok=True)
    # The simple index (PEP 503) is what pip itself reads.
    with urllib.request.urlopen("https://pypi.org/simple/onnx/", timeout=60) as r:
        index = r.read().decode()
    filename = f"onnx-{version}.tar.gz"
    match = re.search(r'href="([^"]*/' + re.escape(filename) + r')[#"]', index)
    if match is None:
        sys.exit(f"no source distribution {filename} in PyPI's index")
    archive = os.path.join(dest, filename)
    urllib.request.urlretrieve(html.unescape(match.group(1)), archive)
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if "/tests/python/" in m.name]
        tar.extractall(dest, members=members, filter="data")
    return root


def run(tests_dir, files, redirect):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "results.json")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [HERE, os.path.join(ROOT, "onnx-light-python", "python"), env.get("PYTHONPATH", "")]
        )
        # Run from a scratch directory so neither source tree shadows an installed package.
        subprocess.run(
            [sys.executable, "-c", _PLUGIN, out, "1" if redirect else "0", *files],
            cwd=tmp,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        with open(out) as f:
            return {k.split("tests/python/")[-1]: v for k, v in json.load(f).items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", default=IN_SCOPE)
    ap.add_argument("--src", help="an unpacked onnx source tree (default: download)")
    ap.add_argument("--failures", action="store_true", help="list the tests that fail")
    a = ap.parse_args()
    root = os.path.abspath(a.src) if a.src else fetch_sources(os.path.join(ROOT, "target", "onnx-sdist"))
    tests_dir = os.path.join(root, "tests", "python")
    files = [os.path.join(tests_dir, f) for f in a.files]
    reference = run(tests_dir, files, redirect=False)
    ours = run(tests_dir, files, redirect=True)
    per_file = {}
    failures = []
    for test, outcome in sorted(reference.items()):
        if outcome != "passed":
            continue
        name = test.split("::")[0]
        counts = per_file.setdefault(name, [0, 0])
        counts[0] += 1
        if ours.get(test) == "passed":
            counts[1] += 1
        else:
            failures.append(f"{test}: {ours.get(test, 'not collected')}")
    print(f"{'file':36} {'pass':>6} {'of':>6} {'share':>7}")
    for name, (total, passed) in sorted(per_file.items()):
        print(f"{name:36} {passed:6} {total:6} {100 * passed / total:6.1f}%")
    total = sum(c[0] for c in per_file.values())
    passed = sum(c[1] for c in per_file.values())
    print(f"{'all':36} {passed:6} {total:6} {100 * passed / max(total, 1):6.1f}%")
    if a.failures:
        print("\n".join(failures))


if __name__ == "__main__":
    main()
