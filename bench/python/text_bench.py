"""The Python side of `text-bench`: times `onnx.printer.to_text` in this process.

    text_bench.py RUNS OUT_DIR MODEL...

For each model file prints one JSON line: `{"path", "to_text": [seconds...],
"bytes_to_text": [seconds...], "chars"}`. `to_text` is the public API on a loaded
`ModelProto` (which serializes the message and lets C++ parse and print it);
`bytes_to_text` is the C++ entry point on the file's bytes (parse and print only). The
text of each model is written to OUT_DIR/<index>.txt once, for the correctness check.
"""

import json
import os
import sys
import time

import onnx
import onnx.onnx_cpp2py_export.printer as C
import onnx.printer


def main():
    runs = int(sys.argv[1])
    out_dir = sys.argv[2]
    for i, path in enumerate(sys.argv[3:]):
        with open(path, "rb") as f:
            data = f.read()
        model = onnx.load_from_string(data)
        text = onnx.printer.to_text(model)
        with open(os.path.join(out_dir, "%d.txt" % i), "wb") as f:
            f.write(text.encode("utf-8"))
        to_text, bytes_to_text = [], []
        for _ in range(runs):
            t = time.perf_counter()
            onnx.printer.to_text(model)
            to_text.append(time.perf_counter() - t)
            t = time.perf_counter()
            C.model_to_text(data)
            bytes_to_text.append(time.perf_counter() - t)
        print(json.dumps({"path": path, "to_text": to_text,
                          "bytes_to_text": bytes_to_text, "chars": len(text)}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
