"""``neom balance --all``: a whole-catalogue pass (see analysis.neom.balance)."""


def run_all(args) -> int:
    raise NotImplementedError
