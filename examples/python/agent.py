#!/usr/bin/env python3
"""Example reporting agent for one slot machine, written from the proto alone.

Signs a batch of GamePlayed events and a MeterReading with the device's ed25519 key, streams them
on Ingest.Submit, half-closes, reads every receipt until the ledger ends the call, and resends
what got no receipt on a new call after a failure. Exit status: 0 when every event is ACCEPTED or
DUPLICATE; 1 when the ledger refused one (REJECTED or EQUIVOCATION: a person must look); 2 for a
usage, key or outbox problem; 3 when it gave up reaching the ledger (the outbox keeps the events).

See README.md beside this file and docs/agents.md for the contract it follows.
"""

import argparse
import binascii
import fcntl
import hashlib
import json
import os
import random
import shutil
import sys
import tempfile
import time

import grpc
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

import gen_stubs

# What every device event's signature covers: these 24 bytes, then the encoded EventBody.
EVENT_DOMAIN = b"casino-ledger/v1/event\n\x00"
# ingest.max_body_bytes' default (and its most); a larger body is REJECTED (TOO_LARGE).
MAX_BODY_BYTES = 65536
# Status codes after which the same envelopes may be sent again on a new call.
RETRYABLE = {
    grpc.StatusCode.UNAVAILABLE,  # ledger stopping, storage failure, connection lost or refused
    grpc.StatusCode.RESOURCE_EXHAUSTED,  # in-flight limits, receipts left unread too long
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.INTERNAL,  # e.g. RST_STREAM from a proxy or a dying connection
    grpc.StatusCode.UNKNOWN,
}

pb = None  # the generated modules, set by load_stubs()


def log(*args):
    print(*args, file=sys.stderr, flush=True)


class Fatal(Exception):
    """Ends the run with an exit status and a message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


# ----------------------------------------------------------------------------- stubs and keys


class Stubs:
    def __init__(self, events_pb2, ledger_pb2, ledger_pb2_grpc):
        self.events = events_pb2
        self.ledger = ledger_pb2
        self.grpc = ledger_pb2_grpc


def load_stubs(stubs_dir):
    """Import the generated modules: from stubs_dir, or generated now into a temporary directory."""
    global pb
    if stubs_dir is None:
        stubs_dir = tempfile.mkdtemp(prefix="casino-ledger-stubs-")
        try:
            gen_stubs.generate(stubs_dir)
        except Exception as e:
            shutil.rmtree(stubs_dir, ignore_errors=True)
            raise Fatal(2, "cannot generate the gRPC stubs from proto/: %s" % e)
        sys.path.insert(0, stubs_dir)
        from casino_ledger.v1 import events_pb2, ledger_pb2, ledger_pb2_grpc

        shutil.rmtree(stubs_dir, ignore_errors=True)  # imported: the files are no longer needed
    else:
        sys.path.insert(0, stubs_dir)
        from casino_ledger.v1 import events_pb2, ledger_pb2, ledger_pb2_grpc
    pb = Stubs(events_pb2, ledger_pb2, ledger_pb2_grpc)


def read_key(path):
    """A NAME.key file (`ledgerctl keygen`): the ed25519 key in PKCS#8 PEM, or its 32-byte seed
    as 64 hex digits (older key files)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise Fatal(2, "%s: %s" % (path, e))
    if data.lstrip().startswith(b"-----BEGIN"):
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError) as e:
            raise Fatal(2, "%s: not a PKCS#8 PEM key: %s" % (path, e))
        if not isinstance(key, Ed25519PrivateKey):
            raise Fatal(2, "%s: not an ed25519 key" % path)
        return key
    try:
        seed = binascii.unhexlify(data.strip())
    except (binascii.Error, ValueError) as e:
        raise Fatal(2, "%s: %s" % (path, e))
    if len(seed) != 32:
        raise Fatal(2, "%s: the seed must be 32 bytes (64 hex digits), got %d" % (path, len(seed)))
    return Ed25519PrivateKey.from_private_bytes(seed)


def public_bytes(key):
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def sign(key, body):
    """The Envelope for an encoded EventBody: the bytes as they are, signed under EVENT_DOMAIN."""
    if len(body) > MAX_BODY_BYTES:
        raise Fatal(2, "an event of %d bytes is over the ledger's %d" % (len(body), MAX_BODY_BYTES))
    return pb.events.Envelope(body=body, signature=key.sign(EVENT_DOMAIN + body))


# ------------------------------------------------------------------------------------ outbox


class Outbox:
    """Envelopes signed but not yet answered, on disk before they are sent.

    A signed sequence number must never be signed again with other bytes (that is an
    equivocation). Envelopes cut off by a crash or a lost connection may or may not be in the
    ledger, so the next run first resends exactly these bytes (DUPLICATE if they were stored), and
    only then asks the ledger where the device's sequence stands. The file is locked: one agent
    process per device.
    """

    def __init__(self, path):
        self.path = path
        self.lock = open(path + ".lock", "a")
        try:
            fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise Fatal(2, "%s is locked: another agent runs for this device" % path)

    def load(self):
        try:
            with open(self.path) as f:
                lines = [l.split() for l in f if l.strip()]
        except FileNotFoundError:
            return []
        try:
            return [
                pb.events.Envelope(body=binascii.unhexlify(b), signature=binascii.unhexlify(s))
                for b, s in lines
            ]
        except (ValueError, binascii.Error) as e:
            raise Fatal(2, "%s is damaged (%s): move it away only after checking the ledger" % (self.path, e))

    def store(self, envelopes):
        """Write envelopes durably (temporary file, fsync, rename, fsync of the directory)."""
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            for e in envelopes:
                f.write("%s %s\n" % (e.body.hex(), e.signature.hex()))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        d = os.open(os.path.dirname(os.path.abspath(self.path)), os.O_RDONLY)
        try:
            os.fsync(d)
        finally:
            os.close(d)

    def clear(self):
        self.store([])


# ------------------------------------------------------------------------- the slot machine


class SimulatedMachine:
    """Stands in for the machine a real agent reads (over SAS or G2S): deterministic games and
    cumulative meters, so that every run continues from the last game the ledger holds."""

    NOTE_CENTS = 2000  # the player inserts a 20-euro note when the credits run short
    # (chance in 1000, multiple of the wager): about 90% returned
    PAYS = ((5, 50), (30, 10), (100, 2), (150, 1))

    def __init__(self, machine_id, bet_values_cents):
        self.machine_id = machine_id
        self.bets = list(bet_values_cents) or [100]
        self.game_number = 0
        self.credits = 0
        self.meter = {"coin_in": 0, "coin_out": 0, "total_drop": 0, "games_played": 0}

    def play(self):
        n = self.game_number + 1
        wager = self.bets[n % len(self.bets)]
        h = hashlib.sha256(("%s/%d" % (self.machine_id, n)).encode()).digest()
        r, win = int.from_bytes(h[:4], "big") % 1000, 0
        for chance, multiple in self.PAYS:
            if r < chance:
                win = wager * multiple
                break
            r -= chance
        if self.credits < wager:
            self.credits += self.NOTE_CENTS
            self.meter["total_drop"] += self.NOTE_CENTS
        self.credits += win - wager
        self.meter["coin_in"] += wager
        self.meter["coin_out"] += win
        self.meter["games_played"] += 1
        self.game_number = n
        return n, wager, win

    def fast_forward(self, games):
        while self.game_number < games:
            self.play()


# -------------------------------------------------------------------------------- the calls


class Backoff:
    """Jittered exponential backoff ("full jitter"): sleep a random time up to the current cap."""

    def __init__(self, base, cap, max_attempts):
        self.base, self.cap, self.max_attempts = base, cap, max_attempts
        self.reset()

    def reset(self):
        self.attempts, self.delay = 0, self.base

    def wait(self, what, err):
        self.attempts += 1
        if self.max_attempts and self.attempts >= self.max_attempts:
            raise Fatal(3, "%s: giving up after %d attempts: %s" % (what, self.attempts, describe(err)))
        pause = random.uniform(0, self.delay)
        log("%s: %s; retrying in %.2f s" % (what, describe(err), pause))
        time.sleep(pause)
        self.delay = min(self.delay * 2, self.cap)


def describe(err):
    if isinstance(err, grpc.RpcError):
        return "%s: %s" % (err.code().name, err.details())
    return str(err)


def unary(backoff, what, fn, *args):
    """A unary call, retried while the ledger is unreachable."""
    backoff.reset()
    while True:
        try:
            return fn(*args)
        except grpc.RpcError as e:
            if e.code() not in RETRYABLE:
                raise
            backoff.wait(what, e)


class Results:
    """The receipts of one batch, by position in it; what the exit status is made of."""

    def __init__(self, device_id, envelopes, receipts_out, verbose):
        self.device_id = device_id
        self.sequences = [pb.events.EventBody.FromString(e.body).sequence for e in envelopes]
        self.receipts = [None] * len(envelopes)
        self.out = receipts_out
        self.verbose = verbose

    def take(self, i, r):
        """The receipt for envelope i of the batch."""
        st = pb.ledger.ReceiptStatus
        unread = r.status == st.RECEIPT_STATUS_REJECTED and not r.device_id  # body not decoded
        if not unread and (r.sequence != self.sequences[i] or r.device_id != self.device_id):
            raise Fatal(3, "receipt %d names %s/%d, expected %s/%d" % (
                r.position, r.device_id, r.sequence, self.device_id, self.sequences[i]))
        self.receipts[i] = r
        name = st.Name(r.status).replace("RECEIPT_STATUS_", "")
        if r.status == st.RECEIPT_STATUS_ACCEPTED or r.status == st.RECEIPT_STATUS_DUPLICATE:
            # DUPLICATE: the identical bytes were already stored; these are the original's.
            if self.verbose:
                log("%s sequence %d: entry %d" % (name, r.sequence, r.index))
        elif r.status == st.RECEIPT_STATUS_REJECTED:
            reason = pb.ledger.RejectReason.Name(r.reason)
            extra = ""
            if r.reason == pb.ledger.REJECT_REASON_SEQUENCE_GAP:
                extra = " (the ledger expects %d)" % r.expected_sequence
            log("REJECTED sequence %d: %s%s: %s" % (r.sequence, reason, extra, r.detail))
        elif r.status == st.RECEIPT_STATUS_EQUIVOCATION:
            log("EQUIVOCATION sequence %d: another event with this sequence is in the chain; "
                "security finding at entry %d: %s" % (r.sequence, r.index, r.detail))
        else:
            log("receipt with unknown status %d for sequence %d: %s" % (r.status, r.sequence, r))
        if self.out:
            self.out.write(json.dumps({
                "device_id": self.device_id,
                "sequence": r.sequence,
                "status": name,
                "reason": pb.ledger.RejectReason.Name(r.reason).replace("REJECT_REASON_", ""),
                "index": r.index,
                "entry_hash": r.entry_hash.hex(),
                "received_at_ms": r.received_at_ms,
                "detail": r.detail,
            }) + "\n")
            self.out.flush()

    def ok(self):
        good = (pb.ledger.RECEIPT_STATUS_ACCEPTED, pb.ledger.RECEIPT_STATUS_DUPLICATE)
        return all(r is not None and r.status in good for r in self.receipts)

    def count(self, status):
        return sum(1 for r in self.receipts if r is not None and r.status == status)


def submit_once(stub, envelopes, start, results):
    """One Submit call carrying envelopes[start:]: send them all, half-close, read receipts until
    the ledger ends the call. Returns (receipts read, the error that ended the call or None)."""
    # A list iterator: grpcio sends it on its own thread and half-closes after the last one,
    # while this thread reads. No deadline: a deadline would end a slow but healthy stream.
    call = stub.Submit(iter(envelopes[start:]))
    got = 0
    try:
        for r in call:  # ends when the ledger ends the call: never by counting receipts
            got += 1
            if r.position != got:
                call.cancel()
                raise Fatal(3, "receipt position %d where %d was due" % (r.position, got))
            results.take(start + got - 1, r)
    except grpc.RpcError as e:
        return got, e
    return got, None


def deliver(stub, envelopes, results, backoff):
    """Every envelope answered, resending those without a receipt on a new call after a
    failure (the very same bytes: a stored one comes back DUPLICATE)."""
    done = 0
    backoff.reset()
    while done < len(envelopes):
        got, err = submit_once(stub, envelopes, done, results)
        done += got
        if done == len(envelopes):
            if err is not None:
                log("the call ended with %s after the last receipt" % describe(err))
            return
        if got:
            backoff.reset()
        if err is None:
            err = "the call ended with OK after %d of %d receipts" % (done, len(envelopes))
        elif err.code() not in RETRYABLE:
            raise Fatal(3, "Ingest.Submit failed: %s" % describe(err))
        backoff.wait("Ingest.Submit (%d envelope(s) without a receipt)" % (len(envelopes) - done), err)


# -------------------------------------------------------------------------------------- run


def device_state(query, backoff, device_id, key):
    """What the ledger knows of the device: (DeviceInfo or None, last game number)."""
    try:
        info = unary(backoff, "Query.GetDevice", query.GetDevice,
                     pb.ledger.GetDeviceRequest(device_id=device_id))
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.NOT_FOUND:
            raise Fatal(3, "Query.GetDevice: %s" % describe(e))
        log("device %s is not registered on this ledger: its events will be rejected" % device_id)
        return None, 0
    if info.public_key != public_bytes(key):
        raise Fatal(2, "the key file does not hold the key the ledger has for %s" % device_id)
    if info.revoked:
        log("device %s was revoked at entry %d: its events will be rejected" % (device_id, info.revoked_at_index))
    games = 0
    if info.last_sequence:
        # The machine's last game, from the device's last entry: a GamePlayed or a MeterReading.
        req = pb.ledger.ListDeviceEntriesRequest(device_id=device_id, from_sequence=info.last_sequence)
        entries = unary(backoff, "Query.ListDeviceEntries",
                        lambda: list(query.ListDeviceEntries(req, timeout=30)))
        last = pb.events.EventBody.FromString(entries[-1].body)
        kind = last.WhichOneof("payload")
        if kind == "game_played":
            games = last.game_played.game_number
        elif kind == "meter_reading":
            games = next((m.value for m in last.meter_reading.meters if m.name == "games_played"), 0)
        else:
            raise Fatal(2, "the device's last event is a %s: not this agent's" % kind)
    return info, games


def build_batch(args, key, info, games, first_sequence):
    """Sign args.games games and a meter reading after them, from first_sequence on."""
    machine_id = (info.machine_id if info else "") or args.device_id
    machine = SimulatedMachine(machine_id, info.bet_values_cents if info else [])
    machine.fast_forward(games)
    bodies, now = [], int(time.time() * 1000)
    for _ in range(args.games):
        n, wager, win = machine.play()
        bodies.append(("game_played", pb.events.GamePlayed(
            machine_id=machine_id, game_number=n, wager_cents=wager, win_cents=win)))
    meters = [pb.events.Meter(name=k, value=v) for k, v in sorted(machine.meter.items())]
    bodies.append(("meter_reading", pb.events.MeterReading(machine_id=machine_id, meters=meters)))
    envelopes = []
    for i, (field, payload) in enumerate(bodies):
        body = pb.events.EventBody(device_id=args.device_id, sequence=first_sequence + i,
                                   occurred_at_ms=now)
        getattr(body, field).CopyFrom(payload)
        # Encoded once; these bytes are what is signed, stored, and resent.
        envelopes.append(sign(key, body.SerializeToString()))
    return envelopes


def open_channel(args, target):
    """TLS with a client certificate when --tls-ca is given (ledgerd maps the certificate's key
    to a device principal), else plaintext (a ledgerd serving plaintext on loopback)."""
    if not args.tls_ca:
        return grpc.insecure_channel(target)
    def read(path):
        with open(path, "rb") as f:
            return f.read()
    creds = grpc.ssl_channel_credentials(
        root_certificates=read(args.tls_ca),
        private_key=read(args.tls_key) if args.tls_key else None,
        certificate_chain=read(args.tls_cert) if args.tls_cert else None,
    )
    return grpc.secure_channel(target, creds)


def run(args):
    load_stubs(args.stubs)
    key = read_key(args.key)
    outbox = Outbox(args.outbox or os.path.splitext(args.key)[0] + ".outbox")
    target = args.server.split("://", 1)[-1]
    backoff = Backoff(args.backoff, args.backoff_max, args.max_attempts)
    receipts_out = open(args.receipts, "a") if args.receipts else None
    with open_channel(args, target) as channel:
        ingest = pb.grpc.IngestStub(channel)
        query = pb.grpc.QueryStub(channel)
        # 1. What a previous run left unanswered, resent as it was signed.
        left = outbox.load()
        if left:
            log("resending %d envelope(s) left in %s" % (len(left), outbox.path))
            results = Results(args.device_id, left, receipts_out, args.verbose)
            deliver(ingest, left, results, backoff)
            outbox.clear()  # every one has its receipt
            if not results.ok():
                raise Fatal(1, "the ledger refused envelopes a previous run left (see above)")
        # 2. Where the device's sequence stands: nothing of it is on its way any more.
        info, games = device_state(query, backoff, args.device_id, key)
        first = args.start_sequence or ((info.last_sequence if info else 0) + 1)
        envelopes = build_batch(args, key, info, games, first)
        outbox.store(envelopes)
        results = Results(args.device_id, envelopes, receipts_out, args.verbose)
        deliver(ingest, envelopes, results, backoff)
        outbox.clear()
    st = pb.ledger
    print("device %s: %d events, sequences %d..%d: %d accepted, %d duplicate, %d rejected, "
          "%d equivocation" % (args.device_id, len(envelopes), first, first + len(envelopes) - 1,
                               results.count(st.RECEIPT_STATUS_ACCEPTED),
                               results.count(st.RECEIPT_STATUS_DUPLICATE),
                               results.count(st.RECEIPT_STATUS_REJECTED),
                               results.count(st.RECEIPT_STATUS_EQUIVOCATION)), flush=True)
    if results.count(st.RECEIPT_STATUS_EQUIVOCATION):
        raise Fatal(1, "EQUIVOCATION: this device signed two events with one sequence number; the "
                    "ledger recorded a security finding. Stop this device's agents; a person must "
                    "find out why")
    if not results.ok():
        raise Fatal(1, "the ledger refused events (see above): fix the cause, then run again")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--server", default="127.0.0.1:50051", help="ledgerd's gRPC address (host:port)")
    p.add_argument("--key", required=True, help="the device's NAME.key file (hex ed25519 seed)")
    p.add_argument("--tls-ca", default=os.environ.get("LEDGER_CA"),
                   help="CA certificate of ledgerd's TLS certificate (default: $LEDGER_CA)")
    p.add_argument("--tls-cert", default=os.environ.get("LEDGER_CERT"),
                   help="this agent's client certificate (default: $LEDGER_CERT)")
    p.add_argument("--tls-key", default=os.environ.get("LEDGER_KEY"),
                   help="this agent's client key (default: $LEDGER_KEY)")
    p.add_argument("--device-id", required=True)
    p.add_argument("--games", type=int, default=20, help="games in this batch (then one meter reading)")
    p.add_argument("--outbox", help="where signed envelopes wait for receipts (default: NAME.outbox)")
    p.add_argument("--receipts", help="append every receipt as a JSON line to this file")
    p.add_argument("--stubs", help="pre-generated stubs (gen_stubs.py); default: generated now")
    p.add_argument("--max-attempts", type=int, default=12,
                   help="failed attempts in a row before giving up (0: never)")
    p.add_argument("--backoff", type=float, default=0.2, help="first retry's maximum pause, s")
    p.add_argument("--backoff-max", type=float, default=5.0, help="largest pause, s")
    p.add_argument("--start-sequence", type=int, default=0,
                   help="drills only: force the first sequence number (a used one is an EQUIVOCATION)")
    p.add_argument("-v", "--verbose", action="store_true", help="log every receipt")
    args = p.parse_args(argv)
    if args.games < 0:
        p.error("--games must not be negative")
    try:
        return run(args)
    except Fatal as e:
        log("agent: %s" % e)
        return e.status
    except KeyboardInterrupt:
        log("agent: interrupted; what got no receipt is in the outbox and is resent next run")
        return 130


if __name__ == "__main__":
    sys.exit(main())
