"""The ONNX backend node-test corpus, for `tests/tests/onnx_corpus.rs`.

    onnx_corpus.py extract WHEEL DEST
        Extracts `onnx/backend/test/data/node/**` of an `onnx` wheel to `DEST/node/**`.
    onnx_corpus.py summary NODE_DIR
        Prints one line per model and per test-data file, as parsed by `onnx`:
        `model <test> <summary>` and `data <test>/<set>/<file> <summary>` (see
        onnx_summary.py). A data file is a TensorProto, SequenceProto, OptionalProto or
        MapProto according to the type of the graph input or output it belongs to (as the
        onnx backend test runner reads them).
"""

import os
import re
import sys
import zipfile

PREFIX = "onnx/backend/test/data/"
DATA_FILE = re.compile(r"^(input|output)_(\d+)\.pb$")


def extract(wheel, dest):
    count = 0
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if not info.filename.startswith(PREFIX + "node/") or info.is_dir():
                continue
            rel = info.filename[len(PREFIX):]
            path = os.path.join(dest, *rel.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with z.open(info) as src, open(path, "wb") as out:
                out.write(src.read())
            count += 1
    if count == 0:
        sys.exit("no %snode/ files in %s" % (PREFIX, wheel))
    print("extracted %d files" % count)


def data_kind(model, filename):
    """`tensor`, `sequence`, `optional`, `map` or `sparse_tensor` for a data file."""
    m = DATA_FILE.match(filename)
    if m is None:
        raise ValueError("not a data file name: " + filename)
    values = model.graph.input if m.group(1) == "input" else model.graph.output
    index = int(m.group(2))
    if index >= len(values):
        raise ValueError("%s: the graph has %d %ss" % (filename, len(values), m.group(1)))
    which = values[index].type.WhichOneof("value")
    kinds = {
        "tensor_type": "tensor",
        "sequence_type": "sequence",
        "optional_type": "optional",
        "map_type": "map",
        "sparse_tensor_type": "sparse_tensor",
    }
    if which not in kinds:
        raise ValueError("%s: unsupported value type %s" % (filename, which))
    return kinds[which]


def summary(node_dir):
    import onnx
    import onnx_summary as s

    parsers = {
        "tensor": (onnx.TensorProto, s.tensor),
        "sequence": (onnx.SequenceProto, s.sequence),
        "optional": (onnx.OptionalProto, s.optional),
        "map": (onnx.MapProto, s.map_proto),
        "sparse_tensor": (onnx.SparseTensorProto, s.sparse),
    }
    out = []
    for test in sorted(os.listdir(node_dir)):
        test_dir = os.path.join(node_dir, test)
        model_path = os.path.join(test_dir, "model.onnx")
        if not os.path.isfile(model_path):
            continue
        with open(model_path, "rb") as f:
            model = onnx.ModelProto.FromString(f.read())
        out.append("model %s %s" % (test, s.model(model)))
        for data_set in sorted(os.listdir(test_dir)):
            set_dir = os.path.join(test_dir, data_set)
            if not data_set.startswith("test_data_set_") or not os.path.isdir(set_dir):
                continue
            for name in sorted(os.listdir(set_dir)):
                if not name.endswith(".pb"):
                    continue
                cls, summarize = parsers[data_kind(model, name)]
                with open(os.path.join(set_dir, name), "rb") as f:
                    value = cls.FromString(f.read())
                out.append("data %s/%s/%s %s" % (test, data_set, name, summarize(value)))
    sys.stdout.write("\n".join(out) + "\n")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "extract":
        extract(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "summary":
        summary(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
