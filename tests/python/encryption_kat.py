"""Known-answer vectors for onnx-light's encrypted formats, made independently of the
Rust code: AES-256-CBC, PKCS#7, ChaCha20-Poly1305 and (for ONNXCRY2) PBKDF2HMAC from
the `cryptography` package, PBKDF2 and HMAC from Python's `hashlib`/`hmac`, the byte
layouts written from the documentation in `onnx-light/src/crypto/mod.rs`. Used by
`tests/tests/encryption.rs`.

    encryption_kat.py vectors
        Prints the vectors of `tests/fixtures/encryption_kat.txt` (deterministic: salts
        and IVs are derived from the vector's number), one per line:
            onnxcry1 <passphrase> <salt> <iv> <key> <plaintext> <file>
            onnxae01 <passphrase> <iterations> <chunk size> <salt> <iv0> <plaintext> <file>
            onnxcry2 <passphrase> <salt> <nonce> <key> <plaintext> <file>
        byte strings in hex (a passphrase as its UTF-8 bytes; `-` for empty). In ONNXAE01
        vectors chunk i has IV iv0 with its last 8 bytes XORed with i (u64 little-endian),
        the rule of onnx-light's test-only fixed-IV hook.
    encryption_kat.py open FILE PASSPHRASE_HEX
        Decrypts FILE (any format) and prints `<format> <plaintext hex>`. For ONNXAE01
        every MAC is checked, for ONNXCRY2 the Poly1305 tag; any failure prints
        `error: <why>` and exits with status 1.
    encryption_kat.py onnxcry1-encrypt PASSPHRASE_HEX PLAINTEXT_FILE OUT
        Writes PLAINTEXT_FILE encrypted as ONNXCRY1 with a random salt and IV to OUT.
    encryption_kat.py onnxcry2-encrypt PASSPHRASE_HEX PLAINTEXT_FILE OUT
        Writes PLAINTEXT_FILE encrypted as ONNXCRY2 with a random salt and nonce to OUT.
"""

import hashlib
import hmac
import os
import struct
import sys

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

ONNXCRY1_ITERATIONS = 100_000
ONNXCRY2_ITERATIONS = 100_000
AE_HEADER_LEN = 84
CRY2_HEADER_LEN = 52


def cbc_encrypt(key, iv, data, pad):
    if pad:
        padder = padding.PKCS7(128).padder()
        data = padder.update(data) + padder.finalize()
    enc = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return enc.update(data) + enc.finalize()


def cbc_decrypt(key, iv, data):
    dec = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
    return dec.update(data) + dec.finalize()


def unpad(data):
    unpadder = padding.PKCS7(128).unpadder()
    return unpadder.update(data) + unpadder.finalize()


# ---------------------------------------------------------------------------------------
# ONNXCRY1: magic | salt 16 | iv 16 | AES-256-CBC(PKCS#7); key = PBKDF2-HMAC-SHA256(
# passphrase, salt, 100 000, 32).


def onnxcry1_key(passphrase, salt):
    return hashlib.pbkdf2_hmac("sha256", passphrase, salt, ONNXCRY1_ITERATIONS, 32)


def onnxcry1_encrypt(passphrase, salt, iv, plaintext):
    key = onnxcry1_key(passphrase, salt)
    return key, b"ONNXCRY1" + salt + iv + cbc_encrypt(key, iv, plaintext, pad=True)


def onnxcry1_decrypt(passphrase, data):
    salt, iv = data[8:24], data[24:40]
    return unpad(cbc_decrypt(onnxcry1_key(passphrase, salt), iv, data[40:]))


# ---------------------------------------------------------------------------------------
# ONNXCRY2: magic | salt 16 | nonce 12 | tag 16 | ChaCha20 ciphertext; no associated
# data; key = PBKDF2-HMAC-SHA256(passphrase, salt, 100 000, 32).


def onnxcry2_key(passphrase, salt):
    kdf = PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=salt, iterations=ONNXCRY2_ITERATIONS)
    return kdf.derive(passphrase)


def onnxcry2_encrypt(passphrase, salt, nonce, plaintext):
    key = onnxcry2_key(passphrase, salt)
    sealed = ChaCha20Poly1305(key).encrypt(nonce, plaintext, None)  # ciphertext | tag
    ct, tag = sealed[:-16], sealed[-16:]
    return key, b"ONNXCRY2" + salt + nonce + tag + ct


def onnxcry2_decrypt(passphrase, data):
    if len(data) < CRY2_HEADER_LEN:
        raise Refused("truncated header")
    salt, nonce, tag, ct = data[8:24], data[24:36], data[36:52], data[52:]
    try:
        return ChaCha20Poly1305(onnxcry2_key(passphrase, salt)).decrypt(nonce, ct + tag, None)
    except InvalidTag:
        raise Refused("wrong passphrase or corrupted") from None


# ---------------------------------------------------------------------------------------
# ONNXAE01 (see the module docs of onnx-light/src/crypto): header | records.


def ae_keys(passphrase, salt, iterations):
    master = hashlib.pbkdf2_hmac("sha256", passphrase, salt, iterations, 32)
    k_enc = hmac.new(master, b"ONNXAE01 AES-256-CBC key\x01", hashlib.sha256).digest()
    k_mac = hmac.new(master, b"ONNXAE01 HMAC-SHA256 key\x01", hashlib.sha256).digest()
    return k_enc, k_mac


def ae_tag(k_mac, header_mac, index, iv, ct, final):
    msg = header_mac + struct.pack("<Q", index) + iv + ct + bytes([1 if final else 0])
    return hmac.new(k_mac, msg, hashlib.sha256).digest()


def chunk_iv(iv0, index):
    tail = bytes(a ^ b for a, b in zip(iv0[8:], struct.pack("<Q", index)))
    return iv0[:8] + tail


def onnxae01_encrypt(passphrase, iterations, chunk_size, salt, iv0, plaintext):
    k_enc, k_mac = ae_keys(passphrase, salt, iterations)
    signed = b"ONNXAE01" + bytes([1, 0, 0, 0]) + struct.pack("<II", iterations, chunk_size) + salt
    header_mac = hmac.new(k_mac, signed, hashlib.sha256).digest()
    out = signed + header_mac
    chunks = [plaintext[i : i + chunk_size] for i in range(0, len(plaintext), chunk_size)] or [b""]
    for i, chunk in enumerate(chunks):
        final = i == len(chunks) - 1
        iv = chunk_iv(iv0, i)
        ct = cbc_encrypt(k_enc, iv, chunk, pad=final)
        out += iv + ct + ae_tag(k_mac, header_mac, i, iv, ct, final)
    return out


class Refused(Exception):
    pass


def onnxae01_decrypt(passphrase, data):
    if len(data) < AE_HEADER_LEN:
        raise Refused("truncated header")
    if data[8] != 1 or data[9:12] != b"\0\0\0":
        raise Refused("unsupported KDF or reserved bytes")
    iterations, chunk_size = struct.unpack("<II", data[12:20])
    if not 1_000 <= iterations <= 10_000_000:
        raise Refused("iterations out of range")
    if chunk_size % 16 or not 64 <= chunk_size <= 64 << 20:
        raise Refused("chunk size out of range")
    salt, header_mac = data[20:52], data[52:84]
    k_enc, k_mac = ae_keys(passphrase, salt, iterations)
    if not hmac.compare_digest(hmac.new(k_mac, data[:52], hashlib.sha256).digest(), header_mac):
        raise Refused("wrong passphrase or corrupted header")
    body, record = data[AE_HEADER_LEN:], chunk_size + 48
    out, index, pos = b"", 0, 0
    while True:
        rest = len(body) - pos
        final = rest <= record + 16
        length = rest if final else record
        if length < 64 or (length - 48) % 16:
            raise Refused("truncated")
        iv, ct, tag = body[pos : pos + 16], body[pos + 16 : pos + length - 32], body[pos + length - 32 : pos + length]
        if not hmac.compare_digest(ae_tag(k_mac, header_mac, index, iv, ct, final), tag):
            raise Refused(f"chunk {index} fails authentication")
        pt = cbc_decrypt(k_enc, iv, ct)
        out += unpad(pt) if final else pt
        if final:
            return out
        index, pos = index + 1, pos + length


# ---------------------------------------------------------------------------------------
# The vectors.

PASSPHRASES = [
    "password",
    "pässwörd ünïcödé",
    "密码🔑 пароль",
    "correct horse battery staple",
]


def derived(label, n, size):
    """Deterministic bytes for vector n (so the fixture can be regenerated exactly)."""
    out = b""
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(f"{label}/{n}/{counter}".encode()).digest()
        counter += 1
    return out[:size]


def sample_model():
    """A small ONNX model, serialized: ONNXCRY1 files made by onnx_light hold these."""
    import onnx  # imported here: the other commands do not need its start-up time
    from onnx import TensorProto, helper

    weight = helper.make_tensor(
        "w", TensorProto.FLOAT, [2, 3], [0.5, -1.0, 2.25, 3.0, -4.5, 6.0]
    )
    node = helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")
    graph = helper.make_graph(
        [node],
        "encrypted-kat",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
        initializer=[weight],
    )
    model = helper.make_model(
        graph, producer_name="encryption_kat.py", opset_imports=[helper.make_opsetid("", 21)]
    )
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model.SerializeToString()


def hexa(b):
    return b.hex() if b else "-"


def vectors():
    lines = []
    n = 0
    cry1_plaintexts = [b"", b"\x00", derived("pt", 1, 15), derived("pt", 2, 16), derived("pt", 3, 17),
                       derived("pt", 4, 100), sample_model()]
    for i, pt in enumerate(cry1_plaintexts):
        passphrase = PASSPHRASES[i % len(PASSPHRASES)].encode("utf-8")
        salt, iv = derived("salt", n, 16), derived("iv", n, 16)
        key, data = onnxcry1_encrypt(passphrase, salt, iv, pt)
        assert onnxcry1_decrypt(passphrase, data) == pt
        lines.append(" ".join(["onnxcry1", hexa(passphrase), hexa(salt), hexa(iv), hexa(key), hexa(pt), hexa(data)]))
        n += 1
    for chunk_size, length in [(64, 0), (64, 1), (64, 63), (64, 64), (64, 65), (64, 200), (80, 160), (4096, 5000)]:
        passphrase = PASSPHRASES[n % len(PASSPHRASES)].encode("utf-8")
        salt, iv0 = derived("salt", n, 32), derived("iv", n, 16)
        pt = derived("pt", n, length)
        data = onnxae01_encrypt(passphrase, 1_000, chunk_size, salt, iv0, pt)
        assert onnxae01_decrypt(passphrase, data) == pt
        lines.append(" ".join(["onnxae01", hexa(passphrase), "1000", str(chunk_size), hexa(salt), hexa(iv0), hexa(pt), hexa(data)]))
        n += 1
    cry2_plaintexts = [b"", b"\x00", derived("pt", n, 63), derived("pt", n + 1, 64), derived("pt", n + 2, 65),
                       derived("pt", n + 3, 1000), sample_model()]
    for i, pt in enumerate(cry2_plaintexts):
        passphrase = PASSPHRASES[(i + 1) % len(PASSPHRASES)].encode("utf-8")
        salt, nonce = derived("salt", n, 16), derived("nonce", n, 12)
        key, data = onnxcry2_encrypt(passphrase, salt, nonce, pt)
        assert onnxcry2_decrypt(passphrase, data) == pt
        lines.append(" ".join(["onnxcry2", hexa(passphrase), hexa(salt), hexa(nonce), hexa(key), hexa(pt), hexa(data)]))
        n += 1
    return lines


def main():
    cmd = sys.argv[1]
    if cmd == "vectors":
        print("# Generated by tests/python/encryption_kat.py vectors; see its docstring.")
        for line in vectors():
            print(line)
    elif cmd == "open":
        data = open(sys.argv[2], "rb").read()
        passphrase = bytes.fromhex(sys.argv[3])
        try:
            if data[:8] == b"ONNXCRY1":
                print("onnxcry1", hexa(onnxcry1_decrypt(passphrase, data)))
            elif data[:8] == b"ONNXAE01":
                print("onnxae01", hexa(onnxae01_decrypt(passphrase, data)))
            elif data[:8] == b"ONNXCRY2":
                print("onnxcry2", hexa(onnxcry2_decrypt(passphrase, data)))
            else:
                raise Refused("not encrypted")
        except (Refused, ValueError) as e:
            print(f"error: {e}")
            sys.exit(1)
    elif cmd == "onnxcry1-encrypt":
        passphrase = bytes.fromhex(sys.argv[2])
        pt = open(sys.argv[3], "rb").read()
        _, data = onnxcry1_encrypt(passphrase, os.urandom(16), os.urandom(16), pt)
        open(sys.argv[4], "wb").write(data)
    elif cmd == "onnxcry2-encrypt":
        passphrase = bytes.fromhex(sys.argv[2])
        pt = open(sys.argv[3], "rb").read()
        _, data = onnxcry2_encrypt(passphrase, os.urandom(16), os.urandom(12), pt)
        open(sys.argv[4], "wb").write(data)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
