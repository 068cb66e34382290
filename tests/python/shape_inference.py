"""onnx's shape inference on every `*.onnx` file of a directory, for the differential
test of onnx-light's (`tests/tests/shape_inference.rs`).

For each `NAME.onnx`, writes `NAME.lax.expected` (the model `infer_shapes` returns,
serialized), `NAME.strict.expected` (with `strict_mode=True`), `NAME.full.expected`
(with `strict_mode=True, check_type=True`, as `check_model(full_check=True)` runs it),
`NAME.dataprop.expected` (with `data_prop=True`) and `NAME.strict-dataprop.expected`
(with `strict_mode=True, data_prop=True`), or `NAME.MODE.error` holding the first line
of the error it raised.
"""

import sys
from pathlib import Path

import onnx
from onnx import shape_inference


def main(directory: str) -> None:
    for path in sorted(Path(directory).glob("*.onnx")):
        model = onnx.load(str(path))
        for mode, strict, check_type, data_prop in (
            ("lax", False, False, False),
            ("strict", True, False, False),
            ("full", True, True, False),
            ("dataprop", False, False, True),
            ("strict-dataprop", True, False, True),
        ):
            stem = path.with_suffix("")
            # onnx's data propagation materializes shapes of huge sizes as lists: the
            # comparison leaves those cases out (the Rust side still runs its own).
            if data_prop and (".huge." in path.name or ".max." in path.name):
                continue
            try:
                inferred = shape_inference.infer_shapes(
                    model, strict_mode=strict, check_type=check_type, data_prop=data_prop
                )
            except Exception as e:  # noqa: BLE001 (any refusal is recorded)
                Path(f"{stem}.{mode}.error").write_text(str(e).splitlines()[0] if str(e) else type(e).__name__)
                continue
            Path(f"{stem}.{mode}.expected").write_bytes(inferred.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1])
