"""Reply-stream chunks and heartbeats a reader can trust came from a cloud worker.

Every worker signs what it writes (fences, chunks, heartbeats) with its own key: HMAC-SHA256 of
the message without its signature. Keys derive from one secret that only the gateway holds,
`worker_key(secret, name)`, and each worker is given its own (`hybridgw cloud worker-key`), so
a worker signs only as itself, and a client holding the cloud's Redis credentials but no key
writes nothing that counts: the gateway drops what it cannot verify. With no secret configured
(an embedded or trusted deployment) nothing is signed or checked.
"""

import hashlib
import hmac

from shared.proto import inference_pb2 as pb

SIGNATURE_BYTES = 16


def worker_key(secret: bytes, worker: str) -> bytes:
    return hmac.new(secret, b"hybridgw-worker:" + worker.encode(), hashlib.sha256).digest()


def worker_of(owner: str) -> str:
    """A chunk's owner is `worker/turn` (shared/reply_stream.py): the worker's name."""
    return owner.split("/", 1)[0]


def _mac(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, payload, hashlib.sha256).digest()[:SIGNATURE_BYTES]


def _chunk_payload(chunk: pb.GenerateChunk) -> bytes:
    unsigned = pb.GenerateChunk()
    unsigned.CopyFrom(chunk)
    unsigned.ClearField("signature")
    return unsigned.SerializeToString(deterministic=True)


class ChunkSigner:
    """A worker's: signs with its key (none: signs nothing)."""

    def __init__(self, key: bytes | None):
        self.key = key

    def sign(self, chunk: pb.GenerateChunk) -> pb.GenerateChunk:
        if self.key is not None:
            chunk.signature = _mac(self.key, _chunk_payload(chunk))
        return chunk

    def sign_heartbeat(self, fields: dict[str, str]) -> dict[str, str]:
        if self.key is None:
            return fields
        payload = "\n".join(f"{name}={fields[name]}" for name in sorted(fields)).encode()
        return {**fields, "signature": _mac(self.key, payload).hex()}


class ChunkVerifier:
    """The gateway's: checks against the key the secret derives for the claimed worker (no
    secret: everything passes)."""

    def __init__(self, secret: bytes | None):
        self.secret = secret
        self._keys: dict[str, bytes] = {}

    def _key(self, worker: str) -> bytes:
        key = self._keys.get(worker)
        if key is None:
            key = self._keys[worker] = worker_key(self.secret, worker)
        return key

    def chunk(self, chunk: pb.GenerateChunk) -> bool:
        if self.secret is None:
            return True
        expected = _mac(self._key(worker_of(chunk.owner)), _chunk_payload(chunk))
        return hmac.compare_digest(expected, chunk.signature)

    def heartbeat(self, worker: str, fields: dict[str, str]) -> bool:
        if self.secret is None:
            return True
        signature = fields.get("signature", "")
        unsigned = {name: value for name, value in fields.items() if name != "signature"}
        payload = "\n".join(f"{name}={unsigned[name]}" for name in sorted(unsigned)).encode()
        return hmac.compare_digest(_mac(self._key(worker), payload).hex(), signature)
