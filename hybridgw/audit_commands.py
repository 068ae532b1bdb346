"""`hybridgw audit`: check the privacy ledger and summarize it.

    hybridgw audit verify [--ledger FILE | --redis URL [--prefix P] [--ledger-id ID]] [--key-file FILE]
    hybridgw audit report --since 2026-12-01 [--tenant T] [--ledger FILE | --redis URL ...]

`verify` exits 0 only when every record's hash, signature and link hold and no request classified
private ran on a node that is not on-prem; otherwise it names each failing record and exits 1.
"""

import argparse
import collections
import datetime
import json
from pathlib import Path


def register(commands: argparse._SubParsersAction) -> None:
    audit = commands.add_parser("audit", help="verify and summarize the privacy ledger")
    actions = audit.add_subparsers(dest="action", required=True, metavar="ACTION")
    verify = actions.add_parser("verify", help="check the chain and that no private request ran off-prem")
    report = actions.add_parser("report", help="decisions by kind of personal data and by node")
    for parser in (verify, report):
        parser.add_argument("--ledger", help="the ledger file (default $HYBRIDGW_HOME/privacy-ledger.jsonl)")
        parser.add_argument("--redis", help="read the ledger from this Redis instead (store = redis)")
        parser.add_argument("--prefix", default="hybridgw:", help="the gateway's Redis key prefix")
        parser.add_argument("--ledger-id", default="gateway", help="the replica's ledger id")
    verify.add_argument("--key-file", help="its signing key (default: the ledger's path + '.key')")
    verify.set_defaults(handler=_verify)
    report.add_argument("--since", required=True, help="a date or time, ISO 8601 (2026-12-01)")
    report.add_argument("--tenant", help="only this tenant's requests")
    report.set_defaults(handler=_report)


def _ledger(args: argparse.Namespace) -> Path:
    from gateway.privacy.ledger import default_ledger_path

    path = Path(args.ledger) if args.ledger else default_ledger_path()
    if not path.exists() and not args.redis:
        raise SystemExit(f"hybridgw: error: no privacy ledger at {path}")
    return path


def _lines(args: argparse.Namespace) -> tuple[str, list[bytes]]:
    """(where, the records as JSON lines) from the file or the Redis stream."""
    if not args.redis:
        path = _ledger(args)
        return str(path), path.read_bytes().splitlines()
    import asyncio

    from gateway.privacy.ledger_redis import stream_key, stream_lines
    from shared import redis_client

    async def read() -> list[bytes]:
        client = redis_client.connect(args.redis)
        try:
            return await stream_lines(client, stream_key(args.prefix, args.ledger_id))
        finally:
            await client.aclose()

    return stream_key(args.prefix, args.ledger_id), asyncio.run(read())


def _verify(args: argparse.Namespace) -> int:
    import orjson

    from gateway.privacy.ledger import GENESIS, verify_lines

    path = _ledger(args)
    key_file = Path(args.key_file) if args.key_file else Path(f"{path}.key")
    if not key_file.exists():
        raise SystemExit(f"hybridgw: error: no signing key at {key_file}")
    where, lines = _lines(args)
    first = orjson.loads(lines[0]) if lines else {}
    # a stream trimmed to its retention starts mid-chain: its first record is taken as the anchor
    anchored = bool(args.redis) and first.get("seq", 1) != 1
    if anchored:
        print(f"{where}: starts at record seq {first['seq']} (older records expired under retention)")
    result = verify_lines(lines, bytes.fromhex(key_file.read_text().strip()), None if anchored else GENESIS)
    for problem in result.problems:
        print(f"TAMPERED {problem}")
    for receipt in result.private_off_prem:
        print(f"PRIVATE OFF-PREM {receipt}")
    chain = "intact" if result.intact else f"broken ({len(result.problems)} records)"
    print(
        f"{where}: {result.records} records, chain {chain}; "
        f"private requests that ran off-prem: {len(result.private_off_prem)}"
    )
    return 0 if result.intact and not result.private_off_prem else 1


def _report(args: argparse.Namespace) -> int:
    import orjson

    try:
        since = datetime.datetime.fromisoformat(args.since)
    except ValueError:
        raise SystemExit(f"hybridgw: error: --since: not an ISO 8601 date: {args.since!r}") from None
    if since.tzinfo is None:
        since = since.replace(tzinfo=datetime.UTC)
    _, lines = _lines(args)
    records = [orjson.loads(line) for line in lines if line.strip()]
    records = [
        r
        for r in records
        if r["time"] >= since.timestamp() and (args.tenant is None or r.get("tenant") == args.tenant)
    ]
    by_kind = collections.Counter(kind for r in records for kind in r.get("kinds") or ())
    by_node = collections.Counter(
        f"{r.get('node') or '(none)'} {'private' if r.get('private') else 'public'}" for r in records
    )
    summary = {
        "since": since.isoformat(),
        "tenant": args.tenant,
        "decisions": len(records),
        "private": sum(1 for r in records if r.get("private")),
        "by_reason": dict(collections.Counter(r.get("reason") for r in records)),
        "by_kind": dict(by_kind.most_common()),
        "by_node": dict(by_node.most_common()),
        "private_off_prem": sum(
            1 for r in records if r.get("private") and r.get("node") and not r.get("on_prem")
        ),
    }
    print(json.dumps(summary, indent=2))
    return 0
