"""An independent reader of the project's files: Python's `jsonschema` validates every
result, run and ab file it finds under the given folders against docs/schemas/.

    python3 validate_schemas.py SCHEMA_DIR DIR [DIR ...]

Reads `*.json`, `*.json.gz` and the JSON files inside `*.tgz` archives; a file is checked when its top-level `schema` tag is one
of the published schemas' (files of other kinds, and JSON that is not an object, are
counted apart). Prints one line per tag (accepted, rejected) and one per rejected file with
its first error; exits 1 when any file is rejected, 2 on bad arguments."""

import gzip
import json
import os
import sys
import tarfile

from jsonschema import Draft202012Validator


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema_dir, dirs = sys.argv[1], sys.argv[2:]
    validators = {}
    for name in sorted(os.listdir(schema_dir)):
        if name.endswith(".schema.json"):
            with open(os.path.join(schema_dir, name)) as f:
                schema = json.load(f)
            Draft202012Validator.check_schema(schema)
            tag = schema["properties"]["schema"]["const"]
            validators[tag] = Draft202012Validator(schema)
    counts = {tag: [0, 0] for tag in validators}
    other = 0
    rejected = []
    def check(path, doc):
        nonlocal other
        tag = doc.get("schema") if isinstance(doc, dict) else None
        if tag not in validators:
            other += 1
            return
        errors = sorted(validators[tag].iter_errors(doc), key=lambda e: list(e.absolute_path))
        if errors:
            counts[tag][1] += 1
            where = "/".join(str(p) for p in errors[0].absolute_path) or "(top)"
            rejected.append(f"rejected {path}: at {where}: {errors[0].message[:300]}")
        else:
            counts[tag][0] += 1

    for top in dirs:
        for root, _, files in os.walk(top):
            for name in sorted(files):
                path = os.path.join(root, name)
                if name.endswith(".tgz") or name.endswith(".tar.gz"):
                    try:
                        with tarfile.open(path, "r:gz") as tar:
                            for member in tar.getmembers():
                                if member.isfile() and member.name.endswith(".json"):
                                    try:
                                        doc = json.load(tar.extractfile(member))
                                    except ValueError:
                                        other += 1
                                        continue
                                    check(f"{path}:{member.name}", doc)
                    except (OSError, tarfile.TarError):
                        other += 1
                    continue
                if not (name.endswith(".json") or name.endswith(".json.gz")) or name.endswith(".schema.json"):
                    continue
                try:
                    opener = gzip.open if name.endswith(".gz") else open
                    with opener(path, "rt", encoding="utf-8") as f:
                        doc = json.load(f)
                except (OSError, ValueError, EOFError):
                    other += 1
                    continue
                check(path, doc)
    for tag, (ok, bad) in sorted(counts.items()):
        print(f"{tag}: {ok} accepted, {bad} rejected")
    print(f"other JSON files (no published schema): {other}")
    for line in rejected:
        print(line)
    return 1 if rejected else 0


if __name__ == "__main__":
    sys.exit(main())
