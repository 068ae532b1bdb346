"""Tool-argument schemas as the forced-call grammar takes them: an object schema that does not
say `additionalProperties` allows none (OpenAI's strict mode and xgrammar's strict mode read it
so). Most function definitions (LangChain's `@tool`, OpenAI's examples) leave it out, and JSON
Schema's default, any extra key, let models pad arguments with keys no function takes until
max_tokens ran out. A schema that says `additionalProperties` keeps what it says."""

SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
SUBSCHEMAS = ("items", "additionalProperties", "not", "if", "then", "else", "contains")


def closed_objects(schema):
    """A copy of `schema` with `additionalProperties: false` on every object schema lacking it."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    is_object = out.get("type") == "object" or (isinstance(out.get("type"), list) and "object" in out["type"])
    if (is_object or "properties" in out) and "additionalProperties" not in out:
        out["additionalProperties"] = False
    for key in SUBSCHEMAS:
        if isinstance(out.get(key), dict):
            out[key] = closed_objects(out[key])
    for key in SUBSCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [closed_objects(s) for s in out[key]]
    for key in SUBSCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {name: closed_objects(s) for name, s in out[key].items()}
    return out
