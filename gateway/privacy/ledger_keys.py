"""The privacy ledger's signing key: an Ed25519 key pair, so that whoever holds only the public
key (an auditor) can check every record, and nobody without the private key (the operator
included, once the key is rotated or anchored outside) can forge one.

The private key is a PEM file (mode 0600), the public key a PEM file beside it (".pub" added).
Both are created atomically: written to a temporary file, fsynced, linked into place, the folder
fsynced. A key file that is empty or unreadable stops the start with a clear error: the gateway
never signs with a default or an empty key.
"""

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from shared.errors import LedgerError


class LedgerKeyError(LedgerError):
    """The signing key cannot be used (missing where the ledger has records, empty, unreadable,
    or not the key the ledger's records are signed with)."""


def key_id(public: Ed25519PublicKey) -> str:
    """The key's fingerprint: the first 16 hex digits of SHA-256 of its raw 32 bytes."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def public_hex(public: Ed25519PublicKey) -> str:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


def public_from_hex(text: str) -> Ed25519PublicKey:
    return Ed25519PublicKey.from_public_bytes(bytes.fromhex(text))


class Signer:
    """A private key and what is derived from it: its id, its public key, the key of the
    payloads' keyed hashes (so that a payload's hash cannot be matched by guessing its text)."""

    def __init__(self, private: Ed25519PrivateKey):
        self._private = private
        self.public = private.public_key()
        self.key_id = key_id(self.public)
        raw = private.private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
        )
        self.payload_key = hmac.new(raw, b"hybridgw privacy ledger payload", hashlib.sha256).digest()

    @classmethod
    def generate(cls) -> "Signer":
        return cls(Ed25519PrivateKey.generate())

    def sign(self, record_hash: str) -> str:
        return self._private.sign(record_hash.encode()).hex()

    def payload_hmac(self, payload: bytes) -> str:
        return hmac.new(self.payload_key, payload, hashlib.sha256).hexdigest()

    def private_pem(self) -> bytes:
        return self._private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )

    def public_pem(self) -> bytes:
        return self.public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )


def signature_holds(public: Ed25519PublicKey, record_hash: str, signature: str) -> bool:
    try:
        public.verify(bytes.fromhex(signature), record_hash.encode())
    except (InvalidSignature, ValueError):
        return False
    return True


def public_path(key_path: Path) -> Path:
    return key_path.with_name(key_path.name + ".pub")


def load_signer(path: Path) -> Signer:
    """The private key in `path`; LedgerKeyError naming the file when it is missing, empty or
    unreadable."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise LedgerKeyError(f"the privacy ledger's signing key {path} does not exist") from None
    except OSError as error:
        raise LedgerKeyError(
            f"cannot read the privacy ledger's signing key {path}: {error.strerror}"
        ) from None
    if not data.strip():
        raise LedgerKeyError(
            f"the privacy ledger's signing key {path} is empty (a start interrupted while creating "
            "it?); restore it from a backup, or move the ledger and the key aside to start a new ledger"
        )
    try:
        private = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        private = None
    if not isinstance(private, Ed25519PrivateKey):
        raise LedgerKeyError(
            f"the privacy ledger's signing key {path} is not an Ed25519 private key in PEM (a "
            "key of an earlier version signed with HMAC?); move the ledger and the key aside to "
            "start a new ledger"
        )
    return Signer(private)


def load_public_key(path: Path) -> Ed25519PublicKey:
    """A public key file (PEM), or the public half of a private key file."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise LedgerKeyError(f"cannot read the public key {path}: {error.strerror}") from None
    try:
        public = serialization.load_pem_public_key(data)
    except ValueError:
        return load_signer(path).public
    if not isinstance(public, Ed25519PublicKey):
        raise LedgerKeyError(f"{path} is not an Ed25519 public key")
    return public


def create_signer(path: Path) -> Signer:
    """A new key pair, written atomically (never over an existing key: FileExistsError)."""
    signer = Signer.generate()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(public_path(path), signer.public_pem(), 0o644, replace=True)
    write_atomically(path, signer.private_pem(), 0o600, replace=False)
    return signer


def write_atomically(path: Path, data: bytes, mode: int, replace: bool) -> None:
    """`data` in `path` whole or not at all: a temporary file fsynced, then moved into place
    (linked when `replace` is false, so an existing file stays), then the folder fsynced."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        if replace:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    fsync_folder(path.parent)


def fsync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
