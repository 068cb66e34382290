"""onnx's shape inference on every `*.onnx` file of a directory, for the differential
test of onnx-light's (`tests/tests/shape_inference.rs`).

For each `NAME.onnx`, writes `NAME.lax.expected` (the model `infer_shapes` returns,
serialized), `NAME.strict.expected` (with `strict_mode=True`) and `NAME.full.expected`
(with `strict_mode=True, check_type=True`, as `check_model(full_check=True)` runs it),
or `NAME.MODE.error` holding the first line of the error it raised.
"""

import sys
from pathlib import Path

import onnx
from onnx import shape_inference


def main(directory: str) -> None:
    for path in sorted(Path(directory).glob("*.onnx")):
        model = onnx.load(str(path))
        for mode, strict, check_type in (
            ("lax", False, False),
            ("strict", True, False),
            ("full", True, True),
        ):
            stem = path.with_suffix("")
            try:
                inferred = shape_inference.infer_shapes(model, strict_mode=strict, check_type=check_type)
            except Exception as e:  # noqa: BLE001 (any refusal is recorded)
                Path(f"{stem}.{mode}.error").write_text(str(e).splitlines()[0] if str(e) else type(e).__name__)
                continue
            Path(f"{stem}.{mode}.expected").write_bytes(inferred.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1])
