#!/usr/bin/env python3
"""Generate the Python protobuf and gRPC modules from the repository's proto/ directory.

    python gen_stubs.py OUT_DIR [--proto DIR]

Writes OUT_DIR/casino_ledger/v1/{events,ledger,audit}_pb2.py and *_pb2_grpc.py; put OUT_DIR on
sys.path and `from casino_ledger.v1 import ledger_pb2`. Nothing generated is committed: agent.py
calls generate() into a temporary directory at every start, so it always matches proto/.
"""

import argparse
import os
import sys

PROTO_FILES = (
    "casino_ledger/v1/events.proto",
    "casino_ledger/v1/ledger.proto",
    "casino_ledger/v1/audit.proto",
)

DEFAULT_PROTO_DIR = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "proto")
)


def generate(out_dir, proto_dir=DEFAULT_PROTO_DIR):
    """Run grpcio-tools' protoc over PROTO_FILES into out_dir; raises on failure."""
    import grpc_tools
    from grpc_tools import protoc

    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    os.makedirs(out_dir, exist_ok=True)
    args = [
        "protoc",
        "-I" + proto_dir,
        "-I" + well_known,
        "--python_out=" + out_dir,
        "--grpc_python_out=" + out_dir,
    ] + [os.path.join(proto_dir, f) for f in PROTO_FILES]
    if protoc.main(args) != 0:
        raise RuntimeError("protoc failed on %s (see its messages above)" % proto_dir)
    return out_dir


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--proto", default=DEFAULT_PROTO_DIR, help="proto root (default: the repo's)")
    a = p.parse_args()
    generate(a.out_dir, a.proto)
    print("generated into", a.out_dir)


if __name__ == "__main__":
    sys.exit(main())
