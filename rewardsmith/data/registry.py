"""The converter registry: names to dataset converters, looked up like rewards.

Built-ins: ``gsm8k``, ``math``, ``countdown``, ``generic``, ``chat``, ``fireworks``, ``ifeval``, and for code
``mbpp``, ``humaneval``, ``apps``, ``codecontests``. Register
your own with :func:`register_converter`: a :class:`Converter` subclass (its
fields are the settings), a converter object, or a plain function
``f(row) -> dict``. A converter can also be named by import path
(``pkg.module:fn``), by file path (``./my_converters.py:fn``), or declared by an
installed package in the ``rewardsmith.converters`` entry-point group (see
:mod:`rewardsmith.core.lookup`).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any

from rewardsmith.core.errors import DatasetError, UnknownConverterError
from rewardsmith.core.lookup import Registry
from rewardsmith.core.names import did_you_mean, first_line
from rewardsmith.data.code import APPS, MBPP, CodeContests, HumanEval
from rewardsmith.data.converters import Chat, Converter, FireworksEval, FunctionConverter, Generic
from rewardsmith.data.ifeval import IFEvalData
from rewardsmith.data.tasks import GSM8K, Countdown, Math

__all__ = ["get_converter", "list_converters", "register_converter", "unregister_converter"]


#: The registry of converter names (its entry-point group declares converters of installed packages).
CONVERTERS = Registry(
    "converter",
    "rewardsmith.converters",
    unknown=UnknownConverterError,
    error=DatasetError,
    advice="; register your own with register_converter()",
)


def register_converter(
    name: str,
    target: Any = None,
    *,
    replace: bool = False,
    description: str | None = None,
    inputs: Iterable[str] = (),
    outputs: Iterable[str] = ("prompt",),
) -> Any:
    """Register a converter under a name; use it as a decorator or call it directly.

    ``target`` is a :class:`Converter` subclass (instantiated with the settings
    given to :func:`get_converter`), a converter object, or a function
    ``f(row) -> dict`` whose source columns (``inputs``) and written columns
    (``outputs``) you declare here. Registering a name twice is an error unless
    ``replace=True``. Returns ``target`` unchanged.

    >>> from rewardsmith.data import register_converter, prepare_dataset, unregister_converter
    >>> @register_converter("shout", inputs=["text"])
    ... def shout(row):
    ...     '''The prompt is the text in capitals.'''
    ...     return {"prompt": row["text"].upper()}
    >>> prepare_dataset([{"text": "hello"}], converter="shout", conversational=False)[0]
    {'text': 'hello', 'prompt': 'HELLO'}
    >>> unregister_converter("shout")
    """
    if target is None:
        return functools.partial(
            register_converter, name, replace=replace, description=description, inputs=inputs, outputs=outputs
        )
    if isinstance(target, type) and issubclass(target, Converter):
        made, doc = target, target.__doc__
    elif isinstance(target, Converter):
        made, doc = target, type(target).__doc__
    elif callable(target):
        made, doc = FunctionConverter(target, tuple(inputs), tuple(outputs)), getattr(target, "__doc__", None)
    else:
        raise DatasetError(f"cannot register {target!r} as converter {name!r}: it is not a Converter or a function")
    CONVERTERS.register(name, made, replace=replace, description=description or first_line(doc))
    return target


def unregister_converter(name: str) -> None:
    """Remove a registered converter.

    >>> from rewardsmith.data import register_converter, unregister_converter
    >>> _ = register_converter("upper", lambda row: {"prompt": row["text"].upper()}, inputs=["text"])
    >>> unregister_converter("upper")
    """
    CONVERTERS.unregister(name)


def list_converters() -> dict[str, str]:
    """Every registered converter name with a one-line description.

    >>> print(*sorted(list_converters()))
    apps chat codecontests countdown fireworks generic gsm8k humaneval ifeval math mbpp
    """
    return CONVERTERS.describe()


def get_converter(spec: str | Converter | type[Converter] | Callable[..., Any], /, **settings: Any) -> Converter:
    """A converter by name or path (or a converter object, class or function), with settings.

    >>> get_converter("generic", prompt_key="instruction", answer_key="output").output_columns
    ('prompt', 'answer')
    >>> get_converter("gsm8")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.UnknownConverterError: unknown converter 'gsm8'. Did you mean: gsm8k? ...
    """
    label = spec if isinstance(spec, str) else getattr(spec, "__name__", type(spec).__name__)
    if isinstance(spec, str):
        spec = CONVERTERS.find(spec)
    if isinstance(spec, type) and issubclass(spec, Converter):
        return _with_settings(spec, settings, label)
    if isinstance(spec, FunctionConverter):
        return _bind(spec, settings, label) if settings else spec
    if isinstance(spec, Converter):
        return _with_settings(spec, settings, label) if settings else spec
    if callable(spec):
        return _bind(FunctionConverter(spec), settings, label) if settings else FunctionConverter(spec)
    raise DatasetError(f"{spec!r} is not a converter: pass a name, a Converter, or a function f(row) -> dict")


def _bind(converter: FunctionConverter, settings: dict[str, Any], label: str) -> FunctionConverter:
    try:
        inspect.signature(converter.fn).bind({}, **settings)
    except TypeError as exc:
        raise DatasetError(f"converter {label!r} does not take these settings: {exc}") from exc
    except ValueError:  # no signature to check
        pass
    return dataclasses.replace(converter, fn=functools.partial(converter.fn, **settings))


def _with_settings(target: Converter | type[Converter], settings: dict[str, Any], label: str) -> Converter:
    cls = target if isinstance(target, type) else type(target)
    known = [f.name for f in dataclasses.fields(cls) if f.init] if dataclasses.is_dataclass(cls) else []
    unknown = sorted(set(settings) - set(known))
    if unknown:
        hint = did_you_mean(unknown[0], known)
        raise DatasetError(
            f"converter {label!r} has no setting {unknown[0]!r}.{hint} Its settings are: {', '.join(known) or 'none'}"
        )
    if isinstance(target, type):
        return target(**settings)
    return dataclasses.replace(target, **settings)


for _name, _cls in (
    ("gsm8k", GSM8K),
    ("math", Math),
    ("countdown", Countdown),
    ("generic", Generic),
    ("chat", Chat),
    ("fireworks", FireworksEval),
    ("mbpp", MBPP),
    ("humaneval", HumanEval),
    ("apps", APPS),
    ("codecontests", CodeContests),
    ("ifeval", IFEvalData),
):
    register_converter(_name, _cls)
