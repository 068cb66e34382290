"""What the official `onnx` package (protobuf's parser) makes of hand-built encodings, for
`tests/tests/noncanonical.rs`.

    noncanonical.py LIST
        LIST has lines `<type> <file>` (a file holding bytes to parse as onnx.<type>:
        ModelProto, GraphProto, NodeProto, AttributeProto or TensorProto). For each,
        prints one line: `ok <hex of SerializeToString()> <summary>` when protobuf parses
        it (summary: see onnx_summary.py), `error <exception class>` when it refuses it.
        Models are read with `onnx.load_model_from_string`, as `onnx.load` reads them.
"""

import sys

import onnx
from google.protobuf.message import DecodeError

import onnx_summary

SUMMARIES = {
    "ModelProto": onnx_summary.model,
    "GraphProto": onnx_summary.graph,
    "NodeProto": onnx_summary.node,
    "AttributeProto": onnx_summary.attribute,
    "TensorProto": onnx_summary.tensor,
}


def parse(type_name, data):
    if type_name == "ModelProto":
        return onnx.load_model_from_string(data)
    return getattr(onnx, type_name).FromString(data)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        entries = [line.rstrip("\n").split(" ", 1) for line in f if line.strip()]
    for type_name, path in entries:
        with open(path, "rb") as f:
            data = f.read()
        try:
            msg = parse(type_name, data)
        except DecodeError as e:
            print("error %s" % type(e).__name__)
            continue
        summary = SUMMARIES[type_name](msg)
        print("ok %s %s" % (msg.SerializeToString().hex(), summary))


if __name__ == "__main__":
    main()
