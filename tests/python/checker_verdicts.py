"""Print onnx.checker.check_model's verdict on each model file named on the command line.

Usage: python checker_verdicts.py [--full] FILE...   (or `@LIST` to read the paths from
a file, one per line); `--full` checks with `full_check=True` (strict shape inference
with type checks after the checker). One line per model: `ok<TAB>PATH` or `error<TAB>PATH<TAB>MESSAGE`
(the first line of onnx's message). The checker is given the path, so external data
locations are resolved against the model's directory, as `onnx-light check` does.
"""

import sys

import onnx
import onnx.checker


def paths(args):
    for a in args:
        if a.startswith("@"):
            with open(a[1:], encoding="utf-8") as f:
                yield from (line.rstrip("\n") for line in f if line.strip())
        else:
            yield a


def main():
    args = sys.argv[1:]
    full = bool(args) and args[0] == "--full"
    if full:
        args = args[1:]
    out = []
    for path in paths(args):
        try:
            onnx.checker.check_model(path, full_check=full)
            out.append(f"ok\t{path}")
        except Exception as e:  # noqa: BLE001 - every failure is a rejection
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            out.append(f"error\t{path}\t{type(e).__name__}: {first}")
    sys.stdout.write("\n".join(out) + ("\n" if out else ""))


if __name__ == "__main__":
    main()
