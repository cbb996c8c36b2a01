"""The strategy fields of ``neom balance`` by name (no heavy imports: ``neom --help`` reads
them): "archetype" is make run's field, the default ``--strategies``, so a pass can name both
fields it is judged in (``--strategies strong --also-field archetype``)."""

DEFAULT_FIELD = "greedy,builder,merchant,industrialist"  # make run's field
FIELD_NAMES = {"archetype": DEFAULT_FIELD}


def resolve_field(spec: str) -> str:
    """A field as the runner takes it: a name of ``FIELD_NAMES`` replaced by its strategies."""
    return FIELD_NAMES.get(spec.strip().casefold(), spec)


def field_label(spec: str) -> str:
    """A field's name in the outputs: "archetype" for make run's field, else as given."""
    return "archetype" if spec == DEFAULT_FIELD else spec
