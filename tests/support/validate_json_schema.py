"""Validates a JSON document (stdin) against a JSON schema (the file named by the first argument)
with the `jsonschema` package, in the draft the schema names. Prints every error and exits 1 when
the document does not validate. Run by tests/it/cli.rs with the venv of
scripts/install-mcp-client.sh, which pins `jsonschema`."""

import json
import sys

import jsonschema


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    document = json.load(sys.stdin)
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    for e in errors:
        print(f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
