"""The two tiers a node belongs to: the edge (on-prem, private requests allowed) and the cloud."""

from enum import StrEnum


class NodeKind(StrEnum):
    EDGE = "edge"
    CLOUD = "cloud"
