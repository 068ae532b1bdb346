"""Errors a hybridgw process reports to its user as one line (hybridgw/main.py)."""


class ListenError(OSError):
    """A server's address cannot be bound: in use, or not an address of this host."""


class LedgerError(Exception):
    """The privacy ledger cannot be used: the message names the ledger or its key and why."""
