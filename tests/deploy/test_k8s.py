"""deploy/k8s: every manifest rendered and schema-checked (tests/deploy/k8s_check.py), the check
refusing broken ones, and the manifests agreeing with the code and with the compose staging: the
gateway's config loads and lists the edge's pods, the Redis ACL users are docker-compose.yml's,
KEDA watches the stream and group the workers read, every reference resolves. (The ACL file run by
a real Redis: test_k8s_redis.py.)"""

import copy
import itertools
import shlex
from pathlib import Path

import pytest
import yaml

from gateway.config.toml_file import load_config
from shared.redis_keys import RedisKeys
from tests.deploy.k8s_check import ManifestError, render, validate

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
EXPECTED = {
    ("Namespace", "hybridgw"),
    ("Secret", "hybridgw-redis-users"),
    ("Secret", "hybridgw-secrets"),
    ("Secret", "hybridgw-ledger-key"),
    ("ConfigMap", "hybridgw-gateway"),
    ("Service", "redis"),
    ("StatefulSet", "redis"),
    ("Service", "edge"),
    ("StatefulSet", "edge"),
    ("Service", "cloud-metrics"),
    ("Deployment", "cloud"),
    ("ScaledObject", "cloud"),
    ("TriggerAuthentication", "redis-keda"),
    ("Service", "gateway"),
    ("Deployment", "gateway"),
    ("HorizontalPodAutoscaler", "gateway"),
    ("PodDisruptionBudget", "gateway"),
}


@pytest.fixture(scope="module")
def resources() -> dict[tuple[str, str], dict]:
    rendered = render(K8S)
    by_name = {(r["kind"], r["metadata"]["name"]): r for r in rendered}
    assert len(by_name) == len(rendered)
    return by_name


def _container(resource: dict, name: str) -> dict:
    [container] = [c for c in resource["spec"]["template"]["spec"]["containers"] if c["name"] == name]
    return container


def _flag(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def test_every_manifest_validates_against_its_schema(resources):
    assert set(resources) == EXPECTED
    for resource in resources.values():
        validate(resource)
        assert resource["metadata"].get("namespace", "hybridgw") == "hybridgw"
    image = _container(resources["Deployment", "gateway"], "gateway")["image"]
    assert image == "registry.example.com/hybridgw/hybridgw-edge:latest"  # kustomize's images


def _broken(resources, key, change) -> dict:
    resource = copy.deepcopy(resources[key])
    change(resource)
    return resource


BROKEN = {
    "a count as a word": (("Deployment", "gateway"), lambda r: r["spec"].update(replicas="two")),
    "a misspelt field": (
        ("Deployment", "cloud"),
        lambda r: r["spec"]["template"]["spec"]["containers"][0].update(imagePullPolicyy="Always"),
    ),
    "a required field missing": (
        ("HorizontalPodAutoscaler", "gateway"),
        lambda r: r["spec"].pop("scaleTargetRef"),
    ),
    "a port's number as a name": (("Service", "edge"), lambda r: r["spec"]["ports"][0].update(port="grpc")),
    "a KEDA metadata number": (
        ("ScaledObject", "cloud"),
        lambda r: r["spec"]["triggers"][0]["metadata"].update(pendingEntriesCount=48),
    ),
    "two targets in one trigger": (
        ("ScaledObject", "cloud"),
        lambda r: r["spec"]["triggers"][0]["metadata"].update(lagCount="8"),
    ),
    "a KEDA field misspelt": (("ScaledObject", "cloud"), lambda r: r["spec"].update(maxReplicas=3)),
    "a kind with no schema": (
        ("Service", "gateway"),
        lambda r: r.update(apiVersion="example.com/v1", kind="Gadget"),
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_the_check_refuses_an_invalid_manifest(resources, case):
    key, change = BROKEN[case]
    with pytest.raises(ManifestError):
        validate(_broken(resources, key, change))


def test_the_gateway_config_loads_and_lists_the_edge_pods(resources):
    text = resources["ConfigMap", "hybridgw-gateway"]["data"]["gateway.toml"]
    gateway = resources["Deployment", "gateway"]
    env = {e["name"]: "redis://gateway:pw@redis:6379/0" for e in _container(gateway, "gateway")["env"]}
    env["HYBRIDGW_KEYS_0_SHA256"] = "0" * 64
    env["HYBRIDGW_PRIVACY_LEDGER_ID"] = "gateway-abc12"
    path = Path("/tmp") / f"k8s-gateway-{id(text)}.toml"
    path.write_text(text)
    try:
        config, server = load_config(str(path), env)
    finally:
        path.unlink()
    assert config.privacy_ledger_store == "redis" and config.privacy_ledger_id == "gateway-abc12"
    mounts = {m["mountPath"] for m in _container(gateway, "gateway")["volumeMounts"]}
    assert str(Path(config.privacy_ledger_key_file).parent) in mounts
    assert server.port == gateway["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"]
    edge = resources["StatefulSet", "edge"]
    args = _container(edge, "edge")["args"]
    pods = [f"edge-{i}" for i in range(edge["spec"]["replicas"])]
    assert [(n.node_id, n.address) for n in config.edge_nodes] == [
        (pod, f"{pod}.{edge['spec']['serviceName']}:{_flag(args, '--port')}") for pod in pods
    ]
    assert [m.gguf_path for m in config.models] == [_flag(args, "--model")]


def test_the_edge_runs_only_on_on_prem_nodes(resources):
    pod = resources["StatefulSet", "edge"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"hybridgw.io/site": "on-prem"}
    assert [t["key"] for t in pod["tolerations"]] == ["hybridgw.io/on-prem"]
    for kind, name in (("Deployment", "gateway"), ("Deployment", "cloud")):
        assert "tolerations" not in resources[kind, name]["spec"]["template"]["spec"]


def _acl_rules(words: list[str]) -> list[str]:
    return [w for w in words if not w.startswith(">")]  # passwords aside


def _compose_users() -> dict[str, list[str]]:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    command = compose["services"]["redis"]["command"]
    users, current = {}, None
    for previous, word in itertools.pairwise(command):
        if previous == "--user":
            current = users.setdefault(word, [])
        elif current is not None and word != "--user" and not word.startswith("--"):
            current.append(word)
        elif word.startswith("--") and word != "--user":
            current = None
    return {name: _acl_rules(rules) for name, rules in users.items()}


def test_the_redis_acl_users_are_the_compose_files(resources):
    acl = resources["Secret", "hybridgw-redis-users"]["stringData"]["users.acl"]
    users = {}
    for line in acl.splitlines():
        words = shlex.split(line)
        assert words[0] == "user"
        users[words[1]] = _acl_rules(words[2:])
    compose = _compose_users()
    assert set(compose) == {"default", "gateway", "cloud", "exporter"}
    for name in compose:
        assert users[name] == compose[name], name
    # KEDA reads the request stream's length and pending entries, and nothing else
    keys = RedisKeys()
    assert users["keda"] == [
        "on",
        f"~{keys.request_stream}",
        "resetchannels",
        "-@all",
        *("+hello", "+auth", "+ping", "+xlen", "+xpending", "+xinfo|groups", "+xinfo|stream"),
    ]


def _secret_keys(resources, name: str) -> set[str]:
    return set(resources["Secret", name]["stringData"])


def test_keda_scales_the_cloud_workers_on_the_stream_they_read(resources):
    scaled = resources["ScaledObject", "cloud"]["spec"]
    cloud = resources["Deployment", "cloud"]
    assert scaled["scaleTargetRef"] == {"name": "cloud"} and "replicas" not in cloud["spec"]
    keys = RedisKeys()
    max_num_seqs = int(_flag(_container(cloud, "cloud")["args"], "--max-num-seqs"))
    targets = {}
    for trigger in scaled["triggers"]:
        metadata = trigger["metadata"]
        assert metadata["stream"] == keys.request_stream and metadata["consumerGroup"] == keys.consumer_group
        assert metadata["address"] == "redis.hybridgw.svc.cluster.local:6379"
        targets.update({k: int(v) for k, v in metadata.items() if k in ("pendingEntriesCount", "lagCount")})
        auth = resources["TriggerAuthentication", trigger["authenticationRef"]["name"]]
        for ref in auth["spec"]["secretTargetRef"]:
            assert ref["key"] in _secret_keys(resources, ref["name"])
    assert 0 < targets["pendingEntriesCount"] <= max_num_seqs and targets["lagCount"] > 0


def _workloads(resources) -> dict[tuple[str, str], dict]:
    return {key: r for key, r in resources.items() if "template" in r.get("spec", {})}


def _check_pod_references(resources, name: str, workload: dict) -> None:
    pod = workload["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    volumes.update({c["metadata"]["name"]: c for c in workload["spec"].get("volumeClaimTemplates", [])})
    for volume in volumes.values():
        if "secret" in volume:
            assert ("Secret", volume["secret"]["secretName"]) in resources, name
        if "configMap" in volume:
            assert ("ConfigMap", volume["configMap"]["name"]) in resources, name
    for container in pod.get("initContainers", []) + pod["containers"]:
        ports = {p["name"] for p in container.get("ports", [])}
        for mount in container.get("volumeMounts", []):
            assert mount["name"] in volumes, (name, mount)
        for variable in container.get("env", []):
            ref = variable.get("valueFrom", {}).get("secretKeyRef")
            assert not ref or ref["key"] in _secret_keys(resources, ref["name"]), (name, ref)
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            action = container.get(probe, {}).get("httpGet") or container.get(probe, {}).get("tcpSocket")
            assert not action or action["port"] in ports, (name, probe)


def test_every_reference_resolves(resources):
    """Volumes, secret keys and probe ports exist; selectors match; a Service selects each
    workload's pods and every Service selects some."""
    workloads = _workloads(resources)
    services = [r for (kind, _), r in resources.items() if kind == "Service"]
    for (kind, name), workload in workloads.items():
        _check_pod_references(resources, f"{kind}/{name}", workload)
        labels = workload["spec"]["template"]["metadata"]["labels"]
        assert workload["spec"]["selector"]["matchLabels"].items() <= labels.items()
        assert any(s["spec"]["selector"].items() <= labels.items() for s in services), name
    pod_labels = [w["spec"]["template"]["metadata"]["labels"] for w in workloads.values()]
    for service in services:
        assert any(service["spec"]["selector"].items() <= labels.items() for labels in pod_labels)
