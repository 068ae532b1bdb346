"""The gateway's TOML configuration: every field, environment overrides, errors that name the field."""

import pytest

from gateway.access.api_keys import hash_key
from gateway.config.toml_file import ConfigError, load_config
from gateway.privacy import PrivacyMode
from tests.fixtures.cli import run_hybridgw

GOOD = f"""
[gateway]
port = 9000
privacy_mode = "always_private"

[routing]
latency_target_ms = 1500
cooldown_s = 2.5

[telemetry]
otlp_endpoint = "http://otel-collector:4317"

[[models]]
name = "tiny"
gguf = "/models/tiny.gguf"
context_length = 128

[[edge_nodes]]
id = "edge-1"
address = "10.0.0.5:50051"

[[upstreams]]
id = "llama"
url = "http://llama:8080/v1"
kind = "edge"
keepalive_s = 1.5

[cloud]
redis_url = "redis://redis:6379/0"

[[keys]]
id = "alice"
sha256 = "{hash_key("sk-alice")}"
tenant = "acme"
"""


def test_a_full_file_and_environment_overrides(tmp_path):
    path = tmp_path / "gateway.toml"
    path.write_text(GOOD)
    environ = {
        "HYBRIDGW_GATEWAY_PORT": "9100",
        "HYBRIDGW_GATEWAY_KEEPALIVE_S": "20",
        "HYBRIDGW_EDGE_NODES_0_ADDRESS": "edge:50051",
        "HYBRIDGW_EDGE_NODES_0_QUEUE_BOUND": "4",
        "HYBRIDGW_GATEWAY_COMPRESS_RESPONSES": "true",
        "HYBRIDGW_HOME": "/ignored",
        "PATH": "/bin",
    }
    config, server = load_config(path, environ)
    assert (server.host, server.port, server.keepalive_s) == ("127.0.0.1", 9100, 20.0)
    assert [(u.node_id, u.keepalive_s, u.max_concurrency) for u in config.upstreams] == [("llama", 1.5, 64)]
    assert config.compress_responses is True
    assert (config.routing.cooldown_s, config.routing.max_attempts) == (2.5, 2)
    assert server.telemetry.otlp_endpoint == "http://otel-collector:4317"
    assert server.telemetry.service_name == "hybridgw-gateway"
    assert config.privacy_mode == PrivacyMode.ALWAYS_PRIVATE and config.routing.latency_target_ms == 1500
    assert [(m.name, m.gguf_path, m.context_length) for m in config.models] == [
        ("tiny", "/models/tiny.gguf", 128)
    ]
    edge = config.edge_nodes[0]
    assert (edge.node_id, edge.address, edge.models, edge.queue_bound) == (
        "edge-1",
        "edge:50051",
        ["tiny"],
        4,
    )
    assert config.redis_url == "redis://redis:6379/0" and config.redis_prefix == "hybridgw:"
    assert [k.key_id for k in config.api_keys] == ["alice"]


def test_environment_alone_can_configure_the_gateway():
    config, server = load_config(
        None,
        {
            "HYBRIDGW_MODELS_0_NAME": "m",
            "HYBRIDGW_MODELS_0_GGUF": "/m.gguf",
            "HYBRIDGW_GATEWAY_HOST": "0.0.0.0",
        },
    )
    assert [m.name for m in config.models] == ["m"] and server.host == "0.0.0.0"
    assert server.keepalive_s == 75.0 and config.upstreams == []


@pytest.mark.parametrize(
    ("text", "environ", "message"),
    [
        ("[gateway]\nport = 'x'\n[[models]]\nname='a'\ngguf='b'\n", {}, r"gateway\.port: expected int"),
        (
            "[gateway]\nprivacy_mode = 'sometimes'\n[[models]]\nname='a'\ngguf='b'\n",
            {},
            r"gateway\.privacy_mode",
        ),
        ("[[models]]\nname = 'a'\n", {}, r"models\[0\]\.gguf"),
        ("[[models]]\nname='a'\ngguf='b'\ncolour='red'\n", {}, r"models\[0\]\.colour: unknown field"),
        ("[nonsense]\n", {}, r"unknown section \[nonsense\]"),
        ("[routing]\nmax_attempts = 0\n[[models]]\nname='a'\ngguf='b'\n", {}, r"routing\.max_attempts"),
        (
            "[gateway]\nkeepalive_s = 0\n[[models]]\nname='a'\ngguf='b'\n",
            {},
            r"gateway\.keepalive_s must be > 0",
        ),
        (
            "[[models]]\nname='a'\ngguf='b'\n[[upstreams]]\nid='u'\nurl='http://u/v1'\nkind='edge'\n"
            "keepalive_s=-1\n",
            {},
            r"upstreams\[u\]\.keepalive_s must be >= 0",
        ),
        (
            "[telemetry]\notlp_endpoint = 4317\n[[models]]\nname='a'\ngguf='b'\n",
            {},
            r"telemetry\.otlp_endpoint",
        ),
        ("", {}, "at least one model"),
        ("[[models]]\nname='a'\ngguf='b'\n", {"HYBRIDGW_GATEWAY_PROT": "1"}, "has no field 'prot'"),
        (
            "[[models]]\nname='a'\ngguf='b'\n[[edge_nodes]]\nid='e'\naddress='h:1'\nmodels=['zzz']\n",
            {},
            r"edge_nodes\[e\]\.models: unknown model",
        ),
    ],
)
def test_bad_configuration_names_the_field(tmp_path, text, environ, message):
    path = tmp_path / "gateway.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path, environ)


@pytest.mark.integration
def test_the_command_refuses_a_bad_file_with_the_field_named(tmp_path):
    path = tmp_path / "gateway.toml"
    path.write_text("[gateway]\nport = 'eighty'\n[[models]]\nname='a'\ngguf='b'\n")
    result = run_hybridgw("gateway", "--config", str(path), timeout=120)
    assert result.returncode == 1
    assert "gateway.port: expected int" in result.stderr and "Traceback" not in result.stderr
