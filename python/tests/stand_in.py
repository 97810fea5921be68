"""`self` for calling a reference's methods unbound, without building the model (no weights, no
downloads): the reference runners' stand-in for a model instance."""
import inspect


class Self:
    """The class's methods bound to this object; `config` and `attributes` as its fields."""

    def __init__(self, cls, config, **attributes):
        self.__dict__.update(_cls=cls, config=config, **attributes)

    def __getattr__(self, name):
        cls = self.__dict__["_cls"]
        if isinstance(inspect.getattr_static(cls, name), (staticmethod, classmethod)):
            return getattr(cls, name)
        value = getattr(cls, name)
        return value.__get__(self) if hasattr(value, "__get__") else value
