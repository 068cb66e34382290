"""onnx's version converter on every backend node-test model of a corpus directory,
for the differential test of onnx-light's (`tests/tests/version_converter.rs`).

Usage: version_converter.py CORPUS_NODE_DIR OUT_DIR TARGET...

For each `CASE/model.onnx` and each target opset, writes `OUT_DIR/CASE.TARGET.expected`
(the converted model, serialized) or `OUT_DIR/CASE.TARGET.error` (the first line of the
error). Prints the seconds the conversions took (loading excluded) on the last line.
"""

import sys
import time
from pathlib import Path

import onnx
from onnx import version_converter


def main(corpus: str, out: str, targets: list[int]) -> None:
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    spent = 0.0
    for model_path in sorted(Path(corpus).glob("*/model.onnx")):
        case = model_path.parent.name
        model = onnx.load(str(model_path))
        for target in targets:
            start = time.perf_counter()
            try:
                converted = version_converter.convert_version(model, target)
                data = converted.SerializeToString()
                spent += time.perf_counter() - start
            except Exception as e:  # noqa: BLE001 (any refusal is recorded)
                spent += time.perf_counter() - start
                text = str(e).splitlines()[0] if str(e) else type(e).__name__
                (out_dir / f"{case}.{target}.error").write_text(text)
                continue
            (out_dir / f"{case}.{target}.expected").write_bytes(data)
    print(f"{spent:.3f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], [int(t) for t in sys.argv[3:]])
