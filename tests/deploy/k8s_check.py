"""deploy/k8s rendered and checked as CI does: the resources kustomization.yaml lists (with its
namespace and image names applied, as `kubectl kustomize` would), every built-in kind validated
strictly against Kubernetes' own schemas (kubernetes-validate, offline), KEDA's kinds against the
fields of KEDA's CRDs (keda.sh/v1alpha1) that these manifests may use. A kind with no schema fails."""

from pathlib import Path

import jsonschema
import kubernetes_validate
import yaml

KUBERNETES_VERSION = "1.30.0"  # the oldest minor we support (autoscaling/v2, policy/v1)
_STRINGS = {"type": "object", "additionalProperties": {"type": "string"}}
_METADATA = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}, "labels": _STRINGS},
    "additionalProperties": False,
}
_SCALING_RULES = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "stabilizationWindowSeconds": {"type": "integer", "minimum": 0, "maximum": 3600},
        "selectPolicy": {"enum": ["Max", "Min", "Disabled"]},
        "policies": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", "value", "periodSeconds"],
                "properties": {
                    "type": {"enum": ["Pods", "Percent"]},
                    "value": {"type": "integer", "minimum": 1},
                    "periodSeconds": {"type": "integer", "minimum": 1, "maximum": 1800},
                },
            },
        },
    },
}
_TRIGGER = {
    "type": "object",
    "additionalProperties": False,
    "required": ["type", "metadata"],
    "properties": {
        "type": {"type": "string"},
        "name": {"type": "string"},
        "metricType": {"enum": ["AverageValue", "Value", "Utilization"]},
        "useCachedMetrics": {"type": "boolean"},
        "metadata": _STRINGS,  # KEDA takes only strings here: 48 must be "48"
        "authenticationRef": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name"],
            "properties": {"name": {"type": "string"}, "kind": {"enum": ["TriggerAuthentication"]}},
        },
    },
}
KEDA_SCHEMAS = {
    "ScaledObject": {
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {
            "apiVersion": {"const": "keda.sh/v1alpha1"},
            "kind": {"const": "ScaledObject"},
            "metadata": _METADATA,
            "spec": {
                "type": "object",
                "additionalProperties": False,
                "required": ["scaleTargetRef", "triggers"],
                "properties": {
                    "scaleTargetRef": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["name"],
                        "properties": {k: {"type": "string"} for k in ("name", "kind", "apiVersion")},
                    },
                    **{
                        field: {"type": "integer", "minimum": 0}
                        for field in (
                            "minReplicaCount",
                            "maxReplicaCount",
                            "pollingInterval",
                            "cooldownPeriod",
                        )
                    },
                    "advanced": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "restoreToOriginalReplicaCount": {"type": "boolean"},
                            "horizontalPodAutoscalerConfig": {
                                "type": "object",
                                "additionalProperties": False,
                                "properties": {
                                    "name": {"type": "string"},
                                    "behavior": {
                                        "type": "object",
                                        "additionalProperties": False,
                                        "properties": {
                                            "scaleUp": _SCALING_RULES,
                                            "scaleDown": _SCALING_RULES,
                                        },
                                    },
                                },
                            },
                        },
                    },
                    "triggers": {"type": "array", "minItems": 1, "items": _TRIGGER},
                },
            },
        },
    },
    "TriggerAuthentication": {
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {
            "apiVersion": {"const": "keda.sh/v1alpha1"},
            "kind": {"const": "TriggerAuthentication"},
            "metadata": _METADATA,
            "spec": {
                "type": "object",
                "additionalProperties": False,
                "required": ["secretTargetRef"],
                "properties": {
                    "secretTargetRef": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["parameter", "name", "key"],
                            "properties": {k: {"type": "string"} for k in ("parameter", "name", "key")},
                        },
                    }
                },
            },
        },
    },
}
# the redis-streams scaler's parameters; exactly one of the three targets per trigger
REDIS_STREAMS_PARAMETERS = {
    "address",
    "stream",
    "consumerGroup",
    "pendingEntriesCount",
    "streamLength",
    "lagCount",
    "activationLagCount",
    "activationStreamLength",
    "databaseIndex",
    "enableTLS",
    "unsafeSsl",
}
REDIS_STREAMS_TARGETS = {"pendingEntriesCount", "streamLength", "lagCount"}


class ManifestError(Exception):
    """A manifest that the check refuses, with the resource and the reason."""


def render(directory: Path) -> list[dict]:
    """The resources of directory/kustomization.yaml, its namespace and image names applied."""
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    images = {i["name"]: f"{i['newName']}:{i['newTag']}" for i in kustomization.get("images", [])}
    resources = []
    for name in kustomization["resources"]:
        for document in yaml.safe_load_all((directory / name).read_text()):
            if document["kind"] != "Namespace":
                document["metadata"]["namespace"] = kustomization["namespace"]
            for pod in _pod_specs(document):
                for container in pod.get("initContainers", []) + pod.get("containers", []):
                    repository, _, _ = container["image"].partition(":")
                    container["image"] = images.get(repository, container["image"])
            resources.append(document)
    return resources


def _pod_specs(resource: dict) -> list[dict]:
    template = resource.get("spec", {}).get("template", {})
    return [template["spec"]] if "spec" in template else []


def validate(resource: dict) -> None:
    """Raises ManifestError unless the resource matches its kind's schema."""
    where = f"{resource.get('kind')}/{resource.get('metadata', {}).get('name')}"
    if resource.get("kind") in KEDA_SCHEMAS:
        try:
            jsonschema.validate(resource, KEDA_SCHEMAS[resource["kind"]])
        except jsonschema.ValidationError as error:
            raise ManifestError(f"{where}: {error.message} at {list(error.absolute_path)}") from None
        _check_redis_streams(resource, where)
        return
    try:
        kubernetes_validate.validate(resource, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as error:
        raise ManifestError(f"{where}: {error.message} at {list(error.absolute_path)}") from None
    except kubernetes_validate.SchemaNotFoundError as error:
        raise ManifestError(f"{where}: {error.message}") from None


def _check_redis_streams(resource: dict, where: str) -> None:
    for trigger in resource.get("spec", {}).get("triggers", []):
        if trigger["type"] != "redis-streams":
            raise ManifestError(f"{where}: unexpected trigger type {trigger['type']}")
        names = set(trigger["metadata"])
        if names - REDIS_STREAMS_PARAMETERS:
            raise ManifestError(
                f"{where}: unknown redis-streams parameters {names - REDIS_STREAMS_PARAMETERS}"
            )
        if len(names & REDIS_STREAMS_TARGETS) != 1:
            raise ManifestError(f"{where}: one of {sorted(REDIS_STREAMS_TARGETS)} per trigger")
