"""`hybridgw audit`: check the privacy ledger, summarize it, anchor its head, rotate its key.

    hybridgw audit verify [--ledger FILE | --redis URL [--prefix P] [--ledger-id ID]
                          [--retention-days D]] [--public-key FILE] [--head FILE]
    hybridgw audit report --since 2026-12-01 [--tenant T] [--ledger FILE | --redis URL ...]
    hybridgw audit export-head [--ledger FILE | --redis URL ...]
    hybridgw audit rotate-key [--ledger FILE] [--key-file FILE]

`verify` exits 0 only when every record's hash, signature and link hold, no record is missing,
the exported head (`--head`) is in the chain, and no request classified private ran on a node
that is not on-prem; otherwise it names each failing record and exits 1. It reads the ledger one
line at a time. `--public-key`: the key the ledger must start with (a public key file, or the
private key's file); without it the ledger's own genesis record names the key, which proves the
chain intact but not who signed it.
"""

import argparse
import collections
import datetime
import json
from pathlib import Path

from hybridgw.audit_sources import ledger_lines, ledger_path, register_source


def register(commands: argparse._SubParsersAction) -> None:
    audit = commands.add_parser("audit", help="verify and summarize the privacy ledger")
    actions = audit.add_subparsers(dest="action", required=True, metavar="ACTION")
    verify = actions.add_parser("verify", help="check the chain and that no private request ran off-prem")
    report = actions.add_parser("report", help="decisions by kind of personal data and by node")
    head = actions.add_parser("export-head", help="print the chain's head, to keep outside the operator")
    rotate = actions.add_parser("rotate-key", help="a new signing key, named by a record the old one signs")
    for parser in (verify, report, head):
        register_source(parser)
    verify.add_argument("--public-key", help="the key the ledger must be signed with (PEM public key)")
    verify.add_argument("--key-file", help="the private key file, its public half used (as --public-key)")
    verify.add_argument("--head", help="a head printed by export-head: nothing up to it may be missing")
    verify.add_argument("--retention-days", type=float, help="the Redis store's retention (older may expire)")
    verify.set_defaults(handler=_verify)
    report.add_argument("--since", required=True, help="a date or time, ISO 8601 (2026-12-01)")
    report.add_argument("--tenant", help="only this tenant's requests")
    report.set_defaults(handler=_report)
    head.set_defaults(handler=_export_head)
    rotate.add_argument("--ledger", help="the ledger file (default $HYBRIDGW_HOME/privacy-ledger.jsonl)")
    rotate.add_argument("--key-file", help="its signing key (default: the ledger's path + '.key')")
    rotate.set_defaults(handler=_rotate_key)


def _verify(args: argparse.Namespace) -> int:
    from gateway.privacy.ledger_keys import load_public_key
    from gateway.privacy.ledger_verify import ChainCheck

    key = args.public_key or args.key_file
    public = load_public_key(Path(key)) if key else None
    head = _read_head(Path(args.head)) if args.head else None
    retention_s = args.retention_days * 86400 if args.retention_days else None
    check = ChainCheck(public, retention_s, head)
    where = ledger_lines(args, check.feed)
    result = check.finish()
    for note in result.notes:
        print(f"NOTE {note}")
    for gap in result.gaps:
        print(f"GAP {gap}")
    for problem in result.problems:
        print(f"TAMPERED {problem}")
    for receipt in result.private_off_prem:
        print(f"PRIVATE OFF-PREM {receipt}")
    broken = len(result.problems) + len(result.gaps)
    chain = "intact" if result.intact else f"broken ({broken} problems)"
    print(
        f"{where}: {result.records} records, chain {chain}; "
        f"private requests that ran off-prem: {len(result.private_off_prem)}"
    )
    return 0 if result.intact and not result.private_off_prem else 1


def _read_head(path: Path) -> dict:
    try:
        head = json.loads(path.read_text())
        return {"seq": int(head["seq"]), "hash": str(head["hash"])}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"hybridgw: error: --head {path}: not a head from export-head ({error})") from None


def _export_head(args: argparse.Namespace) -> int:
    import orjson

    from gateway.privacy.ledger_records import exported_head

    last: list[bytes] = []

    def keep(line: bytes, where: str) -> None:
        if line.strip():
            last[:] = [line]

    where = ledger_lines(args, keep)
    if not last:
        raise SystemExit(f"hybridgw: error: the privacy ledger {where} holds no record")
    print(json.dumps(exported_head(orjson.loads(last[0]), where), indent=2))
    return 0


def _rotate_key(args: argparse.Namespace) -> int:
    from gateway.privacy.ledger import PrivacyLedger
    from gateway.privacy.ledger_keys import public_path

    path = ledger_path(args)
    key_file = Path(args.key_file) if args.key_file else Path(f"{path}.key")
    ledger = PrivacyLedger.open_file(path, key_file)  # refused while a gateway writes it
    try:
        new_key_id = ledger.rotate_key(key_file)
    finally:
        ledger.close()
    print(f"{path}: signing key rotated to {new_key_id} (public key: {public_path(key_file)})")
    return 0


def _report(args: argparse.Namespace) -> int:
    import orjson

    try:
        since = datetime.datetime.fromisoformat(args.since)
    except ValueError:
        raise SystemExit(f"hybridgw: error: --since: not an ISO 8601 date: {args.since!r}") from None
    if since.tzinfo is None:
        since = since.replace(tzinfo=datetime.UTC)
    counts = collections.defaultdict(collections.Counter)

    def count(line: bytes, where: str) -> None:
        if not line.strip():
            return
        r = orjson.loads(line)
        if r.get("event", "decision") != "decision" or r["time"] < since.timestamp():
            return
        if args.tenant is not None and r.get("tenant") != args.tenant:
            return
        counts["all"]["decisions"] += 1
        counts["all"]["private"] += bool(r.get("private"))
        counts["all"]["private_off_prem"] += bool(r.get("private") and r.get("node") and not r.get("on_prem"))
        counts["by_reason"][r.get("reason")] += 1
        counts["by_kind"].update(r.get("kinds") or ())
        counts["by_node"][f"{r.get('node') or '(none)'} {'private' if r.get('private') else 'public'}"] += 1

    ledger_lines(args, count)
    summary = {"since": since.isoformat(), "tenant": args.tenant}
    summary |= {name: counts["all"][name] for name in ("decisions", "private")}
    summary["by_reason"] = dict(counts["by_reason"])
    summary |= {name: dict(counts[name].most_common()) for name in ("by_kind", "by_node")}
    summary["private_off_prem"] = counts["all"]["private_off_prem"]
    print(json.dumps(summary, indent=2))
    return 0
