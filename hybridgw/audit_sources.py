"""Where `hybridgw audit` reads a privacy ledger from: its files (rotated segments, then the live
one) or a replica's Redis stream, one line at a time (memory flat in the ledger's size)."""

import argparse
from collections.abc import Callable
from pathlib import Path


def register_source(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ledger", help="the ledger file (default $HYBRIDGW_HOME/privacy-ledger.jsonl)")
    parser.add_argument("--redis", help="read the ledger from this Redis instead (store = redis)")
    parser.add_argument("--prefix", default="hybridgw:", help="the gateway's Redis key prefix")
    parser.add_argument("--ledger-id", help="the replica's ledger id (default: the only one in Redis)")


def ledger_path(args: argparse.Namespace) -> Path:
    from gateway.privacy.ledger import default_ledger_path

    path = Path(args.ledger) if args.ledger else default_ledger_path()
    if not path.exists():
        raise SystemExit(f"hybridgw: error: no privacy ledger at {path}")
    return path


def ledger_lines(args: argparse.Namespace, feed: Callable[[bytes, str], None]) -> str:
    """Each of the ledger's lines to `feed(line, where)`, oldest first; returns the ledger's name."""
    if args.redis:
        return _stream_lines(args, feed)
    from gateway.privacy.ledger_verify import file_lines

    path = ledger_path(args)
    for line, where in file_lines(path):
        feed(line, where)
    return str(path)


def _stream_lines(args: argparse.Namespace, feed: Callable[[bytes, str], None]) -> str:
    import asyncio

    from gateway.privacy.ledger_redis import ledger_ids, stream_batches, stream_key
    from shared import redis_client

    async def read() -> str:
        client = redis_client.connect(args.redis)
        try:
            ledger_id = args.ledger_id or await _only_ledger_id(client, args.prefix, ledger_ids)
            stream, number = stream_key(args.prefix, ledger_id), 0
            async for lines in stream_batches(client, stream):
                for line in lines:
                    number += 1
                    feed(line, f"entry {number}")
            return stream
        finally:
            await client.aclose()

    return asyncio.run(read())


async def _only_ledger_id(client, prefix: str, ledger_ids) -> str:
    found = await ledger_ids(client, prefix)
    if len(found) != 1:
        listed = ", ".join(found) or "none"
        raise SystemExit(f"hybridgw: error: --ledger-id: one of the ledgers under {prefix!r} ({listed})")
    return found[0]
