#!/usr/bin/env python3
"""An independent check of C2SP ML-DSA-44 cosignatures (c2sp.org/tlog-cosignature, subtree/v1),
written from the specification with Python's `cryptography` (>= 47, OpenSSL's ML-DSA):

  c2sp-mldsa44.py verify VKEY < NOTE        check the note's line of that vkey; prints its time
  c2sp-mldsa44.py sign SEED_HEX NAME TIME < NOTE
                                            prints the witness's vkey and its cosignature line

The Rust tests use it to check ledger-core::note against another implementation."""
import base64
import hashlib
import struct
import sys

from cryptography.hazmat.primitives.asymmetric import mldsa


def opaque8(b: bytes) -> bytes:
    assert 1 <= len(b) <= 255
    return bytes([len(b)]) + b


def message(name: str, ts: int, text: str) -> bytes:
    origin, size, root = text.split("\n")[:3]
    root = base64.b64decode(root, validate=True)
    assert len(root) == 32
    return (b"subtree/v1\n\0" + opaque8(name.encode()) + struct.pack(">Q", ts)
            + opaque8(origin.encode()) + struct.pack(">QQ", 0, int(size)) + root)


def key_id(name: str, pub: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n\x06" + pub).digest()[:4]


def split_note(note: str):
    text, sigs = note.rsplit("\n\n", 1)
    return text + "\n", [l for l in sigs.split("\n") if l]


def main() -> int:
    note = sys.stdin.read()
    text, lines = split_note(note)
    if sys.argv[1] == "verify":
        name, kid, b64 = sys.argv[2].split("+", 2)
        raw = base64.b64decode(b64, validate=True)
        assert raw[0] == 6 and len(raw) == 1 + 1312, "not an ML-DSA-44 vkey"
        pub = raw[1:]
        assert key_id(name, pub).hex() == kid, "key id"
        key = mldsa.MLDSA44PublicKey.from_public_bytes(pub)
        for line in lines:
            who, sig = line.removeprefix("\u2014 ").split(" ", 1)
            sig = base64.b64decode(sig, validate=True)
            if who != name or sig[:4] != key_id(name, pub):
                continue
            assert len(sig) == 4 + 8 + 2420, "signature length"
            ts = struct.unpack(">Q", sig[4:12])[0]
            key.verify(sig[12:], message(name, ts, text))  # raises InvalidSignature
            print(ts)
            return 0
        print("no line of this key", file=sys.stderr)
        return 1
    if sys.argv[1] == "sign":
        seed, name, ts = bytes.fromhex(sys.argv[2]), sys.argv[3], int(sys.argv[4])
        key = mldsa.MLDSA44PrivateKey.from_seed_bytes(seed)
        pub = key.public_key().public_bytes_raw()
        sig = key.sign(message(name, ts, text))
        print(f"{name}+{key_id(name, pub).hex()}+{base64.b64encode(bytes([6]) + pub).decode()}")
        line = key_id(name, pub) + struct.pack(">Q", ts) + sig
        print(f"\u2014 {name} {base64.b64encode(line).decode()}")
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
