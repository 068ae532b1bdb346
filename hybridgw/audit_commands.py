"""`hybridgw audit`: check the privacy ledger and summarize it.

    hybridgw audit verify [--ledger FILE] [--key-file FILE]
    hybridgw audit report --since 2026-12-01 [--tenant T] [--ledger FILE]

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
    verify.add_argument("--key-file", help="its signing key (default: the ledger's path + '.key')")
    verify.set_defaults(handler=_verify)
    report.add_argument("--since", required=True, help="a date or time, ISO 8601 (2026-12-01)")
    report.add_argument("--tenant", help="only this tenant's requests")
    report.set_defaults(handler=_report)


def _ledger(args: argparse.Namespace) -> Path:
    from gateway.privacy.ledger import default_ledger_path

    path = Path(args.ledger) if args.ledger else default_ledger_path()
    if not path.exists():
        raise SystemExit(f"hybridgw: error: no privacy ledger at {path}")
    return path


def _verify(args: argparse.Namespace) -> int:
    from gateway.privacy.ledger import verify

    path = _ledger(args)
    key_file = Path(args.key_file) if args.key_file else Path(f"{path}.key")
    if not key_file.exists():
        raise SystemExit(f"hybridgw: error: no signing key at {key_file}")
    result = verify(path, bytes.fromhex(key_file.read_text().strip()))
    for problem in result.problems:
        print(f"TAMPERED {problem}")
    for receipt in result.private_off_prem:
        print(f"PRIVATE OFF-PREM {receipt}")
    chain = "intact" if result.intact else f"broken ({len(result.problems)} records)"
    print(
        f"{path}: {result.records} records, chain {chain}; "
        f"private requests that ran off-prem: {len(result.private_off_prem)}"
    )
    return 0 if result.intact and not result.private_off_prem else 1


def _report(args: argparse.Namespace) -> int:
    from gateway.privacy.ledger import records_since

    try:
        since = datetime.datetime.fromisoformat(args.since)
    except ValueError:
        raise SystemExit(f"hybridgw: error: --since: not an ISO 8601 date: {args.since!r}") from None
    if since.tzinfo is None:
        since = since.replace(tzinfo=datetime.UTC)
    records = records_since(_ledger(args), since.timestamp(), args.tenant)
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
