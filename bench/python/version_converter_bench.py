"""The version converter, onnx against onnx-light, side by side in one process: every
backend node-test model of a corpus directory converted to each target opset with
`onnx.version_converter.convert_version` and with
`onnx_light.onnx.version_converter.convert_version`, alternating case by case (each
library gets its own parsed copy of the model, parsed off the clock). Prints the total
seconds of each, the ratio, and how many cases each converted.

Usage: version_converter_bench.py CORPUS_NODE_DIR [TARGET...]   (default 11 13 18 21)

Run it in a venv with onnx and the onnx_light package built in release mode.
"""

import sys
import time
from pathlib import Path

import onnx
import onnx.version_converter as theirs

import onnx_light.onnx as ol
import onnx_light.onnx.version_converter as ours


def timed(convert, model, target):
    start = time.perf_counter()
    try:
        convert(model, target)
        ok = True
    except Exception:  # noqa: BLE001 (refusals are timed too)
        ok = False
    return time.perf_counter() - start, ok


def main(corpus: str, targets: list[int]) -> None:
    totals = {"onnx": 0.0, "onnx-light": 0.0}
    converted = {"onnx": 0, "onnx-light": 0}
    cases = 0
    for path in sorted(Path(corpus).glob("*/model.onnx")):
        data = path.read_bytes()
        reference = onnx.load_from_string(data)
        light = ol.load_from_string(data)
        for target in targets:
            cases += 1
            for name, convert, model in (
                ("onnx", theirs.convert_version, reference),
                ("onnx-light", ours.convert_version, light),
            ):
                secs, ok = timed(convert, model, target)
                totals[name] += secs
                converted[name] += ok
    print(f"{cases} cases (targets {', '.join(map(str, targets))})")
    for name in totals:
        print(f"{name:>10}: {totals[name]:8.3f} s, {converted[name]} converted")
    print(f"ratio onnx / onnx-light: {totals['onnx'] / totals['onnx-light']:.1f}x")


if __name__ == "__main__":
    main(sys.argv[1], [int(t) for t in sys.argv[2:]] or [11, 13, 18, 21])
