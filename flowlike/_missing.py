"""The error for torch names flowlike does not provide yet."""


def missing_attribute_error(module_name, torch_name, attr):
    """AttributeError naming the torch API that is missing (dunder lookups get the plain error)."""
    if attr.startswith("__"):
        return AttributeError(f"module {module_name!r} has no attribute {attr!r}")
    return AttributeError(f"module {module_name!r} has no attribute {attr!r}: {torch_name}.{attr} is not provided by "
                          f"flowlike yet")


def module_getattr(module_name, torch_name):
    """A PEP 562 __getattr__ for a flowlike module that stands in for `torch_name`."""
    def __getattr__(attr):
        raise missing_attribute_error(module_name, torch_name, attr)
    return __getattr__
