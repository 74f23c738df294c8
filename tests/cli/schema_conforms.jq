# Whether a JSON document keeps the structure its schema gives: every
# required key present and, where additionalProperties is false, no key
# the schema does not declare, at every depth the schema describes.
#   jq -n --slurpfile schema SCHEMA.json --slurpfile doc DOC.json -f schema_conforms.jq
def conforms($schema; $v):
  if ($v | type) == "object" then
    ((($schema.required // []) - ($v | keys)) == [])
    and ($schema.additionalProperties != false or (($v | keys) - ($schema.properties | keys)) == [])
    and all($v | to_entries[]; . as $e | ($schema.properties // {})[$e.key] as $p | if $p then conforms($p; $e.value) else true end)
  elif ($v | type) == "array" then all($v[]; conforms($schema.items // {}; .))
  else true end;
conforms($schema[0]; $doc[0])
