"""The privacy ledger's records: what each holds, how it is chained and signed.

Every record has `seq` (1, 2, ... with no gap), `time`, `event`, `key_id` (the key that signed it),
`prev` (the SHA-256 `hash` of the record before; GENESIS for the first) and `prev_time` (that
record's time: a verifier tells records lost from records expired under a retention by it),
then `receipt` (`pr_` + the hash's first 32 hex digits), `hash` (SHA-256 of every other field,
keys sorted) and `sig` (Ed25519 over the hash). Events:

- `genesis`: the first record of a ledger; names its public key.
- `decision`: one routing decision (request id, tenant, private or not and why, the kinds found,
  the detector stages, the node and whether it is on-prem, the outcome) and the keyed hash of the
  outbound payload, never its text.
- `recovered`: written at start after a torn last line (a crash mid-write) was cut; names the
  offset, the length and the SHA-256 of what was cut. The cut record was never acknowledged, so
  its request never left.
- `outage`: written when the ledger is writable again; names the cause, since when, and how many
  requests were refused meanwhile.
- `segment`: the first record of a new file after rotation; names the file the chain came from.
- `key_rotation`: signed by the old key, names the new one (`new_key_id`, `new_public_key`); the
  records after it are signed by the new key.
"""

import hashlib
from dataclasses import dataclass

import orjson

from gateway.privacy.ledger_keys import Signer, public_hex

GENESIS = "0" * 64
SEALS = ("receipt", "hash", "sig")


@dataclass(frozen=True, slots=True)
class Head:
    """The chain's last record: what the next one follows, and the key that signs it."""

    seq: int = 0
    hash: str = GENESIS
    time: float | None = None
    key_id: str | None = None  # None: no record yet


def digest(fields: dict) -> str:
    return hashlib.sha256(orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)).hexdigest()


def head_of(record: dict) -> Head:
    key = record["new_key_id"] if record.get("event") == "key_rotation" else record["key_id"]
    return Head(int(record["seq"]), str(record["hash"]), float(record["time"]), str(key))


def chain(head: Head, signer: Signer, entries: list[dict], now: float) -> tuple[list[dict], Head]:
    """`entries` (each an `event` and its fields) as records following `head`, and the new head."""
    records = []
    for entry in entries:
        fields = {
            "seq": head.seq + 1,
            "time": now,
            **entry,
            "key_id": signer.key_id,
            "prev": head.hash,
            "prev_time": head.time,
        }
        record_hash = digest(fields)
        record = {**fields, "receipt": f"pr_{record_hash[:32]}", "hash": record_hash}
        record["sig"] = signer.sign(record_hash)
        records.append(record)
        head = head_of(record)
    return records, head


def genesis_entry(signer: Signer) -> dict:
    return {"event": "genesis", "public_key": public_hex(signer.public)}


def exported_head(record: dict, where: str) -> dict:
    """What `hybridgw audit export-head` prints: enough to prove later that nothing up to this
    record was removed (`verify --head`)."""
    return {
        "ledger": where,
        "seq": record["seq"],
        "time": record["time"],
        "hash": record["hash"],
        "key_id": record["key_id"],
        "sig": record["sig"],
    }
