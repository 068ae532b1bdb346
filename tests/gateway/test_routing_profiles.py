"""Routing profiles composed in configuration ([routing] profile, [routing.profiles.NAME]): the
built-in ones by name, one's own from plugin names, and a clear ConfigError at start for a name
that is unknown or a profile that would let private requests off-prem. `Router.pick(request,
exclude)` is the one entry point; the clock is injected."""

import random

import pytest

from gateway.config.toml_file import ConfigError, load_config
from gateway.routing.node_kind import NodeKind
from gateway.routing.node_load import NodeLoad
from gateway.routing.node_state import NodeState
from gateway.routing.profiles import BUILT_IN, resolve_profile
from gateway.routing.route_types import Outcome, RouteRequest
from gateway.routing.router import Router

MODEL = "tiny"
MODELS = "[[models]]\nname = 'tiny'\ngguf = 'tiny.gguf'\n"
MINE = """
[routing]
profile = "mine"

[routing.profiles.mine]
filters = ["serves-model", "private-on-edge", "healthy", "queue-bounds"]
scorer = "load-ratio"
picker = "first-lowest"
"""


def _load(tmp_path, text: str, environ: dict | None = None):
    path = tmp_path / "gateway.toml"
    path.write_text(text + MODELS)
    return load_config(path, environ or {})[0].routing


def _node(node_id: str, kind: NodeKind, num_requests: int, max_running: int = 4) -> NodeState:
    load = NodeLoad(other_requests=num_requests)
    return NodeState(node_id, kind, frozenset({MODEL}), load=load, max_running=max_running)


def test_the_profile_is_named_in_the_routing_section(tmp_path):
    assert _load(tmp_path, "").profile == "predicted"
    assert _load(tmp_path, "[routing]\nprofile = 'least-busy'\n").profile == "least-busy"
    assert _load(tmp_path, "[routing]\npolicy = 'round-robin'\n").profile == "round-robin"  # its earlier name
    assert _load(tmp_path, "", {"HYBRIDGW_ROUTING_PROFILE": "all-edge"}).profile == "all-edge"
    assert set(BUILT_IN) == {"predicted", "all-edge", "all-cloud", "round-robin", "least-busy"}


def test_a_profile_of_ones_own_is_composed_from_plugin_names(tmp_path):
    routing = _load(tmp_path, MINE)
    profile = resolve_profile(routing.profile, routing.profiles)
    assert [f.name for f in profile.filters] == ["serves-model", "private-on-edge", "healthy", "queue-bounds"]
    assert (profile.scorer.name, profile.picker.name) == ("load-ratio", "first-lowest")
    nodes = [_node("edge-1", NodeKind.EDGE, 3), _node("cloud-1", NodeKind.CLOUD, 1)]  # 3/4 and 1/4 busy
    router = Router(profile, lambda: nodes, random.Random(0), clock=lambda: 0.0)
    decision = router.pick(RouteRequest(MODEL, 10, 10, False))
    assert (decision.outcome, decision.node_id, decision.reason) == (Outcome.ROUTED, "cloud-1", "least_busy")
    assert [p.node_id for p in decision.predictions] == ["edge-1", "cloud-1"]  # queue-bounds reads them
    private = router.pick(RouteRequest(MODEL, 10, 10, True))
    assert (private.node_id, private.reason) == ("edge-1", "least_busy")


def test_pick_leaves_out_the_excluded_nodes():
    nodes = [_node("edge-1", NodeKind.EDGE, 0), _node("edge-2", NodeKind.EDGE, 0)]
    router = Router(resolve_profile("round-robin"), lambda: nodes, random.Random(0), clock=lambda: 0.0)
    request = RouteRequest(MODEL, 10, 10, True)
    assert router.pick(request).node_id == "edge-1"
    assert router.pick(request, exclude={"edge-1"}).node_id == "edge-2"
    refused = router.pick(request, exclude={"edge-1", "edge-2"})
    assert (refused.outcome, refused.reason) == (Outcome.UNAVAILABLE, "no_private_node")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[routing]\nprofile = 'fastest'\n",
            "routing.profile: unknown profile 'fastest' (one of predicted, all-edge, all-cloud, "
            "round-robin, least-busy)",
        ),
        (
            MINE.replace('"load-ratio"', '"cheapest"'),
            "routing profile 'mine': unknown scorer 'cheapest' "
            "(one of predicted-latency, num-dispatched, load-ratio)",
        ),
        (
            MINE.replace('"healthy", ', '"healthy", "nearest", '),
            "routing profile 'mine': unknown filter 'nearest' (one of serves-model, private-on-edge, "
            "edge-only, cloud-for-public, capable, healthy, healthy-or-arriving, fits-context, taking, "
            "queue-bounds, arriving, free-slot)",
        ),
        (
            MINE.replace('"first-lowest"', '"best"'),
            "routing profile 'mine': unknown picker 'best' "
            "(one of latency-targets, first-lowest, random-lowest)",
        ),
        (
            MINE.replace('"private-on-edge", ', ""),
            "routing profile 'mine': its filters must include 'private-on-edge'",
        ),
        (
            "[routing]\nprofile = 'a'\npolicy = 'b'\n",
            "routing: profile 'a' and policy 'b' (its earlier name) disagree",
        ),
        (
            MINE.replace("scorer = ", "scorer_ = "),
            "routing.profiles.mine: a table of filters, scorer and picker only",
        ),
        (
            MINE.replace('["serves-model"', '[1, "serves-model"'),
            "routing.profiles.mine.filters: expected plugin names",
        ),
    ],
)
def test_an_unknown_profile_or_plugin_stops_the_start_naming_it(tmp_path, text, message):
    with pytest.raises(ConfigError) as raised:
        _load(tmp_path, text)
    assert str(raised.value).startswith(message)
