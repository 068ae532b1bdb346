"""The routing profiles decide as the hand-written cascade they replaced did: the same node, the
same reason, the same predictions, retry times and outcomes, on 1,500 seeded scenarios under
each of the five built-in profiles (tests/gateway/routing_replay.py). The digest and counts were
recorded from gateway/routing/policy.py's cascade at 8692d01, before the plugins."""

import json
from pathlib import Path

from gateway.routing.policy import route
from gateway.routing.profiles import resolve_profile
from tests.gateway.routing_replay import replay

RECORDED = json.loads((Path(__file__).parent / "routing_replay_before.json").read_text())


def test_profiles_decide_as_the_cascade_did():
    profiles = {}

    def decide(request, nodes, now, rng, name):
        profile = profiles.setdefault(name, resolve_profile(name))
        return route(request, nodes, now, rng, profile)

    digest, counts = replay(decide)
    assert dict(sorted(counts.items())) == RECORDED["counts"]
    assert digest == RECORDED["digest"]
