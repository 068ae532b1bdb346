"""Tracing for every service: one OpenTelemetry tracer provider per process, W3C trace context
carried across hops (gRPC metadata, the Redis queue message).

Exporters, by environment:
- OTEL_EXPORTER_OTLP_ENDPOINT (standard): OTLP over gRPC to a collector;
- HYBRIDGW_TRACE_FILE=path: one JSON line per finished span (debugging, tests).
Without either, spans are created (context still propagates) but not exported.
"""

import functools
import json
import os
import threading
from collections.abc import Mapping, Sequence

from opentelemetry import propagate, trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)

_configured = threading.Lock()


class JsonLinesExporter(SpanExporter):
    """Appends each span as a JSON object: name, trace/span/parent ids, attributes, service."""

    def __init__(self, path: str):
        self.path = path
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        lines = []
        for span in spans:
            context = span.get_span_context()
            lines.append(
                json.dumps(
                    {
                        "name": span.name,
                        "trace_id": f"{context.trace_id:032x}",
                        "span_id": f"{context.span_id:016x}",
                        "parent_id": f"{span.parent.span_id:016x}" if span.parent else None,
                        "service": span.resource.attributes.get("service.name"),
                        "attributes": dict(span.attributes or {}),
                    },
                    default=str,
                )
            )
        with self._lock, open(self.path, "a", encoding="utf-8") as handle:
            handle.write("".join(line + "\n" for line in lines))
        return SpanExportResult.SUCCESS


def setup_tracing(service_name: str, otlp_endpoint: str | None = None, trace_file: str | None = None) -> None:
    """Install the process's tracer provider once (later calls keep the first). Without explicit
    arguments the standard OTEL_EXPORTER_OTLP_ENDPOINT and our HYBRIDGW_TRACE_FILE decide; with
    neither, nothing is installed: spans stay non-recording (no cost on the request path) and a
    caller's incoming trace context still passes through to the nodes."""
    trace_file = trace_file or os.environ.get("HYBRIDGW_TRACE_FILE")
    otlp_endpoint = otlp_endpoint or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if not (trace_file or otlp_endpoint) or not _configured.acquire(blocking=False):
        return
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    if trace_file:
        provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(trace_file)))
    if otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=otlp_endpoint)))
    trace.set_tracer_provider(provider)


@functools.cache
def tracer(name: str) -> trace.Tracer:
    """One tracer per name (a proxy until setup_tracing installs the provider, then delegating)."""
    return trace.get_tracer(name)


W3C_HEADERS = ("traceparent", "tracestate", "baggage")


def recording() -> bool:
    """Whether spans are recorded: false until a tracer provider is installed (setup_tracing)."""
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def forwarded_context(headers: Mapping[str, str]) -> dict[str, str]:
    """A caller's W3C trace headers, to pass on as they came when this hop records no spans (the
    next hop that records validates them): no span objects on the request path."""
    return {name: headers[name] for name in W3C_HEADERS if name in headers}


def inject_context() -> dict[str, str]:
    """The current trace context as W3C headers (traceparent, tracestate)."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


def extract_context(carrier: Mapping[str, str]):
    return propagate.extract(carrier)
