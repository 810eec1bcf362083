"""The base class of every generated API model (``models_gen.py``, from ``docs/openapi.json`` by
``scripts/gen-clients``).

A model is read from the API's JSON with ``model_validate`` (a wrong shape raises), and remembers
that JSON, so ``--json`` prints the API's answer exactly as it came (``api_json``). Fields are
attributes; item access (``cluster["state"]``) reads the same attributes, for the callers of
``SpindleClient`` that still treat answers as dicts (the integration tests, ``bench/``)."""
from typing import Any

from pydantic import BaseModel, PrivateAttr, model_validator


class ApiModel(BaseModel):
    _api_json: Any = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _remember_json(cls, data: Any, handler: Any) -> Any:
        model = handler(data)
        if isinstance(model, ApiModel) and isinstance(data, dict):
            model._api_json = data
        return model

    def api_json(self) -> Any:
        """The JSON this model was read from (its own JSON when it was built in Python)."""
        if self._api_json is not None:
            return self._api_json
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    @classmethod
    def _field_name(cls, key: str) -> str | None:
        """The attribute of the JSON key ``key`` (they differ only for aliased names)."""
        if key in cls.model_fields:
            return key
        return next((name for name, field in cls.model_fields.items() if field.alias == key), None)

    def __getitem__(self, key: str) -> Any:
        name = self._field_name(key)
        if name is None:
            raise KeyError(key)
        return getattr(self, name)

    def get(self, key: str, default: Any = None) -> Any:
        name = self._field_name(key)
        return default if name is None else getattr(self, name)
