"""The official `onnx` package's text format, for `tests/tests/text_format.rs`.

    text_format.py print LIST OUT_DIR
        LIST holds one `NAME<TAB>PATH` line per model file. Writes `OUT_DIR/NAME.txt`
        with `onnx.printer.to_text` of the model (UTF-8), or `OUT_DIR/NAME.err` with the
        error when the printer refuses it.
    text_format.py datadir
        Prints the directory of the test data the `onnx` package ships
        (`onnx/backend/test/data`): light, simple and pytorch models besides the node tests.
    text_format.py parse IN_DIR OUT_DIR
        For each `NAME.txt` in IN_DIR, writes `OUT_DIR/NAME.pb` with
        `onnx.parser.parse_model(text).SerializeToString()`, or `OUT_DIR/NAME.err` with
        the error. A text whose name starts with `graph_` is parsed with `parse_graph`.
"""

import os
import sys


def print_models(list_path, out_dir):
    import onnx.onnx_cpp2py_export.printer as printer

    with open(list_path, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    for line in lines:
        name, path = line.split("\t", 1)
        with open(path, "rb") as m:
            data = m.read()
        try:
            text = printer.model_to_text(data)
        except Exception as e:  # the printer's refusal is the expected outcome
            with open(os.path.join(out_dir, name + ".err"), "w", encoding="utf-8") as out:
                out.write("%s: %s" % (type(e).__name__, e))
            continue
        with open(os.path.join(out_dir, name + ".txt"), "wb") as out:
            out.write(text.encode("utf-8"))


def parse_texts(in_dir, out_dir):
    import onnx.parser as parser

    for name in sorted(os.listdir(in_dir)):
        if not name.endswith(".txt"):
            continue
        stem = name[: -len(".txt")]
        with open(os.path.join(in_dir, name), "rb") as f:
            text = f.read().decode("utf-8")
        parse = parser.parse_graph if stem.startswith("graph_") else parser.parse_model
        try:
            data = parse(text).SerializeToString()
        except Exception as e:  # parse errors are compared too
            msg = str(e)
            with open(os.path.join(out_dir, stem + ".err"), "w", encoding="utf-8") as out:
                out.write("%s: %s" % (type(e).__name__, msg))
            continue
        with open(os.path.join(out_dir, stem + ".pb"), "wb") as out:
            out.write(data)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "print":
        print_models(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 2 and sys.argv[1] == "datadir":
        import onnx

        sys.stdout.write(os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data"))
    elif len(sys.argv) == 4 and sys.argv[1] == "parse":
        parse_texts(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
