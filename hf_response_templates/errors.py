"""The package's exceptions: one small hierarchy.

```
ValueError
 ├── TemplateError          a response template is invalid (raised by `load_template`)
 └── ResponseParseError     model output could not be turned into a message
      └── RegexTimeoutError a template's regex ran longer than the regex timeout
```

Every error carries the attributes a caller needs to point at the problem: `field` (the template
field, or `None`), and for parse errors `text` (the raw text involved) and `position` (offset of
that text in the generation, `None` when it started inside the prefix or is unknown).
"""

from __future__ import annotations

from typing import Any

__all__ = ["TemplateError", "ResponseParseError", "RegexTimeoutError"]


def _rebuild(cls: type, args: tuple, kwargs: dict[str, Any]) -> BaseException:
    """Unpickle an error of this module with the arguments it was created with."""
    return cls(*args, **kwargs)


class TemplateError(ValueError):
    """A response template failed validation.

    Attributes:
        field: the field the problem is in (`None` for top-level keys).
        key: the offending key (`"open_pattern"`, `"content_args.tag_pattern"`, ...), or `None`.
    """

    def __init__(self, message: str, *, field: str | None = None, key: str | None = None):
        where = []
        if field is not None:
            where.append(f"field {field!r}")
        if key is not None:
            where.append(f"key {key!r}")
        prefix = f"response_template {', '.join(where)}: " if where else "response_template: "
        super().__init__(prefix + message)
        self.field = field
        self.key = key
        self._init = ((message,), {"field": field, "key": key})

    def __reduce__(self) -> tuple:  # pickle (multiprocessing): rebuilt from the original arguments
        return (_rebuild, (type(self), *self._init))


class ResponseParseError(ValueError):
    """Model output that the template could not turn into a message.

    Attributes:
        field: the field whose region failed (`None` if not tied to one field).
        error: a short description of what went wrong.
        text: the raw text of the region (or the text being searched).
        position: offset of `text` in the generation (`None` if it began in the prefix or is unknown).
    """

    def __init__(
        self,
        error: str,
        *,
        field: str | None = None,
        text: str | None = None,
        position: int | None = None,
    ):
        self.field = field
        self.error = error
        self.text = text
        self.position = position
        parts = [f"field {field!r}: " if field is not None else "", error]
        if position is not None:
            parts.append(f" (at generation offset {position})")
        if text is not None:
            shown = text if len(text) <= 300 else text[:150] + " ... " + text[-150:]
            parts.append(f"\nRaw text: {shown!r}")
        super().__init__("".join(parts))
        self._init = ((error,), {"field": field, "text": text, "position": position})

    def __reduce__(self) -> tuple:  # pickle (multiprocessing): rebuilt from the original arguments
        return (_rebuild, (type(self), *self._init))

    def as_dict(self) -> dict[str, Any]:
        """The JSON-compatible record used in `message["unparsed"]`."""
        return {"field": self.field, "text": self.text, "error": self.error, "position": self.position}


class RegexTimeoutError(ResponseParseError):
    """A template regex took longer than the regex timeout (catastrophic backtracking).

    Attributes (besides `ResponseParseError`'s): `key` (`"open_pattern"`, `"close_pattern"`,
    `"content_args.tag_pattern"`, ...) and `pattern` (the regex source).
    """

    def __init__(
        self,
        *,
        field: str | None,
        key: str,
        pattern: str,
        timeout: float,
        text: str | None = None,
        position: int | None = None,
    ):
        self.key = key
        self.pattern = pattern
        self.timeout = timeout
        super().__init__(
            f"{key} {pattern!r} ran longer than the regex timeout ({timeout:g} s); the template's regex "
            "backtracks catastrophically on this text. The delimiter is ignored for the rest of this stream "
            "and the text stays in the current region.",
            field=field,
            text=text,
            position=position,
        )
        kwargs = {"field": field, "key": key, "pattern": pattern, "timeout": timeout, "text": text}
        self._init = ((), {**kwargs, "position": position})
