"""The `hybridgw` command: one entry point, one module per group of subcommands."""

import argparse
import sys

from formats.errors import FormatError
from hybridgw import (
    audit_commands,
    cloud_commands,
    edge_commands,
    format_commands,
    gateway_commands,
    model_commands,
    up_command,
)
from hybridgw.bench import command as bench_command
from hybridgw.parent_watch import die_with_parent
from shared.errors import LedgerError, ListenError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hybridgw",
        description="Serve LLMs through one OpenAI-compatible endpoint across edge and cloud nodes.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    model_commands.register(commands)
    format_commands.register(commands)
    edge_commands.register(commands)
    cloud_commands.register(commands)
    gateway_commands.register(commands)
    up_command.register(commands)
    bench_command.register(commands)
    audit_commands.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    die_with_parent()  # a child of `hybridgw up` stops with it
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args) or 0
    except (FormatError, ValueError, ListenError, LedgerError) as exc:
        print(f"hybridgw: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("hybridgw: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
